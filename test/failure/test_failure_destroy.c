/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Destroying things from inside a poll group's failure callback
 * (doc/guides/poll-group.md, "When a member fails"): the failed CQ may be
 * destroyed there (it is out of the group already), and so may the group
 * itself: it is freed when the library call that ran the callback returns
 * (cqpoll_group_run() returns 0, cqpoll_group_run_once() -ECANCELED,
 * cqpoll_group_sleep_prepare()/_finish() -ECANCELED). Two members failing
 * at once: the callback runs for the first only, the group being gone. A
 * destroy from a completion callback is refused (logged) and the group
 * runs on. And the failure's log lines say the errno's text once when the
 * report gave no cause of its own. Meant for the ASan build (test-all.sh runs every suite there):
 * before, cqpoll_group_reap() wrote the freed group after the callback.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_log.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

#define NCQ 4

struct ctx {
	struct cqpoll_group *g;
	struct cqpoll_cq *cq[NCQ];
	unsigned int reports;
	unsigned int got;
	bool destroy_group;
	bool destroy_in_comp;
};

static void
on_comps(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	 unsigned int n, void *arg)
{
	struct ctx *x = arg;

	(void)cq;
	(void)c;
	x->got += n;
	/* Refused: the loop that called us still walks the group. */
	if (x->destroy_in_comp)
		cqpoll_group_destroy(x->g);
}

static void
on_failure(struct cqpoll_group *g, struct cqpoll_cq *cq,
	   const struct cqpoll_cq_failure *f, void *arg)
{
	struct ctx *x = arg;
	unsigned int q;

	(void)f;
	x->reports++;
	for (q = 0; q < NCQ; q++)
		if (x->cq[q] == cq)
			x->cq[q] = NULL;
	/* Out of the group already: it is ours again. */
	if (cqpoll_cq_destroy(cq) != 0)
		fprintf(stderr, "destroy of the failed cq refused\n");
	if (x->destroy_group) {
		cqpoll_group_destroy(g);
		/* Twice: still one free, when the run returns. */
		cqpoll_group_destroy(g);
	}
}

static int
setup(struct ctx *x, enum cqpoll_group_mode mode)
{
	struct cqpoll_group_conf conf = { .mode = mode, .wait_timeout_ms = 10 };
	unsigned int q;

	x->g = cqpoll_group_create(&conf);
	TEST_ASSERT(x->g != NULL, "group create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_register(x->g, on_failure, x), 0);
	for (q = 0; q < NCQ; q++) {
		x->cq[q] = cqpoll_sw_cq_create(NULL);
		TEST_ASSERT(x->cq[q] != NULL, "sw cq: %s", strerror(errno));
		TEST_ASSERT_EQ(cqpoll_group_add(x->g, x->cq[q], on_comps, x), 0);
	}
	return TEST_PASS;
}

static void
teardown(struct ctx *x, bool group_gone)
{
	unsigned int q;

	if (!group_gone)
		cqpoll_group_destroy(x->g);
	for (q = 0; q < NCQ; q++)
		if (x->cq[q] != NULL)
			cqpoll_cq_destroy(x->cq[q]);
}

/* cqpoll_group_run(): the callback destroys the CQ and the group; run returns 0. */
static int
test_destroy_in_run(void)
{
	static const enum cqpoll_group_mode modes[] = {
		CQPOLL_GROUP_MODE_BUSY, CQPOLL_GROUP_MODE_INTERRUPT,
		CQPOLL_GROUP_MODE_ADAPTIVE,
	};
	unsigned int m;

	for (m = 0; m < 3; m++) {
		struct ctx x = { .destroy_group = true };

		TEST_ASSERT_EQ(setup(&x, modes[m]), TEST_PASS);
		/* Two at once: the second is never reported, the group being gone. */
		TEST_ASSERT_EQ(cqpoll_cq_fail(x.cq[1], -ENODEV, "test"), 0);
		TEST_ASSERT_EQ(cqpoll_cq_fail(x.cq[2], -EIO, "test"), 0);
		TEST_ASSERT_EQ(cqpoll_group_run(x.g), 0);
		TEST_ASSERT_EQ(x.reports, 1);
		/* The group is freed; the other failed CQ is free again. */
		teardown(&x, true);
	}
	return TEST_PASS;
}

/* cqpoll_group_run_once(): -ECANCELED once the callback destroyed the group. */
static int
test_destroy_in_run_once(void)
{
	struct ctx x = { .destroy_group = true };
	int r = 0, i;

	TEST_ASSERT_EQ(setup(&x, CQPOLL_GROUP_MODE_INTERRUPT), TEST_PASS);
	TEST_ASSERT_EQ(cqpoll_cq_fail(x.cq[0], -ENODEV, "test"), 0);
	for (i = 0; i < 100 && r != -ECANCELED; i++) {
		r = cqpoll_group_run_once(x.g);
		TEST_ASSERT(r >= 0 || r == -ECANCELED, "run_once: %d", r);
	}
	TEST_ASSERT_EQ(r, -ECANCELED);
	TEST_ASSERT_EQ(x.reports, 1);
	teardown(&x, true);
	return TEST_PASS;
}

/* An external event loop: the callback runs in _sleep_finish(). */
static int
test_destroy_in_sleep_finish(void)
{
	struct ctx x = { .destroy_group = true };
	int r;

	TEST_ASSERT_EQ(setup(&x, CQPOLL_GROUP_MODE_INTERRUPT), TEST_PASS);
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(x.g), 0);
	/* The wake-up makes the CQ's fd readable: no need to wait. */
	TEST_ASSERT_EQ(cqpoll_cq_fail(x.cq[3], -ENODEV, "test"), 0);
	r = cqpoll_group_sleep_finish(x.g);
	if (r != -ECANCELED) {
		/* Woken, polled: the latch comes at the next poll. */
		TEST_ASSERT(r >= 0, "sleep_finish: %d", r);
		while ((r = cqpoll_group_run_once(x.g)) >= 0)
			;
	}
	TEST_ASSERT_EQ(r, -ECANCELED);
	TEST_ASSERT_EQ(x.reports, 1);
	teardown(&x, true);
	return TEST_PASS;
}

/* Only the CQ: the group runs on with the others. */
static int
test_destroy_cq_only(void)
{
	struct cqpoll_completion c = { .wr_id = 1 };
	struct ctx x = { 0 };
	int i;

	TEST_ASSERT_EQ(setup(&x, CQPOLL_GROUP_MODE_BUSY), TEST_PASS);
	TEST_ASSERT_EQ(cqpoll_cq_fail(x.cq[0], -ENODEV, "test"), 0);
	for (i = 0; i < 100 && x.reports == 0; i++)
		TEST_ASSERT(cqpoll_group_run_once(x.g) >= 0, "run_once");
	TEST_ASSERT_EQ(x.reports, 1);
	TEST_ASSERT_EQ(cqpoll_group_count(x.g), NCQ - 1);
	TEST_ASSERT_EQ(cqpoll_sw_post(x.cq[1], &c), 0);
	for (i = 0; i < 100 && x.got == 0; i++)
		TEST_ASSERT(cqpoll_group_run_once(x.g) >= 0, "run_once");
	TEST_ASSERT_EQ(x.got, 1);
	teardown(&x, false);
	return TEST_PASS;
}

/* From a completion callback: refused, the group runs on. */
static int
test_destroy_in_completion_refused(void)
{
	struct cqpoll_completion c = { .wr_id = 1 };
	struct ctx x = { .destroy_in_comp = true };
	int i;

	TEST_ASSERT_EQ(setup(&x, CQPOLL_GROUP_MODE_BUSY), TEST_PASS);
	TEST_ASSERT_EQ(cqpoll_sw_post(x.cq[2], &c), 0);
	for (i = 0; i < 100 && x.got == 0; i++)
		TEST_ASSERT(cqpoll_group_run_once(x.g) >= 0, "run_once");
	TEST_ASSERT_EQ(x.got, 1);
	x.destroy_in_comp = false;
	TEST_ASSERT_EQ(cqpoll_group_count(x.g), NCQ);
	TEST_ASSERT_EQ(cqpoll_sw_post(x.cq[2], &c), 0);
	for (i = 0; i < 100 && x.got == 1; i++)
		TEST_ASSERT(cqpoll_group_run_once(x.g) >= 0, "run_once");
	TEST_ASSERT_EQ(x.got, 2);
	teardown(&x, false);
	return TEST_PASS;
}

/* The failure's log lines, caught by a hook. */
static char log_lines[8][512];
static unsigned int nlog;

static void
log_write(void *arg, enum cqpoll_log_level level, const char *component,
	  const char *msg)
{
	(void)arg;
	(void)component;
	if (level <= CQPOLL_LOG_WARNING && strstr(msg, "failed") != NULL && nlog < 8)
		snprintf(log_lines[nlog++], sizeof(log_lines[0]), "%s", msg);
}

/* No cause given: "queue-lost (Bad file descriptor)", once, not twice. */
static int
test_log_says_errno_once(void)
{
	static const struct cqpoll_log_hook hook = { .write = log_write };
	const char *text = strerror(EBADF);
	struct ctx x = { 0 };
	char twice[256];
	unsigned int i;
	int k;

	snprintf(twice, sizeof(twice), "%s, %s", text, text);
	TEST_ASSERT_EQ(cqpoll_log_set_hook(&hook), 0);
	TEST_ASSERT_EQ(setup(&x, CQPOLL_GROUP_MODE_BUSY), TEST_PASS);
	TEST_ASSERT_EQ(cqpoll_cq_fail(x.cq[0], -EBADF, NULL), 0);
	for (k = 0; k < 100 && x.reports == 0; k++)
		TEST_ASSERT(cqpoll_group_run_once(x.g) >= 0, "run_once");
	cqpoll_log_set_hook(NULL);
	TEST_ASSERT_EQ(x.reports, 1);
	TEST_ASSERT(nlog >= 2, "%u failure lines logged, want the latch's and the group's", nlog);
	for (i = 0; i < nlog; i++) {
		printf("  log: %s\n", log_lines[i]);
		TEST_ASSERT(strstr(log_lines[i], "queue-lost") != NULL &&
			    strstr(log_lines[i], text) != NULL &&
			    strstr(log_lines[i], twice) == NULL,
			    "log line '%s'", log_lines[i]);
	}
	teardown(&x, false);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_log_says_errno_once),
	TEST_CASE(test_destroy_in_run),
	TEST_CASE(test_destroy_in_run_once),
	TEST_CASE(test_destroy_in_sleep_finish),
	TEST_CASE(test_destroy_cq_only),
	TEST_CASE(test_destroy_in_completion_refused),
};

TEST_MAIN("failure-destroy", cases)
