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

#include <sys/stat.h>

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
	/* CQEs the kernel dropped (cq.koverflow), and the count at creation. */
	unsigned int *koverflow;
	unsigned int overflow0;
	/* What the ring fd was at creation: an arm finds it gone or replaced. */
	dev_t ring_dev;
	ino_t ring_ino;
	/*
	 * The wait on the ring itself (uring_wait.c), where the kernel has
	 * what it needs: a timeout on io_uring_enter() (IORING_FEAT_EXT_ARG)
	 * and IORING_OP_MSG_RING, which is how another thread wakes a sleeper
	 * there. Any thread: waiting (the consumer is in, or entering, that
	 * sleep) and woken (a wake-up was asked and no wait has taken it yet:
	 * the next wait returns at once and clears it, so that a CQ woken
	 * again and again, as a poll group sleeping on its lone member's ring
	 * is by cqpoll_group_wakeup(), sleeps again after each).
	 */
	bool own_wait;
	/*
	 * Consumer thread: the last sleep was on the ring (the wait found a
	 * lost ring itself), not on the eventfd: the arm skips its fstat(2).
	 */
	bool ring_waits;
	bool waiting;
	bool woken;
	/*
	 * Wake-up CQEs posted into the ring and not yet dropped by the poll:
	 * the poll looks for them only while this is not 0.
	 */
	unsigned int wake_cqes;
	/*
	 * Consumer thread: the safety net's alarm (uring_wait.c), a timeout
	 * on a ring of the driver's own that posts a wake-up CQE into this
	 * ring when it expires; set for [now + T/2, now + T] and moved only
	 * when a wait would leave that window, so a sleep pays no timer of
	 * its own. alarm_state: ALARM_NONE (no ring yet), ALARM_IDLE,
	 * ALARM_SET (pending, due at alarm_at), ALARM_OFF (the kernel
	 * refused it: every wait carries its own timeout).
	 */
	struct io_uring alarm;
	int alarm_state;
	uint64_t alarm_at;
};

/* user_data of the CQE that wakes a sleeper on the ring: never delivered. */
#define CQPOLL_URING_WAKE_DATA(q) ((uint64_t)(uintptr_t)(q))

/* The driver's table, to recognise its own handles. */
extern const struct cqpoll_driver_ops cqpoll_uring_ops;

int cqpoll_uring_poll(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_uring_arm(void *priv);
int cqpoll_uring_arm_fast(struct cqpoll_uring_cq *q);
int cqpoll_uring_event_fd(void *priv);
int cqpoll_uring_event_get(void *priv);
void cqpoll_uring_disarm(struct cqpoll_uring_cq *q);
/* uring_wait.c */
bool cqpoll_uring_wait_usable(struct cqpoll_uring_cq *q);
int cqpoll_uring_wait(void *priv, int timeout_ms);
int cqpoll_uring_wake(void *priv);
void cqpoll_uring_alarm_free(struct cqpoll_uring_cq *q);

#endif /* CQPOLL_URING_PRIVATE_H */
