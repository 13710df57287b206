/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-CQE cost of the mlx5 direct poll path against DPDK's floor, and the
 * cost of an empty poll, all measured in one run.
 *
 * The floor is the loop DPDK's mlx5 PMD and UCX run: load the owner byte,
 * check it (and the INVALID mark), an acquire fence (rte_io_rmb(), a
 * compiler barrier on x86-64), then read the CQE body. It fills the same
 * 48-byte completion record the driver fills, field by field from the CQE,
 * and writes the doorbell record once per burst. A second floor issues
 * lfence there instead, as rdma-core's generic provider does, to show what
 * that barrier costs.
 *
 * Each variant drains its own 4096-entry CQ (same layout, same CQEs, written
 * by the emulated device) in bursts of B; the three run interleaved, round
 * after round, and each reports the median of its rounds (rdtsc). The empty
 * poll, through cqpoll_poll_burst() and by the floor loop on an empty CQ of
 * its own, interleaved too, is timed over 2^20 calls and converted to ns
 * with the TSC rate measured against CLOCK_MONOTONIC in the same run.
 *
 * Only bench_measure() is timed (rdtsc) and counted (run under
 * valgrind --tool=callgrind --toggle-collect='bench_measure*'): filling the
 * CQ by the emulated device is excluded. See bench/run_mlx5.sh.
 *
 * Usage: bench_mlx5_poll [ROUNDS]           every burst, table on stdout
 *        bench_mlx5_poll VARIANT BURST ROUNDS  one variant (for callgrind)
 *        VARIANT: driver, floor, floor-lfence, empty, empty-floor
 */

#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include <infiniband/mlx5dv.h>

#include "cqpoll.h"
#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"

#define CQ_SIZE 4096
#define MAX_ROUNDS 101
#define EMPTY_CALLS (1u << 20)

enum variant { V_DRIVER, V_FLOOR, V_FLOOR_LFENCE, V_EMPTY, V_EMPTY_FLOOR, V_COUNT };

static const char *const variant_names[V_COUNT] = {
	"driver", "floor", "floor-lfence", "empty", "empty-floor",
};

struct floor_cq {
	struct mlx5dv_cq dv;
	uint32_t ci;
};

static __attribute__((always_inline)) inline unsigned int
floor_poll_tmpl(struct floor_cq *f, struct cqpoll_completion *c, unsigned int n,
		const int lfence)
{
	const uint32_t cnt = f->dv.cqe_cnt;
	uint32_t ci = f->ci;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct mlx5_cqe64 *cqe = (const struct mlx5_cqe64 *)(const void *)
			((const uint8_t *)f->dv.buf + (size_t)(ci & (cnt - 1)) * 64);
		uint8_t op = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

		if ((op & 1) != !!(ci & cnt) || (op >> 4) == MLX5_CQE_INVALID)
			break;
		if (lfence)
			__asm__ volatile("lfence" ::: "memory");
		else
			__asm__ volatile("" ::: "memory");
		c[i].wr_id = 0;
		c[i].timestamp = be64toh(cqe->timestamp);
		c[i].inline_data = NULL;
		c[i].byte_len = be32toh(cqe->byte_cnt);
		c[i].qp_num = be32toh(cqe->sop_drop_qpn) & 0xffffff;
		c[i].imm_data = 0;
		c[i].vendor_err = 0;
		c[i].status = 0;
		c[i].opcode = op >> 4;
		c[i].flags = CQPOLL_COMPLETION_F_WQE_COUNTER;
		c[i].wqe_counter = be16toh(cqe->wqe_counter);
		c[i].reserved = 0;
		ci++;
	}
	if (i != 0) {
		f->ci = ci;
		__atomic_store_n(&f->dv.dbrec[0], htobe32(ci & 0xffffff), __ATOMIC_RELEASE);
	}
	return i;
}

static __attribute__((noinline)) unsigned int
floor_poll(struct floor_cq *f, struct cqpoll_completion *c, unsigned int n)
{
	return floor_poll_tmpl(f, c, n, 0);
}

static __attribute__((noinline)) unsigned int
floor_poll_lfence(struct floor_cq *f, struct cqpoll_completion *c, unsigned int n)
{
	return floor_poll_tmpl(f, c, n, 1);
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

/*
 * The measured region: drain @p total CQEs in bursts of @p burst, or for
 * V_EMPTY (V_EMPTY_FLOOR) poll the empty CQ EMPTY_CALLS times through the
 * library (the floor loop). Returns TSC cycles.
 */
static __attribute__((noinline)) uint64_t
bench_measure(enum variant v, struct cqpoll_cq *cq, struct floor_cq *f,
	      unsigned int burst, unsigned int total, uint64_t *sink)
{
	struct cqpoll_completion c[32];
	unsigned int got = 0, k;
	uint64_t t0 = __rdtsc();
	int r = 0;

	if (v == V_EMPTY) {
		for (k = 0; k < EMPTY_CALLS; k++)
			r |= cqpoll_poll_burst(cq, c, burst);
		*sink += (uint64_t)r;
		return __rdtsc() - t0;
	}
	if (v == V_EMPTY_FLOOR) {
		for (k = 0; k < EMPTY_CALLS; k++)
			r |= (int)floor_poll(f, c, burst);
		*sink += (uint64_t)r;
		return __rdtsc() - t0;
	}
	while (got < total) {
		if (v == V_DRIVER)
			r = cqpoll_poll_burst(cq, c, burst);
		else if (v == V_FLOOR)
			r = (int)floor_poll(f, c, burst);
		else
			r = (int)floor_poll_lfence(f, c, burst);
		if (r <= 0)
			break;
		got += (unsigned int)r;
		*sink += c[0].wqe_counter + c[r - 1].byte_len;
	}
	return __rdtsc() - t0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
median(uint64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One CQ per variant: the floors keep their own consumer index. */
struct bench_cq {
	struct cqpoll_cq *cq;
	struct floor_cq f;
};

/* One round of @p v: fill its CQ (not timed), then measure. */
static int
round_of(enum variant v, struct bench_cq *q, unsigned int burst,
	 uint64_t *cycles, uint64_t *sink)
{
	if (v != V_EMPTY && v != V_EMPTY_FLOOR && fill(q->cq, CQ_SIZE) != 0)
		return -1;
	*cycles = bench_measure(v, q->cq, &q->f, burst, CQ_SIZE, sink);
	return 0;
}

static int
parse_variant(const char *s, enum variant *v)
{
	int i;

	for (i = 0; i < V_COUNT; i++) {
		if (strcmp(s, variant_names[i]) == 0) {
			*v = (enum variant)i;
			return 0;
		}
	}
	return -1;
}

int
main(int argc, char **argv)
{
	static const unsigned int bursts[] = { 1, 8, 32 };
	struct cqpoll_mlx5_emu_conf conf = {
		.size = CQ_SIZE, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	uint64_t per[V_COUNT][MAX_ROUNDS], med[V_COUNT];
	unsigned int rounds = 21, b, k, burst = 0;
	uint64_t sink = 0, t0, c0;
	struct bench_cq q[V_COUNT];
	double tsc_ghz;
	enum variant one = V_COUNT;
	int v;

	if (argc == 4) {
		if (parse_variant(argv[1], &one) != 0)
			goto usage;
		burst = (unsigned int)atoi(argv[2]);
		rounds = (unsigned int)atoi(argv[3]);
		if (burst == 0 || burst > 32)
			goto usage;
	} else if (argc == 2) {
		rounds = (unsigned int)atoi(argv[1]);
	} else if (argc != 1) {
		goto usage;
	}
	if (rounds == 0 || rounds > MAX_ROUNDS)
		goto usage;
	memset(q, 0, sizeof(q));
	for (v = 0; v < V_COUNT; v++) {
		q[v].cq = cqpoll_mlx5_emu_cq_create(&conf);
		if (q[v].cq == NULL || cqpoll_mlx5_emu_dv(q[v].cq, &q[v].f.dv) != 0) {
			perror("cqpoll_mlx5_emu_cq_create");
			return 1;
		}
	}
	if (one != V_COUNT) {
		for (k = 0; k < rounds; k++)
			if (round_of(one, &q[one], burst, &per[0][0], &sink) != 0)
				return 1;
		for (v = 0; v < V_COUNT; v++)
			cqpoll_cq_destroy(q[v].cq);
		printf("%s burst=%u rounds=%u (sink %" PRIu64 ")\n", argv[1], burst,
		       rounds, sink);
		return 0;
	}

	t0 = mono_ns();
	c0 = __rdtsc();
	printf("%-6s %-14s %-14s %-14s %-14s %s\n", "burst", "floor cyc/CQE",
	       "driver cyc/CQE", "driver/floor", "lfence cyc/CQE", "lfence/floor");
	for (b = 0; b < sizeof(bursts) / sizeof(bursts[0]); b++) {
		burst = bursts[b];
		for (k = 0; k < rounds; k++)
			for (v = V_DRIVER; v <= V_FLOOR_LFENCE; v++)
				if (round_of((enum variant)v, &q[v], burst, &per[v][k], &sink) != 0)
					return 1;
		for (v = V_DRIVER; v <= V_FLOOR_LFENCE; v++)
			med[v] = median(per[v], rounds);
		printf("%-6u %-14.2f %-14.2f %-14.2f %-14.2f %.2f\n", burst,
		       (double)med[V_FLOOR] / CQ_SIZE, (double)med[V_DRIVER] / CQ_SIZE,
		       (double)med[V_DRIVER] / (double)med[V_FLOOR],
		       (double)med[V_FLOOR_LFENCE] / CQ_SIZE,
		       (double)med[V_FLOOR_LFENCE] / (double)med[V_FLOOR]);
	}
	for (k = 0; k < rounds; k++)
		for (v = V_EMPTY; v <= V_EMPTY_FLOOR; v++)
			if (round_of((enum variant)v, &q[v], 32, &per[v][k], &sink) != 0)
				return 1;
	med[V_EMPTY] = median(per[V_EMPTY], rounds);
	med[V_EMPTY_FLOOR] = median(per[V_EMPTY_FLOOR], rounds);
	tsc_ghz = (double)(__rdtsc() - c0) / (double)(mono_ns() - t0);
	printf("empty poll: %.2f cycles, %.2f ns; floor %.2f cycles, %.2f ns; "
	       "empty/floor %.2f (TSC %.3f GHz, measured in this run)\n",
	       (double)med[V_EMPTY] / EMPTY_CALLS,
	       (double)med[V_EMPTY] / EMPTY_CALLS / tsc_ghz,
	       (double)med[V_EMPTY_FLOOR] / EMPTY_CALLS,
	       (double)med[V_EMPTY_FLOOR] / EMPTY_CALLS / tsc_ghz,
	       (double)med[V_EMPTY] / (double)med[V_EMPTY_FLOOR], tsc_ghz);
	printf("median of %u rounds of %u CQEs each (sink %" PRIu64 ")\n", rounds,
	       CQ_SIZE, sink);
	for (v = 0; v < V_COUNT; v++)
		cqpoll_cq_destroy(q[v].cq);
	return 0;
usage:
	fprintf(stderr, "usage: %s [ROUNDS]\n       %s driver|floor|floor-lfence|empty|empty-floor BURST ROUNDS\n",
		argv[0], argv[0]);
	return 2;
}
