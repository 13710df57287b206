/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A failure reported just before a CQ's arm, whose wake-up the arm takes,
 * still ends the sleep at once. A driver's arm may reset its wait object
 * (libfabric: fi_trywait() resets what fi_cq_signal() set, util_wait.c
 * util_wait_fd_try()), so a cqpoll_cq_fail() from another thread that
 * lands after the core's look at the state and before the arm leaves no
 * wake-up behind, and the sleep after the arm would last its whole timeout.
 *
 * The CQ here is such a driver: its wait object an eventfd that its
 * wake-up writes and its arm drains, its arm reporting the failure first
 * when told to (the other thread's report, landing in the window, made
 * deterministic). Each way of sleeping must deliver the failure well
 * before its timeout: cqpoll_poll_and_arm() must not return "armed" (the
 * CQ API), and a poll group of one (its lone member's own wait) and of two
 * (its epoll) must tell the failure callback without sleeping out the
 * safety net.
 *
 * usage: test_fail_at_arm [--expect-fail]
 *
 * --expect-fail is the negative control's verdict: built against a
 * test-only library that takes a successful arm's word without a look at
 * the state (-DCQPOLL_MUTANT_NO_STATE_AFTER_ARM=1), the checks must fail.
 */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_test.h"

/* The safety net, and how soon the failure must be told. */
#define TIMEOUT_MS 1000
#define TOLD_WITHIN_NS 250000000ull

struct resetting {
	int efd;
	struct cqpoll_cq *cq;
	bool fail_at_arm; /* the next arm reports the failure first */
};

static int
r_poll(void *priv, struct cqpoll_completion *c, unsigned int n)
{
	(void)priv;
	(void)c;
	(void)n;
	return 0;
}

static void
r_drain(struct resetting *q)
{
	uint64_t v;

	if (read(q->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		abort();
}

/* fi_trywait()'s order: the wait object reset, then "armed". */
static int
r_arm(void *priv)
{
	struct resetting *q = priv;

	if (q->fail_at_arm) {
		q->fail_at_arm = false;
		if (cqpoll_cq_fail(q->cq, -ENODEV, "failed as the arm ran") != 0)
			abort();
	}
	r_drain(q);
	return 0;
}

static int
r_event_fd(void *priv)
{
	return ((struct resetting *)priv)->efd;
}

static int
r_event_get(void *priv)
{
	struct resetting *q = priv;
	uint64_t v;

	if (read(q->efd, &v, sizeof(v)) != sizeof(v))
		return errno == EAGAIN ? 0 : -errno;
	return 1;
}

static int
r_wake(void *priv)
{
	uint64_t one = 1;

	return write(((struct resetting *)priv)->efd, &one, sizeof(one)) ==
	       sizeof(one) ? 0 : -errno;
}

static int
r_wait(void *priv, int timeout_ms)
{
	struct resetting *q = priv;
	struct pollfd pfd = { .fd = q->efd, .events = POLLIN };
	int r = poll(&pfd, 1, timeout_ms);

	if (r < 0)
		return -errno;
	if (r > 0)
		r_drain(q);
	return r;
}

static void
r_destroy(void *priv)
{
	close(((struct resetting *)priv)->efd);
}

static const struct cqpoll_driver_ops resetting_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "resetting",
	.arm = r_arm,
	.event_fd = r_event_fd,
	.event_get = r_event_get,
	.destroy = r_destroy,
	.wake = r_wake,
	.wait = r_wait,
};

static struct cqpoll_cq *
resetting_cq(struct resetting *q)
{
	struct cqpoll_cq_params p = {
		.arm = CQPOLL_ARM_REPORT_MISSED, .size = 64,
		.flags = CQPOLL_CQ_PARAMS_F_NO_FIRED,
	};

	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd < 0)
		return NULL;
	q->fail_at_arm = false;
	q->cq = cqpoll_cq_alloc(&resetting_ops, r_poll, q, &p);
	return q->cq;
}

static int
test_cq_api(void)
{
	struct resetting q;
	struct cqpoll_completion c[4];
	uint64_t t0;
	int r, w;

	TEST_ASSERT(resetting_cq(&q) != NULL, "cq: %s", strerror(errno));
	q.fail_at_arm = true;
	r = cqpoll_poll_and_arm(q.cq, c, 4);
	t0 = test_now_ns();
	w = r == 0 ? cqpoll_cq_wait(q.cq, TIMEOUT_MS) : 0;
	printf("  cq api: poll-and-arm %d, wait %d after %llu us\n", r, w,
	       (unsigned long long)((test_now_ns() - t0) / 1000));
	TEST_ASSERT_EQ(cqpoll_cq_destroy(q.cq), 0);
	if (r != -ENODEV) {
		printf("poll-and-arm returned %d on a cq reported failed as it "
		       "armed (an arm no event will end)\n", r);
		return TEST_FAIL;
	}
	return TEST_PASS;
}

struct told {
	struct cqpoll_cq *cq;
	uint64_t t;
};

static void
on_failure(struct cqpoll_group *g, struct cqpoll_cq *cq,
	   const struct cqpoll_cq_failure *f, void *arg)
{
	struct told *t = arg;

	(void)f;
	t->cq = cq;
	t->t = test_now_ns();
	/* Told: the empty sleep that may follow is the test's time only. */
	if (cqpoll_group_wakeup(g) != 0)
		abort();
}

static void
on_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	       unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	(void)n;
	(void)arg;
}

/* A group of @p n such CQs; the first is reported failed at its arm. */
static int
group_of(unsigned int n)
{
	struct cqpoll_group_conf conf = {
		.mode = CQPOLL_GROUP_MODE_INTERRUPT, .wait_timeout_ms = TIMEOUT_MS,
	};
	struct resetting q[2];
	struct told told = { 0 };
	struct cqpoll_group *g;
	unsigned int i;
	bool ok = false;
	uint64_t t0;
	int r = 0;

	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "group: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_register(g, on_failure, &told), 0);
	for (i = 0; i < n; i++) {
		TEST_ASSERT(resetting_cq(&q[i]) != NULL, "cq: %s", strerror(errno));
		TEST_ASSERT_EQ(cqpoll_group_add(g, q[i].cq, on_completions, NULL), 0);
	}
	q[0].fail_at_arm = true;
	t0 = test_now_ns();
	/* Until the report is told, or the net would have told it. */
	while (told.cq == NULL && r >= 0 &&
	       test_now_ns() - t0 < 2 * (uint64_t)TIMEOUT_MS * 1000000u)
		r = cqpoll_group_run_once(g);
	printf("  group of %u: told %s after %llu us (run_once %d)\n", n,
	       told.cq == q[0].cq ? "the failed cq" : told.cq == NULL ? "nothing" :
	       "another cq", (unsigned long long)((told.t > t0 ? told.t - t0 : 0) / 1000),
	       r);
	if (r < 0)
		printf("group of %u: run_once: %d\n", n, r);
	else if (told.cq != q[0].cq || told.t - t0 >= TOLD_WITHIN_NS)
		printf("group of %u: the failure reported as the arm ran was told "
		       "after %llu ms (the safety net's %d ms, not the report, ended "
		       "the sleep)\n", n, (unsigned long long)((told.t - t0) / 1000000),
		       TIMEOUT_MS);
	else
		ok = true;
	/* Told: the group let the failed CQ go; else it is still a member. */
	for (i = told.cq == q[0].cq ? 1 : 0; i < n; i++)
		TEST_ASSERT_EQ(cqpoll_group_remove(g, q[i].cq), 0);
	cqpoll_group_destroy(g);
	for (i = 0; i < n; i++)
		TEST_ASSERT_EQ(cqpoll_cq_destroy(q[i].cq), 0);
	return ok ? TEST_PASS : TEST_FAIL;
}

static int
test_group_lone(void)
{
	return group_of(1);
}

static int
test_group_epoll(void)
{
	return group_of(2);
}

int
main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_cq_api), TEST_CASE(test_group_lone),
		TEST_CASE(test_group_epoll),
	};
	bool expect_fail = argc > 1 && strcmp(argv[1], "--expect-fail") == 0;
	unsigned int i, failed = 0;

	if (argc > 1 && !expect_fail) {
		fprintf(stderr, "usage: %s [--expect-fail]\n", argv[0]);
		return 2;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = cases[i].fn();

		printf("%-40s %s\n", cases[i].name, r == TEST_PASS ? "ok" : "FAIL");
		if (r != TEST_PASS)
			failed++;
	}
	printf("fail-at-arm: %u of %u failed%s\n", failed, i,
	       expect_fail ? " (negative control: every case must fail)" : "");
	/* The control must be caught by every way of sleeping. */
	if (expect_fail)
		return failed == i ? TEST_PASS : TEST_FAIL;
	return failed != 0 ? TEST_FAIL : TEST_PASS;
}
