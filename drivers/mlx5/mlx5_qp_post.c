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
wqe_write(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wr, uint32_t ds)
{
	uint8_t *ctrl = qp->sq_buf + (size_t)(qp->sq_head & (qp->sq_cnt - 1)) * MLX5_SEND_WQE_BB;
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
	cqpoll_mlx5_wqe_ctrl(ctrl, qp->sq_head, op, qp->qpn_ds, ds, fm_ce_se, imm);
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
	qp->dbrec[MLX5_SND_DBR] = htobe32(qp->sq_head & 0xffffu);
	cqpoll_mlx5_wmb_record_before_uar();
	memcpy(&w, last_ctrl, sizeof(w));
	__atomic_store_n((uint64_t *)(void *)(qp->bf_reg + qp->bf_offset), w, __ATOMIC_RELAXED);
	cqpoll_mlx5_uar_flush();
	qp->bf_offset ^= qp->bf_size;
}

int
cqpoll_mlx5_qp_post_send(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wrs,
			 unsigned int n)
{
	const uint8_t *last = NULL;
	uint32_t ds, nbb, idx, used;
	const char *why = NULL;
	unsigned int i;

	if (qp == NULL || wrs == NULL || n == 0)
		return -EINVAL;
	/* rdma-core refuses sends before RTS (qp_state_max_gs, §5); error states flush. */
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD &&
	    qp->state != IBV_QPS_SQE && qp->state != IBV_QPS_ERR) {
		CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post send: the QP is not in RTS",
			   qp->caps.qp_num);
		return -EINVAL;
	}
	used = qp->sq_head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++) {
		why = wr_invalid(qp, &wrs[i]);
		if (why != NULL) {
			CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post send: request %u: %s",
				   qp->caps.qp_num, i, why);
			break;
		}
		ds = wr_ds(&wrs[i]);
		nbb = (ds + 3) / 4;
		/* Never over work the device may still read (retired by a completion). */
		if (used + nbb > qp->sq_cnt) {
			used = qp->sq_head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE);
			if (used + nbb > qp->sq_cnt)
				break;
		}
		idx = qp->sq_head & (qp->sq_cnt - 1);
		qp->sq_wrid[idx] = wrs[i].wr_id;
		qp->sq_nbb[idx] = (uint8_t)nbb;
		last = wqe_write(qp, &wrs[i], ds);
		/* The records before the head that names them (the poller reads them). */
		__atomic_store_n(&qp->sq_head, qp->sq_head + nbb, __ATOMIC_RELEASE);
		used += nbb;
	}
	if (i == 0)
		return why != NULL ? -EINVAL : -ENOSPC;
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
	qp->dbrec[MLX5_RCV_DBR] = htobe32(qp->rq_head & 0xffffu);
	return (int)i;
}
