/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll's mlx5 QP across threads, as testpmd-cq uses it: one thread posts
 * bursts of RDMA writes (every 4th signalled) and runs the emulated device;
 * another polls the CQ, which hands back the wr_ids and retires the send
 * ring the poster reuses. Every signalled request must come back once, in
 * order, and the poster must never be refused for good. Under TSan (CI's
 * stress run) this checks the hand-over of the ring's records and tails.
 */

#include <pthread.h>
#include <stdio.h>

#include "cqpoll_test.h"
#include "mlx5_qp_test.h"

#define REQS 200000u
#define EVERY 4u

static struct qp_pair p;
static uint64_t consumer_error;

static void *
consumer(void *arg)
{
	struct cqpoll_completion c[32];
	uint64_t next = EVERY - 1;
	int n, i;

	(void)arg;
	while (next < REQS) {
		n = cqpoll_poll_burst(p.cq[0], c, 32);
		if (n < 0) {
			__atomic_store_n(&consumer_error, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		for (i = 0; i < n; i++) {
			if (!(c[i].flags & CQPOLL_COMPLETION_F_WR_ID) || c[i].wr_id != next ||
			    c[i].status != CQPOLL_STATUS_SUCCESS) {
				fprintf(stderr, "completion %llu: wr_id %llu status %u\n",
					(unsigned long long)next, (unsigned long long)c[i].wr_id,
					c[i].status);
				__atomic_store_n(&consumer_error, 1, __ATOMIC_RELAXED);
				return NULL;
			}
			next += EVERY;
		}
	}
	return NULL;
}

static int
test_threads(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 64 };
	struct cqpoll_mlx5_send_wr w[16];
	struct cqpoll_mlx5_sge sg;
	uint64_t posted = 0, spins = 0;
	pthread_t th;
	int n, i, k;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 4096, 65536, 7), 0);
	sg = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 8, p.mr->lkey };
	TEST_ASSERT_EQ(pthread_create(&th, NULL, consumer, NULL), 0);
	while (posted < REQS && !__atomic_load_n(&consumer_error, __ATOMIC_RELAXED)) {
		k = (int)(1 + posted % 16);
		if (posted + (uint64_t)k > REQS)
			k = (int)(REQS - posted);
		for (i = 0; i < k; i++)
			w[i] = (struct cqpoll_mlx5_send_wr){ .wr_id = posted + (uint64_t)i,
				.sg_list = &sg, .num_sge = 1, .opcode = CQPOLL_MLX5_WR_RDMA_WRITE,
				.flags = (posted + (uint64_t)i) % EVERY == EVERY - 1 ?
					CQPOLL_MLX5_SEND_F_SIGNALED : 0,
				.remote_addr = (uintptr_t)p.buf + 4096, .rkey = p.mr->rkey };
		n = cqpoll_mlx5_qp_post_send(p.qp[0], w, (unsigned int)k);
		cqpoll_mlx5_emu_run(p.ctx);
		if (n == -ENOMEM) {
			/* Room comes from the consumer's polls; never for good. */
			TEST_ASSERT(++spins < 2000000000ull, "send ring never came back");
			continue;
		}
		TEST_ASSERT(n > 0, "post: %d", n);
		posted += (uint64_t)n;
	}
	pthread_join(th, NULL);
	TEST_ASSERT(!consumer_error, "the consumer saw a wrong completion");
	printf("%u requests, %llu refusals while the queue was full\n", REQS,
	       (unsigned long long)spins);
	qp_pair_close(&p);
	return TEST_PASS;
}

int
main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_threads),
	};

	return test_run("mlx5-qp-threads", cases, sizeof(cases) / sizeof(cases[0]));
}
