/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring consumer: CQEs straight from the shared ring through liburing's
 * inline CQ helpers (no call, no syscall), and the flush of completions the
 * kernel kept aside when the ring was full.
 */

#include <errno.h>

#include "uring_private.h"

static void
cqe_to_completion(const struct io_uring_cqe *cqe, struct cqpoll_completion *c)
{
	int32_t res = cqe->res;

	c->wr_id = cqe->user_data;
	c->timestamp = 0;
	c->inline_data = NULL;
	c->qp_num = 0;
	c->imm_data = 0;
	c->opcode = 0;
	c->flags = CQPOLL_COMPLETION_F_WR_ID;
	c->wqe_counter = 0;
	c->reserved = 0;
	if (res >= 0) {
		c->status = CQPOLL_STATUS_SUCCESS;
		c->byte_len = (uint32_t)res;
		c->vendor_err = 0;
	} else {
		/* A cancelled request is what a flushed work request is to verbs. */
		c->status = res == -ECANCELED ? CQPOLL_STATUS_WR_FLUSH_ERR :
			CQPOLL_STATUS_GENERAL_ERR;
		c->byte_len = 0;
		c->vendor_err = (uint32_t)-res;
	}
}

/*
 * Up to @p n CQEs, those of the application: a CQE that woke a sleeper on
 * the ring (uring_wait.c: a failure report, a poll group's cross-thread
 * wake-up, the safety net's alarm) is ours, dropped here, and no longer
 * looked for once every one posted was (its user_data may be the
 * application's too).
 */
static unsigned int
read_cqes(struct cqpoll_uring_cq *q, struct cqpoll_completion *comps,
	  unsigned int n)
{
	struct io_uring *ring = q->ring;
	const struct io_uring_cqe *cqe;
	/* Acquire of the tail: the CQEs it covers are read after it. */
	unsigned int i, k = 0, avail = io_uring_cq_ready(ring);
	/* Only this thread writes the head. */
	unsigned int head = *ring->cq.khead;
	bool ours = __atomic_load_n(&q->wake_cqes, __ATOMIC_RELAXED) != 0;

	if (avail > n)
		avail = n;
	for (i = 0; i < avail; i++) {
		cqe = &ring->cq.cqes[io_uring_cqe_index(ring, head + i,
							ring->cq.ring_mask)];
		if (ours && cqe->user_data == CQPOLL_URING_WAKE_DATA(q))
			continue;
		cqe_to_completion(cqe, &comps[k++]);
	}
	/* Release: the kernel reuses the slots only after they were read. */
	io_uring_cq_advance(ring, avail);
	if (k != avail)
		__atomic_fetch_sub(&q->wake_cqes, avail - k, __ATOMIC_RELAXED);
	return k;
}

/*
 * Completions that found the ring full wait on the kernel's overflow list
 * with IORING_SQ_CQ_OVERFLOW set; they enter the ring only when someone
 * asks (io_uring_enter with GETEVENTS), and later completions queue behind
 * them, so a drained ring with the flag set must be flushed.
 */
static int
flush_overflow(struct cqpoll_uring_cq *q)
{
	int r;

	if (!io_uring_cq_has_overflow(q->ring))
		return 0;
	r = io_uring_get_events(q->ring);
	if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
		return r;
	return 1;
}

int
cqpoll_uring_poll(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	struct cqpoll_uring_cq *q = priv;
	unsigned int got;
	int r;

	got = read_cqes(q, comps, n);
	if (got == n)
		return (int)got;
	r = flush_overflow(q);
	if (r < 0)
		return r;
	if (r > 0)
		got += read_cqes(q, comps + got, n - got);
	/*
	 * Drained, and the kernel dropped CQEs it could not even keep on its
	 * overflow list (cq.koverflow, io_cqring_event_overflow()): they are
	 * lost, the CQ overran.
	 */
	if (got == 0 && __atomic_load_n(q->koverflow, __ATOMIC_RELAXED) != q->overflow0)
		return -EOVERFLOW;
	return (int)got;
}
