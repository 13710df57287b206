/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MONITOR_PRIVATE_H
#define CQPOLL_MONITOR_PRIVATE_H

#include "cqpoll_monitor.h"

/*
 * One bounded monitor wait on the next completion of each of @n CQs: 0
 * after the wait; -EAGAIN if one already has completions (poll); -ENOTSUP
 * when the tier is off (said once in the log) or a driver has no address;
 * other -errno from the hook. Never arms, never sleeps on an event.
 */
int cqpoll_monitor_wait_cqs(struct cqpoll_cq *const *cqs, unsigned int n);

#endif /* CQPOLL_MONITOR_PRIVATE_H */
