/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive policy (its manual and design history:
 * doc/guides/policies.md). Its one decision is a threshold: how long the
 * group polls after the last arrival before it sleeps. It learns the
 * silences (a histogram of the time from one arrival to the next) and picks
 * the threshold B of least expected cost per unit of time: a silence s <= B
 * costs s of polling; a longer one costs B plus a sleep, the sleep's CPU C
 * and the latency D it adds, weighed by penalty. Beside the threshold:
 *  - the burst rule: on on/off traffic whose bursts and the silences
 *    between them last alike, sleep once the current burst has lasted as
 *    long as the longest of the last ones;
 *  - the rate rule: a budget from the arrivals of the last 2 ms, which
 *    decides while it has been the cheaper, or at once after two long
 *    silences in a row (the rate fell);
 *  - the probe: a sleep to measure the wake-up cost W when none was
 *    measured for probe_ms;
 *  - the monitor wait, for a silence too short for a sleep.
 * W, D, C and the mean gap are moving averages of clamped samples, so that
 * one outlier cannot lock the policy into polling. An arrival sets until
 * when the empty polls are sure to keep polling: those cost two compares.
 */

#include <errno.h>
#include <string.h>

#include "cqpoll_mutant.h"
#include "cqpoll_policy_adaptive_private.h"
#include "cqpoll_policy_adaptive_rate.h"

static int
set_param(void *ctx, const char *key, size_t klen, const char *val,
	  size_t vlen)
{
	struct adaptive_state *s = ctx;
	uint64_t v;

	if (cqpoll_policy_parse_u64(val, vlen, PARAM_MAX, &v) < 0)
		return -EINVAL;
	if (cqpoll_policy_key_is(key, klen, "mult") && v > 0)
		s->mult = v;
	else if (cqpoll_policy_key_is(key, klen, "wake_us") && v > 0)
		s->wake_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "min_spin_us"))
		s->min_spin_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "max_spin_us"))
		s->max_spin_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "probe_ms"))
		s->probe_ns = v * 1000000;
	else if (cqpoll_policy_key_is(key, klen, "monitor_us"))
		s->monitor_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "sleep_cpu_us")) {
		s->sleep_cpu_ns = v * 1000;
		s->cpu_given = 1;
	}
	else if (cqpoll_policy_key_is(key, klen, "memory_us"))
		s->memory_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "jump") && v <= 1000)
		s->jump = v;
	else if (cqpoll_policy_key_is(key, klen, "penalty") && v <= PENALTY_MAX)
		s->penalty = v;
	else
		return -EINVAL;
	return 0;
}

static int
adaptive_init(void *state, const char *args)
{
	struct adaptive_state *s = state;

	memset(s, 0, sizeof(*s));
	s->mult = MULT_DEFAULT;
	s->penalty = PENALTY_DEFAULT;
	s->wake_ns = WAKE_US_DEFAULT * 1000;
	s->min_spin_ns = MIN_SPIN_US_DEFAULT * 1000;
	s->max_spin_ns = MAX_SPIN_US_DEFAULT * 1000;
	s->probe_ns = PROBE_MS_DEFAULT * 1000000ull;
	s->memory_ns = MEMORY_US_DEFAULT * 1000ull;
	s->jump = JUMP_DEFAULT;
	if (cqpoll_policy_parse_kv(args, set_param, s) < 0 ||
	    s->min_spin_ns > s->max_spin_ns)
		return -EINVAL;
	cqpoll_adaptive_choose(s);
	return 0;
}

/*
 * A sleep ended with @k completions after a wake-up of woke_ns: the first
 * waited all of it, the others arrived during it, half of it each on
 * average. The samples are heavy-tailed (a long wake-up gathers more
 * arrivals), so each counts at most DELAY_CLAMP times the mean, with
 * weight 1/16.
 */
static void
delay_seen(struct adaptive_state *s, unsigned int k)
{
	uint64_t d = s->woke_ns * ((uint64_t)k + 1) / 2;
	uint64_t x = k == 1 ? 0 : s->woke_ns - s->woke_ns / ((uint64_t)k + 1);

	if (s->delay_ns == 0) {
		s->delay_ns = d;
		s->spread_ns = x;
		return;
	}
	s->spread_ns = cqpoll_policy_ewma(s->spread_ns, x, 4);
	if (d / DELAY_CLAMP > s->delay_ns)
		d = DELAY_CLAMP * s->delay_ns;
	s->delay_ns = cqpoll_policy_ewma(s->delay_ns, d, 4);
}

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The bound of the empty polls stops at the next probe, @p until at most. */
#if CQPOLL_MUTANT(POLL_UNTIL_NO_PROBE)
/* Negative control only (test build): the bound forgets the probe's clock. */
static uint64_t
probe_bound(const struct adaptive_state *s, uint64_t until)
{
	(void)s;
	return until;
}
#else
static inline uint64_t
probe_bound(const struct adaptive_state *s, uint64_t until)
{
	if (s->probe_ns != 0 && add_sat(s->probed_ns, s->probe_ns) < until)
		return add_sat(s->probed_ns, s->probe_ns);
	return until;
}
#endif

/*
 * Until when an empty iteration is sure to keep polling by the rules of
 * adaptive_decide(), which read only what an arrival sets (and the probe's
 * clock): before max_spin_us, the threshold (or the rate rule's budget)
 * and the burst's end, and the next probe. In a ping-pong a dozen empty
 * polls come between arrivals, and each weighed every rule again: some 60
 * instructions a poll, half of what adaptive added to busy polling
 * (bench/run_group_iter.sh). With a monitor wait in play
 * (monitor_us) every empty iteration is decided in full.
 */
static void
set_poll_until(struct adaptive_state *s)
{
	uint64_t until, end, budget;

	s->poll_until = 0;
	if (s->monitor_ns != 0 || s->last_ns == 0)
		return;
	s->poll_from = s->last_ns > s->probed_ns ? s->last_ns : s->probed_ns;
	until = add_sat(s->last_ns, s->max_spin_ns);
	end = adaptive_burst_end(s);
	if ((s->use_rate || s->rate_jump) && end == 0) {
		budget = s->rate_b;
	} else {
		budget = s->spin_ns;
		/* Past the burst's end it sleeps. */
		if (end != 0 && add_sat(end, 1) < until)
			until = add_sat(end, 1);
	}
	/* Asleep at the first empty poll: nothing to keep. */
	if (budget <= s->lead_ns)
		return;
	if (add_sat(s->last_ns, budget - s->lead_ns) < until)
		until = add_sat(s->last_ns, budget - s->lead_ns);
	until = probe_bound(s, until);
	s->poll_until = until;
}

/*
 * An iteration found @p completions (> 0) at @p now_ns: the silence it
 * ended is learnt, and the rules of the empty iterations to come are set.
 * Out of line, as is idle_decide(): adaptive_decide() is mostly the empty polls'
 * bound, which must not pay the frame of the rest.
 */
static __attribute__((noinline)) void
arrival(struct adaptive_state *s, unsigned int completions, uint64_t now_ns)
{
	uint64_t idle, gap, end;
	int ends, counted;

	if (s->last_ns != 0) {
		/*
		 * The silence the threshold judges: from the last
		 * arrival (lead_ns before the last batch was seen) to
		 * the one that ended it, which a sleep saw a wake-up
		 * late.
		 */
		idle = now_ns - s->last_ns;
		if (s->woke) {
			idle = idle > s->woke_ns ? idle - s->woke_ns : 0;
			delay_seen(s, completions);
			/* A wake-up measured: no probe is due. */
			s->probed_ns = now_ns;
		}
		ends = s->gap_ns != 0 &&
		       idle + s->lead_ns >= BURST_GAPS * s->gap_ns;
		/*
		 * A silence between bursts that adaptive_burst_end() foresaw
		 * was slept in at the burst's end, whatever the
		 * threshold: it says nothing of the threshold, and
		 * counted, it would charge the threshold with polling
		 * into it.
		 */
		counted = !ends || adaptive_burst_end(s) == 0;
		if (ends)
			cqpoll_adaptive_burst_seen(s, s->last_ns - s->lead_ns,
				   now_ns - (s->woke ? s->woke_ns : 0));

		adaptive_experts_seen(s, idle + s->lead_ns);
		s->rate_jump = s->jump != 0 && s->gap_ns != 0 &&
			       idle + s->lead_ns > s->jump * s->gap_ns &&
			       s->prev_sil > s->jump * s->gap_ns;
		s->prev_sil = idle + s->lead_ns;
		adaptive_forget(s, now_ns);
		if (counted)
			cqpoll_policy_gap_add(&s->silences,
					      idle + s->lead_ns, WEIGHT,
					      SILENCE_MEM * WEIGHT);
		if (++s->chosen >= RECHOOSE ||
		    s->silences.total <= SILENCE_MIN * WEIGHT)
			cqpoll_adaptive_choose(s);
		/* An iteration that found k completions saw k gaps. */
		gap = (now_ns - s->last_ns) / completions;
		if (gap > GAP_CAP_NS)
			gap = GAP_CAP_NS;
		/*
		 * The silence before a burst is not its spacing: a
		 * sample counts at most double, as a wake-up's does.
		 */
		if (s->gap_ns != 0 && gap > 2 * s->gap_ns)
			gap = 2 * s->gap_ns;
		s->gap_ns = s->gap_ns == 0 ? gap : cqpoll_policy_ewma(s->gap_ns, gap, 3);
	}
	s->last_ns = now_ns;
	s->rate_b = adaptive_rate_budget(s, completions, now_ns);
	s->own_b = s->spin_ns;
	end = adaptive_burst_end(s);
	if (end != 0)
		s->own_b = end > now_ns ? end - now_ns < s->own_b ?
			   end - now_ns : s->own_b : 0;
	/*
	 * After a sleep the batch's last arrival came before the
	 * wake-up ended: a lone one a whole wake-up before, the last
	 * of k spread over it about a (k+1)-th of it before. Silences
	 * are measured from there, as polling would have seen them:
	 * measured from the wake-up, those after sleeps would be
	 * shorter by it, polling would look cheaper than it is, and
	 * the policy would flip between the two on regular gaps.
	 */
	s->lead_ns = !s->woke ? 0 : completions == 1 ? s->woke_ns :
		     s->woke_ns / ((uint64_t)completions + 1);
	s->woke = 0;
	set_poll_until(s);
}

/* An empty iteration at @p now_ns, past the bound of set_poll_until(). */
static __attribute__((noinline)) enum cqpoll_policy_action
idle_decide(struct adaptive_state *s, uint64_t now_ns)
{
	uint64_t idle, expected, end;

	idle = now_ns - s->last_ns;
	if (idle < s->min_spin_ns)
		return CQPOLL_POLICY_KEEP_POLLING;
	if (idle >= s->max_spin_ns)
		return CQPOLL_POLICY_SLEEP;
	end = adaptive_burst_end(s);
	/* Bursts that last alike: the burst rule knows when they end. */
	if ((s->use_rate || s->rate_jump) && end == 0) {
		if (idle + s->lead_ns >= s->rate_b)
			return CQPOLL_POLICY_SLEEP;
	} else {
		if (idle + s->lead_ns >= s->spin_ns || (end != 0 && now_ns > end))
			return CQPOLL_POLICY_SLEEP;
	}
	expected = idle < 2 * s->gap_ns ? s->gap_ns : idle;
	/* probe_ms = 0 turns probing off. */
	if (s->probe_ns != 0 && now_ns - s->probed_ns >= s->probe_ns) {
		s->probed_ns = now_ns;
		/* The probe's clock restarts: the next arrival sets the bound. */
		s->poll_until = 0;
		return CQPOLL_POLICY_SLEEP;
	}
	/* Too short for a sleep, long enough to wake from a monitor wait. */
	if (s->monitor_ns != 0 && expected > s->monitor_ns)
		return CQPOLL_POLICY_MONITOR;
	return CQPOLL_POLICY_KEEP_POLLING;
}

/* An empty iteration at @p now_ns is within the bound: it keeps polling. */
#if CQPOLL_MUTANT(ADAPTIVE_FULL)
/* Test build only: every empty poll decided in full, the reference. */
static inline int
polling_sure(const struct adaptive_state *s, uint64_t now_ns)
{
	(void)s;
	(void)now_ns;
	return 0;
}
#else
static inline int
polling_sure(const struct adaptive_state *s, uint64_t now_ns)
{
	return now_ns < s->poll_until && now_ns >= s->poll_from;
}
#endif

static enum cqpoll_policy_action
adaptive_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct adaptive_state *s = state;

	if (completions > 0) {
		arrival(s, completions, now_ns);
		return CQPOLL_POLICY_KEEP_POLLING;
	}
	if (polling_sure(s, now_ns))
		return CQPOLL_POLICY_KEEP_POLLING;
	return idle_decide(s, now_ns);
}

static void
adaptive_wake_cost(void *state, uint64_t cost_ns)
{
	struct adaptive_state *s = state;

	/* A wake delayed by seconds (a stopped VM) says nothing of the next. */
	if (cost_ns > GAP_CAP_NS)
		cost_ns = GAP_CAP_NS;
	s->woke_ns = cost_ns;
	s->woke = 1;
	/*
	 * One descheduled device or safety-net timeout must not teach the
	 * policy that wake-ups cost milliseconds: it would then never sleep
	 * again and never unlearn it. A sample counts at most double.
	 */
	if (cost_ns > 2 * s->wake_ns)
		cost_ns = 2 * s->wake_ns;
	s->wake_ns = s->measured ? cqpoll_policy_ewma(s->wake_ns, cost_ns, 3) : cost_ns;
	s->measured = 1;
}

/*
 * The thread CPU of a sleep, measured by the group (cqpoll_policy_sleep_cpu()):
 * the first sample replaces the default 0 outright, later ones count at most
 * twice the estimate (a sleep that was descheduled mid-way on a loaded
 * machine must not teach that sleeps cost milliseconds), weight 1/8.
 * sleep_cpu_us, when given, wins.
 */
void
cqpoll_policy_adaptive_sleep_cpu(void *state, uint64_t cpu_ns)
{
	struct adaptive_state *s = state;

	if (s->cpu_given)
		return;
	if (cpu_ns > GAP_CAP_NS)
		cpu_ns = GAP_CAP_NS;
	if (!s->cpu_measured) {
		s->sleep_cpu_ns = cpu_ns;
		s->cpu_measured = 1;
		/* Weigh the threshold again with the cost now known. */
		s->chosen = RECHOOSE;
		return;
	}
	if (cpu_ns > 2 * s->sleep_cpu_ns)
		cpu_ns = 2 * s->sleep_cpu_ns;
	s->sleep_cpu_ns = cqpoll_policy_ewma(s->sleep_cpu_ns, cpu_ns, 3);
}

static const struct cqpoll_policy_ops adaptive_ops = {
	.size = sizeof(struct cqpoll_policy_ops),
	.name = "adaptive",
	.state_size = sizeof(struct adaptive_state),
	.init = adaptive_init,
	.decide = adaptive_decide,
	.wake_cost = adaptive_wake_cost,
	.sleep_cpu = cqpoll_policy_adaptive_sleep_cpu,
};

const struct cqpoll_policy_ops *
cqpoll_policy_adaptive(void)
{
	return &adaptive_ops;
}
