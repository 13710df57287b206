/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The user-space instructions of one sleep-and-wake on an io_uring CQ, for
 * callgrind (bench/run_sleep_path.sh): one thread, whose producer is the
 * kernel itself, a IORING_OP_TIMEOUT submitted before each cycle whose CQE
 * lands DELAY us later, while the consumer sleeps. Each cycle, collected
 * alone (consume_cycle), takes one completion by one way of waiting:
 *
 *   wait      io_uring_wait_cqe() and io_uring_cqe_seen(): liburing's own
 *   wait-to   the same with a 10 ms timeout (io_uring_wait_cqe_timeout())
 *   api       cqpoll's CQ API, the contract's loop (testpmd-cq's interrupt
 *             mode): cqpoll_poll_and_arm() until it returns 0, then
 *             cqpoll_cq_wait(cq, 10)
 *   group     a poll group of that CQ alone, interrupt mode, 10 ms safety
 *             net: cqpoll_group_run_once() until the completion is in
 *   adaptive  the same group in adaptive mode, its default policy (which
 *             sleeps at once where gaps are long: its own work per cycle)
 *
 * The kernel's share is not counted here (no PMU on the project's VMs):
 * its system calls per cycle are strace's to count (the script does).
 *
 * Usage: bench_sleep_path wait|wait-to|api|group|adaptive [CYCLES] [DELAY_US]
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_uring.h"

enum way { WAIT, WAIT_TO, API, GROUP, ADAPTIVE };

static const char *const ways[] = { "wait", "wait-to", "api", "group", "adaptive",
				     NULL };

static struct io_uring *ring;
static struct cqpoll_cq *cq;
static struct cqpoll_group *g;
static uint64_t got;
static struct __kernel_timespec delay;

static void
on_comp(struct cqpoll_cq *c, const struct cqpoll_completion *comps,
	unsigned int n, void *arg)
{
	(void)c;
	(void)comps;
	(void)arg;
	got += n;
}

/* The producer: a timeout whose CQE the kernel posts while we sleep. */
static __attribute__((noinline)) int
produce(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (sqe == NULL)
		return -EBUSY;
	io_uring_prep_timeout(sqe, &delay, 0, 0);
	sqe->user_data = 7;
	return io_uring_submit(ring) == 1 ? 0 : -EIO;
}

static __attribute__((noinline)) int
consume_cycle(enum way w)
{
	struct __kernel_timespec to = { .tv_sec = 0, .tv_nsec = 10000000 };
	struct cqpoll_completion c[32];
	struct io_uring_cqe *cqe;
	uint64_t want = got + 1;
	int r;

	switch (w) {
	case WAIT:
	case WAIT_TO:
		r = w == WAIT ? io_uring_wait_cqe(ring, &cqe) :
				io_uring_wait_cqe_timeout(ring, &cqe, &to);
		if (r != 0)
			return r;
		io_uring_cqe_seen(ring, cqe);
		got++;
		return 0;
	case API:
		while (got < want) {
			r = cqpoll_poll_and_arm(cq, c, 32);
			if (r > 0)
				got += (uint64_t)r;
			else if (r == 0)
				r = cqpoll_cq_wait(cq, 10);
			if (r < 0)
				return r;
		}
		return 0;
	case GROUP:
	case ADAPTIVE:
		while (got < want) {
			r = cqpoll_group_run_once(g);
			if (r < 0)
				return r;
		}
		return 0;
	}
	return -EINVAL;
}

int
main(int argc, char **argv)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					.wait_timeout_ms = 10 };
	struct cqpoll_uring_conf uc = { .size = 256 };
	uint64_t i, cycles = argc > 2 ? strtoull(argv[2], NULL, 0) : 1000;
	unsigned long us = argc > 3 ? strtoul(argv[3], NULL, 0) : 200;
	enum way w;
	int r;

	for (w = WAIT; ways[w] != NULL; w++)
		if (argc > 1 && strcmp(argv[1], ways[w]) == 0)
			break;
	if (ways[w] == NULL || cycles == 0 || us == 0 || us >= 1000000) {
		fprintf(stderr, "usage: bench_sleep_path wait|wait-to|api|group|adaptive [CYCLES] [DELAY_US]\n");
		return 2;
	}
	delay.tv_nsec = (long long)us * 1000;
	cq = cqpoll_uring_cq_create(&uc);
	if (cq == NULL) {
		fprintf(stderr, "bench_sleep_path: io_uring: %s\n", strerror(errno));
		return errno == ENOSYS || errno == EPERM ? 77 : 1;
	}
	ring = cqpoll_uring_cq_ring(cq);
	if (w == GROUP || w == ADAPTIVE) {
		if (w == ADAPTIVE)
			gc.mode = CQPOLL_GROUP_MODE_ADAPTIVE;
		g = cqpoll_group_create(&gc);
		if (g == NULL || cqpoll_group_add(g, cq, on_comp, NULL) != 0) {
			fprintf(stderr, "bench_sleep_path: group: %s\n", strerror(errno));
			return 1;
		}
	}
	for (i = 0; i < cycles; i++) {
		r = produce();
		if (r == 0)
			r = consume_cycle(w);
		if (r < 0) {
			fprintf(stderr, "bench_sleep_path: cycle %lu: %s\n",
				(unsigned long)i, strerror(-r));
			return 1;
		}
	}
	printf("bench_sleep_path: %s: %lu cycles of one completion, %lu us apart\n",
	       ways[w], (unsigned long)cycles, us);
	if (g != NULL)
		cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	return 0;
}
