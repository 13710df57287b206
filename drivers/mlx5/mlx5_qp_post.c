/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Posting on a cqpoll mlx5 QP: WQEs written into the send ring, one
 * doorbell per burst (doc/guides/mlx5-wqe-contract.md §2, §4.1); receives into the
 * receive ring, one doorbell-record write per burst (§5).
 */

#include <errno.h>
#include <stddef.h>

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
	uint64_t total = 0;
	uint32_t i;

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
	/* 64 bits and a test per entry: no sum of lengths wraps under the limit. */
	for (i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		if (total > qp->max_inline)
			return "inline data over max_inline_data";
	}
	return NULL;
}

/* DS of @p wr's WQE (§2.4): what it takes before anything is written. */
static uint32_t
wr_ds(const struct cqpoll_mlx5_send_wr *wr)
{
	uint64_t total = 0;
	uint32_t ds = 1, i;

	if (wr->opcode >= CQPOLL_MLX5_WR_RDMA_WRITE)
		ds++;
	if (wr->opcode >= CQPOLL_MLX5_WR_ATOMIC_CS)
		return ds + 2;
	if (wr->flags & CQPOLL_MLX5_SEND_F_INLINE) {
		/* Within max_inline_data (wr_invalid()): the DS count fits. */
		for (i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		return ds + (total == 0 ? 0 : (uint32_t)((4 + total + CQPOLL_MLX5_WQE_DS - 1) /
							 CQPOLL_MLX5_WQE_DS));
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

/*
 * The common path's tables, one object so that one register holds their
 * base: by the SIGNALED, INLINE, FENCE and SOLICITED flags, bytes 8-11 of
 * the control segment (signature, two reserved, fm_ce_se) as one
 * little-endian word, as wqe_write sets them, for one store as DPDK's
 * mlx5_tx_cseg_init; by opcode (send, write, read), the WQE opcode in place
 * in the big-endian first word and which immediate is kept.
 */
#if __BYTE_ORDER == __LITTLE_ENDIAN
#define OP_BE(o) ((uint32_t)(o) << 24)
#else
#define OP_BE(o) ((uint32_t)(o))
#endif
#define FM_CE_SE(f) ((uint32_t)(((f) & CQPOLL_MLX5_SEND_F_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0) | \
	((f) & CQPOLL_MLX5_SEND_F_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0) | \
	((f) & CQPOLL_MLX5_SEND_F_FENCE ? MLX5_WQE_CTRL_FENCE : 0)) << 24)
struct fast_op {
	uint32_t imm_mask;
	uint32_t wqe_op_be;   /* the opcode as the control segment's first word's last byte */
};
static const struct {
	uint32_t fm_ce_se_word[16];
	struct fast_op op[CQPOLL_MLX5_WR_RDMA_READ + 1];
} fast_tab = {
	.fm_ce_se_word = {
		FM_CE_SE(0), FM_CE_SE(1), FM_CE_SE(2), FM_CE_SE(3), FM_CE_SE(4), FM_CE_SE(5),
		FM_CE_SE(6), FM_CE_SE(7), FM_CE_SE(8), FM_CE_SE(9), FM_CE_SE(10), FM_CE_SE(11),
		FM_CE_SE(12), FM_CE_SE(13), FM_CE_SE(14), FM_CE_SE(15),
	},
	.op = {
		[CQPOLL_MLX5_WR_SEND] = { 0, OP_BE(MLX5_OPCODE_SEND) },
		[CQPOLL_MLX5_WR_SEND_IMM] = { 0xffffffffu, OP_BE(MLX5_OPCODE_SEND_IMM) },
		[CQPOLL_MLX5_WR_RDMA_WRITE] = { 0, OP_BE(MLX5_OPCODE_RDMA_WRITE) },
		[CQPOLL_MLX5_WR_RDMA_WRITE_IMM] = { 0xffffffffu, OP_BE(MLX5_OPCODE_RDMA_WRITE_IMM) },
		[CQPOLL_MLX5_WR_RDMA_READ] = { 0, OP_BE(MLX5_OPCODE_RDMA_READ) },
	},
};
_Static_assert(offsetof(struct mlx5_wqe_ctrl_seg, fm_ce_se) ==
	       offsetof(struct mlx5_wqe_ctrl_seg, signature) + 3,
	       "fm_ce_se is the last byte of the word at the signature");

/*
 * One doorbell for the burst (§4.1): the WQEs before the record, the record
 * (send counter past the last WQE) before the register, then the last WQE's
 * first 8 bytes to the BlueFlame register, flushed out of the write-combining
 * buffer; the next doorbell goes to the other half.
 */
static inline __attribute__((always_inline)) void
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
 * Returns the WQE's blocks; 0 with *why set (invalid) or not (no room).
 */
static __attribute__((noinline)) uint32_t
post_slow(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wr, unsigned int i,
	  uint32_t head, const char **why)
{
	uint32_t ds, nbb;

	*why = wr_invalid(qp, wr);
	ds = *why == NULL ? wr_ds(wr) : 0;
	if (ds > CQPOLL_MLX5_WQE_DS_MAX)
		*why = "a WQE of more than 63 data units (DS)";
	if (*why != NULL) {
		CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post send: request %u: %s",
			   qp->caps.qp_num, i, *why);
		return 0;
	}
	nbb = (ds + 3) / 4;
	/*
	 * At most sq_wr_max outstanding (mlx5_wq_overflow()); that many of
	 * the largest WQEs fit the ring, so none is over work the device may
	 * still read.
	 */
	if (qp->sq_wr_head - __atomic_load_n(&qp->sq_wr_tail, __ATOMIC_ACQUIRE) >= qp->sq_wr_max)
		return 0;
	(void)wqe_write(qp, wr, ds, head);
	qp->sq_rec[head & (qp->sq_cnt - 1)] = (struct cqpoll_mlx5_sq_rec){
		.wr_id = wr->wr_id, .wr_end = ++qp->sq_wr_head };
	return nbb;
}

/*
 * The common WQEs (a send, write or read of 1 to max_sge entries, not
 * inline) that surely fit from @p head: within the requests allowed
 * outstanding and before the ring's end, counted as WQEs of the largest
 * such size (a power of two of blocks, 2^fast_shift, so that no division
 * is needed). Their loop tests no room and no wrap; the rest of the burst
 * goes on after it.
 */
static inline uint32_t
fast_room(const struct cqpoll_mlx5_qp *qp, uint32_t head, uint32_t wr_tail)
{
	uint32_t room = qp->sq_wr_max - (qp->sq_wr_head - wr_tail);
	uint32_t to_end = (qp->sq_cnt - (head & (qp->sq_cnt - 1))) >> qp->fast_shift;

	/* No entry allowed: every request is another path's. */
	if (qp->fast_max_sge == 0)
		return 0;
	return room < to_end ? room : to_end;
}

/*
 * The control segment of a common WQE as cqpoll_mlx5_wqe_ctrl() writes it, a
 * word at a time: @p qpn_ds_be the big-endian second word, DS (< 64) its
 * last byte; the flags' word from a table.
 */
static inline __attribute__((always_inline)) void
fast_ctrl(struct mlx5_wqe_ctrl_seg *c, uint32_t head, uint32_t op, uint32_t qpn_ds_be,
	  uint32_t flags, uint32_t imm)
{
	c->opmod_idx_opcode = htobe32((head & 0xffffu) << 8) | fast_tab.op[op].wqe_op_be;
	c->qpn_ds = qpn_ds_be;
	memcpy(&c->signature, &fast_tab.fm_ce_se_word[flags & 0xf], sizeof(uint32_t));
	c->imm = imm & fast_tab.op[op].imm_mask;
}

/* Where the common loop writes: the next WQE, its wr_id record and counter. */
struct fast_pos {
	uint8_t *ctrl;
	const uint8_t *last; /* the last control segment written */
	struct cqpoll_mlx5_sq_rec *rec;
	uint32_t head;
	uint32_t wr_head;
	uint32_t max_sge;
	uint32_t qpn_ds_be;  /* the control segment's second word but DS, big-endian */
};

/*
 * GCC otherwise packs the control segment's four words into one vector store,
 * eight instructions instead of four stores.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define POST_FAST_ATTR __attribute__((noinline, optimize("no-tree-slp-vectorize")))
#else
#define POST_FAST_ATTR __attribute__((noinline))
#endif

/*
 * Write the common WQEs of [@p wr, @p end) at @p pos, where they surely fit
 * (fast_room(): no wrap, no room test); stop at the first other one. Out of
 * line, so that the few values it keeps are in registers. Returns where it
 * stopped, @p pos past what it wrote.
 */
static POST_FAST_ATTR const struct cqpoll_mlx5_send_wr *
post_fast(struct fast_pos *pos, const struct cqpoll_mlx5_send_wr *wr,
	  const struct cqpoll_mlx5_send_wr *end)
{
	uint8_t *ctrl = pos->ctrl;
	struct cqpoll_mlx5_sq_rec *rec = pos->rec;
	const uint8_t *last = pos->last;
	uint32_t head = pos->head, wr_head = pos->wr_head;
	const uint32_t qpn_ds_be = pos->qpn_ds_be;

	for (; wr != end; wr++) {
		const uint32_t op = wr->opcode, nsge = wr->num_sge, flags = wr->flags;
		const struct cqpoll_mlx5_sge *sg = wr->sg_list;
		struct mlx5_wqe_ctrl_seg *c = (struct mlx5_wqe_ctrl_seg *)(void *)ctrl;
		uint8_t *seg = ctrl + CQPOLL_MLX5_WQE_DS;
		uint32_t j, ds, nbb;

		/*
		 * One non-empty entry, not inline: the common request, one WQEBB
		 * whatever the opcode, DS a constant in each branch (max_sge >= 1
		 * here, fast_room()).
		 */
		if (__builtin_expect(nsge == 1 && op <= CQPOLL_MLX5_WR_RDMA_READ &&
				     !(flags & CQPOLL_MLX5_SEND_F_INLINE) && sg != NULL &&
				     sg->length != 0, 1)) {
			rec->wr_id = wr->wr_id;
			rec->wr_end = ++wr_head;
			if (op >= CQPOLL_MLX5_WR_RDMA_WRITE) {
				cqpoll_mlx5_wqe_raddr(seg, wr->remote_addr, wr->rkey);
				cqpoll_mlx5_wqe_data(seg + CQPOLL_MLX5_WQE_DS, sg->length, sg->lkey,
						     sg->addr);
				fast_ctrl(c, head, op, qpn_ds_be | 3u << 24, flags, wr->imm_data);
			} else {
				cqpoll_mlx5_wqe_data(seg, sg->length, sg->lkey, sg->addr);
				fast_ctrl(c, head, op, qpn_ds_be | 2u << 24, flags, wr->imm_data);
			}
			last = ctrl;
			head++;
			rec++;
			ctrl += MLX5_SEND_WQE_BB;
			continue;
		}
		{
			if (op > CQPOLL_MLX5_WR_RDMA_READ || (flags & CQPOLL_MLX5_SEND_F_INLINE) ||
			    nsge - 1u >= pos->max_sge || sg == NULL)
				break;
			rec->wr_id = wr->wr_id;
			rec->wr_end = ++wr_head;
			if (op >= CQPOLL_MLX5_WR_RDMA_WRITE) {
				cqpoll_mlx5_wqe_raddr(seg, wr->remote_addr, wr->rkey);
				seg += CQPOLL_MLX5_WQE_DS;
			}
			/* Empty entries get no segment (rdma-core). */
			for (j = 0; j < nsge; j++) {
				if (sg[j].length == 0)
					continue;
				cqpoll_mlx5_wqe_data(seg, sg[j].length, sg[j].lkey, sg[j].addr);
				seg += CQPOLL_MLX5_WQE_DS;
			}
			ds = (uint32_t)(seg - ctrl) / CQPOLL_MLX5_WQE_DS;
			fast_ctrl(c, head, op, qpn_ds_be | ds << 24, flags, wr->imm_data);
			nbb = (ds + 3) / 4;
		}
		last = ctrl;
		head += nbb;
		rec += nbb;
		ctrl += (size_t)nbb * MLX5_SEND_WQE_BB;
	}
	pos->ctrl = ctrl;
	pos->last = last;
	pos->rec = rec;
	pos->head = head;
	pos->wr_head = wr_head;
	return wr;
}

/*
 * The post of [@p wr, @p wrs + @p n) from @p pos onwards, @p tail the request
 * tail last read: common WQEs where they surely fit and the others one at a
 * time, then the doorbell; what cqpoll_mlx5_qp_post_send() returns.
 */
static __attribute__((noinline)) int
post_rest(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wrs, unsigned int n,
	  const struct cqpoll_mlx5_send_wr *wr, struct fast_pos *pos, uint32_t tail)
{
	const struct cqpoll_mlx5_send_wr *end, *wrs_end = wrs + n;
	const uint32_t mask = qp->sq_cnt - 1;
	uint32_t head = pos->head, nbb, k;
	const char *why = NULL;

	for (;;) {
		k = fast_room(qp, head, tail);
		end = (size_t)(wrs_end - wr) < k ? wrs_end : wr + k;
		if (k != 0) {
			pos->ctrl = qp->sq_buf + (size_t)(head & mask) * MLX5_SEND_WQE_BB;
			pos->rec = &qp->sq_rec[head & mask];
			pos->head = head;
			pos->wr_head = qp->sq_wr_head;
			wr = post_fast(pos, wr, end);
			head = pos->head;
			qp->sq_wr_head = pos->wr_head;
			if (wr == wrs_end)
				break;
			/* Room for more of the common ones: go on with them. */
			if (wr == end)
				continue;
		}
		nbb = post_slow(qp, wr, (unsigned int)(wr - wrs), head, &why);
		if (nbb == 0)
			break;
		pos->last = qp->sq_buf + (size_t)(head & mask) * MLX5_SEND_WQE_BB;
		head += nbb;
		if (++wr == wrs_end)
			break;
		tail = __atomic_load_n(&qp->sq_wr_tail, __ATOMIC_ACQUIRE);
	}
	if (wr == wrs)
		return why != NULL ? -EINVAL : -ENOMEM;
	/* The records before the head that names them (the poller reads them). */
	__atomic_store_n(&qp->sq_head, head, __ATOMIC_RELEASE);
	ring_send(qp, pos->last);
	return (int)(wr - wrs);
}

/* As POST_FAST_ATTR's, for the common loop: four stores, not a vector built. */
#if defined(__GNUC__) && !defined(__clang__)
#define POST_SEND_ATTR __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define POST_SEND_ATTR
#endif

/*
 * Every burst the common loop of cqpoll_mlx5_qp_post_send() does not finish,
 * from request @p i on (@p head, @p wr_head and @p last where that loop
 * stopped): the state and argument checks, the requests one way or another,
 * the doorbell.
 */
static __attribute__((noinline, cold)) int
post_general(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wrs, unsigned int n,
	     unsigned int i, uint32_t head, uint32_t wr_head, const uint8_t *last)
{
	struct fast_pos pos;

	if (i == 0) {
		if (n == 0)
			return -EINVAL;
		/* rdma-core refuses sends before RTS (qp_state_max_gs, §5); error states flush. */
		if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD &&
		    qp->state != IBV_QPS_SQE && qp->state != IBV_QPS_ERR) {
			CQPOLL_LOG(ERR, "mlx5", "qp 0x%x: post send: the QP is not in RTS",
				   qp->caps.qp_num);
			return -EINVAL;
		}
	}
	qp->sq_wr_head = wr_head;
	pos.max_sge = qp->fast_max_sge;
	pos.qpn_ds_be = qp->qpn_ds_be;
	pos.last = last;
	pos.head = head;
	pos.wr_head = wr_head;
	return post_rest(qp, wrs, n, wrs + i, &pos,
			 __atomic_load_n(&qp->sq_wr_tail, __ATOMIC_ACQUIRE));
}

/*
 * The common request, a send, write or read of one non-empty entry, not
 * inline, takes one WQEBB whatever its opcode: a burst of them, within the
 * requests allowed outstanding, is written here, each at its counter's
 * index (so never across the ring's end), with DS a constant per opcode;
 * anything else goes on in post_general().
 */
POST_SEND_ATTR int
cqpoll_mlx5_qp_post_send(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wrs,
			 unsigned int n)
{
	const struct cqpoll_mlx5_send_wr *wr = wrs, *end;
	struct mlx5_wqe_ctrl_seg *c = NULL;
	uint32_t head, wr_head, mask, qpn_ds_be;
	uint8_t *sq_buf;

	if (__builtin_expect(qp == NULL || wrs == NULL, 0))
		return -EINVAL;
	wr_head = qp->sq_wr_head;
	head = qp->sq_head;
	/* n of 0, more than the room, or a state that takes no send (room 0). */
	if (__builtin_expect(n - 1u >= qp->sq_fast_max -
			     (wr_head - __atomic_load_n(&qp->sq_wr_tail, __ATOMIC_ACQUIRE)), 0))
		return post_general(qp, wrs, n, 0, head, wr_head, NULL);
	sq_buf = qp->sq_buf;
	mask = qp->sq_cnt - 1;
	qpn_ds_be = qp->qpn_ds_be;
	for (end = wrs + n; wr != end; wr++) {
		const struct cqpoll_mlx5_sge *sg = wr->sg_list;
		const uint32_t op = wr->opcode, flags = wr->flags;
		struct cqpoll_mlx5_sq_rec *rec;
		uint8_t *seg;

		if (__builtin_expect(wr->num_sge != 1 || op > CQPOLL_MLX5_WR_RDMA_READ ||
				     (flags & CQPOLL_MLX5_SEND_F_INLINE) || sg == NULL ||
				     sg->length == 0, 0))
			return post_general(qp, wrs, n, (unsigned int)(wr - wrs), head, wr_head,
					    (const uint8_t *)c);
		rec = &qp->sq_rec[head & mask];
		rec->wr_id = wr->wr_id;
		rec->wr_end = ++wr_head;
		c = (struct mlx5_wqe_ctrl_seg *)(void *)(sq_buf + (size_t)(head & mask) *
							 MLX5_SEND_WQE_BB);
		seg = (uint8_t *)c + CQPOLL_MLX5_WQE_DS;
		if (op >= CQPOLL_MLX5_WR_RDMA_WRITE) {
			cqpoll_mlx5_wqe_raddr(seg, wr->remote_addr, wr->rkey);
			cqpoll_mlx5_wqe_data(seg + CQPOLL_MLX5_WQE_DS, sg->length, sg->lkey, sg->addr);
			fast_ctrl(c, head, op, qpn_ds_be | 3u << 24, flags, wr->imm_data);
		} else {
			cqpoll_mlx5_wqe_data(seg, sg->length, sg->lkey, sg->addr);
			fast_ctrl(c, head, op, qpn_ds_be | 2u << 24, flags, wr->imm_data);
		}
		head++;
	}
	qp->sq_wr_head = wr_head;
	/* The records before the head that names them (the poller reads them). */
	__atomic_store_n(&qp->sq_head, head, __ATOMIC_RELEASE);
	ring_send(qp, (const uint8_t *)c);
	return (int)n;
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
			   qp->srq != NULL ? "the QP receives from a shared receive queue" :
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
		/* At most max_recv_wr outstanding (mlx5_wq_overflow()). */
		if (used >= qp->rq_wr_max) {
			used = qp->rq_head - __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE);
			if (used >= qp->rq_wr_max)
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
		return -ENOMEM;
	/* No register write for receives: the record is the doorbell (§5). */
	cqpoll_mlx5_wmb_wqe_before_record();
	__atomic_store_n(&qp->dbrec[MLX5_RCV_DBR], htobe32(qp->rq_head & 0xffffu),
			 __ATOMIC_RELEASE);
	return (int)i;
}
