/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Posting on a cqpoll mlx5 QP: WQEs written into the send ring, one
 * doorbell per burst (mlx5-wqe-contract.md §2, §4.1); receives into the
 * receive ring, one doorbell-record write per burst (§5).
 */

#include <errno.h>

#include <infiniband/verbs.h>

#include "cqpoll_log_private.h"
#include "mlx5_barrier.h"
#include "mlx5_wqe.h"

/* WQE opcode by enum cqpoll_mlx5_wr_opcode (rdma-core mlx5_ib_opcode[], §2.4). */
static const uint8_t wr_opcode[] = {
	[CQPOLL_MLX5_WR_SEND] = MLX5_OPCODE_SEND,
	[CQPOLL_MLX5_WR_SEND_IMM] = MLX5_OPCODE_SEND_IMM,
	[CQPOLL_MLX5_WR_RDMA_WRITE] = MLX5_OPCODE_RDMA_WRITE,
	[CQPOLL_MLX5_WR_RDMA_WRITE_IMM] = MLX5_OPCODE_RDMA_WRITE_IMM,
	[CQPOLL_MLX5_WR_RDMA_READ] = MLX5_OPCODE_RDMA_READ,
	[CQPOLL_MLX5_WR_ATOMIC_CS] = MLX5_OPCODE_ATOMIC_CS,
	[CQPOLL_MLX5_WR_ATOMIC_FA] = MLX5_OPCODE_ATOMIC_FA,
};

/* Why @p wr cannot be posted on @p qp, or NULL if it can. */
static const char *
wr_invalid(const struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wr)
{
	uint32_t i, total = 0;

	if (wr->opcode >= sizeof(wr_opcode))
		return "unknown opcode";
	if (wr->num_sge > qp->max_send_sge)
		return "more scatter/gather entries than max_send_sge";
	if (wr->num_sge != 0 && wr->sg_list == NULL)
		return "NULL sg_list";
	if (wr->opcode >= CQPOLL_MLX5_WR_ATOMIC_CS &&
	    (wr->num_sge != 1 || wr->sg_list[0].length != 8))
		return "an atomic takes one 8-byte entry";
	if (!(wr->flags & CQPOLL_MLX5_SEND_F_INLINE))
		return NULL;
	if (wr->opcode >= CQPOLL_MLX5_WR_RDMA_READ)
		return "inline data on a read or an atomic";
	for (i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total > qp->max_inline)
		return "inline data over max_inline_data";
	return NULL;
}

/* DS of @p wr's WQE (§2.4): what it takes before anything is written. */
static uint32_t
wr_ds(const struct cqpoll_mlx5_send_wr *wr)
{
	uint32_t ds = 1, i, total = 0;

	if (wr->opcode >= CQPOLL_MLX5_WR_RDMA_WRITE)
		ds++;
	if (wr->opcode >= CQPOLL_MLX5_WR_ATOMIC_CS)
		return ds + 2;
	if (wr->flags & CQPOLL_MLX5_SEND_F_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		return ds + (total == 0 ? 0 : (4 + total + CQPOLL_MLX5_WQE_DS - 1) /
			     CQPOLL_MLX5_WQE_DS);
	}
	/* Empty entries get no segment (rdma-core). */
	for (i = 0; i < wr->num_sge; i++)
		ds += wr->sg_list[i].length != 0;
	return ds;
}

/* Write @p wr's WQE at the head; @p ds from wr_ds(). */
static uint8_t *
wqe_write(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wr, uint32_t ds,
	  uint32_t head)
{
	uint8_t *ctrl = qp->sq_buf + (size_t)(head & (qp->sq_cnt - 1)) * MLX5_SEND_WQE_BB;
	uint8_t *seg = cqpoll_mlx5_wqe_next(qp, ctrl);
	uint8_t op = wr_opcode[wr->opcode];
	uint8_t fm_ce_se = 0;
	uint32_t imm = 0, i;

	if (wr->opcode >= CQPOLL_MLX5_WR_RDMA_WRITE) {
		cqpoll_mlx5_wqe_raddr(seg, wr->remote_addr, wr->rkey);
		seg = cqpoll_mlx5_wqe_next(qp, seg);
	}
	if (wr->opcode >= CQPOLL_MLX5_WR_ATOMIC_CS) {
		cqpoll_mlx5_wqe_atomic(seg, wr->opcode == CQPOLL_MLX5_WR_ATOMIC_CS ?
				       wr->swap : wr->compare_add, wr->compare_add,
				       wr->opcode == CQPOLL_MLX5_WR_ATOMIC_CS);
		seg = cqpoll_mlx5_wqe_next(qp, seg);
		/* The old value lands there: byte count 8 (set_data_ptr_seg_atomic). */
		cqpoll_mlx5_wqe_data(seg, 8, wr->sg_list[0].lkey, wr->sg_list[0].addr);
	} else if (wr->flags & CQPOLL_MLX5_SEND_F_INLINE) {
		(void)cqpoll_mlx5_wqe_inline(qp, seg, wr->sg_list, wr->num_sge);
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length == 0)
				continue;
			cqpoll_mlx5_wqe_data(seg, wr->sg_list[i].length, wr->sg_list[i].lkey,
					     wr->sg_list[i].addr);
			seg = cqpoll_mlx5_wqe_next(qp, seg);
		}
	}
	if (wr->opcode == CQPOLL_MLX5_WR_SEND_IMM || wr->opcode == CQPOLL_MLX5_WR_RDMA_WRITE_IMM)
		imm = wr->imm_data;
	/*
	 * Unsignalled: CE 0, a CQE only on error, flushes included (§2.2, §6);
	 * fence: rdma-core's IBV_SEND_FENCE value (§3).
	 */
	if (wr->flags & CQPOLL_MLX5_SEND_F_SIGNALED)
		fm_ce_se |= MLX5_WQE_CTRL_CQ_UPDATE;
	if (wr->flags & CQPOLL_MLX5_SEND_F_SOLICITED)
		fm_ce_se |= MLX5_WQE_CTRL_SOLICITED;
	if (wr->flags & CQPOLL_MLX5_SEND_F_FENCE)
		fm_ce_se |= MLX5_WQE_CTRL_FENCE;
	cqpoll_mlx5_wqe_ctrl(ctrl, head, op, qp->qpn_ds, ds, fm_ce_se, imm);
	return ctrl;
}

/* fm_ce_se by the SIGNALED, INLINE, FENCE and SOLICITED flags (as wqe_write). */
#define FM_CE_SE(f) ((uint8_t)(((f) & CQPOLL_MLX5_SEND_F_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0) | \
	((f) & CQPOLL_MLX5_SEND_F_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0) | \
	((f) & CQPOLL_MLX5_SEND_F_FENCE ? MLX5_WQE_CTRL_FENCE : 0)))
static const uint8_t fm_ce_se_of[16] = {
	FM_CE_SE(0), FM_CE_SE(1), FM_CE_SE(2), FM_CE_SE(3), FM_CE_SE(4), FM_CE_SE(5),
	FM_CE_SE(6), FM_CE_SE(7), FM_CE_SE(8), FM_CE_SE(9), FM_CE_SE(10), FM_CE_SE(11),
	FM_CE_SE(12), FM_CE_SE(13), FM_CE_SE(14), FM_CE_SE(15),
};
/* Opcodes of the common path: the immediate is kept for the *_IMM ones. */
static const uint32_t imm_mask_of[CQPOLL_MLX5_WR_RDMA_READ + 1] = {
	[CQPOLL_MLX5_WR_SEND_IMM] = 0xffffffffu,
	[CQPOLL_MLX5_WR_RDMA_WRITE_IMM] = 0xffffffffu,
};

/* What the common path reads of the QP, kept in registers across the stores to the ring. */
struct ring {
	uint8_t *buf;
	/* Last start of a WQE of max_sge entries that does not cross the end. */
	const uint8_t *last_start;
	uint32_t mask;
	uint32_t max_sge;
	uint32_t max_nbb;   /* blocks of such a WQE */
	uint32_t qpn_ds;
};

/*
 * The common WQE: a send, write or read with data segments, not crossing
 * the ring's end. One pass, no per-segment wrap test, flags by table; the
 * request's fields are read before the first store (which could alias
 * them). Returns its control segment, or NULL to leave it to the general
 * path.
 */
static inline uint8_t *
wqe_fast(const struct ring *rg, const struct cqpoll_mlx5_send_wr *wr, uint32_t head,
	 uint32_t room, uint32_t *dsp)
{
	const uint32_t op = wr->opcode, nsge = wr->num_sge, flags = wr->flags;
	const struct cqpoll_mlx5_sge *sg = wr->sg_list;
	const uint64_t raddr = wr->remote_addr;
	const uint32_t rkey = wr->rkey, imm = wr->imm_data;
	uint8_t *ctrl = rg->buf + (size_t)(head & rg->mask) * MLX5_SEND_WQE_BB;
	uint8_t *seg = ctrl + CQPOLL_MLX5_WQE_DS;
	uint32_t i, ds;

	/* One to max_sge entries, room for the largest such WQE, before the end. */
	if (__builtin_expect(op > CQPOLL_MLX5_WR_RDMA_READ || (flags & CQPOLL_MLX5_SEND_F_INLINE) ||
			     nsge - 1u >= rg->max_sge || room < rg->max_nbb ||
			     ctrl > rg->last_start || sg == NULL, 0))
		return NULL;
	if (op >= CQPOLL_MLX5_WR_RDMA_WRITE) {
		cqpoll_mlx5_wqe_raddr(seg, raddr, rkey);
		seg += CQPOLL_MLX5_WQE_DS;
	}
	if (nsge == 1 && sg[0].length != 0) {
		cqpoll_mlx5_wqe_data(seg, sg[0].length, sg[0].lkey, sg[0].addr);
		seg += CQPOLL_MLX5_WQE_DS;
	} else {
		for (i = 0; i < nsge; i++) {
			if (sg[i].length == 0)
				continue;
			cqpoll_mlx5_wqe_data(seg, sg[i].length, sg[i].lkey, sg[i].addr);
			seg += CQPOLL_MLX5_WQE_DS;
		}
	}
	ds = (uint32_t)(seg - ctrl) / CQPOLL_MLX5_WQE_DS;
	cqpoll_mlx5_wqe_ctrl(ctrl, head, wr_opcode[op], rg->qpn_ds, ds,
			     fm_ce_se_of[flags & 0xf], imm & imm_mask_of[op]);
	*dsp = ds;
	return ctrl;
}

/*
 * One doorbell for the burst (§4.1): the WQEs before the record, the record
 * (send counter past the last WQE) before the register, then the last WQE's
 * first 8 bytes to the BlueFlame register, flushed out of the write-combining
 * buffer; the next doorbell goes to the other half.
 */
static void
ring_send(struct cqpoll_mlx5_qp *qp, const uint8_t *last_ctrl)
{
	uint64_t w;

	cqpoll_mlx5_wmb_wqe_before_record();
	__atomic_store_n(&qp->dbrec[MLX5_SND_DBR], htobe32(qp->sq_head & 0xffffu),
			 __ATOMIC_RELEASE);
	cqpoll_mlx5_wmb_record_before_uar();
	memcpy(&w, last_ctrl, sizeof(w));
	__atomic_store_n((uint64_t *)(void *)(qp->bf_reg + qp->bf_offset), w, __ATOMIC_RELAXED);
	cqpoll_mlx5_uar_flush();
	qp->bf_offset ^= qp->bf_size;
}

/*
 * Every other WQE (inline, atomics, across the ring's end, a ring nearly
 * full, invalid): out of line, so that the common loop keeps its registers.
 * NULL with *why set (invalid) or not (no room).
 */
static __attribute__((noinline)) uint8_t *
post_slow(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wr, unsigned int i,
	  uint32_t head, uint32_t *used, uint32_t *nbb, const char **why)
{
	uint32_t ds;

	*why = wr_invalid(qp, wr);
	if (*why != NULL) {
		CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post send: request %u: %s",
			   qp->caps.qp_num, i, *why);
		return NULL;
	}
	ds = wr_ds(wr);
	*nbb = (ds + 3) / 4;
	/* Never over work the device may still read (retired by a completion). */
	if (*used + *nbb > qp->sq_cnt) {
		*used = head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE);
		if (*used + *nbb > qp->sq_cnt)
			return NULL;
	}
	return wqe_write(qp, wr, ds, head);
}

int
cqpoll_mlx5_qp_post_send(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wrs,
			 unsigned int n)
{
	const uint8_t *last = NULL;
	uint32_t ds, nbb = 0, idx, used, head;
	const char *why = NULL;
	uint64_t *wrid;
	uint8_t *ctrl, *nbbs;
	struct ring rg;
	unsigned int i;

	if (qp == NULL || wrs == NULL || n == 0)
		return -EINVAL;
	wrid = qp->sq_wrid;
	nbbs = qp->sq_nbb;
	/* rdma-core refuses sends before RTS (qp_state_max_gs, §5); error states flush. */
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD &&
	    qp->state != IBV_QPS_SQE && qp->state != IBV_QPS_ERR) {
		CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post send: the QP is not in RTS",
			   qp->caps.qp_num);
		return -EINVAL;
	}
	head = qp->sq_head;
	used = head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE);
	rg = (struct ring){ .buf = qp->sq_buf, .mask = qp->sq_cnt - 1,
			    .max_sge = qp->max_send_sge, .qpn_ds = qp->qpn_ds,
			    .max_nbb = (2 + qp->max_send_sge + 3) / 4 };
	rg.last_start = qp->sq_end - (size_t)(2 + qp->max_send_sge) * CQPOLL_MLX5_WQE_DS;
	for (i = 0; i < n; i++) {
		/* The common WQE where it surely fits; anything else below. */
		ctrl = wqe_fast(&rg, &wrs[i], head, rg.mask + 1 - used, &ds);
		if (ctrl != NULL) {
			nbb = (ds + 3) / 4;
		} else {
			ctrl = post_slow(qp, &wrs[i], i, head, &used, &nbb, &why);
			if (ctrl == NULL)
				break;
		}
		idx = head & rg.mask;
		wrid[idx] = wrs[i].wr_id;
		nbbs[idx] = (uint8_t)nbb;
		last = ctrl;
		head += nbb;
		used += nbb;
	}
	if (i == 0)
		return why != NULL ? -EINVAL : -ENOSPC;
	/* The records before the head that names them (the poller reads them). */
	__atomic_store_n(&qp->sq_head, head, __ATOMIC_RELEASE);
	ring_send(qp, last);
	return (int)i;
}

int
cqpoll_mlx5_qp_post_recv(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_recv_wr *wrs,
			 unsigned int n)
{
	struct mlx5_wqe_data_seg *seg;
	uint32_t used, idx, j, k;
	unsigned int i;

	if (qp == NULL || wrs == NULL || n == 0)
		return -EINVAL;
	if (qp->state == IBV_QPS_RESET || qp->rq_cnt == 0) {
		CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post recv: %s", qp->caps.qp_num,
			   qp->rq_cnt == 0 ? "the QP has no receive queue" :
			   "the QP is in RESET");
		return -EINVAL;
	}
	used = qp->rq_head - __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++) {
		if (wrs[i].num_sge > qp->max_recv_sge ||
		    (wrs[i].num_sge != 0 && wrs[i].sg_list == NULL)) {
			CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post recv: receive %u: %s",
				   qp->caps.qp_num, i, wrs[i].sg_list == NULL ? "NULL sg_list" :
				   "more scatter/gather entries than max_recv_sge");
			if (i == 0)
				return -EINVAL;
			break;
		}
		if (used + 1 > qp->rq_cnt) {
			used = qp->rq_head - __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE);
			if (used + 1 > qp->rq_cnt)
				break;
		}
		idx = qp->rq_head & (qp->rq_cnt - 1);
		seg = (struct mlx5_wqe_data_seg *)(void *)(qp->rq_buf + (size_t)idx * qp->rq_stride);
		for (j = 0, k = 0; j < wrs[i].num_sge; j++) {
			if (wrs[i].sg_list[j].length == 0)
				continue;
			cqpoll_mlx5_wqe_data((uint8_t *)&seg[k++], wrs[i].sg_list[j].length,
					     wrs[i].sg_list[j].lkey, wrs[i].sg_list[j].addr);
		}
		/* Fewer than the WQE holds: the terminator (§5). */
		if (k < qp->rq_max_gs)
			cqpoll_mlx5_wqe_data((uint8_t *)&seg[k], 0, MLX5_INVALID_LKEY, 0);
		qp->rq_wrid[idx] = wrs[i].wr_id;
		__atomic_store_n(&qp->rq_head, qp->rq_head + 1, __ATOMIC_RELEASE);
		used++;
	}
	if (i == 0)
		return -ENOSPC;
	/* No register write for receives: the record is the doorbell (§5). */
	cqpoll_mlx5_wmb_wqe_before_record();
	__atomic_store_n(&qp->dbrec[MLX5_RCV_DBR], htobe32(qp->rq_head & 0xffffu),
			 __ATOMIC_RELEASE);
	return (int)i;
}
