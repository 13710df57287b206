/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hybrid policy, after io_uring's hybrid poll: when completions arrive
 * at predictable intervals, nap on a timer (nothing armed) through most of
 * the gap, then poll for the arrival; otherwise the adaptive policy
 * decides, with its own parameters. One nap per gap, planned to end before
 * the earliest likely arrival (the arrival's slot, predicted by phase, less
 * the learnt 99.7 % quantiles of earliness and of the timer's overshoot),
 * and taken only when the polling it leaves costs less than a sleep. A nap
 * can delay a completion, never strand one. Design and measurements:
 * doc/guides/policies.md.
 */

#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "cqpoll_clock.h"
#include "cqpoll_policy_gaps_private.h"
#include "cqpoll_policy_private.h"

/* A timer for less costs more in syscalls and scheduling than it saves. */
#define MIN_NAP_US_DEFAULT 10
#define MAX_NAP_US_DEFAULT 10000
#define PARAM_MAX 10000000
#define PENALTY_DEFAULT 1
#define WAKE_US_DEFAULT 30
/* Longer gaps are no longer "traffic": cap them so the EWMAs recover fast. */
#define GAP_CAP_NS 1000000000ull
/* The histograms halve once they hold this many. */
#define HIST_MEM 1024
/*
 * Arrivals before the phase counts as settled (the mean gap's EWMA, weight
 * 1/8, then within 1/8 of its first error), then before the first plan;
 * naps before the overshoot's quantile.
 */
#define SETTLE 2
#define MEAN_FIRST 16
#define IN_ROW 5
#define GAPS_MIN 4
#define NAPS_MIN 16
/*
 * The tails a plan leaves to chance, in thousandths: 0.3 % of early
 * arrivals, 0.5 % of long overshoots; less than the 1 % a p99 allows.
 */
#define TAIL_PERMIL 3
#define OVER_PERMIL 5
/* The adaptive policy's keys, forwarded to it: their text, at most. */
#define FALLBACK_ARGS_MAX 256
/* Room for the adaptive policy's state; checked at init. */
#define FALLBACK_STATE_MAX 2048

struct hybrid_state {
	struct cqpoll_policy_nap nap; /* First: see cqpoll_policy_private.h. */
	uint64_t min_nap_ns;
	uint64_t max_nap_ns;
	uint64_t penalty;   /* CPU ns a ns of latency is worth. */
	uint64_t sleep_cpu_ns; /* CPU of a sleep or a nap. */
	uint64_t gap_ns;    /* Mean gap (EWMA); 0 until two arrivals. */
	uint64_t last_ns;   /* Last iteration with completions; 0: none. */
	uint64_t over_ns;   /* Mean nap overshoot (EWMA). */
	uint64_t over_max;  /* Largest overshoot seen. */
	uint64_t wake_ns;   /* Mean wake-up of a sleep (EWMA). */
	uint64_t late_ns;   /* This gap's nap is over: poll until this idle. */
	uint64_t due_ns;    /* When the next arrival is due; 0: not known. */
	uint64_t arrivals;  /* Arrivals with a due time. */
	uint64_t gaps_seen; /* Gaps in gap_ns. */
	uint64_t in_row;    /* Arrivals in their slots since one was not. */
	uint64_t nap_end_ns; /* When this gap's nap was planned to end. */
	bool overran;       /* The first poll after the nap is next. */
	bool napped;        /* This gap held its nap. */
	bool cpu_given;     /* sleep_cpu_us was given: measurements are ignored. */
	bool cpu_measured;  /* sleep_cpu_ns holds a measurement. */
	struct cqpoll_policy_gaps early;  /* How early arrivals came (ns). */
	struct cqpoll_policy_gaps overs; /* Overshoots of the naps. */
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

	if (cqpoll_policy_key_is(key, klen, "min_nap_us") ||
	    cqpoll_policy_key_is(key, klen, "max_nap_us")) {
		if (cqpoll_policy_parse_u64(val, vlen, PARAM_MAX, &v) < 0)
			return -EINVAL;
		if (cqpoll_policy_key_is(key, klen, "min_nap_us")) {
			if (v == 0)
				return -EINVAL;
			s->min_nap_ns = v * 1000;
		} else {
			s->max_nap_ns = v * 1000;
		}
		return 0;
	}
	/* Both policies weigh a sleep with these: read, and forwarded too. */
	if (cqpoll_policy_key_is(key, klen, "penalty") ||
	    cqpoll_policy_key_is(key, klen, "sleep_cpu_us")) {
		if (cqpoll_policy_parse_u64(val, vlen, PARAM_MAX, &v) < 0)
			return -EINVAL;
		if (cqpoll_policy_key_is(key, klen, "penalty"))
			s->penalty = v;
		else {
			s->sleep_cpu_ns = v * 1000;
			s->cpu_given = true;
		}
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
	s->min_nap_ns = MIN_NAP_US_DEFAULT * 1000;
	s->max_nap_ns = MAX_NAP_US_DEFAULT * 1000;
	s->penalty = PENALTY_DEFAULT;
	s->wake_ns = WAKE_US_DEFAULT * 1000;
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
 * The g such that at most permil / 1000 of h lie above it, the samples
 * taken as spread evenly over their bucket.
 */
static uint64_t
quantile_hi(const struct cqpoll_policy_gaps *h, unsigned int permil)
{
	uint64_t above = 0, allow = h->total * permil / 1000, lo, hi;
	unsigned int i = CQPOLL_POLICY_GAP_BUCKETS;

	while (i-- > 0) {
		if (above + h->n[i] > allow) {
			lo = cqpoll_policy_gap_lower(i);
			hi = cqpoll_policy_gap_lower(i + 1);
			return lo + (hi - lo) * (above + h->n[i] - allow) / h->n[i];
		}
		above += h->n[i];
	}
	return 0;
}

/*
 * An arrival at now. Arrivals are predicted by phase, not from the last
 * one: on periodic traffic with jitter the gap between two arrivals has
 * twice the spread of an arrival around its slot. The next one is due a
 * mean gap after the slot of this one, the slot moved an eighth of the way
 * to where this arrival came; how early each arrival came against its due
 * time is what a nap must leave room for. An arrival more than half a gap
 * off its slot restarts the phase.
 */
static void
learn(struct hybrid_state *s, uint64_t now_ns)
{
	uint64_t gap, slot;
	bool in_slot;

	if (s->overran) {
		/*
		 * Found by the first poll after a nap: it came during the nap,
		 * when is unknown. Taken as due, it moves neither the phase
		 * nor the mean (taken as when it was seen, both would drift
		 * later, and the naps with them), and counts as early as the
		 * plan allowed for.
		 */
		cqpoll_policy_gap_add(&s->early, s->due_ns > s->nap_end_ns ?
				      s->due_ns - s->nap_end_ns : 0, 1, HIST_MEM);
		s->last_ns = now_ns;
		s->due_ns += s->gap_ns;
		s->napped = false;
		s->overran = false;
		return;
	}
	if (s->last_ns != 0) {
		gap = now_ns - s->last_ns;
		if (gap > GAP_CAP_NS)
			gap = GAP_CAP_NS;
		/*
		 * The mean of the first MEAN_FIRST gaps, then an EWMA: an
		 * EWMA from the first gap alone carries its jitter into the
		 * phase for dozens of arrivals, and the earliness histogram
		 * remembers it for hundreds.
		 */
		s->gaps_seen++;
		/* Once settled, a long silence counts at most double. */
		if (s->gaps_seen > MEAN_FIRST && gap > 2 * s->gap_ns)
			gap = 2 * s->gap_ns;
		s->gap_ns = s->gaps_seen <= MEAN_FIRST ?
			    (s->gap_ns * (s->gaps_seen - 1) + gap) / s->gaps_seen :
			    cqpoll_policy_ewma(s->gap_ns, gap, 4);
	}
	slot = now_ns;
	if (s->due_ns != 0) {
		in_slot = s->due_ns + s->gap_ns / 2 > now_ns &&
			  now_ns + s->gap_ns / 2 > s->due_ns;
		/* In a row: each within a quarter gap of its slot. */
		s->in_row = s->due_ns + s->gap_ns / 4 > now_ns &&
			    now_ns + s->gap_ns / 4 > s->due_ns ? s->in_row + 1 : 0;
		if (in_slot)
			slot = s->due_ns > now_ns ? s->due_ns - (s->due_ns - now_ns) / 8 :
			       s->due_ns + (now_ns - s->due_ns) / 8;
		/*
		 * Once the mean and the phase settled: an arrival off its
		 * slot counts as early by half a gap, which forbids naps on
		 * irregular traffic.
		 */
		if (++s->arrivals > SETTLE)
			cqpoll_policy_gap_add(&s->early, !in_slot ? s->gap_ns / 2 :
					      s->due_ns > now_ns ?
					      s->due_ns - now_ns : 0, 1, HIST_MEM);
	}
	s->due_ns = s->gap_ns != 0 ? slot + s->gap_ns : 0;
	s->last_ns = now_ns;
	s->napped = false;
}

static void
take_nap(struct hybrid_state *s, uint64_t ns)
{
	uint64_t took = s->nap.fn(s->nap.arg, ns);
	uint64_t over = took > ns ? took - ns : 0;

	s->nap.count++;
	s->nap.total_ns += took;
	cqpoll_policy_gap_add(&s->overs, over, 1, HIST_MEM);
	s->over_ns = s->nap.count == 1 ? over : cqpoll_policy_ewma(s->over_ns, over, 3);
	if (over > s->over_max)
		s->over_max = over;
	s->napped = true;
}

/*
 * The nap that this gap's plan takes now, idle ns after the last arrival,
 * or 0: none (no room, or sleeping armed is cheaper).
 */
static uint64_t
plan(struct hybrid_state *s, uint64_t now)
{
	uint64_t early, over, nap, poll, end;
	unsigned __int128 plan_cost, sleep_cost;

	/*
	 * Predictable: the last IN_ROW arrivals each came within a quarter
	 * gap of its slot. Memoryless gaps do so a fifth of the time (five in
	 * a row: one time in 4000), heavy-tailed ones less.
	 */
	if (s->early.total < GAPS_MIN || s->penalty == 0 || s->due_ns == 0 ||
	    s->in_row < IN_ROW)
		return 0;
	early = quantile_hi(&s->early, TAIL_PERMIL);
	/* Until the timer is known, its overshoot is taken as two wake-ups. */
	over = s->nap.count < NAPS_MIN ?
	       (s->over_max > 2 * s->wake_ns ? s->over_max : 2 * s->wake_ns) :
	       quantile_hi(&s->overs, OVER_PERMIL);
	end = s->due_ns > early + over ? s->due_ns - early - over : 0;
	if (end <= now + s->min_nap_ns)
		return 0;
	nap = end - now;
	if (nap > s->max_nap_ns)
		nap = s->max_nap_ns;
	poll = now + nap + s->over_ns < s->due_ns ?
	       s->due_ns - now - nap - s->over_ns : 0;
	plan_cost = (unsigned __int128)poll + s->sleep_cpu_ns;
	sleep_cost = (unsigned __int128)s->wake_ns * s->penalty + s->sleep_cpu_ns;
	return plan_cost < sleep_cost ? nap : 0;
}

static enum cqpoll_policy_action
hybrid_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	const struct cqpoll_policy_ops *fb = cqpoll_policy_adaptive();
	struct hybrid_state *s = state;
	uint64_t nap, idle;

	if (completions > 0) {
		learn(s, now_ns);
		return fb->decide(s->fallback, completions, now_ns);
	}
	s->overran = false;
	if (s->last_ns == 0)
		return fb->decide(s->fallback, 0, now_ns);
	idle = now_ns - s->last_ns;
	if (!s->napped) {
		nap = plan(s, now_ns);
		if (nap != 0) {
			s->nap_end_ns = now_ns + nap;
			take_nap(s, nap);
			s->overran = true;
			/* Poll for the arrival until it is clearly late. */
			s->late_ns = s->due_ns - s->last_ns + quantile_hi(&s->early,
						  TAIL_PERMIL) + s->gap_ns / 4;
			return CQPOLL_POLICY_KEEP_POLLING;
		}
	} else if (idle <= s->late_ns) {
		return CQPOLL_POLICY_KEEP_POLLING;
	}
	return fb->decide(s->fallback, 0, now_ns);
}

static void
hybrid_wake_cost(void *state, uint64_t cost_ns)
{
	struct hybrid_state *s = state;

	if (cost_ns > GAP_CAP_NS)
		cost_ns = GAP_CAP_NS;
	/* As adaptive's: a sample counts at most double. */
	s->wake_ns = cqpoll_policy_ewma(s->wake_ns, cost_ns > 2 * s->wake_ns ?
					2 * s->wake_ns : cost_ns, 3);
	cqpoll_policy_adaptive()->wake_cost(s->fallback, cost_ns);
}

/*
 * A sleep's measured thread CPU: weighed by the fallback, and by the nap
 * plan for a sleep and for a nap alike (a nap is one system call and a
 * switch, a sleep more: the plan errs towards napping), as adaptive does
 * with it; sleep_cpu_us, when given, wins for both.
 */
void
cqpoll_policy_hybrid_sleep_cpu(void *state, uint64_t cpu_ns)
{
	struct hybrid_state *s = state;

	if (s->cpu_given)
		return;
	if (cpu_ns > GAP_CAP_NS)
		cpu_ns = GAP_CAP_NS;
	if (!s->cpu_measured)
		s->sleep_cpu_ns = cpu_ns;
	else
		s->sleep_cpu_ns = cqpoll_policy_ewma(s->sleep_cpu_ns,
			cpu_ns > 2 * s->sleep_cpu_ns ? 2 * s->sleep_cpu_ns : cpu_ns, 3);
	s->cpu_measured = true;
	cqpoll_policy_adaptive_sleep_cpu(s->fallback, cpu_ns);
}

static const struct cqpoll_policy_ops hybrid_ops = {
	.size = sizeof(struct cqpoll_policy_ops),
	.name = "hybrid",
	.state_size = sizeof(struct hybrid_state),
	.init = hybrid_init,
	.decide = hybrid_decide,
	.wake_cost = hybrid_wake_cost,
	.sleep_cpu = cqpoll_policy_hybrid_sleep_cpu,
};

const struct cqpoll_policy_ops *
cqpoll_policy_hybrid(void)
{
	return &hybrid_ops;
}
