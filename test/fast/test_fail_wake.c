/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A failure reported from another thread wakes the thread asleep on the CQ
 * (doc/guides/contract.md, section 11, "No sleep on a dead CQ"): a thread
 * sleeps in cqpoll_cq_wait() with a 2 s timeout on an empty, armed CQ; 20 ms
 * later another thread calls cqpoll_cq_fail(). The sleeper must wake well
 * before its timeout with 1 ("poll it"), its poll must then give the
 * state's errno (at the latest at the second poll: the first may latch),
 * and the next wait must refuse at once with the errno. For every driver
 * that gives the core its wake-up (cqpoll_driver_ops::wake): sw, io_uring,
 * UCX, libfabric (ofi_rxm over tcp on loopback, connected: fi_cq_signal()).
 *
 * usage: test_fail_wake [--expect-fail]
 *
 * --expect-fail is the negative control's verdict: built against a
 * test-only library where cqpoll_cq_fail() wakes nobody
 * (-DCQPOLL_MUTANT_NO_FAIL_WAKE=1), the sleeper sleeps out its timeout and
 * the checks must fail.
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"
#ifdef CQPOLL_TEST_URING
#include "cqpoll_uring.h"
#endif
#ifdef CQPOLL_TEST_UCX
#include "cqpoll_ucx.h"
#include "ucx_test.h"
#endif
#ifdef CQPOLL_TEST_OFI
#include "cqpoll_ofi.h"
#include "ofi_test.h"
#endif

/* The sleeper's timeout, and how soon after the report it must be awake. */
#define WAIT_MS 2000
#define WOKEN_WITHIN_NS 500000000ull
#define FAIL_AFTER_NS 20000000ull

struct failer {
	struct cqpoll_cq *cq;
	uint64_t t_fail;
	int r;
};

static void *
fail_later(void *arg)
{
	struct failer *f = arg;
	struct timespec ts = { 0, (long)FAIL_AFTER_NS };

	nanosleep(&ts, NULL);
	__atomic_store_n(&f->t_fail, test_now_ns(), __ATOMIC_RELEASE);
	f->r = cqpoll_cq_fail(f->cq, -ENODEV, "failed by another thread");
	return NULL;
}

/* Sleep on @p cq, empty, while another thread fails it. */
static int
sleep_through_failure(const char *name, struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[4];
	struct failer f = { .cq = cq };
	uint64_t t0, woke;
	pthread_t th;
	int r, w, p1, p2;

	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT(cqpoll_cq_is_armed(cq), "%s: not armed", name);
	TEST_ASSERT_EQ(pthread_create(&th, NULL, fail_later, &f), 0);
	t0 = test_now_ns();
	w = cqpoll_cq_wait(cq, WAIT_MS);
	woke = test_now_ns();
	pthread_join(th, NULL);
	TEST_ASSERT_EQ(f.r, 0);
	p1 = cqpoll_poll_burst(cq, c, 4);
	p2 = cqpoll_poll_burst(cq, c, 4);
	printf("  %-6s: wait returned %d after %llu us (%llu us after the report), polls %d %d\n",
	       name, w, (unsigned long long)((woke - t0) / 1000),
	       (unsigned long long)(woke > f.t_fail ? (woke - f.t_fail) / 1000 : 0), p1, p2);
	TEST_ASSERT(w == 1 && woke >= f.t_fail && woke - f.t_fail < WOKEN_WITHIN_NS,
		    "%s: the sleeper was not woken by the failure (wait %d after %llu ms)",
		    name, w, (unsigned long long)((woke - t0) / 1000000));
	TEST_ASSERT((p1 == 0 && p2 == -ENODEV) || p1 == -ENODEV,
		    "%s: polls after the failure returned %d, %d", name, p1, p2);
	t0 = test_now_ns();
	r = cqpoll_cq_wait(cq, WAIT_MS);
	TEST_ASSERT(r == -ENODEV && test_now_ns() - t0 < WOKEN_WITHIN_NS,
		    "%s: a wait on the failed cq returned %d", name, r);
	return TEST_PASS;
}

static int
test_sw(void)
{
	struct cqpoll_sw_conf conf = { .size = 64, .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_cq *cq = cqpoll_sw_cq_create(&conf);
	int r;

	TEST_ASSERT(cq != NULL, "sw cq: %s", strerror(errno));
	r = sleep_through_failure("sw", cq);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return r;
}

static int
test_uring(void)
{
#ifdef CQPOLL_TEST_URING
	struct cqpoll_uring_conf conf = { .size = 64 };
	struct cqpoll_cq *cq = cqpoll_uring_cq_create(&conf);
	int r;

	if (cq == NULL) {
		printf("  uring : skipped: %s\n", strerror(errno));
		return TEST_SKIP;
	}
	r = sleep_through_failure("uring", cq);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return r;
#else
	printf("  uring : not in this build\n");
	return TEST_SKIP;
#endif
}

static int
test_ucx(void)
{
#ifdef CQPOLL_TEST_UCX
	ucp_context_h ctx;
	ucp_worker_h w;
	struct cqpoll_cq *cq;
	int r;

	if (test_ucx_ctx("self", &ctx) != UCS_OK) {
		printf("  ucx   : skipped: no UCX context over self\n");
		return TEST_SKIP;
	}
	TEST_ASSERT(test_ucx_worker(ctx, &w) == UCS_OK, "ucp_worker_create");
	cq = cqpoll_ucx_cq_create(w, NULL);
	TEST_ASSERT(cq != NULL, "ucx cq: %s", strerror(errno));
	r = sleep_through_failure("ucx", cq);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	ucp_worker_destroy(w);
	ucp_cleanup(ctx);
	return r;
#else
	printf("  ucx   : not in this build\n");
	return TEST_SKIP;
#endif
}

static int
test_ofi(void)
{
#ifdef CQPOLL_TEST_OFI
	static struct test_ofi t;
	struct cqpoll_cq *cq;
	char why[256];
	int r;

	if (test_ofi_open(&t, "tcp", why, sizeof(why)) != 0) {
		printf("  ofi   : skipped: %s\n", why);
		test_ofi_close(&t);
		return TEST_SKIP;
	}
	cq = cqpoll_ofi_cq_open(t.fabric, t.domain, NULL);
	TEST_ASSERT(cq != NULL, "ofi cq: %s", strerror(errno));
	r = test_ofi_attach(&t, cqpoll_ofi_cq_fid(cq), why, sizeof(why));
	TEST_ASSERT(r == 0, "ofi attach: %s", why);
	r = sleep_through_failure("ofi", cq);
	/* A CQ still bound to an endpoint cannot be closed. */
	test_ofi_close_eps(&t);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	test_ofi_close(&t);
	return r;
#else
	printf("  ofi   : not in this build\n");
	return TEST_SKIP;
#endif
}

int
main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_sw), TEST_CASE(test_uring), TEST_CASE(test_ucx),
		TEST_CASE(test_ofi),
	};
	bool expect_fail = argc > 1 && strcmp(argv[1], "--expect-fail") == 0;
	unsigned int i, failed = 0;

	if (argc > 1 && !expect_fail) {
		fprintf(stderr, "usage: %s [--expect-fail]\n", argv[0]);
		return 2;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = cases[i].fn();

		printf("%-40s %s\n", cases[i].name, r == TEST_PASS ? "ok" :
		       r == TEST_SKIP ? "skipped" : "FAIL");
		if (r == TEST_FAIL)
			failed++;
		/* The control is caught by its first failure: no more timeouts. */
		if (expect_fail && failed != 0)
			break;
	}
	printf("fail-wake: %u failed%s\n", failed,
	       expect_fail ? " (negative control: failures expected)" : "");
	if (expect_fail)
		return failed != 0 ? TEST_PASS : TEST_FAIL;
	return failed != 0 ? TEST_FAIL : TEST_PASS;
}
