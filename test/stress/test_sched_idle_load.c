/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The scheduler's load of an idle group read while the group runs: a busy
 * group polls 4 empty software CQs on its own thread (every poll empty,
 * none found cold) and the main thread reads its counters as fast as it
 * can, taking the load between each snapshot and the one before
 * (cqpoll_sched_load_from_stats()). The group finds no work, so every
 * load must be 0. A snapshot taken between the group's count of its polls
 * and its count of what they found made the found polls negative, read
 * as a load of 1; the same snapshot could hold more empty polls than polls.
 * (The negative control is the code before the found polls were counted
 * apart: it failed every run, in a fraction of its samples.)
 *
 * Runs for up to --seconds (default 3) or --samples (default 400000).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sched.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

#define NCQ 4

static struct cqpoll_group *group;
static int stop;
static int run_err;

static void
on_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	       unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	(void)n;
	(void)arg;
}

static void *
runner(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int r = cqpoll_group_run_once(group);

		if (r < 0) {
			run_err = r;
			break;
		}
	}
	return NULL;
}

static uint64_t max_ns = 3000000000ull;
static uint64_t max_samples = 400000;

static int
test_idle_load(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY,
					  .cold_us = CQPOLL_GROUP_COLD_NEVER };
	struct cqpoll_group_stats prev, cur;
	struct cqpoll_cq *cqs[NCQ];
	uint64_t t0, tp, tc, n = 0, loaded = 0, over = 0;
	double busy, worst = 0;
	pthread_t t;
	unsigned int i;

	group = cqpoll_group_create(&conf);
	TEST_ASSERT(group != NULL, "create: %s", strerror(errno));
	for (i = 0; i < NCQ; i++) {
		cqs[i] = cqpoll_sw_cq_create(NULL);
		TEST_ASSERT(cqs[i] != NULL, "sw: %s", strerror(errno));
		TEST_ASSERT_EQ(cqpoll_group_add(group, cqs[i], on_completions,
						NULL), 0);
	}
	TEST_ASSERT_EQ(pthread_create(&t, NULL, runner, NULL), 0);
	t0 = tp = test_now_ns();
	TEST_ASSERT_EQ(cqpoll_group_stats_get(group, &prev), 0);
	while (n < max_samples && test_now_ns() - t0 < max_ns) {
		TEST_ASSERT_EQ(cqpoll_group_stats_get(group, &cur), 0);
		tc = test_now_ns();
		if (cur.polls != prev.polls && tc != tp) {
			TEST_ASSERT_EQ(cqpoll_sched_load_from_stats(&prev, &cur,
								    tc - tp,
								    &busy), 0);
			n++;
			if (busy > 0)
				loaded++;
			if (busy > worst)
				worst = busy;
		}
		if (cur.empty_polls > cur.polls)
			over++;
		prev = cur;
		tp = tc;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	TEST_ASSERT_EQ(pthread_join(t, NULL), 0);
	TEST_ASSERT_EQ(run_err, 0);
	printf("%" PRIu64 " samples with polls, %" PRIu64
	       " read loaded, worst load %.3f; %" PRIu64
	       " snapshots with more empty polls than polls\n",
	       n, loaded, worst, over);
	TEST_ASSERT(n >= 100, "only %" PRIu64 " samples: the group did not run",
		    n);
	TEST_ASSERT(loaded == 0, "an idle group read loaded in %" PRIu64
		    " of %" PRIu64 " samples (worst %.3f)", loaded, n, worst);
	TEST_ASSERT(over == 0, "%" PRIu64 " snapshots with more empty polls "
		    "than polls", over);
	for (i = 0; i < NCQ; i++) {
		TEST_ASSERT_EQ(cqpoll_group_remove(group, cqs[i]), 0);
		TEST_ASSERT_EQ(cqpoll_cq_destroy(cqs[i]), 0);
	}
	cqpoll_group_destroy(group);
	return TEST_PASS;
}

int
main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		{ "sched_idle_load", test_idle_load },
	};
	int i;

	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--seconds=", 10) == 0)
			max_ns = strtoull(argv[i] + 10, NULL, 0) * 1000000000ull;
		else if (strncmp(argv[i], "--samples=", 10) == 0)
			max_samples = strtoull(argv[i] + 10, NULL, 0);
		else {
			fprintf(stderr, "usage: %s [--seconds=N] [--samples=N]\n",
				argv[0]);
			return 2;
		}
	}
	return test_run("sched-idle-load", cases,
			sizeof(cases) / sizeof(cases[0]));
}
