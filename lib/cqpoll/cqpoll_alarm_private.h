/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_ALARM_PRIVATE_H
#define CQPOLL_ALARM_PRIVATE_H

/*
 * The safety net's timeout without a kernel timer per sleep. A timeout
 * passed to the wait (epoll_wait(), poll(), io_uring_enter()) arms a timer
 * for that call and cancels it at the wake-up, at every sleep, where the
 * stacks' own waits with no timeout (io_uring_wait_cqe(), fi_cq_sread(),
 * rte_epoll_wait(), ucp_worker_wait()) pay neither. An alarm due within
 * [now + T/2, now + T] bounds a sleep of timeout T as well: it is left
 * where it is while that holds and moved only when not, at most once per
 * half period however many sleeps; a sleep it ends has lasted T/2 at
 * least, so the safety net looks early, never late.
 *
 * Here the alarm is a timerfd watched beside the sleep's own fds (a poll
 * group's epoll set; cqpoll_alarm_poll(): cqpoll_cq_wait() on an event fd,
 * the UCX and libfabric waits); the io_uring driver keeps its
 * own on a ring (drivers/uring/uring_wait.c) with the same window.
 * Private to the library and its drivers.
 */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

struct cqpoll_alarm {
	/* Opened (zeroed memory: not yet; its fd says whether it worked). */
	bool open;
	int fd;          /* the timerfd, or -1: each sleep carries its timeout */
	bool set;        /* due at @at, not yet expired as far as we know */
	uint64_t at;     /* CLOCK_MONOTONIC ns */
};

/* Whether an alarm due at @p at bounds a sleep of @p t ns starting @p now. */
static inline bool
cqpoll_alarm_window(uint64_t at, uint64_t now, uint64_t t)
{
	return at >= now + t / 2 && at <= now + t;
}

/* A timerfd for @p a; without one (fd -1) sleeps keep their own timeout. */
static inline void
cqpoll_alarm_open(struct cqpoll_alarm *a)
{
	a->open = true;
	a->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	a->set = false;
	a->at = 0;
}

/* Its fd closed, if it was opened; no alarm from then on. */
static inline void
cqpoll_alarm_close(struct cqpoll_alarm *a)
{
	if (a->open && a->fd >= 0)
		close(a->fd);
	a->fd = -1;
}

/*
 * Open @p a as a member of the epoll set @p epfd, its events' data @p data
 * (how the set's reader tells it from the other fds); one that cannot join
 * the set is closed: each sleep then carries its timeout.
 */
static inline void
cqpoll_alarm_open_in(struct cqpoll_alarm *a, int epfd, void *data)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = data };

	cqpoll_alarm_open(a);
	if (a->fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, a->fd, &ev) != 0)
		cqpoll_alarm_close(a);
}

/*
 * The timeout a sleep of @p timeout_ms starting @p now must pass to its
 * wait: -1 (none) when the alarm bounds it, set or moved here if needed;
 * @p timeout_ms itself when there is no alarm, or it could not be set.
 */
static inline int
cqpoll_alarm_cover(struct cqpoll_alarm *a, int timeout_ms, uint64_t now)
{
	uint64_t t = (uint64_t)timeout_ms * 1000000u, at = now + t;
	struct itimerspec its = { .it_interval = { 0, 0 } };

	if (a->fd < 0 || timeout_ms <= 0)
		return timeout_ms;
	if (a->set && cqpoll_alarm_window(a->at, now, t))
		return -1;
	its.it_value.tv_sec = (time_t)(at / 1000000000u);
	its.it_value.tv_nsec = (long)(at % 1000000000u);
	/* Set, or moved: either way its expiry count starts again at 0. */
	if (timerfd_settime(a->fd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
		return timeout_ms;
	a->set = true;
	a->at = at;
	return -1;
}

/* Its fd was readable: expired. 0, or -errno of the read. */
static inline int
cqpoll_alarm_take(struct cqpoll_alarm *a)
{
	uint64_t v;

	a->set = false;
	/* Read, so that the fd is not readable until it expires again. */
	if (read(a->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

/*
 * A sleep on @p fd of @p timeout_ms starting @p now, bounded by the alarm
 * @p a (opened here at the first sleep) polled beside it:
 * 1 @p fd readable, 0 the alarm alone (the timeout), or -errno from poll(2)
 * or from the read of an expired alarm.
 */
static inline int
cqpoll_alarm_poll(struct cqpoll_alarm *a, int fd, int timeout_ms, uint64_t now)
{
	struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
				 { .fd = -1, .events = POLLIN } };
	int r, to;

	if (!a->open)
		cqpoll_alarm_open(a);
	/* Without an alarm (no timerfd), the timeout itself. */
	to = cqpoll_alarm_cover(a, timeout_ms, now);
	if (to < 0)
		pfd[1].fd = a->fd;
	r = poll(pfd, 2, to);
	if (r < 0)
		return -errno;
	if (pfd[1].revents != 0) {
		r = cqpoll_alarm_take(a);
		if (r < 0)
			return r;
	}
	return pfd[0].revents != 0 ? 1 : 0;
}

#endif /* CQPOLL_ALARM_PRIVATE_H */
