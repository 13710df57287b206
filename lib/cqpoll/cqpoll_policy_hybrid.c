/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hybrid policy, after io_uring's hybrid poll: when completions arrive at
 * predictable intervals, sleep on a timer for part of the time left before
 * the next one is due, then poll for it. The arrival finds the thread
 * polling, as in busy mode, while most of the gap costs no CPU. When arrivals
 * are not predictable the adaptive policy decides, with its own parameters.
 *
 * Predictable: the mean absolute deviation of the gaps between iterations
 * that found work (EWMA, weight 1/8) is at most cv_pct % of their mean
 * (EWMA, weight 1/8). The deviation starts equal to the first gap, so about
 * 17 regular gaps pass before the first nap. And worth it: the window the
 * policy polls through after its naps (six deviations) is no longer than a
 * wake-up; the policy lab (testpmd-cq --sim --trace=periodic) showed a
 * wider one costing 2.7x the clairvoyant's CPU with 10% jitter, where
 * sleeping armed costs 1.01x.
 *
 * A nap arms nothing: completions that arrive during it wait in their CQ and
 * the group polls as soon as decide() returns, so a nap can delay a
 * completion but never strand one. It cannot be cut short by
 * cqpoll_group_stop() or a mode change either, so max_nap_us bounds how late
 * the group sees them.
 *
 * Each nap sleeps nap_pct % of the time left before the earliest likely
 * arrival (mean gap less twice the deviation), less the timer's overshoot
 * learnt from earlier naps; a gap may hold several naps, each shorter than
 * the last. Once none fits (shorter than min_nap_us), the policy polls until
 * the arrival, or until it is clearly late (mean plus four deviations), when
 * the adaptive policy takes over. A gap with no nap at all (the timer is too
 * coarse for it) is left to the adaptive policy from the start: polling
 * through the whole gap is its choice to make, not this policy's.
 */

#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "cqpoll_clock.h"
#include "cqpoll_policy_private.h"

#define NAP_PCT_DEFAULT 50
#define CV_PCT_DEFAULT 10
/* A timer for less costs more in syscalls and scheduling than it saves. */
#define MIN_NAP_US_DEFAULT 10
#define MAX_NAP_US_DEFAULT 1000
#define PARAM_MAX 10000000
/* Longer gaps are no longer "traffic": cap them so the EWMAs recover fast. */
#define GAP_CAP_NS 1000000000ull
/* The adaptive policy's keys, forwarded to it: their text, at most. */
#define FALLBACK_ARGS_MAX 256
/* Room for the adaptive policy's state; checked at init. */
#define FALLBACK_STATE_MAX 2048

struct hybrid_state {
	struct cqpoll_policy_nap nap; /* First: see cqpoll_policy_private.h. */
	uint64_t nap_pct;
	uint64_t cv_pct;
	uint64_t min_nap_ns;
	uint64_t max_nap_ns;
	uint64_t gap_ns;    /* Mean gap (EWMA); 0 until two arrivals. */
	uint64_t dev_ns;    /* Mean absolute deviation of the gaps (EWMA). */
	uint64_t last_ns;   /* Last iteration with completions; 0: none. */
	uint64_t slack_ns;  /* Timer overshoot (EWMA). */
	bool napped;        /* This gap held a nap: poll for its arrival. */
	bool slack_blocked; /* This gap had room for a nap but for the slack. */
	alignas(max_align_t) unsigned char fallback[FALLBACK_STATE_MAX];
};

struct hybrid_parse {
	struct hybrid_state *s;
	char fwd[FALLBACK_ARGS_MAX];
	size_t len;
};

static uint64_t
nap_sleep(void *arg, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000u),
		.tv_nsec = (long)(ns % 1000000000u),
	};
	uint64_t t0 = cqpoll_now_ns();

	(void)arg;
	/* EINTR ends the nap early: the group then polls, which is safe. */
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	return cqpoll_now_ns() - t0;
}

static int
set_param(void *ctx, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct hybrid_parse *p = ctx;
	struct hybrid_state *s = p->s;
	uint64_t v;

	if (cqpoll_policy_key_is(key, klen, "nap_pct") ||
	    cqpoll_policy_key_is(key, klen, "cv_pct") ||
	    cqpoll_policy_key_is(key, klen, "min_nap_us") ||
	    cqpoll_policy_key_is(key, klen, "max_nap_us")) {
		if (cqpoll_policy_parse_u64(val, vlen, PARAM_MAX, &v) < 0)
			return -EINVAL;
		if (cqpoll_policy_key_is(key, klen, "nap_pct")) {
			if (v == 0 || v > 99)
				return -EINVAL;
			s->nap_pct = v;
		} else if (cqpoll_policy_key_is(key, klen, "cv_pct")) {
			if (v > 100)
				return -EINVAL;
			s->cv_pct = v;
		} else if (cqpoll_policy_key_is(key, klen, "min_nap_us")) {
			if (v == 0)
				return -EINVAL;
			s->min_nap_ns = v * 1000;
		} else {
			s->max_nap_ns = v * 1000;
		}
		return 0;
	}
	/* Anything else is the adaptive policy's, which checks it. */
	if (p->len + klen + vlen + 2 >= sizeof(p->fwd))
		return -EINVAL;
	if (p->len != 0)
		p->fwd[p->len++] = ',';
	memcpy(p->fwd + p->len, key, klen + 1 + vlen);
	p->len += klen + 1 + vlen;
	p->fwd[p->len] = '\0';
	return 0;
}

static int
hybrid_init(void *state, const char *args)
{
	const struct cqpoll_policy_ops *fb = cqpoll_policy_adaptive();
	struct hybrid_state *s = state;
	struct hybrid_parse p = { .s = s };

	memset(s, 0, sizeof(*s));
	s->nap.fn = nap_sleep;
	s->nap_pct = NAP_PCT_DEFAULT;
	s->cv_pct = CV_PCT_DEFAULT;
	s->min_nap_ns = MIN_NAP_US_DEFAULT * 1000;
	s->max_nap_ns = MAX_NAP_US_DEFAULT * 1000;
	if (cqpoll_policy_parse_kv(args, set_param, &p) < 0)
		return -EINVAL;
	if (s->min_nap_ns > s->max_nap_ns)
		return -EINVAL;
	/* Both policies are built together: only a library bug trips this. */
	if (fb->state_size > sizeof(s->fallback))
		return -ENOMEM;
	return fb->init(s->fallback, p.len != 0 ? p.fwd : NULL);
}

/*
 * Regular enough to nap for, and worth it: after its naps the policy polls
 * through the arrival's window, from two deviations before the mean gap to
 * four after. When that window is longer than a wake-up (the timer's
 * overshoot, or min_nap_us before one is known), sleeping armed costs less
 * than polling through it, and the adaptive policy decides.
 */
static bool
predictable(const struct hybrid_state *s)
{
	uint64_t wake = s->slack_ns > s->min_nap_ns ? s->slack_ns : s->min_nap_ns;

	return s->cv_pct != 0 && s->gap_ns != 0 &&
	       s->dev_ns * 100 <= s->cv_pct * s->gap_ns &&
	       6 * s->dev_ns <= wake;
}

static void
learn(struct hybrid_state *s, uint64_t now_ns)
{
	uint64_t gap;

	if (s->last_ns != 0) {
		gap = now_ns - s->last_ns;
		if (gap > GAP_CAP_NS)
			gap = GAP_CAP_NS;
		if (s->gap_ns == 0) {
			/* One gap says nothing of the spread: assume the worst. */
			s->gap_ns = gap;
			s->dev_ns = gap;
		} else {
			s->dev_ns = cqpoll_policy_ewma(s->dev_ns, gap > s->gap_ns ?
						       gap - s->gap_ns :
						       s->gap_ns - gap, 3);
			s->gap_ns = cqpoll_policy_ewma(s->gap_ns, gap, 3);
		}
	}
	/*
	 * A slack estimate that forbids every nap is never measured again:
	 * let it decay while it does, so one slow nap cannot end napping.
	 */
	if (s->slack_blocked && !s->napped)
		s->slack_ns -= s->slack_ns >> 3;
	s->last_ns = now_ns;
	s->napped = false;
	s->slack_blocked = false;
}

static void
take_nap(struct hybrid_state *s, uint64_t ns)
{
	uint64_t took = s->nap.fn(s->nap.arg, ns);
	uint64_t over = took > ns ? took - ns : 0;

	s->nap.count++;
	s->nap.total_ns += took;
	/* A preempted nap counts at most double: one outlier is not the timer. */
	if (over > 2 * s->slack_ns + s->min_nap_ns)
		over = 2 * s->slack_ns + s->min_nap_ns;
	s->slack_ns = cqpoll_policy_ewma(s->slack_ns, over, 2);
	s->napped = true;
}

static enum cqpoll_policy_action
hybrid_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	const struct cqpoll_policy_ops *fb = cqpoll_policy_adaptive();
	struct hybrid_state *s = state;
	uint64_t margin, due, room, nap;

	if (completions > 0) {
		learn(s, now_ns);
		return fb->decide(s->fallback, completions, now_ns);
	}
	if (!predictable(s) || s->last_ns == 0)
		return fb->decide(s->fallback, 0, now_ns);
	margin = 2 * s->dev_ns < s->gap_ns ? 2 * s->dev_ns : s->gap_ns;
	due = s->last_ns + s->gap_ns - margin;
	if (now_ns < due) {
		room = (due - now_ns) * s->nap_pct / 100;
		nap = room > s->slack_ns ? room - s->slack_ns : 0;
		if (nap > s->max_nap_ns)
			nap = s->max_nap_ns;
		if (nap >= s->min_nap_ns) {
			take_nap(s, nap);
			return CQPOLL_POLICY_KEEP_POLLING;
		}
		if (room >= s->min_nap_ns)
			s->slack_blocked = true;
	}
	if (s->napped && now_ns - s->last_ns <= s->gap_ns + 4 * s->dev_ns)
		return CQPOLL_POLICY_KEEP_POLLING;
	return fb->decide(s->fallback, 0, now_ns);
}

static void
hybrid_wake_cost(void *state, uint64_t cost_ns)
{
	struct hybrid_state *s = state;

	cqpoll_policy_adaptive()->wake_cost(s->fallback, cost_ns);
}

static const struct cqpoll_policy_ops hybrid_ops = {
	.name = "hybrid",
	.state_size = sizeof(struct hybrid_state),
	.init = hybrid_init,
	.decide = hybrid_decide,
	.wake_cost = hybrid_wake_cost,
};

const struct cqpoll_policy_ops *
cqpoll_policy_hybrid(void)
{
	return &hybrid_ops;
}
