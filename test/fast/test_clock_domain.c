/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Clock domains: only host CLOCK_MONOTONIC timestamps
 * (CQPOLL_COMPLETION_F_TIMESTAMP) measure a group's wake-up and reach its
 * policy; a device-clock value (CQPOLL_COMPLETION_F_TIMESTAMP_RAW) never does,
 * whatever it is. A test driver delivers completions with the flags and
 * timestamps the test chooses; a test policy records every wake_cost call.
 *
 * Built twice, as test_safety_net.c: with -DTEST_NAIVE_CONTROL against the
 * test-only library build whose group takes any timestamp as host time, the
 * same checks must catch the raw value reaching the policy.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cqpoll_test.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"

#ifdef TEST_NAIVE_CONTROL
#define CONTROL 1
#else
#define CONTROL 0
#endif

#define RING 16

/* A level-arm device whose completions carry what the test posts. */
struct clk_dev {
	struct cqpoll_completion ring[RING];
	unsigned int head, tail;
	int armed;
	int efd;
};

static int
clk_poll(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	struct clk_dev *d = priv;
	unsigned int k = 0;

	while (k < n && d->tail != d->head)
		comps[k++] = d->ring[d->tail++ % RING];
	return (int)k;
}

static int
clk_signal(struct clk_dev *d)
{
	uint64_t one = 1;

	d->armed = 0;
	return write(d->efd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

static int
clk_arm(void *priv)
{
	struct clk_dev *d = priv;

	d->armed = 1;
	/* Level: entries already there fire at once. */
	return d->tail != d->head ? clk_signal(d) : 0;
}

static int
clk_event_fd(void *priv)
{
	return ((struct clk_dev *)priv)->efd;
}

static int
clk_event_get(void *priv)
{
	struct clk_dev *d = priv;
	uint64_t v;

	if (read(d->efd, &v, sizeof(v)) != sizeof(v))
		return errno == EAGAIN ? 0 : -errno;
	return (int)v;
}

static void
clk_destroy(void *priv)
{
	struct clk_dev *d = priv;

	close(d->efd);
	free(d);
}

static const struct cqpoll_driver_ops clk_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "clock-test",
	.arm = clk_arm,
	.event_fd = clk_event_fd,
	.event_get = clk_event_get,
	.destroy = clk_destroy,
};

static struct cqpoll_cq *
clk_create(struct clk_dev **out)
{
	struct cqpoll_cq_params params = { .arm = CQPOLL_ARM_LEVEL, .size = RING };
	struct clk_dev *d = calloc(1, sizeof(*d));
	struct cqpoll_cq *cq;

	if (d == NULL)
		return NULL;
	d->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	cq = d->efd >= 0 ? cqpoll_cq_alloc(&clk_ops, clk_poll, d, &params) : NULL;
	if (cq == NULL) {
		if (d->efd >= 0)
			close(d->efd);
		free(d);
		return NULL;
	}
	*out = d;
	return cq;
}

static int
clk_post(struct clk_dev *d, uint32_t flags, uint64_t ts)
{
	struct cqpoll_completion *c = &d->ring[d->head++ % RING];

	*c = (struct cqpoll_completion){ .wr_id = d->head, .byte_len = 8,
		.flags = CQPOLL_COMPLETION_F_WR_ID | flags, .timestamp = ts };
	return d->armed ? clk_signal(d) : 0;
}

/* The test policy: never sleeps on its own, records what reaches it. */
static unsigned int wake_cost_calls;

static int
rec_init(void *state, const char *args)
{
	(void)state;
	(void)args;
	return 0;
}

static enum cqpoll_policy_action
rec_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	(void)state;
	(void)completions;
	(void)now_ns;
	return CQPOLL_POLICY_SLEEP;
}

static void
rec_wake_cost(void *state, uint64_t cost_ns)
{
	(void)state;
	(void)cost_ns;
	wake_cost_calls++;
}

static const struct cqpoll_policy_ops rec_policy = {
	.name = "record",
	.init = rec_init,
	.decide = rec_decide,
	.wake_cost = rec_wake_cost,
};

static void
null_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	(*(unsigned int *)arg) += n;
}

/*
 * Arm and sleep once, post a completion stamped @p ts in the domain @p flags,
 * and let its event wake the group. Reports wake_cost calls and histogram
 * entries: what reached the policy.
 */
static int
wake_with(uint32_t flags, uint64_t ts, unsigned int *calls, uint64_t *hist)
{
	/* Interrupt mode: the woken CQ is polled first, and measured. */
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .policy = &rec_policy,
					  .wait_timeout_ms = 1 };
	struct cqpoll_group_stats st;
	struct cqpoll_group *g;
	struct clk_dev *d = NULL;
	struct cqpoll_cq *cq;
	unsigned int got = 0, i;

	wake_cost_calls = 0;
	g = cqpoll_group_create(&conf);
	cq = clk_create(&d);
	TEST_ASSERT(g != NULL && cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, null_cb, &got), 0);
	/* Armed and asleep; the 1 ms timeout ends the sleep. */
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	TEST_ASSERT(cqpoll_cq_is_armed(cq), "not armed");
	TEST_ASSERT_EQ(clk_post(d, flags, ts), 0);
	/* The event wakes the next sleep; the woken CQ is measured. */
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 1);
	TEST_ASSERT_EQ(got, 1);
	cqpoll_group_stats_get(g, &st);
	TEST_ASSERT_EQ(st.wakeups_event, 1);
	*calls = wake_cost_calls;
	*hist = 0;
	for (i = 0; i < CQPOLL_GROUP_WAKE_HIST_BUCKETS; i++)
		*hist += st.wake_latency_hist[i];
	printf("  flags=%#x ts=%" PRIu64 ": wake_cost calls=%u hist=%" PRIu64 "\n",
	       flags, ts, *calls, *hist);
	cqpoll_group_destroy(g);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return TEST_PASS;
}

/* Host time far enough ahead to be "after the sleep began" in any clock. */
static uint64_t
future_ns(void)
{
	return test_now_ns() + 3600ull * 1000000000ull;
}

static int
test_host_timestamp_reaches_policy(void)
{
	unsigned int calls;
	uint64_t hist;

	/* The observation works: a host timestamp is measured and reported. */
	TEST_ASSERT_EQ(wake_with(CQPOLL_COMPLETION_F_TIMESTAMP, future_ns(),
				 &calls, &hist), TEST_PASS);
	TEST_ASSERT_EQ(calls, 1);
	TEST_ASSERT_EQ(hist, 1);
	/* No timestamp at all: nothing to measure. */
	TEST_ASSERT_EQ(wake_with(0, future_ns(), &calls, &hist), TEST_PASS);
	TEST_ASSERT(calls == 0 && hist == 0, "untimestamped measured");
	return TEST_PASS;
}

static int
test_raw_timestamp_never_reaches_policy(void)
{
	/* Device clocks: HCA ticks that look like host ns, and absurd ones. */
	const uint64_t raw[] = { future_ns(), test_now_ns(), UINT64_MAX - 1, 1 };
	unsigned int calls, i, seen = 0;
	uint64_t hist;

	for (i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		TEST_ASSERT_EQ(wake_with(CQPOLL_COMPLETION_F_TIMESTAMP_RAW, raw[i],
					 &calls, &hist), TEST_PASS);
		seen += calls + (unsigned int)hist;
	}
	TEST_ASSERT((seen == 0) == !CONTROL, "%s",
		    CONTROL ? "raw timestamps reached the policy, not caught" :
		    "a raw device timestamp reached the policy");
	if (CONTROL)
		printf("  naive build caught: %u raw measurements\n", seen);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_host_timestamp_reaches_policy),
	TEST_CASE(test_raw_timestamp_never_reaches_policy),
};

#ifdef TEST_NAIVE_CONTROL
TEST_MAIN("clock-domain-control", cases)
#else
TEST_MAIN("clock-domain", cases)
#endif
