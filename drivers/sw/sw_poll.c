/* SPDX-License-Identifier: BSD-3-Clause */
/* Software CQ consumer: read entries by owner bit, publish the index once. */

#include "cqpoll_mutant.h"
#include "sw_private.h"

static int
read_entries(struct cqpoll_sw_cq *q, struct cqpoll_completion *comps,
	     unsigned int n)
{
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
	}
	return (int)i;
}

/*
 * The failure is read after the empty look: entries the device wrote
 * before it failed may have become visible in between (the look, then the
 * post, then the failure, then its read). The failure's acquire makes them
 * visible to a second look, which returns them before the errno.
 */
#if CQPOLL_MUTANT(SW_ERROR_NO_SECOND_LOOK)
/* Negative control only (test build): the errno as soon as it is seen. */
static int
after_failure(struct cqpoll_sw_cq *q, struct cqpoll_completion *comps,
	      unsigned int n)
{
	(void)q;
	(void)comps;
	(void)n;
	return 0;
}
#else
static int
after_failure(struct cqpoll_sw_cq *q, struct cqpoll_completion *comps,
	      unsigned int n)
{
	return read_entries(q, comps, n);
}
#endif

int
cqpoll_sw_poll(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	struct cqpoll_sw_cq *q = priv;
	int i = read_entries(q, comps, n), r;

	if (i != 0)
		return i;
	/*
	 * Drained: a device failed by fault injection says so now, after
	 * every entry written before the failure went out; otherwise 0.
	 */
	r = sw_dev_error(q);
	if (r < 0) {
		i = after_failure(q, comps, n);
		if (i != 0)
			return i;
	}
	return r;
}
