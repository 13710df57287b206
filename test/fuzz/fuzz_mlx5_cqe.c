/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the mlx5 CQE decoder: the input becomes the memory of
 * a small CQ (any bytes, any owner bits) and a starting consumer index; the
 * driver's real poll runs over it, twice (the second goes on from where the
 * first stopped, e.g. inside a compressed session). Every format is reached:
 * the op_own bytes are the input's, inline scatter 32/64 in 64- and 128-byte
 * CQEs, and compressed sessions, basic or enhanced layout (validity by
 * iteration count), with compression on or off (flag bits).
 * Checked: no crash or sanitizer report, a result within [0, n], the index
 * advanced by exactly the result, the doorbell record equal to its low 24
 * bits, no stall (a software-owned CQE at the index is always consumed),
 * statuses and opcodes within their enums, inline payloads within the CQE's
 * capacity and inside the CQ's scratch area.
 */

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mlx5_prm.h"
#include "mlx5_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CQES 8

static void
check_burst(const struct cqpoll_mlx5_cq *q, const struct cqpoll_completion *c, int r)
{
	const uint8_t *lo = &q->slow.scratch[0][0];
	const uint8_t *hi = lo + sizeof(q->slow.scratch);
	int i;

	for (i = 0; i < r; i++) {
		const uint8_t *p = c[i].inline_data;

		if (c[i].status > CQPOLL_STATUS_GENERAL_ERR ||
		    (c[i].opcode > CQPOLL_OP_TSO && c[i].opcode != CQPOLL_OP_UMR &&
		     c[i].opcode != CQPOLL_OP_RECV &&
		     c[i].opcode != CQPOLL_OP_RECV_RDMA_WITH_IMM))
			abort();
		if ((c[i].flags & CQPOLL_COMPLETION_F_WR_ID) || c[i].wr_id != 0)
			abort();
		if (!(c[i].flags & CQPOLL_COMPLETION_F_INLINE) != (p == NULL))
			abort();
		if (p != NULL && (c[i].byte_len > CQPOLL_MLX5_INLINE64_MAX ||
				  p < lo || p + c[i].byte_len > hi))
			abort();
	}
}

/* Would the driver find a CQE at its index? Then a poll must take it. */
static int
cqe_ready(const struct cqpoll_mlx5_cq *q)
{
	const struct mlx5_cqe64 *cqe = cqpoll_mlx5_cqe(q->buf, q->ci, q->cqe_cnt, q->cqe_size);
	uint8_t own = cqe->op_own;

	if (q->slow.zip.next != q->slow.zip.cnt)
		return 1;
	if (q->slow.layout == CQPOLL_MLX5_COMP_ENHANCED)
		return cqe->signature == cqpoll_mlx5_vic(q->ci, q->cqe_cnt) &&
			(own >> 4) != MLX5_CQE_INVALID;
	return (own & MLX5_CQE_OWNER_MASK) == cqpoll_mlx5_sw_owner(q->ci, q->cqe_cnt) &&
		(own >> 4) != MLX5_CQE_INVALID;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[FUZZ_CQES * 128] __attribute__((aligned(4096)));
	static struct cqpoll_mlx5_cq q;
	struct cqpoll_completion c[FUZZ_CQES];
	uint32_t dbrec[2] = { 0, 0 };
	uint64_t uar[8];
	struct mlx5dv_cq dv;
	uint32_t ci0, cqe_size, n;
	int r, round, ready;

	if (size < 6)
		return 0;
	cqe_size = (data[0] & 1) ? 128 : 64;
	n = 1u + data[1] % FUZZ_CQES;
	memcpy(&ci0, data + 2, 4);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, data + 6, size - 6 < sizeof(buf) ? size - 6 : sizeof(buf));
	memset(&dv, 0, sizeof(dv));
	dv.buf = buf;
	dv.dbrec = dbrec;
	dv.cq_uar = uar;
	dv.cqe_cnt = FUZZ_CQES;
	dv.cqe_size = cqe_size;
	memset(&q, 0, sizeof(q));
	if (cqpoll_mlx5_cq_setup(&q, &dv, ci0, 0,
				 ((data[0] & 2) ? CQPOLL_MLX5_F_CQE_COMPRESS : 0) |
				 ((data[0] & 4) ? CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED : 0)) != 0)
		abort();
	/* The fuzz input is the UAR page's neighbour: no doorbell is rung here. */
	q.uar_db = uar;
	for (round = 0; round < 2; round++) {
		ci0 = q.ci;
		ready = cqe_ready(&q);
		r = cqpoll_mlx5_poll_of(&q)(&q, c, n);
		if (r < 0 || r > (int)n || (ready && r == 0))
			abort();
		if (q.ci != ci0 + (uint32_t)r)
			abort();
		if (r > 0 && be32toh(dbrec[0]) != (q.ci & CQPOLL_MLX5_CI_MASK))
			abort();
		check_burst(&q, c, r);
	}
	return 0;
}
