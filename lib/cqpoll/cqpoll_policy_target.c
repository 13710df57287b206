/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The latency-target policy: the user gives a p99 target for the latency of
 * a completion (visible to handled); the policy spins as little as meets it.
 *
 * Its one knob is the spin budget: how long the group polls after the last
 * completion before it sleeps. A completion that arrives while the group
 * polls is handled at once; one that arrives while it sleeps waits a wake-up,
 * whose cost the group measures (wake_cost()) on devices that timestamp
 * completions; elsewhere, or when the sleep ended some other way, the
 * policy's estimate of that cost stands in, which errs towards spinning.
 *
 * Every completion is one sample: fast if the group was polling when it
 * came, else the wake-up it waited for (all the completions a wake-up finds
 * waited for it, which errs towards spinning). A p99 is a long-run share, so
 * every `window` samples the misses (samples over the target) go into an
 * account credited with 3/4 of the 1 % a p99 allows (the last quarter is
 * the margin for noise), which starts empty and holds at most eight
 * windows' unused misses:
 *  - the account overdrawn: the p99 misses the target; grow the budget to
 *    the second-longest gap that ended in a miss (the budget that would have
 *    left one miss in the window), and at least double it (at least +1 µs),
 *    so a miss is corrected in a window or two;
 *  - no miss in the window, and its own gaps say a budget 1/8 smaller would
 *    not have missed either: shrink by 1/8, to find the least CPU that still
 *    meets the target;
 *  - otherwise: hold.
 * The account keeps a noisy window (two misses of one long wake-up among
 * 100 samples, where the long-run share is well under 1 %) from growing the
 * budget. The check before a shrink keeps the p99 where the target is below
 * the wake-up's own p99: a smaller budget would have slept through the gaps
 * the window polled through between it and the current one, each over the
 * target as often as the last four sleeps were. Shrinking blindly walks the
 * budget back into the gaps it has just learnt to cover, and every window
 * spent there is a window of misses: the policy lab (testpmd-cq --sim)
 * measured blind shrinking missing a 40 µs target by 11-30 % and a 20 µs
 * one by 2-2.5x on every trace, with wake-ups of 30 µs median, 80 µs p99.
 * A policy that polls through every gap learns nothing new of wake-ups, so
 * after eight windows without a sleep it takes one (never before
 * min_spin_us), to measure whether they got cheaper.
 * The budget stays within [min_spin_us, max_spin_us]; where a wake-up alone
 * costs less than the target, sleeping is free and it sinks to min_spin_us.
 */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cqpoll_policy_private.h"

#define P99_US_DEFAULT 100
#define MIN_SPIN_US_DEFAULT 0
#define MAX_SPIN_US_DEFAULT 10000
/* The fewest samples in which a p99 means anything: 1 may be over. */
#define WINDOW_MIN 100
#define WINDOW_DEFAULT WINDOW_MIN
#define WAKE_US_DEFAULT 30
#define PARAM_MAX 10000000
#define GROW_MIN_NS 1000
/* A wake delayed by seconds (a stopped VM) must not skew the estimate. */
#define WAKE_CAP_NS 1000000000ull
/* The recent sleeps whose share over the target a shrink is judged by. */
#define SLEEPS_KEPT 4
/* Windows without a sleep before one is taken to measure a wake-up. */
#define PROBE_WINDOWS 8
/* Unused misses the account holds, in windows' worth. */
#define CREDIT_WINDOWS 8

struct target_state {
	uint64_t target_ns;
	uint64_t min_spin_ns;
	uint64_t max_spin_ns;
	uint64_t window;
	uint64_t spin_ns;   /* The budget. */
	uint64_t wake_ns;   /* Wake-up cost estimate (EWMA). */
	uint64_t last_ns;   /* Last iteration with completions. */
	uint64_t woke_ns;   /* Cost reported for the current sleep. */
	uint64_t samples;   /* In this window. */
	uint64_t over;      /* Of them, over the target. */
	uint64_t closer;    /* Of them, fast ones a budget 1/8 smaller sleeps for. */
	uint64_t miss_gap[2]; /* The longest gaps that ended in a miss, longest first. */
	int64_t credit;     /* The account of misses, in quarter misses. */
	uint64_t dry;       /* Windows since the last sleep. */
	unsigned int kept;  /* Recent sleeps remembered, at most SLEEPS_KEPT ... */
	unsigned int kept_over; /* ... as bits, 1: over the target. */
	bool probe;         /* Sleep at the next idle iteration, to measure. */
	bool sleeping;      /* Said sleep; no work seen since. */
	bool woke;          /* woke_ns holds a measurement of this sleep. */
	bool measured;      /* wake_ns holds a measurement, not the guess. */
};

static int
set_param(void *ctx, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct target_state *s = ctx;
	uint64_t v;

	if (cqpoll_policy_parse_u64(val, vlen, PARAM_MAX, &v) < 0)
		return -EINVAL;
	if (cqpoll_policy_key_is(key, klen, "p99_us") && v > 0)
		s->target_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "min_spin_us"))
		s->min_spin_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "max_spin_us"))
		s->max_spin_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "window") && v >= WINDOW_MIN)
		s->window = v;
	else if (cqpoll_policy_key_is(key, klen, "wake_us") && v > 0)
		s->wake_ns = v * 1000;
	else
		return -EINVAL;
	return 0;
}

static void
defaults(struct target_state *s)
{
	memset(s, 0, sizeof(*s));
	s->target_ns = P99_US_DEFAULT * 1000;
	s->min_spin_ns = MIN_SPIN_US_DEFAULT * 1000;
	s->max_spin_ns = MAX_SPIN_US_DEFAULT * 1000;
	s->window = WINDOW_DEFAULT;
	s->wake_ns = WAKE_US_DEFAULT * 1000;
}

/* Start from the least CPU: the target says when more is needed. */
static int
finish(struct target_state *s)
{
	if (s->min_spin_ns > s->max_spin_ns)
		return -EINVAL;
	s->spin_ns = s->min_spin_ns;
	return 0;
}

static int
target_init(void *state, const char *args)
{
	struct target_state *s = state;

	defaults(s);
	if (cqpoll_policy_parse_kv(args, set_param, s) < 0)
		return -EINVAL;
	return finish(s);
}

/* "target-p99:US": the target alone, required; the rest take defaults. */
static int
target_p99_init(void *state, const char *args)
{
	struct target_state *s = state;
	uint64_t us;

	defaults(s);
	if (args == NULL ||
	    cqpoll_policy_parse_u64(args, strlen(args), PARAM_MAX, &us) < 0 ||
	    us == 0)
		return -EINVAL;
	s->target_ns = us * 1000;
	return finish(s);
}

/*
 * Would a budget 1/8 smaller have kept the window within the target? It
 * sleeps through `closer` more gaps, each over the target as often as the
 * recent sleeps were (or, before any, as the wake-up estimate is): expected
 * misses below one half.
 */
static bool
shrink_safe(const struct target_state *s)
{
	unsigned int over = 0, i;

	if (s->kept == 0)
		return s->closer == 0 || s->wake_ns <= s->target_ns;
	for (i = 0; i < s->kept; i++)
		over += (s->kept_over >> i) & 1u;
	return 2 * s->closer * over < s->kept;
}

static void
control(struct target_state *s)
{
	int64_t allow = (int64_t)(s->window / 100);
	uint64_t grown;

	s->credit += 3 * allow - 4 * (int64_t)s->over;
	if (s->credit > 4 * CREDIT_WINDOWS * allow)
		s->credit = 4 * CREDIT_WINDOWS * allow;
	if (s->credit < 0) {
		s->credit = 0;
		grown = 2 * s->spin_ns;
		if (grown < s->spin_ns + GROW_MIN_NS)
			grown = s->spin_ns + GROW_MIN_NS;
		if (grown < s->miss_gap[1])
			grown = s->miss_gap[1];
		s->spin_ns = grown < s->max_spin_ns ? grown : s->max_spin_ns;
	} else if (s->over == 0 && shrink_safe(s)) {
		s->spin_ns -= s->spin_ns >> 3;
		if (s->spin_ns < s->min_spin_ns)
			s->spin_ns = s->min_spin_ns;
	}
	if (++s->dry >= PROBE_WINDOWS)
		s->probe = true;
	s->samples = 0;
	s->over = 0;
	s->closer = 0;
	s->miss_gap[0] = 0;
	s->miss_gap[1] = 0;
}

static void
sleep_seen(struct target_state *s, uint64_t lat)
{
	s->kept_over = ((s->kept_over << 1) | (lat > s->target_ns)) &
		       ((1u << SLEEPS_KEPT) - 1);
	if (s->kept < SLEEPS_KEPT)
		s->kept++;
	s->dry = 0;
	s->probe = false;
}

static enum cqpoll_policy_action
target_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct target_state *s = state;
	uint64_t lat, idle;

	if (completions > 0) {
		if (s->sleeping) {
			lat = s->woke ? s->woke_ns : s->wake_ns;
			sleep_seen(s, lat);
			if (lat > s->target_ns) {
				s->over += completions;
				/* It came gap after the last: a budget of gap spares it. */
				idle = now_ns - s->last_ns;
				idle = idle > lat ? idle - lat : 0;
				if (idle > s->miss_gap[0]) {
					s->miss_gap[1] = s->miss_gap[0];
					s->miss_gap[0] = idle;
				} else if (idle > s->miss_gap[1]) {
					s->miss_gap[1] = idle;
				}
			}
		} else {
			idle = now_ns - s->last_ns;
			if (idle >= s->spin_ns - (s->spin_ns >> 3) &&
			    idle < s->spin_ns)
				s->closer += completions;
		}
		s->sleeping = false;
		s->woke = false;
		s->samples += completions;
		if (s->samples >= s->window)
			control(s);
		s->last_ns = now_ns;
		return CQPOLL_POLICY_KEEP_POLLING;
	}
	idle = now_ns - s->last_ns;
	if (idle < s->spin_ns && !(s->probe && idle >= s->min_spin_ns))
		return CQPOLL_POLICY_KEEP_POLLING;
	s->sleeping = true;
	return CQPOLL_POLICY_SLEEP;
}

static void
target_wake_cost(void *state, uint64_t cost_ns)
{
	struct target_state *s = state;

	/* The sample itself is what the target judges, however large. */
	s->woke_ns = cost_ns;
	s->woke = true;
	if (cost_ns > WAKE_CAP_NS)
		cost_ns = WAKE_CAP_NS;
	s->wake_ns = s->measured ? cqpoll_policy_ewma(s->wake_ns, cost_ns, 2) :
				   cost_ns;
	s->measured = true;
}

static const struct cqpoll_policy_ops target_ops = {
	.name = "latency-target",
	.state_size = sizeof(struct target_state),
	.init = target_init,
	.decide = target_decide,
	.wake_cost = target_wake_cost,
};

static const struct cqpoll_policy_ops target_p99_ops = {
	.name = "target-p99",
	.state_size = sizeof(struct target_state),
	.init = target_p99_init,
	.decide = target_decide,
	.wake_cost = target_wake_cost,
};

const struct cqpoll_policy_ops *
cqpoll_policy_latency_target(void)
{
	return &target_ops;
}

const struct cqpoll_policy_ops *
cqpoll_policy_target_p99(void)
{
	return &target_p99_ops;
}
