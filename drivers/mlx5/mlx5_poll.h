/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_POLL_H
#define CQPOLL_MLX5_POLL_H

/*
 * The burst poll, written once and instantiated per CQE size: with the size a
 * constant the slot address is a shift and the descriptor offset folds away.
 * The variant is chosen once, when the CQ is created.
 */

#include <errno.h>

#include "mlx5_barrier.h"
#include "mlx5_prm.h"
#include "mlx5_private.h"

#include <string.h>

#define CQPOLL_MLX5_ALWAYS_INLINE inline __attribute__((always_inline))

/*
 * op_own, with the owner bit of the current lap xor-ed out, of a CQE the fast
 * path decodes: owned by software, format 0 (no inline scatter, no
 * compression) and a success opcode, REQ or RESP_* but RESP_SEND_INV (its
 * rkey is byte-swapped, a step only the slow path pays). SE is left as it
 * is. Anything else, the INVALID mark included, fails this one test.
 */
static CQPOLL_MLX5_ALWAYS_INLINE int
cqpoll_mlx5_cqe_fast(unsigned int own)
{
	return (own & (MLX5_CQE_OWNER_MASK | CQPOLL_MLX5_OP_OWN_FORMAT)) == 0 &&
	       own < (MLX5_CQE_RESP_SEND_INV << 4);
}

/* A CQE that passed cqpoll_mlx5_cqe_fast(), @p own as given to it. */
static CQPOLL_MLX5_ALWAYS_INLINE void
cqpoll_mlx5_decode(const struct mlx5_cqe64 *cqe, unsigned int own,
		   struct cqpoll_completion *c)
{
	const struct cqpoll_mlx5_op *base = cqpoll_mlx5_op_table;
	uint32_t sop = be32toh(cqe->sop_drop_qpn);
	const struct cqpoll_mlx5_op *e;

	/*
	 * Opcode REQ: own below the first responder opcode. The WQE opcode is
	 * sop >> 24, the first byte in memory: loaded apart, so that sop needs
	 * no second register on the responder path.
	 */
	if (own < (MLX5_CQE_RESP_WR_IMM << 4))
		base = &cqpoll_mlx5_op_table[CQPOLL_MLX5_OP_REQ(
			*(const uint8_t *)&cqe->sop_drop_qpn, 0)];
	/*
	 * The entry is base + CQPOLL_MLX5_OP_RESP(own) for a responder, and the
	 * same with SE (own bit 1) for a requester. The owner bit of own is 0
	 * here, so own / 2 entries are own * 8 bytes: an addressing mode, no
	 * arithmetic.
	 */
	e = (const struct cqpoll_mlx5_op *)(const void *)
		((const uint8_t *)base + own * (sizeof(*e) / 2));
	/* The caller's wr_id is the QP owner's to look up (F_WR_ID clear). */
	c->wr_id = 0;
	c->timestamp = be64toh(cqe->timestamp);
	c->inline_data = NULL;
	c->vendor_err = 0;
	c->wqe_counter = be16toh(cqe->wqe_counter);
	c->reserved = 0;
	c->byte_len = (be32toh(cqe->byte_cnt) & e->len_mask) | e->len_fixed;
	c->qp_num = sop & CQPOLL_MLX5_CI_MASK;
	c->imm_data = cqe->imm_inval_pkey & e->imm_mask;
	/* status, opcode and flags (SE and TIMESTAMP included) in one move. */
	memcpy(&c->status, &e->tail, sizeof(e->tail));
}

/* The rest of a burst from its @p done-th CQE, which is not a fast-path one. */
typedef int (*cqpoll_mlx5_poll_cont_t)(struct cqpoll_mlx5_cq *q,
				       struct cqpoll_completion *comps,
				       unsigned int n, unsigned int done);

/*
 * The burst poll. The common instance (@p cont set) decodes the fast-path
 * CQEs only and hands the burst, with what it has done so far, to @p cont at
 * the first other CQE: a tail call, so this instance calls nothing and needs
 * no callee-saved registers. @p cont is the same template without @p cont,
 * which decodes every kind; together they behave as one loop that commits
 * the burst once. @p vic: the CQ uses the enhanced compression layout, whose
 * validity is the iteration-count byte next to op_own instead of the owner
 * bit; its own instances, so that owner-bit CQs pay nothing for it.
 */
static CQPOLL_MLX5_ALWAYS_INLINE int
cqpoll_mlx5_poll_tmpl(struct cqpoll_mlx5_cq *q, struct cqpoll_completion *comps,
		      unsigned int n, unsigned int done, const uint32_t cqe_size,
		      const int vic, const cqpoll_mlx5_poll_cont_t cont)
{
	const uint32_t cnt = q->cqe_cnt;
	const uint32_t ci = q->ci + done;
	const uint32_t slot = ci & (cnt - 1);
	/*
	 * Within a lap the owner value (or the iteration count) is fixed and
	 * the CQE pointer just steps.
	 */
	unsigned int owner = vic ? cqpoll_mlx5_vic(ci, cnt) : cqpoll_mlx5_sw_owner(ci, cnt);
	const struct mlx5_cqe64 *cqe = cqpoll_mlx5_cqe(q->buf, slot, cnt, cqe_size);
	struct cqpoll_completion *c, *last, *end;

	/*
	 * Busy polling mostly finds nothing: the instance that starts a burst
	 * decides an empty CQ with the first entry's validity alone, before
	 * setting the burst up (DPDK's mlx5 Rx checks the same first). The
	 * loop loads it again; a slot inside a compressed session is marked
	 * valid (cqpoll_mlx5_zip_mark()), so it is never taken for empty.
	 */
	if (cont != NULL) {
		if (vic) {
			unsigned int w = le16toh(__atomic_load_n(
				(const uint16_t *)(const void *)&cqe->signature,
				__ATOMIC_ACQUIRE));

			if ((w & 0xff) != owner || (w >> 12) == MLX5_CQE_INVALID)
				return __atomic_load_n(&q->dev_err, __ATOMIC_RELAXED);
		} else {
			unsigned int own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE) ^ owner;

			if ((own & MLX5_CQE_OWNER_MASK) != 0 || (own >> 4) == MLX5_CQE_INVALID)
				return __atomic_load_n(&q->dev_err, __ATOMIC_RELAXED);
		}
	}
	c = comps + done;
	last = comps + n;
	/* The burst stops at the end of the buffer, then goes on from its start. */
	end = n - done <= cnt - slot ? last : c + (cnt - slot);

	for (;;) {
		for (; c != end; c++) {
			/* Acquire costs nothing on x86/arm64 loads and orders CPU-side writers too. */
			unsigned int own;

			/*
			 * Inside a compressed session the slots are not CQEs:
			 * the session's copy says what each index holds. Only
			 * the continuation gets here with one (zip_mark).
			 */
			if (cont == NULL && q->slow.zip.next != q->slow.zip.cnt) {
				cqpoll_mlx5_zip_next(q, q->ci + (uint32_t)(c - comps), c);
				goto next;
			}
			if (vic) {
				/* Validity byte and op_own in one load (§6). */
				unsigned int w = le16toh(__atomic_load_n(
					(const uint16_t *)(const void *)&cqe->signature,
					__ATOMIC_ACQUIRE));

				if ((w & 0xff) != owner || (w >> 12) == MLX5_CQE_INVALID)
					goto out;
				own = (w >> 8) & ~(unsigned int)MLX5_CQE_OWNER_MASK;
			} else {
				own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE) ^ owner;
			}
			if (__builtin_expect(!cqpoll_mlx5_cqe_fast(own), 0)) {
				/* Owner from the last lap, or the INVALID mark of a fresh buffer (§3.1). */
				if ((own & MLX5_CQE_OWNER_MASK) != 0 ||
				    (own >> 4) == MLX5_CQE_INVALID)
					goto out;
				if (cont != NULL)
					return cont(q, comps, n, (unsigned int)(c - comps));
				cqpoll_mlx5_rmb_cqe_after_owner();
				/* 0: no room for its payload in this burst; the next takes it. */
				if (cqpoll_mlx5_decode_slow(q, cqe, (uint8_t)(vic ? own : own ^ owner),
							    q->ci + (uint32_t)(c - comps), c,
							    (unsigned int)(c - comps)) == 0)
					goto out;
			} else {
				cqpoll_mlx5_rmb_cqe_after_owner();
				cqpoll_mlx5_decode(cqe, own, c);
			}
next:
			cqe = (const struct mlx5_cqe64 *)(const void *)
				((const uint8_t *)cqe + cqe_size);
		}
		if (__builtin_expect(c == last, 1))
			break;
		/* The next lap: from slot 0, with the other owner value. */
		owner = vic ? (owner + 1) & 0xff : owner ^ MLX5_CQE_OWNER_MASK;
		cqe = cqpoll_mlx5_cqe(q->buf, 0, q->cqe_cnt, cqe_size);
		end = (size_t)(last - c) <= q->cqe_cnt ? last : c + q->cqe_cnt;
	}
out:
	if (c != comps) {
		const unsigned int polled = (unsigned int)(c - comps);
		/* Read again rather than kept in a register through the loop. */
		const uint32_t ci_new = q->ci + polled;

		q->ci = ci_new;
		if (cont == NULL && q->slow.zip.next != q->slow.zip.cnt)
			cqpoll_mlx5_zip_mark(q, ci_new);
		/* A block in the next burst may need this burst's last plain CQE. */
		else if (vic && q->slow.zip.end != ci_new)
			cqpoll_mlx5_zip_keep_title(q, ci_new);
		/* One record write per burst, after the slots were read (§4.1). */
		cqpoll_mlx5_wmb_slots_before_ci();
		__atomic_store_n(&q->dbrec[CQPOLL_MLX5_DBREC_SET_CI],
				 htobe32(ci_new & CQPOLL_MLX5_CI_MASK), __ATOMIC_RELEASE);
		return (int)polled;
	}
	return __atomic_load_n(&q->dev_err, __ATOMIC_RELAXED);
}

#endif /* CQPOLL_MLX5_POLL_H */
