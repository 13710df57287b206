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

#define CQPOLL_MLX5_ALWAYS_INLINE inline __attribute__((always_inline))

static CQPOLL_MLX5_ALWAYS_INLINE int
cqpoll_mlx5_decode(const struct mlx5_cqe64 *cqe, uint8_t op_own,
		   struct cqpoll_completion *c)
{
	unsigned int opcode = op_own >> 4;
	const struct cqpoll_mlx5_op *e;
	uint32_t sop;

	/* Inline scatter, compression and non-success opcodes go the slow way. */
	if (__builtin_expect((op_own & CQPOLL_MLX5_OP_OWN_FORMAT) != 0 ||
			     opcode > MLX5_CQE_RESP_SEND_INV, 0))
		return cqpoll_mlx5_decode_slow(cqe, op_own, c);
	sop = be32toh(cqe->sop_drop_qpn);
	e = &cqpoll_mlx5_op_table[opcode != MLX5_CQE_REQ ?
		CQPOLL_MLX5_OP_RESP_BASE + opcode : sop >> 24];
	c->wr_id = be16toh(cqe->wqe_counter);
	c->timestamp = be64toh(cqe->timestamp);
	c->byte_len = e->len8 ? 8 : be32toh(cqe->byte_cnt);
	c->qp_num = sop & CQPOLL_MLX5_CI_MASK;
	c->imm_data = cqe->imm_inval_pkey & e->imm_mask;
	c->status = CQPOLL_STATUS_SUCCESS;
	c->opcode = e->opcode;
	/* SE (bit 1) lands on CQPOLL_COMPLETION_F_SOLICITED (bit 3). */
	c->flags = (uint16_t)(e->flags | CQPOLL_COMPLETION_F_TIMESTAMP |
			      (op_own & CQPOLL_MLX5_OP_OWN_SE) << 2);
	return 0;
}

static CQPOLL_MLX5_ALWAYS_INLINE int
cqpoll_mlx5_poll_tmpl(void *priv, struct cqpoll_completion *comps, unsigned int n,
		      const uint32_t cqe_size)
{
	struct cqpoll_mlx5_cq *q = priv;
	const uint32_t cnt = q->cqe_cnt;
	uint8_t *buf = q->buf;
	uint32_t ci = q->ci;
	unsigned int i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		const struct mlx5_cqe64 *cqe = cqpoll_mlx5_cqe(buf, ci, cnt, cqe_size);
		/* Acquire costs nothing on x86/arm64 loads and orders CPU-side writers too. */
		uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

		/* Owner from this lap, and not the INVALID mark of a fresh buffer (§3.1). */
		if ((op_own & MLX5_CQE_OWNER_MASK) != cqpoll_mlx5_sw_owner(ci, cnt) ||
		    (op_own >> 4) == MLX5_CQE_INVALID)
			break;
		cqpoll_mlx5_rmb_cqe_after_owner();
		if (__builtin_expect(cqpoll_mlx5_decode(cqe, op_own, &comps[i]) != 0, 0)) {
			/* Stop before it: the CQ stays stuck on it, never skips it. */
			bad = 1;
			break;
		}
		ci++;
	}
	if (i != 0) {
		q->ci = ci;
		/* One record write per burst, after the slots were read (§4.1). */
		cqpoll_mlx5_wmb_slots_before_ci();
		__atomic_store_n(&q->dbrec[CQPOLL_MLX5_DBREC_SET_CI],
				 htobe32(ci & CQPOLL_MLX5_CI_MASK), __ATOMIC_RELEASE);
		return (int)i;
	}
	if (bad)
		return -EPROTO;
	return __atomic_load_n(&q->dev_err, __ATOMIC_RELAXED);
}

#endif /* CQPOLL_MLX5_POLL_H */
