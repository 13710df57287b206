/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event side of a CQ: the pollable fd, consuming and acknowledging
 * events, and the bounded sleep.
 */

#include <errno.h>
#include <poll.h>

#include "cqpoll_private.h"

/* Longest safety-net timeout accepted by cqpoll_cq_wait(): one hour. */
#define CQPOLL_WAIT_TIMEOUT_MS_MAX 3600000

int
cqpoll_cq_event_fd(const struct cqpoll_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	return cq->ops.event_fd(cq->fp.priv);
}

static int
ack_unacked(struct cqpoll_cq *cq)
{
	int r;

	if (cq->events_unacked == 0)
		return 0;
	r = cq->ops.event_ack(cq->fp.priv, cq->events_unacked);
	if (r < 0)
		return r;
	cq->events_unacked = 0;
	cqpoll_stat_add(&cq->fp.stats.event_acks, 1);
	return 0;
}

int
cqpoll_cq_event_get(struct cqpoll_cq *cq)
{
	int r, a;

	if (cq == NULL)
		return -EINVAL;
	r = cq->ops.event_get(cq->fp.priv);
	if (r <= 0)
		return r;
	/* The arm fired: the next sleep needs a new one. */
	cq->armed = false;
	cq->fp.event_unchecked = 1;
	cqpoll_stat_add(&cq->fp.stats.events, (uint64_t)r);
	cq->events_unacked += (unsigned int)r;
	/* Acking takes a lock in verbs: pay it once per batch, not per event. */
	if (cq->events_unacked >= cq->event_ack_batch) {
		a = ack_unacked(cq);
		if (a < 0)
			return a;
	}
	return r;
}

int
cqpoll_cq_event_ack(struct cqpoll_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	return ack_unacked(cq);
}

int
cqpoll_cq_wait(struct cqpoll_cq *cq, int timeout_ms)
{
	struct pollfd pfd;
	int r;

	if (cq == NULL || timeout_ms <= 0 || timeout_ms > CQPOLL_WAIT_TIMEOUT_MS_MAX)
		return -EINVAL;
	if (!cq->armed)
		return -EAGAIN;
	/* Only a registered check answers (emulated devices' ground truth). */
	if (cqpoll_sleep_check_run(cq) == 1)
		cqpoll_stat_add(&cq->fp.stats.lost_wakeups, 1);
	cqpoll_stat_add(&cq->fp.stats.waits, 1);
	pfd.fd = cq->ops.event_fd(cq->fp.priv);
	pfd.events = POLLIN;
	pfd.revents = 0;
	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return -errno;
	if (r == 0) {
		cqpoll_stat_add(&cq->fp.stats.wait_timeouts, 1);
		return 0;
	}
	r = cqpoll_cq_event_get(cq);
	if (r < 0)
		return r;
	/* Readable with nothing for us (a shared channel): like a timeout. */
	return r > 0 ? 1 : 0;
}
