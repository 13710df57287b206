/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_URING_PRIVATE_H
#define CQPOLL_URING_PRIVATE_H

/*
 * io_uring driver internals. The kernel writes the CQEs and the CQ tail and
 * reads the CQ head and flags; the consumer thread writes the head and the
 * flags. The shared words are reached through liburing's inline CQ helpers
 * (acquire load of the tail, release store of the head), never by hand.
 */

#include <stdbool.h>
#include <stdint.h>

#include <liburing.h>

#include "cqpoll_driver.h"
#include "cqpoll_uring.h"

struct cqpoll_uring_cq {
	/* Set at creation, read-only afterwards. */
	struct io_uring *ring;
	struct io_uring own;      /* the ring, when the driver created it */
	bool owned;
	int efd;                  /* eventfd registered with the ring */
	bool prev_enabled;        /* attach: the eventfd state to restore */
};

/* The driver's table, to recognise its own handles. */
extern const struct cqpoll_driver_ops cqpoll_uring_ops;

int cqpoll_uring_poll(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_uring_arm(void *priv);
int cqpoll_uring_event_fd(void *priv);
int cqpoll_uring_event_get(void *priv);
void cqpoll_uring_disarm(struct cqpoll_uring_cq *q);

#endif /* CQPOLL_URING_PRIVATE_H */
