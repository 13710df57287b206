/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQ_EVENT_TEST_H
#define CQ_EVENT_TEST_H

/*
 * Whether a CQ's event has come, for tests that look at its fd themselves.
 * Apart from cqpoll_test.h: a test of its own poll function names it poll().
 */

#include <poll.h>

#include "cqpoll.h"

/* 1 if the CQ's event fd is readable now or becomes so within @p ms. */
static inline int
test_cq_event_within(const struct cqpoll_cq *cq, int ms)
{
	struct pollfd p = { .fd = cqpoll_cq_event_fd(cq), .events = POLLIN };

	return poll(&p, 1, ms) > 0;
}

#endif /* CQ_EVENT_TEST_H */
