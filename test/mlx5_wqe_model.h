/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_MLX5_WQE_MODEL_H
#define TEST_MLX5_WQE_MODEL_H

/*
 * An independent model of the send WQE a request must produce, written
 * field by field from rdma-core's post path (providers/mlx5/qp.c
 * _mlx5_post_send(), set_raddr_seg(), _set_atomic_seg(),
 * set_data_ptr_seg(), set_data_ptr_seg_atomic(), set_data_inl_seg();
 * mlx5dv.h mlx5dv_set_ctrl_seg() and the MLX5_OPCODE_* / MLX5_WQE_CTRL_*
 * values; doc/guides/mlx5-wqe-contract.md §2), with byte offsets, never with the
 * driver's writers or structs. Bytes the post path leaves as they were (the
 * inline padding, the compare word of a fetch-and-add) are masked out.
 *
 * A QP made with sq_sig_all ORs MLX5_WQE_CTRL_CQ_UPDATE into every WQE's
 * fm_ce_se (verbs.c: qp->sq_signal_bits; qp.c: ctrl->fm_ce_se =
 * qp->sq_signal_bits | ...). A send with invalidate is a send with opcode
 * MLX5_OPCODE_SEND_INVAL (0x01) and htobe32(invalidate_rkey) in the
 * control segment's imm (send_ieth()).
 *
 * Also the completion rdma-core reports for it (cq.c handle_good_req,
 * handle_responder): opcode, and the length where rdma-core gives one.
 */

#include <stdint.h>
#include <string.h>

#include "cqpoll_completion.h"
#include "cqpoll_mlx5.h"

/* Up to 16 WQEBBs (the kernel's MLX5_SEND_WQE_MAX_WQEBBS). */
#define MODEL_WQE_MAX 1024

struct model_wqe {
	uint8_t bytes[MODEL_WQE_MAX];
	uint8_t mask[MODEL_WQE_MAX];   /* 1: the byte is defined */
	uint32_t ds;                   /* 16-byte units */
	uint32_t nbb;                  /* 64-byte blocks the counter advances by */
};

/* rdma-core's mlx5_ib_opcode[] for the RC verbs these map to. */
static inline uint8_t
model_opcode(uint32_t op)
{
	switch (op) {
	case CQPOLL_MLX5_WR_SEND: return 0x0a;          /* MLX5_OPCODE_SEND */
	case CQPOLL_MLX5_WR_SEND_IMM: return 0x0b;      /* MLX5_OPCODE_SEND_IMM */
	case CQPOLL_MLX5_WR_RDMA_WRITE: return 0x08;    /* MLX5_OPCODE_RDMA_WRITE */
	case CQPOLL_MLX5_WR_RDMA_WRITE_IMM: return 0x09; /* MLX5_OPCODE_RDMA_WRITE_IMM */
	case CQPOLL_MLX5_WR_RDMA_READ: return 0x10;     /* MLX5_OPCODE_RDMA_READ */
	case CQPOLL_MLX5_WR_ATOMIC_CS: return 0x11;     /* MLX5_OPCODE_ATOMIC_CS */
	case CQPOLL_MLX5_WR_SEND_INV: return 0x01;      /* MLX5_OPCODE_SEND_INVAL */
	default: return 0x12;                           /* MLX5_OPCODE_ATOMIC_FA */
	}
}

static inline void
model_put(struct model_wqe *m, uint32_t off, const void *src, uint32_t len)
{
	memcpy(m->bytes + off, src, len);
	memset(m->mask + off, 1, len);
}

static inline void
model_be32(struct model_wqe *m, uint32_t off, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	model_put(m, off, b, 4);
}

static inline void
model_be64(struct model_wqe *m, uint32_t off, uint64_t v)
{
	model_be32(m, off, (uint32_t)(v >> 32));
	model_be32(m, off + 4, (uint32_t)v);
}

/*
 * The WQE of @p wr posted at WQEBB counter @p counter of QP @p qpn, made
 * with sq_sig_all = @p sig_all, laid out from its start (the test reads the
 * ring across its end into one buffer).
 */
static inline void
model_wqe_build_sig(struct model_wqe *m, const struct cqpoll_mlx5_send_wr *wr, uint32_t counter,
		    uint32_t qpn, int sig_all)
{
	uint32_t off = 16, i, total = 0, fm_ce_se = sig_all ? 0x08 : 0, imm = 0;

	memset(m, 0, sizeof(*m));
	/* raddr segment: remote address, rkey, 4 reserved zero bytes. */
	if (wr->opcode != CQPOLL_MLX5_WR_SEND && wr->opcode != CQPOLL_MLX5_WR_SEND_IMM &&
	    wr->opcode != CQPOLL_MLX5_WR_SEND_INV) {
		model_be64(m, off, wr->remote_addr);
		model_be32(m, off + 8, wr->rkey);
		model_be32(m, off + 12, 0);
		off += 16;
	}
	if (wr->opcode == CQPOLL_MLX5_WR_ATOMIC_CS || wr->opcode == CQPOLL_MLX5_WR_ATOMIC_FA) {
		/* atomic segment: swap (or add), then compare for CAS only. */
		if (wr->opcode == CQPOLL_MLX5_WR_ATOMIC_CS) {
			model_be64(m, off, wr->swap);
			model_be64(m, off + 8, wr->compare_add);
		} else {
			model_be64(m, off, wr->compare_add);
		}
		off += 16;
		/* set_data_ptr_seg_atomic: byte count 8. */
		model_be32(m, off, 8);
		model_be32(m, off + 4, wr->sg_list[0].lkey);
		model_be64(m, off + 8, wr->sg_list[0].addr);
		off += 16;
	} else if (wr->flags & CQPOLL_MLX5_SEND_F_INLINE) {
		for (i = 0; i < wr->num_sge; i++) {
			model_put(m, off + 4 + total, (const void *)(uintptr_t)wr->sg_list[i].addr,
				  wr->sg_list[i].length);
			total += wr->sg_list[i].length;
		}
		/* No header at all for 0 bytes; else len | MLX5_INLINE_SEG. */
		if (total != 0) {
			model_be32(m, off, total | 0x80000000u);
			off += (4 + total + 15) / 16 * 16;
		}
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length == 0)
				continue;
			model_be32(m, off, wr->sg_list[i].length);
			model_be32(m, off + 4, wr->sg_list[i].lkey);
			model_be64(m, off + 8, wr->sg_list[i].addr);
			off += 16;
		}
	}
	m->ds = off / 16;
	m->nbb = (m->ds + 3) / 4;
	if (wr->flags & CQPOLL_MLX5_SEND_F_SIGNALED)
		fm_ce_se |= 0x08;  /* MLX5_WQE_CTRL_CQ_UPDATE */
	if (wr->flags & CQPOLL_MLX5_SEND_F_SOLICITED)
		fm_ce_se |= 0x02;  /* MLX5_WQE_CTRL_SOLICITED */
	if (wr->flags & CQPOLL_MLX5_SEND_F_FENCE)
		fm_ce_se |= 0x80;  /* MLX5_WQE_CTRL_FENCE */
	if (wr->opcode == CQPOLL_MLX5_WR_SEND_IMM || wr->opcode == CQPOLL_MLX5_WR_RDMA_WRITE_IMM)
		imm = wr->imm_data;
	if (wr->opcode == CQPOLL_MLX5_WR_SEND_INV) {
		/* send_ieth(): htobe32(wr->invalidate_rkey), written as bytes here. */
		model_be32(m, 12, wr->invalidate_rkey);
		memcpy(&imm, m->bytes + 12, 4);
	}
	/* ctrl: opmod 0 | WQE index | opcode; QPN | DS; 0, 0, 0, fm_ce_se; imm as is. */
	model_be32(m, 0, (counter & 0xffff) << 8 | model_opcode(wr->opcode));
	model_be32(m, 4, qpn << 8 | (m->ds & 0x3f));
	model_be32(m, 8, fm_ce_se);
	model_put(m, 12, &imm, 4);
}

/* The same on a QP made without sq_sig_all. */
static inline void
model_wqe_build(struct model_wqe *m, const struct cqpoll_mlx5_send_wr *wr, uint32_t counter,
		uint32_t qpn)
{
	model_wqe_build_sig(m, wr, counter, qpn, 0);
}

/* What rdma-core's poll reports for a successful requester completion. */
static inline uint8_t
model_req_opcode(uint32_t op)
{
	switch (op) {
	case CQPOLL_MLX5_WR_SEND:
	case CQPOLL_MLX5_WR_SEND_IMM:
	case CQPOLL_MLX5_WR_SEND_INV: return CQPOLL_OP_SEND;
	case CQPOLL_MLX5_WR_RDMA_WRITE:
	case CQPOLL_MLX5_WR_RDMA_WRITE_IMM: return CQPOLL_OP_RDMA_WRITE;
	case CQPOLL_MLX5_WR_RDMA_READ: return CQPOLL_OP_RDMA_READ;
	case CQPOLL_MLX5_WR_ATOMIC_CS: return CQPOLL_OP_COMP_SWAP;
	default: return CQPOLL_OP_FETCH_ADD;
	}
}

#endif /* TEST_MLX5_WQE_MODEL_H */
