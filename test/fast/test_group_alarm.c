/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A poll group's epoll sleep is bounded by its safety-net timeout without a
 * timeout of its own: the group's alarm (a timerfd in its epoll set, moved
 * once per half-period, cqpoll_group_sleep.c). Checked: an idle group times
 * out again and again, each sleep ended by the alarm after half its timeout
 * at least; with traffic every millisecond no sleep times out and every
 * completion is delivered once, in order; an external loop that waits on
 * the group's fd with no timeout of its own is woken by the alarm too.
 *
 * Built twice; the control links a test build of the library whose epoll
 * sleep has neither the timeout nor the alarm: the same checks must catch
 * it (stop() still ends its sleeps, so nothing hangs).
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

#define TIMEOUT_MS 10
#define NCQS 2

struct rx {
	uint64_t next;
	uint64_t bad;
};

static void
on_comp(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
	void *arg)
{
	struct rx *rx = arg;
	unsigned int i;

	(void)cq;
	for (i = 0; i < n; i++)
		if (c[i].wr_id != rx->next++)
			rx->bad++;
}

static void *
runner(void *arg)
{
	struct cqpoll_group *g = arg;

	return (void *)(intptr_t)cqpoll_group_run(g);
}

/* Two sw CQs, interrupt mode: the group sleeps in its epoll. */
static struct cqpoll_group *
make_group(struct cqpoll_cq **cqs, struct rx *rx)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = TIMEOUT_MS };
	struct cqpoll_group *g = cqpoll_group_create(&conf);
	unsigned int i;

	if (g == NULL)
		return NULL;
	for (i = 0; i < NCQS; i++) {
		cqs[i] = cqpoll_sw_cq_create(NULL);
		if (cqs[i] == NULL || cqpoll_group_add(g, cqs[i], on_comp, &rx[i]) != 0)
			return NULL;
	}
	return g;
}

static void
free_group(struct cqpoll_group *g, struct cqpoll_cq **cqs)
{
	unsigned int i;

	cqpoll_group_destroy(g);
	for (i = 0; i < NCQS; i++)
		cqpoll_cq_destroy(cqs[i]);
}

static int
test_idle(void)
{
	struct cqpoll_cq *cqs[NCQS];
	struct rx rx[NCQS] = { { 0, 0 } };
	struct cqpoll_group_stats st;
	struct cqpoll_group *g = make_group(cqs, rx);
	pthread_t t;
	void *ret;

	TEST_ASSERT(g != NULL, "group: %s", strerror(errno));
	TEST_ASSERT_EQ(pthread_create(&t, NULL, runner, g), 0);
	usleep(200 * 1000);
	TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
	pthread_join(t, &ret);
	TEST_ASSERT_EQ((intptr_t)ret, 0);
	TEST_ASSERT_EQ(cqpoll_group_stats_get(g, &st), 0);
	printf("idle 200 ms: %" PRIu64 " sleeps, %" PRIu64 " timeouts, %" PRIu64
	       " ms asleep\n", st.sleeps, st.wakeups_timeout, st.asleep_ns / 1000000u);
	/* One per period at most, one per half-period at least. */
	TEST_ASSERT(st.wakeups_timeout >= 5, "%" PRIu64 " timeouts in 200 ms of %d ms ones",
		    st.wakeups_timeout, TIMEOUT_MS);
	TEST_ASSERT(st.wakeups_timeout <= 200 / (TIMEOUT_MS / 2) + 1,
		    "%" PRIu64 " timeouts: a sleep timed out before half its timeout",
		    st.wakeups_timeout);
	free_group(g, cqs);
	return TEST_PASS;
}

static int
test_traffic(void)
{
	struct cqpoll_cq *cqs[NCQS];
	struct rx rx[NCQS] = { { 0, 0 } };
	struct cqpoll_group_stats st;
	struct cqpoll_group *g = make_group(cqs, rx);
	struct cqpoll_completion c = { .byte_len = 8 };
	uint64_t i, n = 150;
	pthread_t t;

	TEST_ASSERT(g != NULL, "group: %s", strerror(errno));
	TEST_ASSERT_EQ(pthread_create(&t, NULL, runner, g), 0);
	for (i = 0; i < n; i++) {
		usleep(1000);
		c.wr_id = i;
		TEST_ASSERT_EQ(cqpoll_sw_post(cqs[0], &c), 0);
	}
	usleep(2000);
	TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
	pthread_join(t, NULL);
	TEST_ASSERT_EQ(cqpoll_group_stats_get(g, &st), 0);
	printf("traffic: %" PRIu64 " completions, %" PRIu64 " sleeps, %" PRIu64
	       " events, %" PRIu64 " timeouts\n", st.completions, st.sleeps,
	       st.wakeups_event, st.wakeups_timeout);
	TEST_ASSERT_EQ(rx[0].next, n);
	TEST_ASSERT_EQ(rx[0].bad, 0);
	/* A stall of the poster (a loaded machine) may let one run out. */
	TEST_ASSERT(st.wakeups_timeout <= 2, "%" PRIu64 " timeouts under traffic",
		    st.wakeups_timeout);
	free_group(g, cqs);
	return TEST_PASS;
}

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int
test_external(void)
{
	struct cqpoll_cq *cqs[NCQS];
	struct rx rx[NCQS] = { { 0, 0 } };
	struct cqpoll_group_stats st;
	struct cqpoll_group *g = make_group(cqs, rx);
	struct pollfd pfd;
	uint64_t t0, dt;
	int i, r;

	TEST_ASSERT(g != NULL, "group: %s", strerror(errno));
	pfd.fd = cqpoll_group_event_fd(g);
	pfd.events = POLLIN;
	for (i = 0; i < 3; i++) {
		r = cqpoll_group_sleep_prepare(g);
		TEST_ASSERT_EQ(r, 0);
		t0 = mono_ms();
		/* The application's loop has no timeout of its own (1 s: the test's). */
		r = poll(&pfd, 1, 1000);
		dt = mono_ms() - t0;
		TEST_ASSERT(r == 1, "external sleep %d: the group's fd not readable in 1 s", i);
		TEST_ASSERT(dt + 1 >= TIMEOUT_MS / 2, "woken after %" PRIu64 " ms", dt);
		TEST_ASSERT(cqpoll_group_sleep_finish(g) >= 0, "finish");
	}
	TEST_ASSERT_EQ(cqpoll_group_stats_get(g, &st), 0);
	TEST_ASSERT_EQ(st.wakeups_timeout, 3);
	free_group(g, cqs);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_idle),
	TEST_CASE(test_traffic),
	TEST_CASE(test_external),
};

TEST_MAIN("group-alarm", cases)
