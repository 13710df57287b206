/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of the io_uring driver's poll against liburing's own consumer loop,
 * measured in one run (rdtsc cycles).
 *
 * Each round fills a ring with B NOP completions (the kernel posts them:
 * io_uring_submit_and_wait), then drains them, timed, either through
 * cqpoll_poll_burst() on a cqpoll uring CQ, which converts each CQE into a
 * 48-byte completion record, or by the loop a liburing application writes:
 * io_uring_peek_batch_cqe(), read user_data and res, io_uring_cq_advance().
 * The two variants run interleaved, round after round, each on its own ring,
 * and each reports the median of its rounds per CQE. An empty poll of each
 * is timed over 2^20 calls, interleaved too.
 *
 * Usage: bench_uring_poll [ROUNDS]
 * Exits 77 where io_uring is not available (a kernel without it, seccomp).
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include <liburing.h>

#include "cqpoll.h"
#include "cqpoll_uring.h"

#define RING_SIZE 256
#define MAX_ROUNDS 201
#define EMPTY_CALLS (1u << 20)

static const unsigned int bursts[] = { 1, 4, 16, 32, 64 };

/* A sink the compiler cannot drop. */
static volatile uint64_t sink;

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

/* The kernel posts @p n NOP completions into @p ring. */
static int
fill(struct io_uring *ring, unsigned int n)
{
	unsigned int i;
	int r;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (sqe == NULL)
			return -EBUSY;
		io_uring_prep_nop(sqe);
		sqe->user_data = i + 1;
	}
	r = io_uring_submit_and_wait(ring, n);
	return r < 0 ? r : 0;
}

static uint64_t
drain_cqpoll(struct cqpoll_cq *cq, unsigned int n)
{
	struct cqpoll_completion c[64];
	uint64_t t0, t1, sum = 0;
	unsigned int got = 0;
	int r;

	t0 = __rdtsc();
	while (got < n) {
		r = cqpoll_poll_burst(cq, c, n - got);
		if (r < 0)
			return UINT64_MAX;
		got += (unsigned int)r;
		if (r > 0)
			sum += c[r - 1].wr_id;
	}
	t1 = __rdtsc();
	sink += sum;
	return t1 - t0;
}

static uint64_t
drain_liburing(struct io_uring *ring, unsigned int n)
{
	struct io_uring_cqe *cqes[64];
	uint64_t t0, t1, sum = 0;
	unsigned int got = 0, k, i;

	t0 = __rdtsc();
	while (got < n) {
		k = io_uring_peek_batch_cqe(ring, cqes, n - got);
		for (i = 0; i < k; i++)
			sum += cqes[i]->user_data + (uint64_t)(uint32_t)cqes[i]->res;
		io_uring_cq_advance(ring, k);
		got += k;
	}
	t1 = __rdtsc();
	sink += sum;
	return t1 - t0;
}

static uint64_t
empty_cqpoll(struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[32];
	uint64_t t0;
	unsigned int i;
	int sum = 0;

	t0 = __rdtsc();
	for (i = 0; i < EMPTY_CALLS; i++)
		sum += cqpoll_poll_burst(cq, c, 32);
	sink += (uint64_t)sum;
	return __rdtsc() - t0;
}

static uint64_t
empty_liburing(struct io_uring *ring)
{
	struct io_uring_cqe *cqes[32];
	uint64_t t0;
	unsigned int i, sum = 0;

	t0 = __rdtsc();
	for (i = 0; i < EMPTY_CALLS; i++)
		sum += io_uring_peek_batch_cqe(ring, cqes, 32);
	sink += sum;
	return __rdtsc() - t0;
}

int
main(int argc, char **argv)
{
	static uint64_t t_drv[MAX_ROUNDS], t_lib[MAX_ROUNDS];
	unsigned int rounds = argc > 1 ? (unsigned int)atoi(argv[1]) : 101;
	struct cqpoll_uring_conf conf = { .size = RING_SIZE };
	struct io_uring lib_ring;
	struct cqpoll_cq *cq;
	struct io_uring *drv_ring;
	unsigned int b, k;
	int r;

	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: %s [ROUNDS 1..%d]\n", argv[0], MAX_ROUNDS);
		return 2;
	}
	cq = cqpoll_uring_cq_create(&conf);
	if (cq == NULL) {
		printf("skip: io_uring CQ: %s\n", strerror(errno));
		return 77;
	}
	drv_ring = cqpoll_uring_cq_ring(cq);
	r = io_uring_queue_init(RING_SIZE, &lib_ring, 0);
	if (r < 0) {
		printf("skip: io_uring_queue_init: %s\n", strerror(-r));
		cqpoll_cq_destroy(cq);
		return 77;
	}
	printf("io_uring poll, cycles per CQE (median of %u rounds, rdtsc)\n", rounds);
	printf("%6s %12s %12s %8s\n", "burst", "cqpoll", "liburing", "ratio");
	for (b = 0; b < sizeof(bursts) / sizeof(bursts[0]); b++) {
		for (k = 0; k < rounds; k++) {
			if (fill(drv_ring, bursts[b]) != 0 ||
			    fill(&lib_ring, bursts[b]) != 0) {
				fprintf(stderr, "fill failed\n");
				return 1;
			}
			/* Alternate which one runs first. */
			if (k & 1) {
				t_lib[k] = drain_liburing(&lib_ring, bursts[b]);
				t_drv[k] = drain_cqpoll(cq, bursts[b]);
			} else {
				t_drv[k] = drain_cqpoll(cq, bursts[b]);
				t_lib[k] = drain_liburing(&lib_ring, bursts[b]);
			}
			if (t_drv[k] == UINT64_MAX) {
				fprintf(stderr, "cqpoll_poll_burst failed\n");
				return 1;
			}
		}
		uint64_t d = median(t_drv, rounds), l = median(t_lib, rounds);

		printf("%6u %12.1f %12.1f %8.2f\n", bursts[b],
		       (double)d / bursts[b], (double)l / bursts[b],
		       l != 0 ? (double)d / (double)l : 0.0);
	}
	for (k = 0; k < (rounds < 11 ? rounds : 11u); k++) {
		if (k & 1) {
			t_lib[k] = empty_liburing(&lib_ring);
			t_drv[k] = empty_cqpoll(cq);
		} else {
			t_drv[k] = empty_cqpoll(cq);
			t_lib[k] = empty_liburing(&lib_ring);
		}
	}
	k = rounds < 11 ? rounds : 11u;
	uint64_t d = median(t_drv, k), l = median(t_lib, k);

	printf("empty poll, cycles per call: cqpoll %.2f, liburing %.2f, ratio %.2f\n",
	       (double)d / EMPTY_CALLS, (double)l / EMPTY_CALLS,
	       l != 0 ? (double)d / (double)l : 0.0);
	io_uring_queue_exit(&lib_ring);
	cqpoll_cq_destroy(cq);
	return 0;
}
