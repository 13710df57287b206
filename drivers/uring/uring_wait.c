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
 * io_uring_enter(GETEVENTS, min_complete 1) with a timeout, on the ring's
 * own fd: not through liburing's wait, which enters by the ring's
 * registered index once the application registered it
 * (io_uring_register_ring_fd()), and that index is valid only in the thread
 * that registered it, maybe not this one. 0 when woken, -errno.
 */
static int
enter_wait(struct cqpoll_uring_cq *q, struct __kernel_timespec *ts)
{
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
	    io_uring_cq_ready(q->ring) != 0 || io_uring_cq_has_overflow(q->ring))
		r = 0;
	else
		r = enter_wait(q, &ts);
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
