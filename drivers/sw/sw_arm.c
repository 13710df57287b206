/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software CQ arm: the doorbell and the device's reaction to it, run on the
 * consumer thread. What happens to entries already past the consumer index
 * is what distinguishes the three semantics.
 */

#include "sw_private.h"

static void
arm_delay(struct cqpoll_sw_cq *q)
{
	if (cqpoll_emu_chance(&q->consumer_rng, q->faults.arm_delay_pct))
		cqpoll_emu_spin_ns(cqpoll_emu_rand(&q->consumer_rng) %
				  (q->faults.arm_delay_ns + 1ull));
}

static void
run_hook(struct cqpoll_sw_cq *q, enum cqpoll_sw_hook_point p)
{
	if (q->hook[p] != NULL)
		q->hook[p](q->hook_arg[p]);
}

int
cqpoll_sw_arm(void *priv)
{
	struct cqpoll_sw_cq *q = priv;
	uint32_t pi;
	int ret = 0;

	run_hook(q, CQPOLL_SW_HOOK_BEFORE_ARM);
	arm_delay(q);
	__atomic_fetch_or(&q->arm_cover, SW_ARMED, __ATOMIC_RELAXED);
	/* Pairs with the fence in cqpoll_sw_post(): see the comment there. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pi = __atomic_load_n(&q->pi_vis, __ATOMIC_RELAXED);
	switch (q->arm) {
	case CQPOLL_ARM_LEVEL:
		/* Entries past the armed index fire at once, as mlx5 does. */
		if (pi != q->ci && cqpoll_sw_claim(q, pi))
			ret = cqpoll_sw_raise(q, &q->consumer_rng);
		break;
	case CQPOLL_ARM_REPORT_MISSED:
		if (pi != q->ci) {
			ret = 1;
			/* The contract leaves the arm state undefined: model both. */
			if (!q->faults.report_missed_keeps_armed)
				__atomic_fetch_and(&q->arm_cover, ~SW_ARMED,
						   __ATOMIC_ACQ_REL);
		}
		break;
	case CQPOLL_ARM_EDGE:
		/* Entries already there are ignored: only new ones fire. */
		break;
	}
	arm_delay(q);
	run_hook(q, CQPOLL_SW_HOOK_AFTER_ARM);
	return ret;
}
