/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ethdev arm and events.
 *
 * virtio and vhost: rte_eth_dev_rx_intr_enable() clears
 * VRING_AVAIL_F_NO_INTERRUPT with a plain store, no barrier and no look at
 * the ring; vhost enqueues, updates the used index, runs a full barrier and
 * then reads the flag to decide whether to signal. Our full barrier after
 * the store makes the pair a store-buffer pattern with a fence on each side:
 * either vhost sees the flag clear and signals, or the poll that
 * cqpoll_poll_and_arm() runs next sees the packet. Packets enqueued while
 * the flag was set raise nothing, ever: an edge arm.
 *
 * tap: no enable; the fd is the queue's tun fd, and the kernel wakes its
 * waiters (an edge in our EPOLLET set) for each packet queued. The PMD's Rx
 * burst reads only after its real-time signal handler counted the packet,
 * so the signal must reach the thread that polls before that thread wakes:
 * the arm makes this thread the fd's owner.
 */

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <rte_atomic.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "ethdev_private.h"

/* The fd's signals to the calling thread, unless they already go there. */
static int
own_signals(struct cqpoll_ethdev_cq *q)
{
	struct f_owner_ex o;
	pid_t tid = (pid_t)rte_sys_gettid();

	/*
	 * Asked at every arm, not cached: the PMD sets F_SETOWN getpid() again
	 * whenever it sets the queue up, and an arm costs a wake-up anyway.
	 */
	if (fcntl(q->fd, F_GETOWN_EX, &o) == 0 && o.type == F_OWNER_TID &&
	    o.pid == tid)
		return 0;
	o.type = F_OWNER_TID;
	o.pid = tid;
	if (fcntl(q->fd, F_SETOWN_EX, &o) != 0) {
		ETHDEV_LOG(ERR, "port %u rxq %u: F_SETOWN_EX to thread %d: %s",
			   q->port, q->queue, (int)tid, strerror(errno));
		return -errno;
	}
	return 0;
}

int
cqpoll_ethdev_arm(void *priv)
{
	struct cqpoll_ethdev_cq *q = priv;
	int r;

	if (q->signal_driven) {
		r = own_signals(q);
		if (r < 0)
			return r;
	}
	if (q->arm == CQPOLL_ETHDEV_ARM_ENABLE && !q->enabled) {
		r = rte_eth_dev_rx_intr_enable(q->port, q->queue);
		if (r < 0) {
			ETHDEV_LOG(ERR, "port %u rxq %u: rte_eth_dev_rx_intr_enable: %s",
				   q->port, q->queue, strerror(-r));
			return r;
		}
		q->enabled = true;
	}
	/* Pairs with the PMD's (vhost's) barrier between enqueue and flag read. */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* Busy polling again: no interrupt per burst from the PMD meanwhile. */
void
cqpoll_ethdev_disarm(struct cqpoll_ethdev_cq *q)
{
	if (q->arm != CQPOLL_ETHDEV_ARM_ENABLE || !q->enabled)
		return;
	rte_eth_dev_rx_intr_disable(q->port, q->queue);
	q->enabled = false;
}

int
cqpoll_ethdev_event_fd(void *priv)
{
	struct cqpoll_ethdev_cq *q = priv;

	return q->epfd;
}

/* Members of epfd: the queue's fd, the wake-up eventfd, the alarm. */
#define ETHDEV_SET_FDS 3

/*
 * The ready entries of an epoll_wait() on epfd: 1 if the queue's was one
 * of them (its interrupt disabled: the event is taken), else 0; an
 * expired alarm is read, so that the set is not readable for it again.
 */
static int
take_ready(struct cqpoll_ethdev_cq *q, const struct epoll_event *ev, int n)
{
	uint64_t v;
	int i, queue = 0;

	for (i = 0; i < n; i++) {
		if (ev[i].data.ptr == &q->alarm) {
			cqpoll_alarm_take(&q->alarm);
			continue;
		}
		/* A wake-up is taken as an event (cqpoll_cq_wake_t); one read resets it. */
		if (ev[i].data.ptr == &q->wake_fd &&
		    read(q->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
		queue = 1;
	}
	/*
	 * Disable only once an event is taken: with none, the arm is still in
	 * force. A packet enqueued between the two signals again, which ends a
	 * later sleep early (a spurious event), never late.
	 */
	if (queue)
		cqpoll_ethdev_disarm(q);
	return queue;
}

int
cqpoll_ethdev_event_get(void *priv)
{
	struct cqpoll_ethdev_cq *q = priv;
	struct epoll_event ev[ETHDEV_SET_FDS];
	int n;

	/* Collects the edge; the EAL never reads virtio's eventfd, nor do we. */
	n = epoll_wait(q->epfd, ev, ETHDEV_SET_FDS, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return take_ready(q, ev, n);
}

/*
 * cqpoll_cq_wait()'s sleep: epoll_wait() on the set itself, as
 * rte_epoll_wait() sleeps, taking the event in the same call (the generic
 * sleep costs a poll(2) on the set and event_get's epoll_wait() after it).
 * The timeout is the alarm's (cqpoll_alarm_private.h), a timerfd in the
 * set, so that the sleep arms no timer of its own.
 */
int
cqpoll_ethdev_wait(void *priv, int timeout_ms)
{
	struct cqpoll_ethdev_cq *q = priv;
	struct epoll_event ev[ETHDEV_SET_FDS];
	int n;

	if (!q->alarm.open)
		cqpoll_alarm_open_in(&q->alarm, q->epfd, &q->alarm);
	n = epoll_wait(q->epfd, ev, ETHDEV_SET_FDS,
		       cqpoll_alarm_cover(&q->alarm, timeout_ms, cqpoll_now_ns()));
	if (n < 0)
		return -errno;
	return take_ready(q, ev, n);
}

/*
 * The wake-up, from any thread (a failure report, a poll group's kick while
 * it sleeps in this CQ's wait): the eventfd in the set, so that the set is
 * readable, to cqpoll_cq_wait(), a group's epoll or an external loop.
 */
int
cqpoll_ethdev_wake(void *priv)
{
	struct cqpoll_ethdev_cq *q = priv;
	uint64_t one = 1;

	if (write(q->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}
