/* SPDX-License-Identifier: BSD-3-Clause */
/* The poll variants, the decode tables and the poll state's setup. */

#include <errno.h>

#include "mlx5_poll.h"

#include <stddef.h>
#include <string.h>

/* The tail is copied over status, opcode and flags with one 4-byte move. */
_Static_assert(offsetof(struct cqpoll_completion, opcode) ==
	       offsetof(struct cqpoll_completion, status) + 1 &&
	       offsetof(struct cqpoll_completion, flags) ==
	       offsetof(struct cqpoll_completion, status) + 2 &&
	       sizeof(struct cqpoll_mlx5_op_tail) == 4, "completion tail layout");

/*
 * A success entry. Every one says which fields are valid: the WQE index (the
 * caller's wr_id is not in the CQE) and the timestamp, in HCA clock ticks.
 */
#define OP(o, f, l8, se) { \
	.imm_mask = ((f) & (CQPOLL_COMPLETION_F_IMM | CQPOLL_COMPLETION_F_INV)) != 0 ? \
		0xffffffffu : 0, \
	.len_mask = (l8) ? 0 : 0xffffffffu, \
	.len_fixed = (l8) ? 8 : 0, \
	.tail = { .status = CQPOLL_STATUS_SUCCESS, .opcode = (o), \
		.flags = (f) | CQPOLL_COMPLETION_F_TIMESTAMP_RAW | \
			CQPOLL_COMPLETION_F_WQE_COUNTER | \
			((se) ? CQPOLL_COMPLETION_F_SOLICITED : 0) } }

/*
 * Requester opcode of a WQE opcode, following rdma-core handle_good_req; WQE
 * opcodes it does not name keep the CQPOLL_OP_SEND default. rdma-core posts
 * bind-MW, local invalidate and its driver UMRs all as UMR and reads which
 * from its per-WQE record (wr_data); without the QP we cannot tell, and say
 * so: CQPOLL_OP_UMR.
 *
 * rdma-core flags requester *_IMM completions WITH_IMM but fills no
 * immediate: the CQE carries none. Our flag promises the data, so it is left
 * clear (no requester entry has flags); the requester knows what it sent.
 */
#define REQ_OPCODE(w) \
	((w) == MLX5_OPCODE_RDMA_WRITE || (w) == MLX5_OPCODE_RDMA_WRITE_IMM ? \
		CQPOLL_OP_RDMA_WRITE : \
	 (w) == MLX5_OPCODE_RDMA_READ ? CQPOLL_OP_RDMA_READ : \
	 (w) == MLX5_OPCODE_ATOMIC_CS || (w) == MLX5_OPCODE_ATOMIC_MASKED_CS ? \
		CQPOLL_OP_COMP_SWAP : \
	 (w) == MLX5_OPCODE_ATOMIC_FA || (w) == MLX5_OPCODE_ATOMIC_MASKED_FA ? \
		CQPOLL_OP_FETCH_ADD : \
	 (w) == MLX5_OPCODE_UMR ? CQPOLL_OP_UMR : \
	 (w) == MLX5_OPCODE_LOCAL_INVAL ? CQPOLL_OP_LOCAL_INV : \
	 (w) == MLX5_OPCODE_TSO ? CQPOLL_OP_TSO : CQPOLL_OP_SEND)
/* Atomics report 8 bytes, as rdma-core does. */
#define REQ_LEN8(w) \
	(REQ_OPCODE(w) == CQPOLL_OP_COMP_SWAP || REQ_OPCODE(w) == CQPOLL_OP_FETCH_ADD)
/*
 * Every requester entry is spelled out (also the defaults, which must carry
 * the validity flags and, for SE, F_SOLICITED): 2 x 256 entries, generated.
 */
#define REQ(w, se) [CQPOLL_MLX5_OP_REQ(w, se)] = OP(REQ_OPCODE(w), 0, REQ_LEN8(w), se)
#define REQ1(w) REQ(w, 0), REQ(w, 1)
#define REQ4(w) REQ1(w), REQ1((w) + 1), REQ1((w) + 2), REQ1((w) + 3)
#define REQ16(w) REQ4(w), REQ4((w) + 4), REQ4((w) + 8), REQ4((w) + 12)
#define REQ64(w) REQ16(w), REQ16((w) + 16), REQ16((w) + 32), REQ16((w) + 48)
/* Responder entries, rdma-core handle_responder. */
#define RESP(op, o, f) \
	[CQPOLL_MLX5_OP_RESP((op) << 4)] = OP(o, f, 0, 0), \
	[CQPOLL_MLX5_OP_RESP((op) << 4 | CQPOLL_MLX5_OP_OWN_SE)] = OP(o, f, 0, 1)

const struct cqpoll_mlx5_op cqpoll_mlx5_op_table[CQPOLL_MLX5_OP_CNT] = {
	RESP(MLX5_CQE_RESP_WR_IMM, CQPOLL_OP_RECV_RDMA_WITH_IMM, CQPOLL_COMPLETION_F_IMM),
	RESP(MLX5_CQE_RESP_SEND, CQPOLL_OP_RECV, 0),
	RESP(MLX5_CQE_RESP_SEND_IMM, CQPOLL_OP_RECV, CQPOLL_COMPLETION_F_IMM),
	RESP(MLX5_CQE_RESP_SEND_INV, CQPOLL_OP_RECV, CQPOLL_COMPLETION_F_INV),
	REQ64(0), REQ64(64), REQ64(128), REQ64(192),
};

int
cqpoll_mlx5_cq_setup(struct cqpoll_mlx5_cq *q, const struct mlx5dv_cq *dv,
		     uint32_t ci, uint32_t sn, uint32_t flags)
{
	if (dv->buf == NULL || dv->dbrec == NULL || dv->cq_uar == NULL ||
	    dv->cqe_cnt < 2 || dv->cqe_cnt > CQPOLL_MLX5_CQE_CNT_MAX ||
	    (dv->cqe_cnt & (dv->cqe_cnt - 1)) != 0 ||
	    cqpoll_mlx5_poll_select(dv->cqe_size, 0) == NULL)
		return -EINVAL;
	q->buf = dv->buf;
	q->dbrec = (volatile uint32_t *)dv->dbrec;
	q->cqe_cnt = dv->cqe_cnt;
	q->cqe_size = dv->cqe_size;
	q->uar_db = (volatile uint64_t *)(void *)((uint8_t *)dv->cq_uar + MLX5_CQ_DOORBELL);
	q->cqn = dv->cqn;
	q->ci = ci;
	q->sn = sn;
	q->arm_cmd = (flags & CQPOLL_MLX5_F_SOLICITED_ONLY) ?
		MLX5_CQ_DB_REQ_NOT_SOL : MLX5_CQ_DB_REQ_NOT;
	memset(&q->slow, 0, sizeof(q->slow));
	if (flags & CQPOLL_MLX5_F_CQE_COMPRESS)
		q->slow.layout = (flags & CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED) ?
			CQPOLL_MLX5_COMP_ENHANCED : CQPOLL_MLX5_COMP_BASIC;
	return 0;
}

enum cqpoll_arm_semantics
cqpoll_mlx5_arm_semantics(uint32_t flags)
{
	/*
	 * Whether a solicited-only arm fires for a solicited CQE written
	 * before it is not documented (contract §5.3, [UNCONFIRMED]): until
	 * hardware shows it does, treat it as edge, so that poll-and-arm polls
	 * once more after arming.
	 */
	return (flags & CQPOLL_MLX5_F_SOLICITED_ONLY) ? CQPOLL_ARM_EDGE : CQPOLL_ARM_LEVEL;
}

/* Continuations: every CQE kind, entered only at a CQE the fast path refused. */
#define POLL_VARIANT(name, size, vic) \
static __attribute__((noinline, cold)) int \
name##_cont(struct cqpoll_mlx5_cq *q, struct cqpoll_completion *comps, \
	    unsigned int n, unsigned int done) \
{ \
	return cqpoll_mlx5_poll_tmpl(q, comps, n, done, size, vic, NULL); \
} \
static int \
name(void *priv, struct cqpoll_completion *comps, unsigned int n) \
{ \
	return cqpoll_mlx5_poll_tmpl(priv, comps, n, 0, size, vic, name##_cont); \
}

POLL_VARIANT(cqpoll_mlx5_poll_64, 64, 0)
POLL_VARIANT(cqpoll_mlx5_poll_128, 128, 0)
POLL_VARIANT(cqpoll_mlx5_poll_64_vic, 64, 1)
POLL_VARIANT(cqpoll_mlx5_poll_128_vic, 128, 1)

cqpoll_poll_burst_t
cqpoll_mlx5_poll_select(uint32_t cqe_size, int enhanced)
{
	static const cqpoll_poll_burst_t variants[2][2] = {
		{ cqpoll_mlx5_poll_64, cqpoll_mlx5_poll_128 },
		{ cqpoll_mlx5_poll_64_vic, cqpoll_mlx5_poll_128_vic },
	};

	if (cqe_size != 64 && cqe_size != 128)
		return NULL;
	return variants[enhanced != 0][cqe_size == 128];
}

cqpoll_poll_burst_t
cqpoll_mlx5_poll_of(const struct cqpoll_mlx5_cq *q)
{
	return cqpoll_mlx5_poll_select(q->cqe_size, q->slow.layout == CQPOLL_MLX5_COMP_ENHANCED);
}
