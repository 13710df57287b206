/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software CQ's monitor address: the owner word of the slot the next entry
 * goes to, which the device stores last (release) with the phase of its
 * lap, as an mlx5 device writes the owner bit of the next CQE.
 */

#include <errno.h>

#include "cqpoll_monitor.h"
#include "sw_private.h"

int
cqpoll_sw_get_monitor_addr(void *priv, struct cqpoll_monitor_cond *cond)
{
	struct cqpoll_sw_cq *q = priv;
	const struct cqpoll_sw_slot *s = &q->ring[q->ci & q->mask];
	uint32_t phase = (q->ci >> q->log2_size) & 1;

	cond->addr = &s->owner;
	cond->size = sizeof(s->owner);
	cond->mask = 1;
	cond->val = phase;
	cond->match = CQPOLL_MONITOR_EQUAL;
	return cqpoll_monitor_cond_met(cond) ? -EAGAIN : 0;
}
