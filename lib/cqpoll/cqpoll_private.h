/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_PRIVATE_H
#define CQPOLL_PRIVATE_H

/*
 * The whole CQ handle, private to the library. Drivers see only the opaque
 * struct cqpoll_cq; the inline fast path sees only its first member.
 */

#include <stdbool.h>

#include "cqpoll_driver.h"

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
};

#endif /* CQPOLL_PRIVATE_H */
