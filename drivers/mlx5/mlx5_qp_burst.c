/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fixed-route post of a cqpoll mlx5 QP, cqpoll_mlx5_qp_post_burst(): one
 * opcode set at the QP's creation, one non-empty entry, not inline, so one
 * WQEBB per request (DS 2 or 3, doc/guides/mlx5-wqe-contract.md §2.4), as
 * DPDK's mlx5 Tx picks its burst routine for a queue at its set-up
 * (mlx5_select_tx_function). The WQEs are those of the general post for
 * the same requests; what it leaves out is the per-request choice of a
 * path and the checks a free-form request needs.
 */

#include <errno.h>

#include <infiniband/verbs.h>

#include "cqpoll_log_private.h"
#include "mlx5_wqe.h"

/*
 * Why nothing of the burst at @p wrs was posted: @p n 0, a state that takes
 * no send, no room, or a first request off the route.
 */
static __attribute__((noinline, cold)) int
burst_refuse(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wrs, unsigned int n)
{
	if (n == 0)
		return -EINVAL;
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD &&
	    qp->state != IBV_QPS_SQE && qp->state != IBV_QPS_ERR) {
		CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post burst: the QP is not in RTS",
			   qp->caps.qp_num);
		return -EINVAL;
	}
	if (qp->sq_fast_max == 0) {
		CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post burst: the QP takes no entry",
			   qp->caps.qp_num);
		return -EINVAL;
	}
	if (wrs[0].sg_list[0].length == 0) {
		CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post burst: request 0: an empty entry",
			   qp->caps.qp_num);
		return -EINVAL;
	}
	return -ENOMEM;
}

/*
 * The route of WQE opcode @p op: with a remote address segment or not
 * (@p raddr), the immediate as given, byte-swapped (the rkey to invalidate,
 * rdma-core send_ieth()) or none. Constants once inlined, so each route is
 * one loop without a test of its own kind. Every WQE is one WQEBB: the
 * WQE and its record are stepped to, wrapping at the ring's end, with no
 * index computed per request.
 */
enum burst_imm { IMM_NONE, IMM_AS_IS, IMM_RKEY };

/*
 * A request the route cannot take ends the burst: one whose entry @p sg is
 * empty, for which rdma-core writes no data segment. The INLINE flag is
 * not read: the route posts by pointer (its table word is that without it).
 */
static inline __attribute__((always_inline)) void
burst_wqe(const struct cqpoll_mlx5_qp *qp, struct mlx5_wqe_ctrl_seg *c,
	  const struct cqpoll_mlx5_send_wr *wr, const struct cqpoll_mlx5_sge *sg, uint32_t len,
	  uint32_t head, const uint8_t op, const int raddr, const enum burst_imm imm_kind)
{
	uint8_t *seg = (uint8_t *)c + CQPOLL_MLX5_WQE_DS;
	uint64_t w8;

	if (raddr) {
		cqpoll_mlx5_wqe_raddr(seg, wr->remote_addr, wr->rkey);
		seg += CQPOLL_MLX5_WQE_DS;
	}
	cqpoll_mlx5_wqe_data(seg, len, sg->lkey, sg->addr);
	c->opmod_idx_opcode = htobe32((head & 0xffffu) << 8) | CQPOLL_MLX5_BYTE3(op);
	/* QPN and DS (2 or 3, below 64: the word's last byte), kept for the route. */
	c->qpn_ds = qp->burst_qpn_ds_be;
	/* Bytes 8-15: the flags' word, then the immediate; one store when it is 0. */
	if (imm_kind == IMM_NONE) {
		w8 = qp->fm_ce_se_word[wr->flags & 0xf];
		memcpy(&c->signature, &w8, sizeof(w8));
	} else {
		memcpy(&c->signature, &qp->fm_ce_se_word[wr->flags & 0xf], sizeof(uint32_t));
		c->imm = imm_kind == IMM_AS_IS ? wr->imm_data : htobe32(wr->invalidate_rkey);
	}
}

static inline __attribute__((always_inline)) int
burst_tmpl(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wr, unsigned int n,
	   const uint8_t op, const int raddr, const enum burst_imm imm_kind)
{
	const uint32_t room = qp->sq_fast_max -
		(qp->sq_wr_head - __atomic_load_n(&qp->sq_wr_tail, __ATOMIC_ACQUIRE));
	const struct cqpoll_mlx5_sge *sg = wr->sg_list;
	const struct cqpoll_mlx5_send_wr *end;
	struct cqpoll_mlx5_sq_rec *rec;
	struct mlx5_wqe_ctrl_seg *c;
	uint32_t head = qp->sq_head, idx, wr_delta, len;

	/* n of 0, no room, or a state that takes no send (room 0): refused. */
	if (__builtin_expect(n - 1u >= room, 0)) {
		if (n == 0 || room == 0 || room > qp->sq_fast_max)
			return burst_refuse(qp, wr, n);
		n = room;
	}
	len = sg->length;
	if (__builtin_expect(len == 0, 0))
		return burst_refuse(qp, wr, n);
	end = wr + n;
	idx = head & qp->sq_mask;
	c = (struct mlx5_wqe_ctrl_seg *)(void *)(qp->sq_buf + (size_t)idx * MLX5_SEND_WQE_BB);
	rec = &qp->sq_rec[idx];
	/* One block per request: the request counter moves with the block counter. */
	wr_delta = qp->sq_wr_head - head;
	for (;;) {
		rec->wr_id = wr->wr_id;
		rec->wr_end = head + wr_delta + 1;
		burst_wqe(qp, c, wr, sg, len, head, op, raddr, imm_kind);
		head++;
		if (++wr == end)
			break;
		sg = wr->sg_list;
		len = sg->length;
		if (__builtin_expect(len == 0, 0))
			break;
		c = (struct mlx5_wqe_ctrl_seg *)(void *)((uint8_t *)c + MLX5_SEND_WQE_BB);
		rec++;
		if (__builtin_expect((uint8_t *)c == qp->sq_end, 0)) {
			c = (struct mlx5_wqe_ctrl_seg *)(void *)qp->sq_buf;
			rec = qp->sq_rec;
		}
	}
	n = head - qp->sq_head;
	qp->sq_wr_head = head + wr_delta;
	/* The records before the head that names them (the poller reads them). */
	__atomic_store_n(&qp->sq_head, head, __ATOMIC_RELEASE);
	cqpoll_mlx5_ring_send(qp, head, (const uint8_t *)c);
	return (int)n;
}

/*
 * GCC otherwise packs the control segment's words into one vector store,
 * more instructions than the four stores.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define BURST_ATTR __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define BURST_ATTR
#endif

#define BURST_ROUTE(name, op, raddr, imm) \
static BURST_ATTR int \
name(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wrs, unsigned int n) \
{ \
	return burst_tmpl(qp, wrs, n, op, raddr, imm); \
}

BURST_ROUTE(burst_send, MLX5_OPCODE_SEND, 0, IMM_NONE)
BURST_ROUTE(burst_send_imm, MLX5_OPCODE_SEND_IMM, 0, IMM_AS_IS)
BURST_ROUTE(burst_send_inv, MLX5_OPCODE_SEND_INVAL, 0, IMM_RKEY)
BURST_ROUTE(burst_write, MLX5_OPCODE_RDMA_WRITE, 1, IMM_NONE)
BURST_ROUTE(burst_write_imm, MLX5_OPCODE_RDMA_WRITE_IMM, 1, IMM_AS_IS)
BURST_ROUTE(burst_read, MLX5_OPCODE_RDMA_READ, 1, IMM_NONE)

cqpoll_mlx5_burst_t
cqpoll_mlx5_burst_of(uint32_t opcode)
{
	switch (opcode) {
	case CQPOLL_MLX5_WR_SEND: return burst_send;
	case CQPOLL_MLX5_WR_SEND_IMM: return burst_send_imm;
	case CQPOLL_MLX5_WR_SEND_INV: return burst_send_inv;
	case CQPOLL_MLX5_WR_RDMA_WRITE: return burst_write;
	case CQPOLL_MLX5_WR_RDMA_WRITE_IMM: return burst_write_imm;
	case CQPOLL_MLX5_WR_RDMA_READ: return burst_read;
	default: return NULL;
	}
}

/* The route set at creation: one indirect jump, as rte_eth_tx_burst(). */
int
cqpoll_mlx5_qp_post_burst(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wrs,
			  unsigned int n)
{
	return qp->burst(qp, wrs, n);
}
