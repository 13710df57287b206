/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the mlx5 CQE decoder: the input becomes the memory of
 * a small CQ (any bytes, any owner bits) and a starting consumer index; the
 * driver's real poll runs over it. Checked: no crash or sanitizer report,
 * a result within [-EPROTO, n], the index advanced by exactly the result,
 * the doorbell record equal to its low 24 bits, and statuses and opcodes
 * within their enums.
 */

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mlx5_prm.h"
#include "mlx5_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CQES 8

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[FUZZ_CQES * 128] __attribute__((aligned(4096)));
	struct cqpoll_completion c[FUZZ_CQES];
	struct cqpoll_mlx5_cq q;
	uint32_t dbrec[2] = { 0, 0 };
	uint64_t uar[8];
	uint32_t ci0, cqe_size, n;
	int r, i;

	if (size < 6)
		return 0;
	cqe_size = (data[0] & 1) ? 128 : 64;
	n = 1u + data[1] % FUZZ_CQES;
	memcpy(&ci0, data + 2, 4);
	data += 6;
	size -= 6;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, data, size < sizeof(buf) ? size : sizeof(buf));
	memset(&q, 0, sizeof(q));
	q.buf = buf;
	q.dbrec = dbrec;
	q.cqe_cnt = FUZZ_CQES;
	q.cqe_size = cqe_size;
	q.ci = ci0;
	q.uar_db = uar;
	r = cqpoll_mlx5_poll_select(cqe_size)(&q, c, n);
	if (r < -EPROTO || r > (int)n || (r < 0 && r != -EPROTO))
		abort();
	if (q.ci != ci0 + (uint32_t)(r > 0 ? r : 0))
		abort();
	if (r > 0 && be32toh(dbrec[0]) != (q.ci & CQPOLL_MLX5_CI_MASK))
		abort();
	for (i = 0; i < r; i++)
		if (c[i].status > CQPOLL_STATUS_GENERAL_ERR ||
		    (c[i].opcode > CQPOLL_OP_TSO && c[i].opcode != CQPOLL_OP_RECV &&
		     c[i].opcode != CQPOLL_OP_RECV_RDMA_WITH_IMM))
			abort();
	return 0;
}
