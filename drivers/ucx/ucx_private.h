/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_UCX_PRIVATE_H
#define CQPOLL_UCX_PRIVATE_H

/*
 * UCX driver internals. Everything here belongs to the consumer thread, the
 * worker's: request callbacks run inside its progress and post calls.
 */

#include "cqpoll_alarm_private.h"
#include <stdbool.h>
#include <stdint.h>

#include "cqpoll_driver.h"
#include "cqpoll_ucx.h"

/* One posted request: what its completion will say. */
struct cqpoll_ucx_slot {
	struct cqpoll_ucx_cq *q;
	void *req;           /* UCX's request while it is in flight, else NULL */
	uint64_t wr_id;
	uint32_t len;        /* sends: the bytes posted */
	uint32_t next_free;
	uint8_t opcode;
	bool in_flight;
};

struct cqpoll_ucx_cq {
	ucp_worker_h worker;
	int efd;
	/* The wait's safety-net timeout (ucx_cq.c), opened at the first wait. */
	struct cqpoll_alarm alarm;
	uint32_t mask;                /* size - 1 */
	/* Completions pushed, not yet polled: tail written by callbacks. */
	struct cqpoll_completion *ring;
	uint32_t head, tail;
	/* Requests posted and not yet polled; at most size, so the ring never fills. */
	uint32_t in_use;
	uint32_t free_head;           /* first free slot, or UINT32_MAX */
	struct cqpoll_ucx_slot *slots;
	/*
	 * The last poll ended on a progress that found nothing, and no post
	 * came since: the arm right after it needs no progress of its own.
	 */
	bool progress_idle;
	/* The process's list of wrapped workers (ucx_cq.c). */
	struct cqpoll_ucx_cq *next_wrapped;
};

extern const struct cqpoll_driver_ops cqpoll_ucx_ops;

int cqpoll_ucx_poll(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_ucx_arm(void *priv);
void cqpoll_ucx_cancel_all(struct cqpoll_ucx_cq *q);

#endif /* CQPOLL_UCX_PRIVATE_H */
