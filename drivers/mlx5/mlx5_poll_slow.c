/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CQEs the fast path refuses: errors, RESP_SEND_INV, inline-scattered
 * payloads (formats 1 and 2) and compressed sessions (format 3), and those
 * no driver can decode, which become failed completions so that the CQ moves
 * on. Offsets and layouts: doc/guides/mlx5-cq-contract.md §2.3, §2.5, §6.
 */

#include <stddef.h>
#include <string.h>

#include "mlx5_poll.h"

/* Fields every slow decode starts from: nothing known yet. */
static void
comp_clear(struct cqpoll_completion *c)
{
	memset(c, 0, sizeof(*c));
}

/*
 * A CQE no decode applies to: resize, tag matching, signature errors (which
 * rdma-core consumes against the mkey), unknown opcodes, impossible formats.
 * Reported, never skipped silently and never stalled on.
 */
static void
decode_bad(const struct mlx5_cqe64 *cqe, uint8_t op_own, struct cqpoll_completion *c)
{
	comp_clear(c);
	c->qp_num = be32toh(cqe->sop_drop_qpn) & CQPOLL_MLX5_CI_MASK;
	c->vendor_err = CQPOLL_MLX5_VENDOR_ERR_BAD_CQE | op_own;
	c->status = CQPOLL_STATUS_GENERAL_ERR;
	c->opcode = (op_own >> 4) >= MLX5_CQE_RESP_WR_IMM &&
		(op_own >> 4) <= MLX5_CQE_RESP_SEND_INV ? CQPOLL_OP_RECV : CQPOLL_OP_SEND;
}

/* rdma-core mlx5_handle_error_cqe (§2.5, §7). */
static void
decode_error(const struct mlx5_cqe64 *cqe, uint8_t op_own, struct cqpoll_completion *c)
{
	const struct mlx5_err_cqe *err = (const struct mlx5_err_cqe *)(const void *)cqe;
	uint32_t sop = be32toh(err->s_wqe_opcode_qpn);

	comp_clear(c);
	c->qp_num = sop & CQPOLL_MLX5_CI_MASK;
	c->vendor_err = err->vendor_err_synd;
	c->wqe_counter = be16toh(err->wqe_counter);
	c->status = (uint8_t)cqpoll_mlx5_syndrome_status(err->syndrome);
	c->opcode = (op_own >> 4) == MLX5_CQE_REQ_ERR ?
		cqpoll_mlx5_op_table[CQPOLL_MLX5_OP_REQ(sop >> 24, 0)].tail.opcode :
		CQPOLL_OP_RECV;
	c->flags = CQPOLL_COMPLETION_F_WQE_COUNTER;
}

/* A success CQE as the fast path would decode it, with format bits cleared. */
static void
decode_success(const struct mlx5_cqe64 *cqe, uint8_t op_own, struct cqpoll_completion *c)
{
	cqpoll_mlx5_decode(cqe, op_own & ~(CQPOLL_MLX5_OP_OWN_FORMAT | MLX5_CQE_OWNER_MASK), c);
	/* handle_responder: be32toh(imm_inval_pkey), the rkey in host order. */
	if ((op_own >> 4) == MLX5_CQE_RESP_SEND_INV)
		c->imm_data = be32toh(cqe->imm_inval_pkey);
}

/*
 * Where an inline-scattered payload sits and how long it may be: format 1 in
 * the descriptor's first 32 bytes, format 2 in the 64 bytes before the
 * descriptor, so only in 128-byte CQEs (rdma-core handle_responder,
 * mlx5_copy_to_recv_wqe / _send_wqe with cqe64 and cqe64 - 1, HEAD 45184d2c8).
 */
static const uint8_t *
inline_src(const struct cqpoll_mlx5_cq *q, const struct mlx5_cqe64 *cqe,
	   unsigned int format, uint32_t *max)
{
	if (format == CQPOLL_MLX5_FORMAT_INLINE32) {
		*max = CQPOLL_MLX5_INLINE32_MAX;
		return (const uint8_t *)cqe;
	}
	if (q->cqe_size != 128)
		return NULL;
	*max = CQPOLL_MLX5_INLINE64_MAX;
	return (const uint8_t *)cqe - 64;
}

/* Formats 1 and 2: the payload, copied out of the slot the device will reuse. */
static int
decode_inline(struct cqpoll_mlx5_cq *q, const struct mlx5_cqe64 *cqe, uint8_t op_own,
	      struct cqpoll_completion *c, unsigned int pos)
{
	unsigned int opcode = op_own >> 4, wop;
	const uint8_t *src;
	uint32_t max = 0;

	src = inline_src(q, cqe, (op_own & CQPOLL_MLX5_OP_OWN_FORMAT) >>
			 CQPOLL_MLX5_OP_OWN_FORMAT_SHIFT, &max);
	if (src == NULL) {
		decode_bad(cqe, op_own, c);
		return 1;
	}
	if (opcode == MLX5_CQE_REQ) {
		/*
		 * handle_good_req scatters only RDMA read and atomic
		 * responses; on other requester CQEs the bits mean nothing.
		 */
		wop = *(const uint8_t *)&cqe->sop_drop_qpn;
		if (wop != MLX5_OPCODE_RDMA_READ && wop != MLX5_OPCODE_ATOMIC_CS &&
		    wop != MLX5_OPCODE_ATOMIC_FA && wop != MLX5_OPCODE_ATOMIC_MASKED_CS &&
		    wop != MLX5_OPCODE_ATOMIC_MASKED_FA) {
			decode_success(cqe, op_own, c);
			return 1;
		}
	}
	if (pos >= CQPOLL_MLX5_SCRATCH_CNT)
		return 0;
	decode_success(cqe, op_own, c);
	if (c->byte_len > max) {
		decode_bad(cqe, op_own, c);
		return 1;
	}
	memcpy(q->slow.scratch[pos], src, c->byte_len);
	c->inline_data = q->slow.scratch[pos];
	c->flags |= CQPOLL_COMPLETION_F_INLINE;
	return 1;
}

/* Copy mini array @p k of the session in progress out of its slot. */
static void
zip_load(struct cqpoll_mlx5_cq *q, uint32_t k)
{
	struct cqpoll_mlx5_zip *z = &q->slow.zip;
	uint32_t idx = cqpoll_mlx5_mini_array_idx(z->title_idx, k);

	memcpy(z->mini, cqpoll_mlx5_cqe(q->buf, idx, q->cqe_cnt, q->cqe_size),
	       sizeof(z->mini));
}

/*
 * Give a session's slot back looking empty (DPDK's MLX5_CQE_INVALIDATE):
 * mini arrays and holes carry no owner bit, and a hole left as it was would
 * pass for a CQE on a later lap.
 */
static void
zip_invalidate(struct cqpoll_mlx5_cq *q, uint32_t idx)
{
	__atomic_store_n(&cqpoll_mlx5_cqe(q->buf, idx, q->cqe_cnt, q->cqe_size)->op_own,
			 (uint8_t)(MLX5_CQE_INVALID << 4), __ATOMIC_RELAXED);
}

void
cqpoll_mlx5_zip_next(struct cqpoll_mlx5_cq *q, uint32_t idx, struct cqpoll_completion *c)
{
	struct cqpoll_mlx5_zip *z = &q->slow.zip;
	const struct cqpoll_mlx5_mini_cqe *m = &z->mini[z->next % CQPOLL_MLX5_MINI_PER_ARRAY];
	uint8_t op_own = z->title.op_own & ~(CQPOLL_MLX5_OP_OWN_FORMAT | MLX5_CQE_OWNER_MASK);

	/*
	 * The title's fields with the mini's byte count (the kernel's
	 * mlx5e_decompress_cqe). Requesters: the mini's WQE counter and
	 * opcode; responders: the title's counter plus the position.
	 */
	z->title.byte_cnt = m->byte_cnt;
	if ((op_own >> 4) == MLX5_CQE_REQ) {
		z->title.wqe_counter = m->wqe_counter;
		*(uint8_t *)&z->title.sop_drop_qpn = m->s_wqe_opcode;
	} else {
		z->title.wqe_counter = htobe16((uint16_t)(be16toh(z->title.wqe_counter) + 1));
	}
	decode_success(&z->title, op_own, c);
	zip_invalidate(q, idx);
	z->next++;
	if (z->next != z->cnt && z->next % CQPOLL_MLX5_MINI_PER_ARRAY == 0)
		zip_load(q, z->next / CQPOLL_MLX5_MINI_PER_ARRAY);
}

void
cqpoll_mlx5_zip_mark(struct cqpoll_mlx5_cq *q, uint32_t ci)
{
	struct mlx5_cqe64 *cqe = cqpoll_mlx5_cqe(q->buf, ci, q->cqe_cnt, q->cqe_size);

	/*
	 * A "compressed, valid" entry where the next burst starts: the fast
	 * path refuses it and hands over to the continuation, which reads the
	 * session's copy. The slot's content is already copied (zip_load).
	 */
	uint8_t op = (uint8_t)(CQPOLL_MLX5_FORMAT_COMPRESSED << CQPOLL_MLX5_OP_OWN_FORMAT_SHIFT |
			       cqpoll_mlx5_sw_owner(ci, q->cqe_cnt));

	/* Enhanced layout: the lap's count and op_own, as one entry (§6). */
	if (q->slow.layout == CQPOLL_MLX5_COMP_ENHANCED)
		__atomic_store_n((uint16_t *)(void *)&cqe->signature,
				 htole16((uint16_t)(cqpoll_mlx5_vic(ci, q->cqe_cnt) | op << 8)),
				 __ATOMIC_RELAXED);
	else
		__atomic_store_n(&cqe->op_own, op, __ATOMIC_RELAXED);
}

void
cqpoll_mlx5_zip_keep_title(struct cqpoll_mlx5_cq *q, uint32_t ci)
{
	struct cqpoll_mlx5_zip *z = &q->slow.zip;

	/* The slot goes back to the device with this burst: copy it now. */
	memcpy(&z->title, cqpoll_mlx5_cqe(q->buf, ci - 1, q->cqe_cnt, q->cqe_size),
	       sizeof(z->title));
	z->title_valid = 1;
}

/*
 * A block of the enhanced layout (§6; DPDK mlx5_rx_poll_len with
 * cqe_comp_layout, the kernel's mlx5e_decompress_enhanced_cqe): up to 7
 * minis in the slot itself, their count - 1 in the opcode nibble, one index
 * each; the fields of the last plain CQE before it, whose WQE index the
 * responders continue.
 */
static void
decode_block(struct cqpoll_mlx5_cq *q, const struct mlx5_cqe64 *cqe, uint8_t op_own,
	     uint32_t idx, struct cqpoll_completion *c)
{
	struct cqpoll_mlx5_zip *z = &q->slow.zip;
	uint32_t cnt = (op_own >> 4) + 1u;

	/* The plain CQE just before, read in this burst: still ours. */
	if (z->end != idx && idx != q->ci)
		cqpoll_mlx5_zip_keep_title(q, idx);
	if (cnt > CQPOLL_MLX5_MINI_PER_BLOCK || !z->title_valid ||
	    (z->title.op_own >> 4) > MLX5_CQE_RESP_SEND_INV) {
		decode_bad(cqe, op_own, c);
		return;
	}
	memcpy(z->mini, cqe, cnt * sizeof(z->mini[0]));
	/* The title keeps its op_own: kind and SE of every mini. */
	z->title_idx = idx;
	z->cnt = cnt;
	z->next = 0;
	z->end = idx + cnt;
	cqpoll_mlx5_zip_next(q, idx, c);
}

/* The title of a basic-layout session: its first completion, and the session. */
static void
decode_title(struct cqpoll_mlx5_cq *q, const struct mlx5_cqe64 *cqe, uint8_t op_own,
	     uint32_t idx, struct cqpoll_completion *c)
{
	struct cqpoll_mlx5_zip *z = &q->slow.zip;
	unsigned int opcode = op_own >> 4;
	uint32_t cnt = be32toh(cqe->byte_cnt);

	/*
	 * Only success CQEs are compressed, and a session holds at least two
	 * completions and fits the ring; anything else is not a session.
	 */
	if (q->slow.layout != CQPOLL_MLX5_COMP_BASIC || opcode > MLX5_CQE_RESP_SEND_INV ||
	    cnt < 2 || cnt > q->cqe_cnt) {
		decode_bad(cqe, op_own, c);
		return;
	}
	memcpy(&z->title, cqe, sizeof(z->title));
	z->title_idx = idx;
	z->cnt = cnt;
	z->next = 0;
	zip_load(q, 0);
	/* The first completion: the title's own counter, the first mini. */
	z->title.wqe_counter = htobe16((uint16_t)(be16toh(cqe->wqe_counter) - 1));
	cqpoll_mlx5_zip_next(q, idx, c);
}

int
cqpoll_mlx5_decode_slow(struct cqpoll_mlx5_cq *q, const struct mlx5_cqe64 *cqe,
			uint8_t op_own, uint32_t idx, struct cqpoll_completion *c,
			unsigned int pos)
{
	unsigned int opcode = op_own >> 4;
	unsigned int format = (op_own & CQPOLL_MLX5_OP_OWN_FORMAT) >>
		CQPOLL_MLX5_OP_OWN_FORMAT_SHIFT;

	if (opcode == MLX5_CQE_REQ_ERR || opcode == MLX5_CQE_RESP_ERR) {
		decode_error(cqe, op_own, c);
		return 1;
	}
	if (format == CQPOLL_MLX5_FORMAT_COMPRESSED) {
		if (q->slow.layout == CQPOLL_MLX5_COMP_ENHANCED)
			decode_block(q, cqe, op_own, idx, c);
		else
			decode_title(q, cqe, op_own, idx, c);
		return 1;
	}
	if (opcode > MLX5_CQE_RESP_SEND_INV) {
		decode_bad(cqe, op_own, c);
		return 1;
	}
	if (format != 0)
		return decode_inline(q, cqe, op_own, c, pos);
	decode_success(cqe, op_own, c);
	return 1;
}
