/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The spin policy: poll for a fixed time after the last completion, then
 * sleep. The simplest rule that bounds the CPU burnt per burst of traffic.
 */

#include <errno.h>
#include <string.h>

#include "cqpoll_policy_private.h"

/*
 * A wake-up costs tens of µs on a virtual machine: spinning less than that
 * after a burst sleeps through gaps that polling would have covered cheaply.
 */
#define SPIN_US_DEFAULT 50
#define SPIN_US_MAX 10000000

struct spin_state {
	uint64_t spin_ns;
	uint64_t last_ns; /* Last iteration with completions. */
};

static int
spin_init(void *state, const char *args)
{
	struct spin_state *s = state;
	uint64_t us = SPIN_US_DEFAULT;

	if (args != NULL &&
	    cqpoll_policy_parse_u64(args, strlen(args), SPIN_US_MAX, &us) < 0)
		return -EINVAL;
	s->spin_ns = us * 1000;
	s->last_ns = 0;
	return 0;
}

static enum cqpoll_policy_action
spin_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct spin_state *s = state;

	if (completions > 0) {
		s->last_ns = now_ns;
		return CQPOLL_POLICY_KEEP_POLLING;
	}
	return now_ns - s->last_ns >= s->spin_ns ? CQPOLL_POLICY_SLEEP :
						   CQPOLL_POLICY_KEEP_POLLING;
}

static const struct cqpoll_policy_ops spin_ops = {
	.size = sizeof(struct cqpoll_policy_ops),
	.name = "spin",
	.state_size = sizeof(struct spin_state),
	.init = spin_init,
	.decide = spin_decide,
};

const struct cqpoll_policy_ops *
cqpoll_policy_spin(void)
{
	return &spin_ops;
}
