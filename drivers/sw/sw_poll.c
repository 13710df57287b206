/* SPDX-License-Identifier: BSD-3-Clause */
/* Software CQ consumer: read entries by owner bit, publish the index once. */

#include "sw_private.h"

int
cqpoll_sw_poll(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	struct cqpoll_sw_cq *q = priv;
	uint32_t ci = q->ci;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct cqpoll_sw_slot *s = &q->ring[ci & q->mask];
		uint32_t phase = (ci >> q->log2_size) & 1;

		/* Acquire: the entry's fields are read only after its owner. */
		if (__atomic_load_n(&s->owner, __ATOMIC_ACQUIRE) != phase)
			break;
		comps[i] = s->comp;
		ci++;
	}
	if (i != 0) {
		q->ci = ci;
		/* Release: slots are handed back only after they were copied. */
		__atomic_store_n(&q->ci_db, ci, __ATOMIC_RELEASE);
		return (int)i;
	}
	/*
	 * Drained: a device failed by fault injection says so now, after
	 * every entry written before the failure went out; otherwise 0.
	 */
	return sw_dev_error(q);
}
