/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring arm and events: IORING_CQ_EVENTFD_DISABLED in the CQ ring flags
 * gates the eventfd the kernel signals after posting CQEs.
 *
 * The kernel posts a CQE, stores the CQ tail (release), then runs a full
 * barrier (smp_mb() in wq_has_sleeper(), io_cqring_wake()) before it reads
 * the flags to decide whether to signal (io_eventfd_grab()). The arm stores
 * the flags, then runs a full barrier before cqpoll_poll_and_arm() loads the
 * tail again. Either the kernel sees the flag clear and signals, or this
 * thread sees the CQE: the store-buffer pattern, with a full barrier on both
 * sides. CQEs posted while the flag was set raise nothing, ever: edge.
 */

#include <errno.h>
#include <unistd.h>

#include "uring_private.h"

int
cqpoll_uring_arm(void *priv)
{
	struct cqpoll_uring_cq *q = priv;
	struct stat st;

	/*
	 * The ring's fd closed under us (or its number reused by another
	 * file): nothing can submit to the ring any more, and a sleep on it
	 * would wait for nothing. One fstat(2) per sleep on the eventfd
	 * (a poll group, an external loop), and when the arm is rung on an
	 * armed CQ (cqpoll_cq_arm_check(): the safety net and the health
	 * check). A consumer that sleeps on the ring itself (uring_wait.c)
	 * pays none: its io_uring_enter() finds a lost ring at once, as
	 * io_uring_wait_cqe() would. Another io_uring in the same fd number
	 * shares the anonymous inode and cannot be told apart.
	 */
	if ((!q->ring_waits || io_uring_cq_eventfd_enabled(q->ring)) &&
	    (fstat(q->ring->ring_fd, &st) < 0 || st.st_dev != q->ring_dev ||
	     st.st_ino != q->ring_ino))
		return -EBADF;
	return cqpoll_uring_arm_fast(q);
}

/* The arm itself: the eventfd enabled, then a full barrier. */
int
cqpoll_uring_arm_fast(struct cqpoll_uring_cq *q)
{
	int r;

	/* The ring has CQ flags: checked when the CQ was made. */
	r = io_uring_cq_eventfd_toggle(q->ring, true);
	/* Pairs with the kernel's smp_mb() between tail store and flags load. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return r;
}

/* Busy polling again: no eventfd write per CQE from the kernel meanwhile. */
void
cqpoll_uring_disarm(struct cqpoll_uring_cq *q)
{
	io_uring_cq_eventfd_toggle(q->ring, false);
}

int
cqpoll_uring_event_fd(void *priv)
{
	struct cqpoll_uring_cq *q = priv;

	return q->efd;
}

int
cqpoll_uring_event_get(void *priv)
{
	struct cqpoll_uring_cq *q = priv;
	uint64_t v;

	/*
	 * Disarm only once an event is taken: with none, the arm is still in
	 * force. A CQE posted between the read and the disarm signals again,
	 * which only ends a later sleep early (a spurious event), never late.
	 */
	/* Woken on the eventfd: the next arm checks the ring's fd again. */
	q->ring_waits = false;
	if (read(q->efd, &v, sizeof(v)) != sizeof(v))
		return errno == EAGAIN ? 0 : -errno;
	cqpoll_uring_disarm(q);
	/* One arm, one event: the count is the CQEs posted while it was armed. */
	return 1;
}
