/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_PRIVATE_H
#define CQPOLL_PRIVATE_H

/*
 * The whole CQ handle, private to the library. Drivers see only the opaque
 * struct cqpoll_cq; the inline fast path sees only its first member.
 */

#include <errno.h>
#include <stdbool.h>

#include "cqpoll_driver.h"
#include "cqpoll_sleep_check.h"

struct cqpoll_group;

struct cqpoll_cq {
	/* Must stay first: cqpoll_poll_burst() casts the handle to it. */
	struct cqpoll_cq_fp fp;
	/* Copied from the driver's table with defaults filled in: no NULLs. */
	struct cqpoll_driver_ops ops;
	const struct cqpoll_driver_ops *driver;
	enum cqpoll_arm_semantics arm;
	uint32_t size;
	uint32_t event_ack_batch;
	/*
	 * True from an arm that guarantees an event until that event is
	 * consumed: while true, either the arm is still in force in the device
	 * or its event is pending on the fd, so sleeping is safe.
	 */
	bool armed;
	unsigned int events_unacked;
	/* Start of the last sleep that ended by timeout while armed. */
	uint64_t t_timeout_sleep;
	/* The poll group holding the CQ, or NULL: guards destroy and add. */
	struct cqpoll_group *group;
};

/* The check of cqpoll_sleep_check_register(), NULL when none. */
extern const struct cqpoll_sleep_check *cqpoll_sleep_check_current;

/* 1 if the registered check says a sleep on @p cq now loses a wake-up. */
static inline int
cqpoll_sleep_check_run(struct cqpoll_cq *cq)
{
	const struct cqpoll_sleep_check *c =
		__atomic_load_n(&cqpoll_sleep_check_current, __ATOMIC_ACQUIRE);

	return c != NULL ? c->check(cq, c->arg) : -ENOTSUP;
}

/*
 * A sleep on the armed CQ, begun at @t_sleep (cqpoll_now_ns()), ended by
 * timeout without its event: the next poll judges whether the event was lost.
 */
void cqpoll_cq_timeout_mark(struct cqpoll_cq *cq, uint64_t t_sleep);

#endif /* CQPOLL_PRIVATE_H */
