/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software CQ arm: the doorbell and the device's reaction to it, run on the
 * consumer thread. What happens to entries already past the consumer index
 * is what distinguishes the three semantics.
 */

#include "sw_private.h"

int
cqpoll_sw_arm(void *priv)
{
	struct cqpoll_sw_cq *q = priv;
	uint32_t pi;
	bool past;
	int ret = sw_dev_error(q);

	/* A dead device takes no arm (injected failures only). */
	if (ret < 0)
		return ret;
	sw_dev_arm_begin(q);
	__atomic_fetch_or(&q->arm_cover, SW_ARMED, __ATOMIC_RELAXED);
	/* Pairs with the fence in cqpoll_sw_post(): see the comment there. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pi = __atomic_load_n(&q->pi_vis, __ATOMIC_RELAXED);
	/*
	 * Entries past the consumer index, if any. pi_vis may also be behind
	 * it: a post stores the owner bit, which the consumer may read and
	 * consume, before it publishes pi_vis. Such an entry is no miss: it was
	 * polled, and the post still looks at the arm after publishing.
	 */
	past = (int32_t)(pi - q->ci) > 0;
	switch (q->arm) {
	case CQPOLL_ARM_LEVEL:
		/* Entries past the armed index fire at once, as mlx5 does. */
		if (past && cqpoll_sw_claim(q, pi))
			ret = cqpoll_sw_raise(q, 1);
		break;
	case CQPOLL_ARM_REPORT_MISSED:
		if (past) {
			ret = 1;
			/*
			 * The contract leaves the arm state undefined; this
			 * device drops the arm (the emulated one can keep it).
			 */
			if (!sw_dev_keeps_armed(q))
				__atomic_fetch_and(&q->arm_cover, ~SW_ARMED,
						   __ATOMIC_ACQ_REL);
		}
		break;
	case CQPOLL_ARM_EDGE:
		/* Entries already there are ignored: only new ones fire. */
		break;
	}
	sw_dev_arm_end(q);
	/* Failed inside the arm window (a hook): the arm took no effect. */
	if (ret == 0)
		ret = sw_dev_error(q);
	return ret;
}
