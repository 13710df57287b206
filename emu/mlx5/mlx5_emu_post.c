/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated device writes a CQE: a genuine struct mlx5_cqe64 in the slot
 * the producer index names, body first, op_own last with release order, then
 * the arm is evaluated (contract §3.1, §10 item 1).
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "cqpoll_emu.h"
#include "mlx5_emu_private.h"
#include "mlx5_prm.h"

static uint8_t
wqe_opcode(const struct cqpoll_completion *c)
{
	int imm = (c->flags & CQPOLL_COMPLETION_F_IMM) != 0;

	switch (c->opcode) {
	case CQPOLL_OP_SEND: return imm ? MLX5_OPCODE_SEND_IMM : MLX5_OPCODE_SEND;
	case CQPOLL_OP_RDMA_WRITE: return imm ? MLX5_OPCODE_RDMA_WRITE_IMM : MLX5_OPCODE_RDMA_WRITE;
	case CQPOLL_OP_RDMA_READ: return MLX5_OPCODE_RDMA_READ;
	case CQPOLL_OP_COMP_SWAP: return MLX5_OPCODE_ATOMIC_CS;
	case CQPOLL_OP_FETCH_ADD: return MLX5_OPCODE_ATOMIC_FA;
	case CQPOLL_OP_BIND_MW: return MLX5_OPCODE_UMR;
	case CQPOLL_OP_LOCAL_INV: return MLX5_OPCODE_LOCAL_INVAL;
	case CQPOLL_OP_TSO: return MLX5_OPCODE_TSO;
	default: return 0xff;
	}
}

static int
resp_opcode(const struct cqpoll_completion *c)
{
	if (c->opcode == CQPOLL_OP_RECV_RDMA_WITH_IMM)
		return MLX5_CQE_RESP_WR_IMM;
	if (c->opcode != CQPOLL_OP_RECV)
		return -1;
	if (c->flags & CQPOLL_COMPLETION_F_IMM)
		return MLX5_CQE_RESP_SEND_IMM;
	if (c->flags & CQPOLL_COMPLETION_F_INV)
		return MLX5_CQE_RESP_SEND_INV;
	return MLX5_CQE_RESP_SEND;
}

/* Inverse of rdma-core's table (§7); GENERAL_ERR as an unlisted syndrome. */
static int
status_syndrome(uint8_t status)
{
	static const uint8_t syn[] = {
		[CQPOLL_STATUS_LOC_LEN_ERR] = MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR,
		[CQPOLL_STATUS_LOC_QP_OP_ERR] = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
		[CQPOLL_STATUS_LOC_PROT_ERR] = MLX5_CQE_SYNDROME_LOCAL_PROT_ERR,
		[CQPOLL_STATUS_WR_FLUSH_ERR] = MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
		[CQPOLL_STATUS_MW_BIND_ERR] = MLX5_CQE_SYNDROME_MW_BIND_ERR,
		[CQPOLL_STATUS_BAD_RESP_ERR] = MLX5_CQE_SYNDROME_BAD_RESP_ERR,
		[CQPOLL_STATUS_LOC_ACCESS_ERR] = MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR,
		[CQPOLL_STATUS_REM_INV_REQ_ERR] = MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
		[CQPOLL_STATUS_REM_ACCESS_ERR] = MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
		[CQPOLL_STATUS_REM_OP_ERR] = MLX5_CQE_SYNDROME_REMOTE_OP_ERR,
		[CQPOLL_STATUS_RETRY_EXC_ERR] = MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR,
		[CQPOLL_STATUS_RNR_RETRY_EXC_ERR] = MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR,
		[CQPOLL_STATUS_REM_ABORT_ERR] = MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR,
		[CQPOLL_STATUS_GENERAL_ERR] = 0xff,
	};

	if (status >= sizeof(syn) || syn[status] == 0)
		return -1;
	return syn[status];
}

/* Build the 64-byte descriptor; *op is its op_own without the owner bit. */
static int
encode(const struct cqpoll_completion *c, struct mlx5_cqe64 *cqe, uint8_t *op)
{
	struct mlx5_err_cqe *err = (struct mlx5_err_cqe *)(void *)cqe;
	int opc, syn;
	uint8_t wop;

	memset(cqe, 0, sizeof(*cqe));
	wop = wqe_opcode(c);
	opc = c->opcode < CQPOLL_OP_RECV ? (wop != 0xff ? MLX5_CQE_REQ : -1) :
		resp_opcode(c);
	if (opc < 0)
		return -EINVAL;
	if (c->status != CQPOLL_STATUS_SUCCESS) {
		syn = status_syndrome(c->status);
		if (syn < 0)
			return -EINVAL;
		err->syndrome = (uint8_t)syn;
		err->vendor_err_synd = (uint8_t)c->vendor_err;
		err->s_wqe_opcode_qpn = htobe32((opc == MLX5_CQE_REQ ? (uint32_t)wop << 24 : 0) |
						(c->qp_num & CQPOLL_MLX5_CI_MASK));
		err->wqe_counter = htobe16((uint16_t)c->wr_id);
		*op = (uint8_t)((opc == MLX5_CQE_REQ ? MLX5_CQE_REQ_ERR : MLX5_CQE_RESP_ERR) << 4);
		return 0;
	}
	if (c->flags & (CQPOLL_COMPLETION_F_IMM | CQPOLL_COMPLETION_F_INV))
		cqe->imm_inval_pkey = c->imm_data;
	cqe->byte_cnt = htobe32(c->byte_len);
	cqe->timestamp = htobe64(cqpoll_now_ns());
	cqe->sop_drop_qpn = htobe32((opc == MLX5_CQE_REQ ? (uint32_t)wop << 24 : 0) |
				    (c->qp_num & CQPOLL_MLX5_CI_MASK));
	cqe->wqe_counter = htobe16((uint16_t)c->wr_id);
	*op = (uint8_t)(opc << 4 |
			((c->flags & CQPOLL_COMPLETION_F_SOLICITED) ? CQPOLL_MLX5_OP_OWN_SE : 0));
	return 0;
}

int
cqpoll_mlx5_emu_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp)
{
	struct cqpoll_mlx5_emu_dev *dev;
	struct cqpoll_mlx5_cq *q;
	struct mlx5_cqe64 tmp, *cqe;
	uint32_t ci, used, size;
	uint8_t op;
	int r;

	if (cq == NULL || comp == NULL || cqpoll_cq_driver(cq) != &cqpoll_mlx5_emu_ops)
		return -EINVAL;
	q = cqpoll_cq_priv(cq);
	dev = q->emu;
	r = encode(comp, &tmp, &op);
	if (r < 0)
		return r;
	pthread_mutex_lock(&dev->lock);
	if (dev->broken) {
		r = -EIO;
		goto out;
	}
	size = dev->dv.cqe_cnt;
	/* The device sees the consumer only through the record (§4.3). */
	ci = be32toh(__atomic_load_n(&dev->dv.dbrec[CQPOLL_MLX5_DBREC_SET_CI], __ATOMIC_ACQUIRE));
	used = (dev->pi - ci) & CQPOLL_MLX5_CI_MASK;
	if (used >= size) {
		if (!dev->overrun_error) {
			dev->stats.full++;
			r = -ENOSPC;
			goto out;
		}
		/* [INFERRED] §4.3: the CQE is lost and the CQ goes to error. */
		dev->stats.overruns++;
		cqpoll_mlx5_emu_dev_raise_error(dev, -EIO);
		r = -EIO;
		goto out;
	}
	cqe = cqpoll_mlx5_cqe(dev->dv.buf, dev->pi, size, dev->dv.cqe_size);
	/* 128-byte slots: no inline data, the first half is cleared first. */
	if (dev->dv.cqe_size == 128)
		memset((uint8_t *)cqe - 64, 0, 64);
	memcpy(cqe, &tmp, offsetof(struct mlx5_cqe64, op_own));
	__atomic_store_n(&cqe->op_own,
			 (uint8_t)(op | cqpoll_mlx5_sw_owner(dev->pi, size)), __ATOMIC_RELEASE);
	if ((op & CQPOLL_MLX5_OP_OWN_SE) || comp->status != CQPOLL_STATUS_SUCCESS) {
		dev->last_sol = dev->pi;
		dev->have_sol = 1;
	}
	dev->pi++;
	dev->stats.cqes++;
	cqpoll_mlx5_emu_dev_check(dev);
	cqpoll_mlx5_emu_dev_evaluate(dev);
out:
	pthread_mutex_unlock(&dev->lock);
	return r;
}
