/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring sleep for cqpoll_cq_wait(): on the ring itself, as
 * io_uring_wait_cqe() sleeps, in one io_uring_enter(GETEVENTS) with a
 * timeout. The eventfd costs two system calls per sleep (a poll(2), then
 * the read(2) that resets it): the kernel's CQ wait needs no reset, and it
 * cannot miss a CQE, since it compares the CQ tail with the head under its
 * own wait queue (io_cqring_wait(), Linux 6.18), overflowed CQEs included.
 *
 * Another thread wakes this sleep (a failure reported with
 * cqpoll_cq_fail(), a poll group's cross-thread wake-up while the group
 * sleeps on this ring) with a CQE it posts into the ring through
 * IORING_OP_MSG_RING from a ring of its own; the poll drops that CQE.
 */

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "cqpoll_alarm_private.h"
#include "cqpoll_mutant.h"
#include "uring_private.h"

/* Probed once, at creation: the wait is used only where both exist. */
bool
cqpoll_uring_wait_usable(struct cqpoll_uring_cq *q)
{
	struct io_uring_probe *probe;
	bool ok;

	if (!(q->ring->features & IORING_FEAT_EXT_ARG))
		return false;
	probe = io_uring_get_probe_ring(q->ring);
	if (probe == NULL)
		return false;
	ok = io_uring_opcode_supported(probe, IORING_OP_MSG_RING);
	io_uring_free_probe(probe);
	return ok;
}

/*
 * The safety net's timeout without a kernel timer per sleep
 * (cqpoll_alarm_private.h): here the alarm lives on a ring of the driver's own, as
 * an absolute IORING_OP_TIMEOUT linked to an IORING_OP_MSG_RING that posts
 * a wake-up CQE (CQPOLL_URING_WAKE_DATA, dropped by the poll) into the
 * CQ's ring when it expires (IORING_TIMEOUT_ETIME_SUCCESS: the expiry does
 * not break the link); moved with IORING_TIMEOUT_UPDATE.
 *
 * The timeout completes by task work of the thread that set it: on its
 * next entry to or exit from the kernel, at once if it sleeps there. A
 * consumer that moved to another thread finds the alarm cancelled when
 * the old thread exits, and sets another.
 */
#define ALARM_NONE 0
#define ALARM_IDLE 1
#define ALARM_SET 2
#define ALARM_OFF 3
/* user_data on the alarm's ring: the timeout, its link, a move. */
#define ALARM_TIMEOUT 1
#define ALARM_LINK 2
#define ALARM_MOVE 3


/* What the alarm's ring says: expired, cancelled, moved or refused. */
static void
alarm_reap(struct cqpoll_uring_cq *q)
{
	struct io_uring_cqe *cqe;

	/* Nearly always nothing: two loads, not liburing's peek call. */
	if (io_uring_cq_ready(&q->alarm) == 0)
		return;
	while (io_uring_peek_cqe(&q->alarm, &cqe) == 0) {
		switch (cqe->user_data) {
		case ALARM_TIMEOUT:
			/* Expired (its link posts the CQE), or cancelled. */
			if (cqe->res == -EINVAL)
				q->alarm_state = ALARM_OFF;
			else if (q->alarm_state == ALARM_SET)
				q->alarm_state = ALARM_IDLE;
			break;
		case ALARM_LINK:
			/* Not posted: nothing for the poll to drop. */
			if (cqe->res < 0)
				__atomic_fetch_sub(&q->wake_cqes, 1, __ATOMIC_RELAXED);
			break;
		case ALARM_MOVE:
			/* Too late to move: it expired, or is expiring. */
			if (cqe->res < 0 && q->alarm_state == ALARM_SET)
				q->alarm_state = ALARM_IDLE;
			break;
		default:
			break;
		}
		io_uring_cqe_seen(&q->alarm, cqe);
	}
}

/* unused: a test build may replace its one caller. */
static __attribute__((unused)) void
ns_to_ts(uint64_t ns, struct __kernel_timespec *ts)
{
	ts->tv_sec = (long long)(ns / 1000000000ull);
	ts->tv_nsec = (long long)(ns % 1000000000ull);
}

#if CQPOLL_MUTANT(URING_NO_ALARM)
/* Negative control only (test build): covered, says it, and sets nothing. */
static int
alarm_cover(struct cqpoll_uring_cq *q, int timeout_ms)
{
	(void)timeout_ms;
	if (q->alarm_state == ALARM_NONE) {
		if (io_uring_queue_init(4, &q->alarm, 0) != 0)
			return -1;
		q->alarm_state = ALARM_IDLE;
	}
	return 0;
}
#else
/*
 * The alarm due within [now + T/2, now + T]: 0, or -1 when this wait
 * must carry its own timeout (no alarm ring, or the kernel refused it).
 */
static int
alarm_cover(struct cqpoll_uring_cq *q, int timeout_ms)
{
	uint64_t t = (uint64_t)timeout_ms * 1000000u, now, at;
	struct __kernel_timespec ts;
	struct io_uring_sqe *sqe, *link;

	if (q->alarm_state == ALARM_OFF)
		return -1;
	if (q->alarm_state == ALARM_NONE) {
		if (io_uring_queue_init(4, &q->alarm, 0) != 0) {
			q->alarm_state = ALARM_OFF;
			return -1;
		}
		q->alarm_state = ALARM_IDLE;
	}
	alarm_reap(q);
	if (q->alarm_state == ALARM_OFF)
		return -1;
	now = cqpoll_now_ns();
	if (q->alarm_state == ALARM_SET && cqpoll_alarm_window(q->alarm_at, now, t))
		return 0;
	at = now + t;
	ns_to_ts(at, &ts);
	if (q->alarm_state == ALARM_SET) {
		sqe = io_uring_get_sqe(&q->alarm);
		if (sqe == NULL)
			return -1;
		io_uring_prep_timeout_update(sqe, &ts, ALARM_TIMEOUT,
					     IORING_TIMEOUT_ABS);
		sqe->user_data = ALARM_MOVE;
		if (io_uring_submit(&q->alarm) != 1)
			return -1;
		/* The move completes in the submit: a refusal is seen now. */
		alarm_reap(q);
		if (q->alarm_state == ALARM_SET) {
			q->alarm_at = at;
			return 0;
		}
		if (q->alarm_state == ALARM_OFF)
			return -1;
	}
	sqe = io_uring_get_sqe(&q->alarm);
	link = io_uring_get_sqe(&q->alarm);
	if (sqe == NULL || link == NULL)
		return -1;
	io_uring_prep_timeout(sqe, &ts, 0,
			      IORING_TIMEOUT_ABS | IORING_TIMEOUT_ETIME_SUCCESS);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = ALARM_TIMEOUT;
	io_uring_prep_msg_ring(link, q->ring->ring_fd, 0, CQPOLL_URING_WAKE_DATA(q), 0);
	link->user_data = ALARM_LINK;
	/* Counted before it can land, as a wake-up's CQE is. */
	__atomic_fetch_add(&q->wake_cqes, 1, __ATOMIC_SEQ_CST);
	if (io_uring_submit(&q->alarm) != 2) {
		__atomic_fetch_sub(&q->wake_cqes, 1, __ATOMIC_RELAXED);
		q->alarm_state = ALARM_OFF;
		return -1;
	}
	q->alarm_state = ALARM_SET;
	q->alarm_at = at;
	return 0;
}
#endif

/*
 * Whether the alarm ended this sleep: it expired (its timeout's CQE is in,
 * or it is no longer set), and the ring holds nothing but wake-up CQEs,
 * which are taken off its head here so that they do not read as work.
 */
static bool
alarm_rang(struct cqpoll_uring_cq *q)
{
	struct io_uring_cqe *cqe;

	alarm_reap(q);
	if (q->alarm_state == ALARM_SET)
		return false;
	while (io_uring_peek_cqe(q->ring, &cqe) == 0 &&
	       cqe->user_data == CQPOLL_URING_WAKE_DATA(q)) {
		io_uring_cqe_seen(q->ring, cqe);
		__atomic_fetch_sub(&q->wake_cqes, 1, __ATOMIC_RELAXED);
	}
	return io_uring_cq_ready(q->ring) == 0 && !io_uring_cq_has_overflow(q->ring);
}

void
cqpoll_uring_alarm_free(struct cqpoll_uring_cq *q)
{
	if (q->alarm_state != ALARM_NONE)
		io_uring_queue_exit(&q->alarm);
	q->alarm_state = ALARM_NONE;
}

/*
 * io_uring_enter(GETEVENTS, min_complete 1) with a timeout, on the ring's
 * own fd: not through liburing's wait, which enters by the ring's
 * registered index once the application registered it
 * (io_uring_register_ring_fd()), and that index is valid only in the thread
 * that registered it, maybe not this one. 0 when woken, -errno.
 */
static int
enter_wait(struct cqpoll_uring_cq *q, struct __kernel_timespec *ts)
{
	/* ts NULL: no timeout (the alarm bounds the sleep). */
	struct io_uring_getevents_arg arg = {
		.ts = (uint64_t)(uintptr_t)ts,
	};
	int r;

	r = io_uring_enter2((unsigned int)q->ring->ring_fd, 0, 1,
			    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			    (sigset_t *)(void *)&arg, sizeof(arg));
	return r < 0 ? r : 0;
}

int
cqpoll_uring_wait(void *priv, int timeout_ms)
{
	struct cqpoll_uring_cq *q = priv;
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (long long)(timeout_ms % 1000) * 1000000,
	};
	int r;

	/*
	 * Store waiting, then take woken; the waker stores woken, then loads
	 * waiting: both sequentially consistent, so either this sees the
	 * wake-up or the waker sees the sleeper and posts its CQE. Taken
	 * (cleared) here, so a later wait sleeps again; a CQE posted for a
	 * wake-up taken this way only ends a later sleep early.
	 */
	q->ring_waits = true;
	/*
	 * The ring's wait needs no eventfd: disarmed, the kernel writes it
	 * for no CQE of this sleep, so nobody finds it readable afterwards
	 * for an event already taken here.
	 */
	cqpoll_uring_disarm(q);
	__atomic_store_n(&q->waiting, true, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&q->woken, false, __ATOMIC_SEQ_CST) ||
	    io_uring_cq_ready(q->ring) != 0 || io_uring_cq_has_overflow(q->ring)) {
		r = 0;
	} else if (alarm_cover(q, timeout_ms) == 0) {
		r = enter_wait(q, NULL);
		/* Ended by the alarm alone: the timeout it stands for. */
		if (r == 0 && alarm_rang(q))
			r = -ETIME;
	} else {
		r = enter_wait(q, &ts);
	}
	__atomic_store_n(&q->waiting, false, __ATOMIC_RELAXED);
	/*
	 * A wake-up asked during the sleep is taken with it (its CQE, if
	 * posted, is dropped by the next poll), so the next wait sleeps; one
	 * that came after a timeout or a signal makes this a wake-up.
	 */
	if (__atomic_exchange_n(&q->woken, false, __ATOMIC_SEQ_CST) &&
	    (r == -ETIME || r == -EINTR))
		r = 0;
	/* Woken, or the ring busy: the event taken, the CQ disarmed. */
	if (r == 0 || r == -EAGAIN || r == -EBUSY)
		return 1;
	if (r == -ETIME || r == -EINTR) {
		/*
		 * Not woken: the core still holds the CQ armed, for whoever
		 * sleeps on the eventfd next. Armed again, then the edge's
		 * look (as cqpoll_poll_and_arm() looks after an arm): a CQE
		 * posted while disarmed raised nothing, so it is this
		 * sleep's event.
		 */
		if (cqpoll_uring_arm_fast(q) != 0 ||
		    io_uring_cq_ready(q->ring) != 0 || io_uring_cq_has_overflow(q->ring)) {
			cqpoll_uring_disarm(q);
			return 1;
		}
		return r == -ETIME ? 0 : r;
	}
	/*
	 * The ring's fd closed under us (EBADF), or its number reused by
	 * a file that is no io_uring (EOPNOTSUPP): the ring is lost, as
	 * the arm's fstat(2) reports it.
	 */
	if (r == -EOPNOTSUPP || r == -ENXIO)
		r = -EBADF;
	return r;
}

/* Post the wake-up CQE from a one-off ring of this thread's own. */
static int
post_wake(struct cqpoll_uring_cq *q)
{
	struct io_uring tmp;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int r;

	r = io_uring_queue_init(2, &tmp, 0);
	if (r < 0)
		return r;
	/* Counted before it can land: the poll must look for it then. */
	__atomic_fetch_add(&q->wake_cqes, 1, __ATOMIC_SEQ_CST);
	sqe = io_uring_get_sqe(&tmp);
	io_uring_prep_msg_ring(sqe, q->ring->ring_fd, 0, CQPOLL_URING_WAKE_DATA(q), 0);
	r = io_uring_submit_and_wait(&tmp, 1);
	if (r >= 0) {
		r = io_uring_peek_cqe(&tmp, &cqe);
		if (r == 0)
			r = cqe->res < 0 ? cqe->res : 0;
	}
	/* Not posted: nothing to drop. */
	if (r < 0)
		__atomic_fetch_sub(&q->wake_cqes, 1, __ATOMIC_RELAXED);
	io_uring_queue_exit(&tmp);
	return r;
}

/*
 * A failure reported from any thread, or a poll group's cross-thread
 * wake-up, wakes whoever sleeps on the CQ: on the eventfd (a poll group's
 * epoll, or a wait without the ring's own), and on the ring.
 */
int
cqpoll_uring_wake(void *priv)
{
	struct cqpoll_uring_cq *q = priv;
	const uint64_t one = 1;

	if (write(q->efd, &one, sizeof(one)) != sizeof(one) && errno != EAGAIN)
		return -errno;
	if (!q->own_wait)
		return 0;
	__atomic_store_n(&q->woken, true, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&q->waiting, __ATOMIC_SEQ_CST))
		return 0;
	return post_wake(q);
}
