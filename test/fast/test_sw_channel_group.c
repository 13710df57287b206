/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One group per shared software channel, and no CQ of a served channel
 * armed or waited on alone. A group's take of the channel's fired list
 * consumes the events of every CQ on it, so a sibling outside the group
 * armed and asleep in cqpoll_cq_wait() had its event taken (and its state
 * written from the group's thread) and slept to its timeout; a second
 * group on the channel lost wake-ups the same way. Both are refused with
 * -EBUSY while the group serves the channel, and allowed again once it
 * no longer does.
 *
 * Then the case that is allowed, run: a group on its own thread serves
 * two CQs of the channel while the main thread posts to them; every
 * completion arrives (the run is clean under ThreadSanitizer).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

#define NPOST 2000

static uint64_t got[2];

static void
on_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	       unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	__atomic_fetch_add((uint64_t *)arg, n, __ATOMIC_RELAXED);
}

static int
test_refused(void)
{
	struct cqpoll_sw_channel *ch = cqpoll_sw_channel_create();
	struct cqpoll_group *g = cqpoll_group_create(NULL);
	struct cqpoll_group *g2 = cqpoll_group_create(NULL);
	struct cqpoll_completion comps[4];
	struct cqpoll_cq *a, *b, *x;

	TEST_ASSERT(ch != NULL && g != NULL && g2 != NULL, "create");
	a = cqpoll_sw_cq_create_on(NULL, ch);
	b = cqpoll_sw_cq_create_on(NULL, ch);
	x = cqpoll_sw_cq_create_on(NULL, ch);
	TEST_ASSERT(a != NULL && b != NULL && x != NULL, "cqs");
	TEST_ASSERT_EQ(cqpoll_group_add(g, a, on_completions, &got[0]), 0);
	TEST_ASSERT_EQ(cqpoll_group_add(g, b, on_completions, &got[1]), 0);
	/* The group serves the channel: x may not be armed alone ... */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(x, comps, 4), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_cq_is_armed(x), 0);
	/* ... nor join a second group. */
	TEST_ASSERT_EQ(cqpoll_group_add(g2, x, on_completions, NULL), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_count(g2), 0);
	/* Its own group takes it. */
	TEST_ASSERT_EQ(cqpoll_group_add(g, x, on_completions, NULL), 0);
	TEST_ASSERT_EQ(cqpoll_group_remove(g, x), 0);
	/* One sibling left: still served. */
	TEST_ASSERT_EQ(cqpoll_group_remove(g, a), 0);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(x, comps, 4), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_remove(g, b), 0);
	/* Not served any more: x alone, then another group. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(x, comps, 4), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(x, 1), 0);
	/* Armed before a group took the channel: its wait is refused. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(x, comps, 4), 0);
	TEST_ASSERT_EQ(cqpoll_cq_is_armed(x), 1);
	TEST_ASSERT_EQ(cqpoll_group_add(g2, a, on_completions, &got[0]), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(x, 1), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_add(g, b, on_completions, NULL), -EBUSY);
	/* Destroying the group lets the channel go. */
	cqpoll_group_destroy(g2);
	TEST_ASSERT_EQ(cqpoll_group_add(g, b, on_completions, &got[1]), 0);
	cqpoll_group_destroy(g);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(a), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(b), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(x), 0);
	TEST_ASSERT_EQ(cqpoll_sw_channel_destroy(ch), 0);
	return TEST_PASS;
}

static void *
runner(void *arg)
{
	return (void *)(intptr_t)cqpoll_group_run(arg);
}

static int
test_served(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 10 };
	struct cqpoll_completion c = { .byte_len = 8 };
	struct cqpoll_sw_channel *ch = cqpoll_sw_channel_create();
	struct cqpoll_group *g = cqpoll_group_create(&conf);
	struct cqpoll_cq *cq[2];
	uint64_t t0;
	pthread_t t;
	void *ret;
	unsigned int i, k;

	TEST_ASSERT(ch != NULL && g != NULL, "create");
	got[0] = got[1] = 0;
	for (i = 0; i < 2; i++) {
		cq[i] = cqpoll_sw_cq_create_on(NULL, ch);
		TEST_ASSERT(cq[i] != NULL, "cq");
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], on_completions,
						&got[i]), 0);
	}
	TEST_ASSERT_EQ(pthread_create(&t, NULL, runner, g), 0);
	for (k = 0; k < NPOST; k++) {
		c.wr_id = k;
		for (i = 0; i < 2; i++)
			while (cqpoll_sw_post(cq[i], &c) == -ENOSPC)
				test_spin_ns(1000);
	}
	t0 = test_now_ns();
	while ((__atomic_load_n(&got[0], __ATOMIC_RELAXED) < NPOST ||
		__atomic_load_n(&got[1], __ATOMIC_RELAXED) < NPOST) &&
	       test_now_ns() - t0 < 5000000000ull)
		test_spin_ns(100000);
	TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
	TEST_ASSERT_EQ(pthread_join(t, &ret), 0);
	TEST_ASSERT_EQ((intptr_t)ret, 0);
	TEST_ASSERT_EQ(got[0], NPOST);
	TEST_ASSERT_EQ(got[1], NPOST);
	cqpoll_group_destroy(g);
	for (i = 0; i < 2; i++)
		TEST_ASSERT_EQ(cqpoll_cq_destroy(cq[i]), 0);
	TEST_ASSERT_EQ(cqpoll_sw_channel_destroy(ch), 0);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_refused),
	TEST_CASE(test_served),
};

TEST_MAIN("sw-channel-group", cases)
