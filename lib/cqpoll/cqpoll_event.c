/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event side of a CQ: the pollable fd, consuming and acknowledging
 * events, and the bounded sleep.
 */

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "cqpoll_emu.h"
#include "cqpoll_log_private.h"
#include "cqpoll_private.h"
#include "cqpoll_trace_private.h"

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
cqpoll_cq_stranded(struct cqpoll_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	return cq->ops.stranded(cq->fp.priv);
}

int
cqpoll_cq_wait(struct cqpoll_cq *cq, int timeout_ms)
{
	struct pollfd pfd;
	uint64_t t0;
	int r;

	if (cq == NULL || timeout_ms <= 0 || timeout_ms > CQPOLL_WAIT_TIMEOUT_MS_MAX) {
		CQPOLL_LOG_LIB(ERR, "cq wait: %s", cq == NULL ? "NULL cq" :
			       "timeout out of range 1..3600000 ms");
		return -EINVAL;
	}
	if (!cq->armed)
		return -EAGAIN;
	/* Only emulated devices answer; real ones return -ENOTSUP. */
	if (cq->ops.stranded(cq->fp.priv) == 1)
		cqpoll_stat_add(&cq->fp.stats.lost_wakeups, 1);
	cqpoll_stat_add(&cq->fp.stats.waits, 1);
	CQPOLL_LOG_LIB(DEBUG, "cq %p: empty and armed, sleeping up to %d ms",
		       (void *)cq, timeout_ms);
	CQPOLL_TRACE(sleep, NULL, cq, timeout_ms);
	/* The clock is read only for a tracer. */
	t0 = cqpoll_trace_get_hook() != NULL ? cqpoll_now_ns() : 0;
	pfd.fd = cq->ops.event_fd(cq->fp.priv);
	pfd.events = POLLIN;
	pfd.revents = 0;
	r = poll(&pfd, 1, timeout_ms);
	if (r < 0) {
		r = -errno;
		CQPOLL_LOG_LIB(ERR, "cq %p: poll on its event fd: %s", (void *)cq,
			       strerror(-r));
		return r;
	}
	if (r == 0) {
		cqpoll_stat_add(&cq->fp.stats.wait_timeouts, 1);
		CQPOLL_LOG_LIB(DEBUG, "cq %p: woken by the %d ms timeout",
			       (void *)cq, timeout_ms);
		CQPOLL_TRACE(wake, NULL, cq, CQPOLL_TRACE_WAKE_TIMEOUT,
			     t0 != 0 ? cqpoll_now_ns() - t0 : 0, 0);
		return 0;
	}
	r = cqpoll_cq_event_get(cq);
	CQPOLL_LOG_LIB(DEBUG, "cq %p: woken by %s", (void *)cq,
		       r > 0 ? "its event" : r == 0 ? "a shared channel's event" :
		       "an event that failed");
	if (r < 0)
		return r;
	CQPOLL_TRACE(wake, NULL, cq, CQPOLL_TRACE_WAKE_EVENT,
		     t0 != 0 ? cqpoll_now_ns() - t0 : 0, 0);
	/* Readable with nothing for us (a shared channel): like a timeout. */
	return r > 0 ? 1 : 0;
}
