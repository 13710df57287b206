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
		/*
		 * A delayed event already due covers this one too: the consumer
		 * polls after taking it. The flag, not timerfd_gettime(), says
		 * "due": the kernel reports an expired timer as disarmed before
		 * its fd turns readable.
		 */
		if (__atomic_exchange_n(&q->timer_due, 1, __ATOMIC_ACQ_REL) != 0)
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

/* After cqpoll_sw_claim(): the cover is in place, the event follows. */
int
cqpoll_sw_raise(struct cqpoll_sw_cq *q, uint64_t *rng)
{
	return deliver(q, cqpoll_emu_chance(rng, q->faults.duplicate_event_pct) ? 2 : 1);
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
	uint64_t events = 0, delayed = 0;
	uint32_t due = 1;
	int r;

	r = drain_fd(q->efd, &events);
	if (r == 0 && q->tfd >= 0 && __atomic_load_n(&q->timer_due, __ATOMIC_ACQUIRE)) {
		r = drain_fd(q->tfd, &delayed);
		/*
		 * Taken: no longer due. An RMW, so that a raise that found it
		 * due (and folded into it) is ordered before our next poll.
		 */
		if (delayed != 0)
			__atomic_compare_exchange_n(&q->timer_due, &due, 0, 0,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		events += delayed;
	}
	if (r < 0)
		return r;
	return events > 0x7fffffff ? 0x7fffffff : (int)events;
}

static int
event_pending(struct cqpoll_sw_cq *q)
{
	struct pollfd pfd = { .fd = q->efd, .events = POLLIN };

	/* Only this (the consumer) thread takes events: both stay true until it does. */
	if (q->tfd >= 0 && __atomic_load_n(&q->timer_due, __ATOMIC_ACQUIRE))
		return 1;
	return poll(&pfd, 1, 0) > 0;
}

int
cqpoll_sw_stranded(void *priv)
{
	struct cqpoll_sw_cq *q = priv;
	uint32_t posted, covered, frontier;

	/*
	 * posted is stored after the claim's cover: read in the opposite order.
	 * A cover whose raise is still on its way counts as an event: it was
	 * committed when the arm was taken.
	 */
	posted = __atomic_load_n(&q->posted, __ATOMIC_ACQUIRE);
	covered = (uint32_t)__atomic_load_n(&q->arm_cover, __ATOMIC_ACQUIRE);
	frontier = (int32_t)(covered - q->ci) > 0 ? covered : q->ci;
	if ((int32_t)(posted - frontier) <= 0)
		return 0;
	/* A pending event wakes the consumer, which then polls everything. */
	return event_pending(q) ? 0 : 1;
}
