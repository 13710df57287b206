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
 * Every iteration that finds work is one sample: fast (polling) or the
 * wake-up it waited for. Every `window` samples the policy compares the
 * share over the target with the 1 % a p99 allows:
 *  - more than window / 100 over: the p99 misses the target; double the
 *    budget (at least +1 µs), so a miss is corrected in a few windows;
 *  - none over: comfortably met; shrink the budget by 1/8, to find the least
 *    CPU that still meets it;
 *  - otherwise: met without margin; hold.
 * The budget stays within [min_spin_us, max_spin_us]. Fast growth and slow
 * decay (multiplicative both ways) keep the p99 met most of the time while
 * the budget keeps probing downwards; where a wake-up alone costs less than
 * the target, sleeping is free and the budget sinks to min_spin_us.
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

static void
control(struct target_state *s)
{
	uint64_t grown;

	if (s->over > s->window / 100) {
		grown = 2 * s->spin_ns;
		if (grown < s->spin_ns + GROW_MIN_NS)
			grown = s->spin_ns + GROW_MIN_NS;
		s->spin_ns = grown < s->max_spin_ns ? grown : s->max_spin_ns;
	} else if (s->over == 0) {
		s->spin_ns -= s->spin_ns >> 3;
		if (s->spin_ns < s->min_spin_ns)
			s->spin_ns = s->min_spin_ns;
	}
	s->samples = 0;
	s->over = 0;
}

static enum cqpoll_policy_action
target_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct target_state *s = state;
	uint64_t lat = 0;

	if (completions > 0) {
		if (s->sleeping)
			lat = s->woke ? s->woke_ns : s->wake_ns;
		s->sleeping = false;
		s->woke = false;
		s->over += lat > s->target_ns;
		if (++s->samples >= s->window)
			control(s);
		s->last_ns = now_ns;
		return CQPOLL_POLICY_KEEP_POLLING;
	}
	if (now_ns - s->last_ns < s->spin_ns)
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
