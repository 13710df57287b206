/* SPDX-License-Identifier: BSD-3-Clause */
/* Software CQ device: write an entry, make it visible, fire an armed CQ. */

#include <errno.h>

#include "sw_private.h"

int
cqpoll_sw_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp)
{
	struct cqpoll_sw_cq *q;
	struct cqpoll_sw_slot *s;
	uint32_t pi;
	int claimed, r = 0;

	if (cq == NULL || comp == NULL || cqpoll_cq_driver(cq) != &cqpoll_sw_ops)
		return -EINVAL;
	q = cqpoll_cq_priv(cq);
	/* A device failed by fault injection writes nothing more. */
	r = sw_dev_error(q);
	if (r < 0)
		return r;
	pi = q->pi;
	if (pi - q->ci_cache > q->mask) {
		q->ci_cache = __atomic_load_n(&q->ci_db, __ATOMIC_ACQUIRE);
		/* Full: refuse rather than overwrite an entry not yet read. */
		if (pi - q->ci_cache > q->mask)
			return -ENOSPC;
	}
	s = &q->ring[pi & q->mask];
	s->comp = *comp;
	sw_dev_post_begin(q);
	s->comp.timestamp = cqpoll_now_ns();
	s->comp.flags |= CQPOLL_COMPLETION_F_TIMESTAMP | CQPOLL_COMPLETION_F_WR_ID;
	__atomic_store_n(&s->owner, (pi >> q->log2_size) & 1, __ATOMIC_RELEASE);
	sw_dev_post_visible(q);
	q->pi = ++pi;
	__atomic_store_n(&q->pi_vis, pi, __ATOMIC_RELEASE);
	/*
	 * Entry visible, then look at the arm: the arm stores armed, then looks
	 * at the entries. With a full fence on both sides, one of the two sees
	 * the other, so an entry racing an arm is either polled or fires.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	claimed = cqpoll_sw_claim(q, pi);
	if (claimed)
		r = cqpoll_sw_raise(q, 0);
	return sw_dev_post_end(q, claimed, r, pi);
}
