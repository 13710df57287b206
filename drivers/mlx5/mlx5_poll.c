/* SPDX-License-Identifier: BSD-3-Clause */
/* The poll variants, the decode tables and the rare CQE kinds. */

#include <errno.h>

#include "mlx5_poll.h"

#define OP(o, f, l) { .opcode = (o), .flags = (f), .len8 = (l), \
	.imm_mask = ((f) != 0 ? 0xffffffffu : 0) }

/*
 * Requester entries follow rdma-core handle_good_req; WQE opcodes it does not
 * name keep the CQPOLL_OP_SEND default. UMR covers bind and local invalidate
 * in rdma-core (it reads which from its QP); without the QP we report BIND_MW.
 */
const struct cqpoll_mlx5_op cqpoll_mlx5_op_table[CQPOLL_MLX5_OP_RESP_BASE + 5] = {
	[MLX5_OPCODE_SEND] = OP(CQPOLL_OP_SEND, 0, 0),
	[MLX5_OPCODE_SEND_INVAL] = OP(CQPOLL_OP_SEND, 0, 0),
	/*
	 * rdma-core flags requester *_IMM completions WITH_IMM but fills no
	 * immediate: the CQE carries none. Our flag promises the data, so it
	 * is left clear; the requester knows what it sent.
	 */
	[MLX5_OPCODE_SEND_IMM] = OP(CQPOLL_OP_SEND, 0, 0),
	[MLX5_OPCODE_RDMA_WRITE] = OP(CQPOLL_OP_RDMA_WRITE, 0, 0),
	[MLX5_OPCODE_RDMA_WRITE_IMM] = OP(CQPOLL_OP_RDMA_WRITE, 0, 0),
	[MLX5_OPCODE_RDMA_READ] = OP(CQPOLL_OP_RDMA_READ, 0, 0),
	[MLX5_OPCODE_ATOMIC_CS] = OP(CQPOLL_OP_COMP_SWAP, 0, 1),
	[MLX5_OPCODE_ATOMIC_FA] = OP(CQPOLL_OP_FETCH_ADD, 0, 1),
	[MLX5_OPCODE_ATOMIC_MASKED_CS] = OP(CQPOLL_OP_COMP_SWAP, 0, 1),
	[MLX5_OPCODE_ATOMIC_MASKED_FA] = OP(CQPOLL_OP_FETCH_ADD, 0, 1),
	[MLX5_OPCODE_UMR] = OP(CQPOLL_OP_BIND_MW, 0, 0),
	[MLX5_OPCODE_LOCAL_INVAL] = OP(CQPOLL_OP_LOCAL_INV, 0, 0),
	[MLX5_OPCODE_TSO] = OP(CQPOLL_OP_TSO, 0, 0),
	/* Responder CQEs, rdma-core handle_responder. */
	[CQPOLL_MLX5_OP_RESP_BASE + MLX5_CQE_RESP_WR_IMM] =
		OP(CQPOLL_OP_RECV_RDMA_WITH_IMM, CQPOLL_COMPLETION_F_IMM, 0),
	[CQPOLL_MLX5_OP_RESP_BASE + MLX5_CQE_RESP_SEND] = OP(CQPOLL_OP_RECV, 0, 0),
	[CQPOLL_MLX5_OP_RESP_BASE + MLX5_CQE_RESP_SEND_IMM] =
		OP(CQPOLL_OP_RECV, CQPOLL_COMPLETION_F_IMM, 0),
	[CQPOLL_MLX5_OP_RESP_BASE + MLX5_CQE_RESP_SEND_INV] =
		OP(CQPOLL_OP_RECV, CQPOLL_COMPLETION_F_INV, 0),
};

int
cqpoll_mlx5_decode_slow(const struct mlx5_cqe64 *cqe, uint8_t op_own,
			struct cqpoll_completion *c)
{
	const struct mlx5_err_cqe *err = (const struct mlx5_err_cqe *)(const void *)cqe;
	unsigned int opcode = op_own >> 4;
	uint32_t sop;

	/*
	 * Inline-scattered data lives in the CQE and would have to be copied
	 * to the QP's buffer, which only the QP owner knows: refuse, loudly.
	 * Compressed sessions are never enabled by this driver.
	 */
	if ((op_own & CQPOLL_MLX5_OP_OWN_FORMAT) != 0)
		return -EPROTO;
	if (opcode != MLX5_CQE_REQ_ERR && opcode != MLX5_CQE_RESP_ERR)
		return -EPROTO; /* resize, tag matching, signature: unsupported */
	sop = be32toh(err->s_wqe_opcode_qpn);
	c->wr_id = be16toh(err->wqe_counter);
	c->timestamp = 0;
	c->byte_len = 0;
	c->qp_num = sop & CQPOLL_MLX5_CI_MASK;
	c->imm_data = err->vendor_err_synd;
	c->status = (uint8_t)cqpoll_mlx5_syndrome_status(err->syndrome);
	c->opcode = opcode == MLX5_CQE_REQ_ERR ?
		cqpoll_mlx5_op_table[sop >> 24].opcode : CQPOLL_OP_RECV;
	c->flags = 0;
	return 0;
}

int
cqpoll_mlx5_poll_64(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	return cqpoll_mlx5_poll_tmpl(priv, comps, n, 64);
}

int
cqpoll_mlx5_poll_128(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	return cqpoll_mlx5_poll_tmpl(priv, comps, n, 128);
}

cqpoll_poll_burst_t
cqpoll_mlx5_poll_select(uint32_t cqe_size)
{
	static const cqpoll_poll_burst_t variants[] = {
		cqpoll_mlx5_poll_64,
		cqpoll_mlx5_poll_128,
	};

	if (cqe_size != 64 && cqe_size != 128)
		return NULL;
	return variants[cqe_size == 128];
}
