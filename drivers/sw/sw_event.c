/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software CQ events: raising (immediately through an eventfd, or late
 * through a timerfd), consuming, and the ground-truth oracle.
 */

#include <errno.h>
#include <poll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sw_private.h"

static int
deliver(struct cqpoll_sw_cq *q, uint64_t count)
{
	struct itimerspec its = { 0 };

	if (q->tfd >= 0) {
		/* A delayed event already on its way covers this one too. */
		if (timerfd_gettime(q->tfd, &its) < 0)
			return -errno;
		if (its.it_value.tv_sec != 0 || its.it_value.tv_nsec != 0)
			return 0;
		its.it_value.tv_sec = q->faults.event_delay_us / 1000000;
		its.it_value.tv_nsec = (long)(q->faults.event_delay_us % 1000000) * 1000;
		if (timerfd_settime(q->tfd, 0, &its, NULL) < 0)
			return -errno;
		return 0;
	}
	if (write(q->efd, &count, sizeof(count)) != sizeof(count))
		return -errno;
	return 0;
}

int
cqpoll_sw_raise(struct cqpoll_sw_cq *q, uint64_t *rng, uint32_t cover)
{
	/* Before delivery: an oracle that sees the cover also sees the event. */
	cqpoll_sw_advance(&q->covered, cover);
	return deliver(q, cqpoll_sw_chance(rng, q->faults.duplicate_event_pct) ? 2 : 1);
}

int
cqpoll_sw_signal(struct cqpoll_sw_cq *q, uint64_t *rng)
{
	(void)rng;
	return deliver(q, 1);
}

int
cqpoll_sw_event_fd(void *priv)
{
	struct cqpoll_sw_cq *q = priv;

	return q->epfd >= 0 ? q->epfd : q->efd;
}

static int
drain_fd(int fd, uint64_t *events)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) == sizeof(v)) {
		*events += v;
		return 0;
	}
	return errno == EAGAIN ? 0 : -errno;
}

int
cqpoll_sw_event_get(void *priv)
{
	struct cqpoll_sw_cq *q = priv;
	uint64_t events = 0;
	int r;

	r = drain_fd(q->efd, &events);
	if (r == 0 && q->tfd >= 0)
		r = drain_fd(q->tfd, &events);
	if (r < 0)
		return r;
	return events > 0x7fffffff ? 0x7fffffff : (int)events;
}

static int
event_pending(struct cqpoll_sw_cq *q)
{
	struct pollfd pfd = { .fd = cqpoll_sw_event_fd(q), .events = POLLIN };
	struct itimerspec its;

	if (poll(&pfd, 1, 0) > 0)
		return 1;
	if (q->tfd >= 0 && timerfd_gettime(q->tfd, &its) == 0 &&
	    (its.it_value.tv_sec != 0 || its.it_value.tv_nsec != 0))
		return 1;
	return 0;
}

int
cqpoll_sw_stranded(void *priv)
{
	struct cqpoll_sw_cq *q = priv;
	uint32_t posted, covered, frontier;

	/* posted is stored after covered: read in the opposite order. */
	posted = __atomic_load_n(&q->posted, __ATOMIC_ACQUIRE);
	covered = __atomic_load_n(&q->covered, __ATOMIC_ACQUIRE);
	frontier = (int32_t)(covered - q->ci) > 0 ? covered : q->ci;
	if ((int32_t)(posted - frontier) <= 0)
		return 0;
	/* A pending event wakes the consumer, which then polls everything. */
	return event_pending(q) ? 0 : 1;
}
