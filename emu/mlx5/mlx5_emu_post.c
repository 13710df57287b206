/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated device writes a CQE: a genuine struct mlx5_cqe64 in the slot
 * the producer index names, body first, op_own last with release order, then
 * the arm is evaluated (contract §3.1, §10 item 1).
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "emu_util.h"
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
	/* rdma-core posts both as UMR (mlx5_ib_opcode[]): so does the device. */
	case CQPOLL_OP_BIND_MW: return MLX5_OPCODE_UMR;
	case CQPOLL_OP_LOCAL_INV: return MLX5_OPCODE_UMR;
	case CQPOLL_OP_UMR: return MLX5_OPCODE_UMR;
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

/* The WQE index the CQE reports: the caller's, or the low bits of its wr_id. */
static uint16_t
wqe_counter_of(const struct cqpoll_completion *c)
{
	return (c->flags & CQPOLL_COMPLETION_F_WQE_COUNTER) ? c->wqe_counter : (uint16_t)c->wr_id;
}

/*
 * The device clock: HCA ticks at 156.25 MHz (a ConnectX core clock) from an
 * origin far from any host time, so that a consumer taking ticks for host
 * nanoseconds is caught at once.
 */
uint64_t
cqpoll_mlx5_emu_clock_ticks(void)
{
	return CQPOLL_MLX5_EMU_CLOCK_ORIGIN + cqpoll_now_ns() / 32 * 5;
}

uint64_t
cqpoll_mlx5_emu_ticks_to_ns(uint64_t ticks)
{
	return (ticks - CQPOLL_MLX5_EMU_CLOCK_ORIGIN) / 5 * 32 + 31;
}

/* May the device scatter this completion's payload into the CQE? (§2.3) */
static int
inline_format(const struct cqpoll_completion *c, uint32_t cqe_size)
{
	int rsp = c->opcode == CQPOLL_OP_RECV || c->opcode == CQPOLL_OP_RECV_RDMA_WITH_IMM;
	int req = c->opcode == CQPOLL_OP_RDMA_READ || c->opcode == CQPOLL_OP_COMP_SWAP ||
		c->opcode == CQPOLL_OP_FETCH_ADD;
	uint32_t len = c->byte_len;

	if ((!rsp && !req) || c->inline_data == NULL || c->status != CQPOLL_STATUS_SUCCESS)
		return -1;
	/* rdma-core reports 8 bytes for atomics: the device scatters those. */
	if (c->opcode == CQPOLL_OP_COMP_SWAP || c->opcode == CQPOLL_OP_FETCH_ADD)
		len = 8;
	if (len <= CQPOLL_MLX5_INLINE32_MAX)
		return CQPOLL_MLX5_FORMAT_INLINE32;
	if (len <= CQPOLL_MLX5_INLINE64_MAX && cqe_size == 128)
		return CQPOLL_MLX5_FORMAT_INLINE64;
	return -1;
}

/*
 * Build the 64-byte descriptor (and, for a 64-byte inline payload, the half
 * before it in @p pre); *op is its op_own without the owner bit.
 */
static int
encode(const struct cqpoll_completion *c, uint32_t cqe_size, struct mlx5_cqe64 *cqe,
       uint8_t pre[64], uint8_t *op)
{
	struct mlx5_err_cqe *err = (struct mlx5_err_cqe *)(void *)cqe;
	int opc, syn, fmt = 0;
	uint8_t wop;

	memset(cqe, 0, sizeof(*cqe));
	memset(pre, 0, 64);
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
		err->wqe_counter = htobe16(wqe_counter_of(c));
		*op = (uint8_t)((opc == MLX5_CQE_REQ ? MLX5_CQE_REQ_ERR : MLX5_CQE_RESP_ERR) << 4);
		return 0;
	}
	if (c->flags & CQPOLL_COMPLETION_F_INLINE) {
		fmt = inline_format(c, cqe_size);
		if (fmt < 0)
			return -EINVAL;
		/* Format 1: the descriptor's first 32 bytes; 2: the half before it. */
		memcpy(fmt == CQPOLL_MLX5_FORMAT_INLINE32 ? (uint8_t *)cqe : pre,
		       c->inline_data, c->opcode == CQPOLL_OP_COMP_SWAP ||
		       c->opcode == CQPOLL_OP_FETCH_ADD ? 8 : c->byte_len);
	}
	/* Immediate data travels in network order; an rkey is a host value (§2.6). */
	if (c->flags & CQPOLL_COMPLETION_F_IMM)
		cqe->imm_inval_pkey = c->imm_data;
	else if (c->flags & CQPOLL_COMPLETION_F_INV)
		cqe->imm_inval_pkey = htobe32(c->imm_data);
	cqe->byte_cnt = htobe32(c->byte_len);
	cqe->timestamp = htobe64(cqpoll_mlx5_emu_clock_ticks());
	cqe->sop_drop_qpn = htobe32((opc == MLX5_CQE_REQ ? (uint32_t)wop << 24 : 0) |
				    (c->qp_num & CQPOLL_MLX5_CI_MASK));
	cqe->wqe_counter = htobe16(wqe_counter_of(c));
	*op = (uint8_t)(opc << 4 | fmt << CQPOLL_MLX5_OP_OWN_FORMAT_SHIFT |
			((c->flags & CQPOLL_COMPLETION_F_SOLICITED) ? CQPOLL_MLX5_OP_OWN_SE : 0));
	return 0;
}

/* Room for @p k more CQEs, or the overrun / back-pressure outcome (§4.3). */
static int
room(struct cqpoll_mlx5_emu_dev *dev, uint32_t k)
{
	uint32_t size = dev->dv.cqe_cnt, ci, used;

	/* The device sees the consumer only through the record (§4.3). */
	ci = be32toh(__atomic_load_n(&dev->dv.dbrec[CQPOLL_MLX5_DBREC_SET_CI], __ATOMIC_ACQUIRE));
	used = (dev->pi - ci) & CQPOLL_MLX5_CI_MASK;
	if (used + k <= size)
		return 0;
	if (!dev->overrun_error) {
		dev->stats.full++;
		return -ENOSPC;
	}
	/* [INFERRED] §4.3: the CQE is lost and the CQ goes to error. */
	dev->stats.overruns++;
	cqpoll_mlx5_emu_dev_raise_error(dev, -EOVERFLOW);
	return -EOVERFLOW;
}

/* Write one CQE at pi: body first, op_own last with release order (§3.2). */
static void
write_cqe(struct cqpoll_mlx5_emu_dev *dev, const struct mlx5_cqe64 *tmp,
	  const uint8_t pre[64], uint8_t op)
{
	uint32_t size = dev->dv.cqe_cnt;
	struct mlx5_cqe64 *cqe = cqpoll_mlx5_cqe(dev->dv.buf, dev->pi, size, dev->dv.cqe_size);

	/* 128-byte slots: the first half is inline data or zeros. */
	if (dev->dv.cqe_size == 128)
		memcpy((uint8_t *)cqe - 64, pre, 64);
	op = (uint8_t)(op | cqpoll_mlx5_sw_owner(dev->pi, size));
	if (dev->enhanced) {
		/*
		 * Enhanced layout: validity is the lap's count (§6), published
		 * with op_own in one store, last: a reader never sees a new
		 * count beside an old op_own.
		 */
		memcpy(cqe, tmp, offsetof(struct mlx5_cqe64, signature));
		__atomic_store_n((uint16_t *)(void *)&cqe->signature,
				 htole16((uint16_t)(cqpoll_mlx5_vic(dev->pi, size) | op << 8)),
				 __ATOMIC_RELEASE);
		return;
	}
	memcpy(cqe, tmp, offsetof(struct mlx5_cqe64, op_own));
	__atomic_store_n(&cqe->op_own, op, __ATOMIC_RELEASE);
}

/* After CQEs up to pi - 1 were written: solicited bookkeeping, the arm (§5.3). */
static void
written(struct cqpoll_mlx5_emu_dev *dev, uint32_t k, int solicited)
{
	dev->pi += k;
	if (solicited) {
		dev->last_sol = dev->pi - 1;
		dev->have_sol = 1;
	}
	dev->stats.cqes += k;
	cqpoll_mlx5_emu_dev_check(dev);
	cqpoll_mlx5_emu_dev_evaluate(dev);
}

/*
 * Completions a compressed session can hold together: successes without
 * payload or immediate, of one QP, kind and SE; a responder's WQE indices
 * follow each other (the minis do not carry them), §6.
 */
static int
compressible(const struct cqpoll_completion *c)
{
	return c->status == CQPOLL_STATUS_SUCCESS &&
		!(c->flags & (CQPOLL_COMPLETION_F_INLINE | CQPOLL_COMPLETION_F_IMM |
			      CQPOLL_COMPLETION_F_INV)) &&
		(c->opcode == CQPOLL_OP_RECV || wqe_opcode(c) != 0xff);
}

static int
compatible(const struct cqpoll_mlx5_emu_dev *dev, const struct cqpoll_completion *c)
{
	const struct cqpoll_completion *f = &dev->zip[0];

	return c->qp_num == f->qp_num && (c->opcode == CQPOLL_OP_RECV) == (f->opcode == CQPOLL_OP_RECV) &&
		((c->flags ^ f->flags) & CQPOLL_COMPLETION_F_SOLICITED) == 0 &&
		(c->opcode != CQPOLL_OP_RECV ||
		 wqe_counter_of(c) == (uint16_t)(wqe_counter_of(f) + dev->nzip));
}

/* Fill a mini CQE from a held completion (§6). */
static void
mini_of(const struct cqpoll_completion *c, struct cqpoll_mlx5_mini_cqe *m)
{
	memset(m, 0, sizeof(*m));
	m->byte_cnt = htobe32(c->byte_len);
	if (c->opcode != CQPOLL_OP_RECV) {
		m->wqe_counter = htobe16(wqe_counter_of(c));
		m->s_wqe_opcode = wqe_opcode(c);
	}
}

/*
 * Enhanced layout: the first held completion as a plain CQE, the title,
 * then blocks of up to 7 minis, each in the slot of its first completion
 * with count - 1 in the opcode nibble; the other slots are holes.
 */
static void
flush_enhanced(struct cqpoll_mlx5_emu_dev *dev, uint32_t m, const struct mlx5_cqe64 *title,
	       const uint8_t pre[64], uint8_t op, int se)
{
	struct cqpoll_mlx5_mini_cqe mini[CQPOLL_MLX5_MINI_PER_BLOCK];
	uint32_t i = 1, k, j;
	struct mlx5_cqe64 blk;

	write_cqe(dev, title, pre, op);
	written(dev, 1, se);
	while (i < m) {
		k = m - i < CQPOLL_MLX5_MINI_PER_BLOCK ? m - i : CQPOLL_MLX5_MINI_PER_BLOCK;
		memset(&blk, 0, sizeof(blk));
		for (j = 0; j < k; j++)
			mini_of(&dev->zip[i + j], &mini[j]);
		memcpy(&blk, mini, k * sizeof(mini[0]));
		write_cqe(dev, &blk, pre, (uint8_t)((k - 1) << 4 |
			  CQPOLL_MLX5_FORMAT_COMPRESSED << CQPOLL_MLX5_OP_OWN_FORMAT_SHIFT |
			  (se ? CQPOLL_MLX5_OP_OWN_SE : 0)));
		written(dev, k, se);
		i += k;
	}
}

/*
 * Write the held completions: one alone as a plain CQE, more as a session:
 * basic layout, the mini arrays at h + 1, h + 8, h + 16, ... first, then the
 * title at h with the count in byte_cnt and format 3, op_own last; enhanced
 * layout, a plain title then blocks. The slots between are holes the device
 * does not write.
 */
int
cqpoll_mlx5_emu_zip_flush(struct cqpoll_mlx5_emu_dev *dev)
{
	struct cqpoll_mlx5_mini_cqe mini[CQPOLL_MLX5_MINI_PER_ARRAY];
	uint32_t m = dev->nzip, k, i, size = dev->dv.cqe_cnt;
	struct mlx5_cqe64 tmp;
	uint8_t pre[64], op;
	int se;

	if (m == 0)
		return 0;
	dev->nzip = 0;
	if (encode(&dev->zip[0], dev->dv.cqe_size, &tmp, pre, &op) != 0)
		return -EINVAL;
	se = (op & CQPOLL_MLX5_OP_OWN_SE) != 0;
	if (m > 1)
		dev->stats.sessions++;
	if (dev->enhanced) {
		flush_enhanced(dev, m, &tmp, pre, op, se);
		return 0;
	}
	if (m > 1) {
		for (k = 0; k * CQPOLL_MLX5_MINI_PER_ARRAY < m; k++) {
			memset(mini, 0, sizeof(mini));
			for (i = 0; i < CQPOLL_MLX5_MINI_PER_ARRAY &&
			     k * CQPOLL_MLX5_MINI_PER_ARRAY + i < m; i++)
				mini_of(&dev->zip[k * CQPOLL_MLX5_MINI_PER_ARRAY + i], &mini[i]);
			memcpy(cqpoll_mlx5_cqe(dev->dv.buf,
					       cqpoll_mlx5_mini_array_idx(dev->pi, k),
					       size, dev->dv.cqe_size), mini, sizeof(mini));
		}
		tmp.byte_cnt = htobe32(m);
		op |= CQPOLL_MLX5_FORMAT_COMPRESSED << CQPOLL_MLX5_OP_OWN_FORMAT_SHIFT;
	}
	write_cqe(dev, &tmp, pre, op);
	written(dev, m, se);
	return 0;
}

int
cqpoll_mlx5_emu_cq_room(struct cqpoll_mlx5_emu_dev *dev, uint32_t k)
{
	uint32_t ci, used;
	int r;

	pthread_mutex_lock(&dev->lock);
	ci = be32toh(__atomic_load_n(&dev->dv.dbrec[CQPOLL_MLX5_DBREC_SET_CI], __ATOMIC_ACQUIRE));
	used = (dev->pi - ci) & CQPOLL_MLX5_CI_MASK;
	r = dev->broken ? dev->broken_err : used + dev->nzip + k <= dev->dv.cqe_cnt;
	pthread_mutex_unlock(&dev->lock);
	return r;
}

int
cqpoll_mlx5_emu_cq_write(struct cqpoll_mlx5_emu_dev *dev, const struct mlx5_cqe64 *cqe,
			 uint8_t op, int solicited)
{
	uint8_t pre[64];
	int r;

	memset(pre, 0, sizeof(pre));
	pthread_mutex_lock(&dev->lock);
	r = dev->broken ? dev->broken_err : room(dev, dev->nzip + 1);
	if (r == 0) {
		cqpoll_mlx5_emu_zip_flush(dev);
		write_cqe(dev, cqe, pre, op);
		written(dev, 1, solicited);
	}
	pthread_mutex_unlock(&dev->lock);
	return r;
}

int
cqpoll_mlx5_emu_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp)
{
	struct cqpoll_mlx5_emu_dev *dev;
	struct mlx5_cqe64 tmp;
	uint8_t pre[64], op;
	int r;

	if (cq == NULL || comp == NULL || cqpoll_cq_driver(cq) != &cqpoll_mlx5_emu_ops)
		return -EINVAL;
	dev = cqpoll_mlx5_emu_dev_of(cqpoll_cq_priv(cq));
	r = encode(comp, dev->dv.cqe_size, &tmp, pre, &op);
	if (r < 0)
		return r;
	pthread_mutex_lock(&dev->lock);
	if (dev->broken) {
		r = dev->broken_err;
		goto out;
	}
	/* Held completions count as written: their slots are taken. */
	r = room(dev, dev->nzip + 1);
	if (r < 0)
		goto out;
	if (dev->compress && compressible(comp)) {
		if (dev->nzip != 0 && !compatible(dev, comp))
			cqpoll_mlx5_emu_zip_flush(dev);
		/* Held until the session is full or its window closed (a device look). */
		if (dev->nzip == 0)
			dev->zip_since = cqpoll_now_ns();
		dev->zip[dev->nzip++] = *comp;
		if (dev->nzip == CQPOLL_MLX5_EMU_ZIP_MAX)
			cqpoll_mlx5_emu_zip_flush(dev);
		goto out;
	}
	cqpoll_mlx5_emu_zip_flush(dev);
	write_cqe(dev, &tmp, pre, op);
	written(dev, 1, (op & CQPOLL_MLX5_OP_OWN_SE) || comp->status != CQPOLL_STATUS_SUCCESS);
out:
	pthread_mutex_unlock(&dev->lock);
	return r;
}
