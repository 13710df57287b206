/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The causal rate rule, a yardstick of the lab (not a library policy): the
 * arrival rate over the last 2 ms; a spin budget of 5 mean gaps when rate x
 * the cost of a sleep is over 1 (a sleep costs more than the polling until
 * the next arrival, on average), else 0. The simplest rule that follows a
 * change of rate within a few ms: adaptive must cost no more.
 *
 * The rate is counted in 100 us slots of a 2 ms ring; before 2 ms have
 * passed, over the time since the first arrival.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cqpoll_group.h>

#include "lab.h"

#define SLOT_NS 100000ULL
#define SLOTS 20
#define GAPS 5

struct rate_state {
	uint64_t cost_ns;      /* a sleep's cost, CPU + penalty x latency */
	uint64_t first_ns;     /* first arrival; 0: none */
	uint64_t last_ns;      /* last iteration with completions */
	uint64_t slot;         /* the slot of count[slot % SLOTS] */
	uint64_t count[SLOTS];
	uint64_t spin_ns;
};

static int
rate_init(void *state, const char *args)
{
	struct rate_state *s = state;
	char *end;

	memset(s, 0, sizeof(*s));
	if (args == NULL || strncmp(args, "cost_ns=", 8) != 0)
		return -EINVAL;
	errno = 0;
	s->cost_ns = strtoull(args + 8, &end, 10);
	if (errno != 0 || *end != '\0' || end == args + 8)
		return -EINVAL;
	return 0;
}

/* Move the ring to the slot of now, emptying the slots passed. */
static void
advance(struct rate_state *s, uint64_t now)
{
	uint64_t cur = now / SLOT_NS;

	if (cur - s->slot >= SLOTS) {
		memset(s->count, 0, sizeof(s->count));
	} else {
		while (s->slot < cur)
			s->count[++s->slot % SLOTS] = 0;
	}
	s->slot = cur;
}

static enum cqpoll_policy_action
rate_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct rate_state *s = state;
	uint64_t span, n = 0;
	double rate;
	unsigned int i;

	if (completions > 0) {
		advance(s, now_ns);
		s->count[s->slot % SLOTS] += completions;
		if (s->first_ns == 0)
			s->first_ns = now_ns;
		s->last_ns = now_ns;
		for (i = 0; i < SLOTS; i++)
			n += s->count[i];
		span = now_ns - s->first_ns;
		if (span > SLOTS * SLOT_NS)
			span = SLOTS * SLOT_NS;
		if (span < SLOT_NS)
			span = SLOT_NS;
		rate = (double)n / (double)span;
		s->spin_ns = rate * (double)s->cost_ns > 1.0 ?
			     (uint64_t)(GAPS / rate) : 0;
		return CQPOLL_POLICY_KEEP_POLLING;
	}
	if (s->last_ns == 0 || now_ns - s->last_ns >= s->spin_ns)
		return CQPOLL_POLICY_SLEEP;
	return CQPOLL_POLICY_KEEP_POLLING;
}

static const struct cqpoll_policy_ops rate_ops = {
	.name = "rate-rule",
	.state_size = sizeof(struct rate_state),
	.init = rate_init,
	.decide = rate_decide,
};

const struct cqpoll_policy_ops *
tpcq_lab_rate_rule(void)
{
	return &rate_ops;
}

const struct cqpoll_policy_ops *
tpcq_lab_policy_find(const char *spec, const char **args)
{
	size_t l = strlen(rate_ops.name);

	if (strncmp(spec, rate_ops.name, l) == 0 &&
	    (spec[l] == '\0' || spec[l] == ':')) {
		*args = spec[l] == ':' ? spec + l + 1 : NULL;
		return &rate_ops;
	}
	return cqpoll_policy_find(spec, args);
}

double
tpcq_lab_sleep_cost(const struct tpcq_lab_cost *c, double penalty)
{
	double mu = log((double)c->wake_ns), sigma;

	sigma = c->wake_p99_ns > c->wake_ns ?
		log((double)c->wake_p99_ns / (double)c->wake_ns) / TPCQ_LAB_Z99 :
		0.0;
	/* The log-normal's mean wake-up, and the CPU of arming and waking. */
	return (double)(c->arm_ns + c->wake_cpu_ns) +
	       penalty * exp(mu + sigma * sigma / 2);
}
