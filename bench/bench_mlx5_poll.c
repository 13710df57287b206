/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-CQE cost of the mlx5 direct poll path against the floor: a minimal
 * hand-written owner-bit loop over identical CQ memory (two emulated CQs of
 * the same layout, filled with the same CQEs). The floor checks owner and
 * INVALID, issues the same read barrier, extracts the fields a consumer
 * needs (wqe_counter, byte count, QPN, opcode) and writes the doorbell
 * record once per burst, as an application polling by hand would.
 *
 * Only bench_measure() is timed (rdtsc) and counted (run under
 * valgrind --tool=callgrind --toggle-collect=bench_measure): filling the CQ
 * by the emulated device is excluded. See bench/run_mlx5.sh.
 *
 * Usage: bench_mlx5_poll driver|floor BURST [ROUNDS]
 */

#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include <infiniband/mlx5dv.h>

#include "cqpoll.h"
#include "cqpoll_mlx5.h"

#define CQ_SIZE 4096

struct floor_cq {
	struct mlx5dv_cq dv;
	uint32_t ci;
};

static __attribute__((noinline)) unsigned int
floor_poll(struct floor_cq *f, struct cqpoll_completion *c, unsigned int n)
{
	const uint32_t cnt = f->dv.cqe_cnt;
	uint32_t ci = f->ci;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(void *)((uint8_t *)f->dv.buf +
			(size_t)(ci & (cnt - 1)) * 64);
		uint8_t op = *(volatile uint8_t *)&cqe->op_own;

		if ((op & 1) != !!(ci & cnt) || (op >> 4) == MLX5_CQE_INVALID)
			break;
		__asm__ volatile("lfence" ::: "memory");
		c[i].wqe_counter = be16toh(cqe->wqe_counter);
		c[i].byte_len = be32toh(cqe->byte_cnt);
		c[i].qp_num = be32toh(cqe->sop_drop_qpn) & 0xffffff;
		c[i].opcode = op >> 4;
		ci++;
	}
	if (i != 0) {
		f->ci = ci;
		f->dv.dbrec[0] = htobe32(ci & 0xffffff);
	}
	return i;
}

static int
fill(struct cqpoll_cq *cq, unsigned int n)
{
	struct cqpoll_completion c = { .byte_len = 64, .qp_num = 0x55, .opcode = CQPOLL_OP_RECV };
	unsigned int i;

	for (i = 0; i < n; i++) {
		c.wr_id = i;
		if (cqpoll_mlx5_emu_post(cq, &c) != 0)
			return -1;
	}
	return 0;
}

/* The measured region: drain @p total CQEs in bursts of @p burst. */
static __attribute__((noinline)) uint64_t
bench_measure(struct cqpoll_cq *cq, struct floor_cq *f, unsigned int burst,
	      unsigned int total, uint64_t *sink)
{
	struct cqpoll_completion c[32];
	unsigned int got = 0;
	uint64_t t0 = __rdtsc();
	int r;

	while (got < total) {
		r = f != NULL ? (int)floor_poll(f, c, burst) : cqpoll_poll_burst(cq, c, burst);
		if (r <= 0)
			break;
		got += (unsigned int)r;
		*sink += c[0].wqe_counter;
	}
	return __rdtsc() - t0;
}

int
main(int argc, char **argv)
{
	struct cqpoll_mlx5_emu_conf conf = {
		.size = CQ_SIZE, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	unsigned int burst, rounds, k;
	struct floor_cq f = { .ci = 0 };
	uint64_t cycles = 0, sink = 0;
	struct cqpoll_cq *cq;
	int floor;

	if (argc < 3) {
		fprintf(stderr, "usage: %s driver|floor BURST [ROUNDS]\n", argv[0]);
		return 2;
	}
	floor = strcmp(argv[1], "floor") == 0;
	burst = (unsigned int)atoi(argv[2]);
	rounds = argc > 3 ? (unsigned int)atoi(argv[3]) : 20;
	if (burst == 0 || burst > 32 || rounds == 0)
		return 2;
	cq = cqpoll_mlx5_emu_cq_create(&conf);
	if (cq == NULL)
		return 1;
	cqpoll_mlx5_emu_dv(cq, &f.dv);
	for (k = 0; k < rounds; k++) {
		if (fill(cq, CQ_SIZE) != 0)
			return 1;
		cycles += bench_measure(cq, floor ? &f : NULL, burst, CQ_SIZE, &sink);
	}
	printf("%s burst=%u cqes=%u cycles/cqe=%.2f (sink %" PRIu64 ")\n",
	       floor ? "floor" : "driver", burst, rounds * CQ_SIZE,
	       (double)cycles / ((double)rounds * CQ_SIZE), sink);
	cqpoll_cq_destroy(cq);
	return 0;
}
