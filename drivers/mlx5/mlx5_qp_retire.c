/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completions of cqpoll mlx5 QPs: the caller's wr_id from the WQE counter,
 * and the work queue retired up to the completed WQE (doc/guides/mlx5-wqe-contract.md
 * §6). Only CQs that serve such QPs poll through here: their poll was
 * swapped at the QP's creation; every other CQ keeps the bare poll.
 */

#include <stddef.h>

#include <infiniband/mlx5dv.h>

#include "cqpoll_mutant.h"
#include "mlx5_poll.h"
#include "mlx5_qp.h"
#include "mlx5_srq.h"

static inline struct cqpoll_mlx5_qp *
qp_find(const struct cqpoll_mlx5_qp_set *s, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (s->qp[i]->caps.qp_num == qpn)
			return s->qp[i];
	return NULL;
}

/*
 * WQEBBs of the WQE that starts at ring index @p idx, from the DS its control
 * segment gives the device (the byte at offset 7, below 64 as the post
 * ensures). The poster does not write there again before the WQE is retired,
 * and the acquire load of the head ordered its stores before this load; so
 * no per-WQE record is kept for it.
 */
static inline uint32_t
sq_nbb(const struct cqpoll_mlx5_qp *qp, uint32_t idx)
{
	const uint8_t *ctrl = qp->sq_buf + (size_t)idx * MLX5_SEND_WQE_BB;

	return ((ctrl[offsetof(struct mlx5_wqe_ctrl_seg, qpn_ds) + 3] & 0x3fu) + 3) / 4;
}

/*
 * Retire the send queue through the completed WQE at @p at, blocks and
 * requests: the completed WQE's own, all before it being retired with it.
 */
#if CQPOLL_MUTANT(RETIRE_SIGNALED_ONLY)
/*
 * Negative control only (test build): only the signalled WQE's blocks and
 * request are freed, counted from the tail, not those of the unsignalled
 * ones before it.
 */
static inline __attribute__((always_inline)) void
sq_retire(struct cqpoll_mlx5_qp *qp, uint32_t tail, uint32_t at,
	  const struct cqpoll_mlx5_sq_rec *rec)
{
	(void)rec;
	qp->sq_tail = tail + sq_nbb(qp, at & (qp->sq_cnt - 1));
	__atomic_store_n(&qp->sq_wr_tail, qp->sq_wr_tail + 1, __ATOMIC_RELEASE);
}
#else
static inline __attribute__((always_inline)) void
sq_retire(struct cqpoll_mlx5_qp *qp, uint32_t tail, uint32_t at,
	  const struct cqpoll_mlx5_sq_rec *rec)
{
	(void)tail;
	qp->sq_tail = at + sq_nbb(qp, at & (qp->sq_cnt - 1));
	__atomic_store_n(&qp->sq_wr_tail, rec->wr_end, __ATOMIC_RELEASE);
}
#endif

/*
 * The completion's WQE counter names a WQE posted and not yet retired: its
 * distance from the tail, in the counter's 16 bits, is below what is
 * outstanding. Anything else (a completion of the QP's life before a RESET)
 * is left without wr_id.
 */
static inline __attribute__((always_inline)) int
sq_complete(struct cqpoll_mlx5_qp *qp, struct cqpoll_completion *c)
{
	uint32_t tail = qp->sq_tail;
	uint32_t head = __atomic_load_n(&qp->sq_head, __ATOMIC_ACQUIRE);
	uint32_t at = tail + (uint16_t)(c->wqe_counter - (uint16_t)tail);
	const struct cqpoll_mlx5_sq_rec *rec;

	if (at - tail >= head - tail)
		return 0;
	rec = &qp->sq_rec[at & (qp->sq_cnt - 1)];
	c->wr_id = rec->wr_id;
	/*
	 * Through the completed WQE's last block, and its request: every
	 * unsignalled WQE before it is done too (SPDK mlx5_qp_set_comp's exact
	 * count; rdma-core moves its tail past them the same way, sq.tail =
	 * wqe_head[idx] + 1). The request tail after the record is read: the
	 * poster may then reuse it.
	 */
	sq_retire(qp, tail, at, rec);
	return 1;
}

/* Receives complete in order; the CQE's counter names the WQE (rdma-core HEAD 7e8db6fbd). */
static inline __attribute__((always_inline)) int
rq_complete(struct cqpoll_mlx5_qp *qp, struct cqpoll_completion *c)
{
	uint32_t tail = qp->rq_tail;
	uint32_t head = __atomic_load_n(&qp->rq_head, __ATOMIC_ACQUIRE);
	uint32_t at = tail + (uint16_t)(c->wqe_counter - (uint16_t)tail);

	if (at - tail >= head - tail)
		return 0;
	c->wr_id = qp->rq_wrid[at & (qp->rq_cnt - 1)];
	__atomic_store_n(&qp->rq_tail, at + 1, __ATOMIC_RELEASE);
	return 1;
}

/* Give @p c its wr_id and retire its work, if it is a completion of a QP of @p s. */
static inline __attribute__((always_inline)) void
qp_complete(const struct cqpoll_mlx5_qp_set *s, struct cqpoll_completion *c)
{
	struct cqpoll_mlx5_qp *qp;
	int done;

	/* Undecodable CQEs name no WQE. */
	if (!(c->flags & CQPOLL_COMPLETION_F_WQE_COUNTER))
		return;
	qp = qp_find(s, c->qp_num);
	if (qp == NULL)
		return;
	/* Responder completions (receive errors included) are the receive queue's. */
	if (c->opcode == CQPOLL_OP_RECV || c->opcode == CQPOLL_OP_RECV_RDMA_WITH_IMM)
		done = qp->srq == NULL ? rq_complete(qp, c) : cqpoll_mlx5_srq_complete(qp->srq, c);
	else
		done = sq_complete(qp, c);
	if (done)
		c->flags |= CQPOLL_COMPLETION_F_WR_ID;
}

/* The wr_ids and retirement of the @p r completions a poll found. */
static __attribute__((noinline)) int
qp_retire(void *priv, struct cqpoll_completion *comps, int r)
{
	const struct cqpoll_mlx5_qp_set *s = ((struct cqpoll_mlx5_cq *)priv)->qps;
	int i;

	for (i = 0; i < r; i++)
		qp_complete(s, &comps[i]);
	return r;
}

/*
 * The poll of a CQ that serves QPs: the CQ's own poll, the same template and
 * a continuation of its own for every CQE kind the fast path refuses, then
 * the wr_ids and retirement (a tail call) if it found any: not a wrapper
 * around the bare poll, so that a busy poller's empty polls cost what the
 * bare poll's do.
 */
#define QP_POLL_VARIANT(name, size, vic) \
static __attribute__((noinline, cold)) int \
name##_cont(struct cqpoll_mlx5_cq *q, struct cqpoll_completion *comps, \
	    unsigned int n, unsigned int done) \
{ \
	return cqpoll_mlx5_poll_tmpl(q, comps, n, done, size, vic, NULL); \
} \
static int \
name(void *priv, struct cqpoll_completion *comps, unsigned int n) \
{ \
	int r = cqpoll_mlx5_poll_tmpl(priv, comps, n, 0, size, vic, name##_cont); \
	return r <= 0 ? r : qp_retire(priv, comps, r); \
}

QP_POLL_VARIANT(qp_poll_64, 64, 0)
QP_POLL_VARIANT(qp_poll_128, 128, 0)
QP_POLL_VARIANT(qp_poll_64_vic, 64, 1)
QP_POLL_VARIANT(qp_poll_128_vic, 128, 1)

cqpoll_poll_burst_t
cqpoll_mlx5_qp_poll_of(const struct cqpoll_mlx5_cq *q)
{
	static const cqpoll_poll_burst_t variants[2][2] = {
		{ qp_poll_64, qp_poll_128 },
		{ qp_poll_64_vic, qp_poll_128_vic },
	};

	return variants[q->slow.layout == CQPOLL_MLX5_COMP_ENHANCED][q->cqe_size == 128];
}
