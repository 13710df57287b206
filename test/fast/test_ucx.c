/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UCX driver over a real transport (--tls=tcp over lo, posix or sysv shared
 * memory; two workers in one process, ucx_test.h): completions and their
 * fields, events, the report-missed arm with the naive transition as
 * negative control, a cross-thread wake-up (ucp_worker_signal()), send and
 * error completions, a full CQ, cancellation at destroy, bad arguments.
 * Skips (77) where the transport does not run.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <poll.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"
#include "ucx_test.h"

static struct test_ucx ux;
static const char *tls_name;

static struct cqpoll_cq *
open_cq(uint32_t size)
{
	struct cqpoll_ucx_conf conf = { .size = size };

	return cqpoll_ucx_cq_create(ux.b, &conf);
}

/* Every completion of @p cq within a second, up to @p n. */
static int
poll_n(struct cqpoll_cq *cq, struct cqpoll_completion *c, int n)
{
	uint64_t t0 = test_now_ns();
	int got = 0, r;

	while (got < n && test_now_ns() - t0 < 1000000000ull) {
		r = cqpoll_poll_burst(cq, c + got, (unsigned int)(n - got));
		if (r < 0)
			return r;
		got += r;
	}
	return got;
}

static int
case_fields(void)
{
	struct cqpoll_cq *cq = open_cq(64);
	struct cqpoll_completion c[8];
	uint64_t t0 = test_now_ns();
	int i;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	for (i = 0; i < 4; i++)
		TEST_ASSERT_EQ(cqpoll_ucx_tag_recv(cq, ux.buf_b[i], TEST_UCX_BUF,
						   100 + (uint64_t)i, UINT64_MAX,
						   (uint64_t)i), 0);
	for (i = 0; i < 4; i++)
		TEST_ASSERT_EQ(test_ucx_send(&ux, 100 + (uint64_t)i, 10 + (size_t)i), 0);
	TEST_ASSERT_EQ(poll_n(cq, c, 4), 4);
	for (i = 0; i < 4; i++) {
		TEST_ASSERT_EQ(c[i].wr_id, (uint64_t)i);
		TEST_ASSERT_EQ(c[i].status, CQPOLL_STATUS_SUCCESS);
		TEST_ASSERT_EQ(c[i].opcode, CQPOLL_OP_RECV);
		TEST_ASSERT_EQ(c[i].byte_len, 10 + (uint32_t)i);
		TEST_ASSERT_EQ(c[i].flags, CQPOLL_COMPLETION_F_WR_ID |
			       CQPOLL_COMPLETION_F_TIMESTAMP | CQPOLL_COMPLETION_F_TAG);
		TEST_ASSERT_EQ(cqpoll_completion_tag(&c[i]), 100 + (uint64_t)i);
		TEST_ASSERT(c[i].timestamp >= t0 && c[i].timestamp <= test_now_ns(),
			    "host timestamp");
	}
	/* A wildcard receive reports the tag it matched, high bits too. */
	TEST_ASSERT_EQ(cqpoll_ucx_tag_recv(cq, ux.buf_b[0], TEST_UCX_BUF, 0, 0, 9), 0);
	TEST_ASSERT_EQ(test_ucx_send(&ux, 0x123456789abcull, 3), 0);
	TEST_ASSERT_EQ(poll_n(cq, c, 1), 1);
	TEST_ASSERT_EQ(c[0].wr_id, 9);
	TEST_ASSERT_EQ(cqpoll_completion_tag(&c[0]), 0x123456789abcull);
	/* A send of B's is a completion too. */
	TEST_ASSERT_EQ(cqpoll_ucx_tag_send(cq, ux.ep_ba, ux.buf_b[1], 33, 7, 77), 0);
	TEST_ASSERT_EQ(poll_n(cq, c, 1), 1);
	TEST_ASSERT_EQ(c[0].wr_id, 77);
	TEST_ASSERT_EQ(c[0].opcode, CQPOLL_OP_SEND);
	TEST_ASSERT_EQ(c[0].byte_len, 33);
	TEST_ASSERT_EQ(c[0].flags & CQPOLL_COMPLETION_F_TAG, 0);
	/* A's side takes that message, so nothing is left on the wire. */
	TEST_ASSERT_EQ(test_ucx_wait(ux.a, ux.b, ucp_tag_recv_nbx(ux.a, ux.buf_a,
		TEST_UCX_BUF, 7, UINT64_MAX, &(ucp_request_param_t){ 0 })), UCS_OK);
	/* Truncated: the receive is shorter than the message. */
	TEST_ASSERT_EQ(cqpoll_ucx_tag_recv(cq, ux.buf_b[0], 4, 5, UINT64_MAX, 5), 0);
	TEST_ASSERT_EQ(test_ucx_send(&ux, 5, 64), 0);
	TEST_ASSERT_EQ(poll_n(cq, c, 1), 1);
	TEST_ASSERT_EQ(c[0].wr_id, 5);
	TEST_ASSERT_EQ(c[0].status, CQPOLL_STATUS_LOC_LEN_ERR);
	TEST_ASSERT_EQ(c[0].vendor_err, (uint32_t)-UCS_ERR_MESSAGE_TRUNCATED);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 8), 0);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* Armed, then a message: the wait ends by the event, every round. */
static int
case_events(void)
{
	struct cqpoll_cq *cq = open_cq(64);
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	int round, r;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	for (round = 0; round < 200; round++) {
		TEST_ASSERT_EQ(cqpoll_ucx_tag_recv(cq, ux.buf_b[0], TEST_UCX_BUF,
						   (uint64_t)round, UINT64_MAX,
						   (uint64_t)round), 0);
		while ((r = cqpoll_poll_and_arm(cq, c, 4)) > 0 || r == -EAGAIN)
			;
		TEST_ASSERT_EQ(r, 0);
		TEST_ASSERT_EQ(test_ucx_send(&ux, (uint64_t)round, 8), 0);
		r = cqpoll_cq_wait(cq, 2000);
		TEST_ASSERT_EQ(r, 1);
		/* The message may take another progress to land (tcp segments). */
		TEST_ASSERT_EQ(poll_n(cq, c, 1), 1);
		TEST_ASSERT_EQ(c[0].wr_id, (uint64_t)round);
	}
	cqpoll_cq_stats_get(cq, &st);
	printf("  events: arms=%" PRIu64 " events=%" PRIu64 " spurious=%" PRIu64
	       " timeouts=%" PRIu64 "\n", st.arms, st.events, st.spurious_events,
	       st.wait_timeouts);
	TEST_ASSERT_EQ(st.wait_timeouts, 0);
	TEST_ASSERT(st.events >= 200, "events %" PRIu64, st.events);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/*
 * A message sent while the consumer was busy: the correct transition
 * returns it (the arm's progress finds it, or the worker's arm says BUSY);
 * the naive one arms past it and sleeps until the timeout: the control.
 */
static int
efd_readable(void)
{
	struct pollfd pfd = { .events = POLLIN };

	if (ucp_worker_get_efd(ux.b, &pfd.fd) != UCS_OK)
		return 0;
	return poll(&pfd, 1, 0) > 0;
}

static int
sleep_after_pending(int naive, int *lost)
{
	struct cqpoll_cq *cq = open_cq(64);
	struct cqpoll_completion c[4];
	int r, k;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_ucx_tag_recv(cq, ux.buf_b[0], TEST_UCX_BUF, 3,
					   UINT64_MAX, 3), 0);
	TEST_ASSERT_EQ(test_ucx_send(&ux, 3, 8), 0);
	usleep(2000); /* on the wire, or in B's FIFO or socket */
	/*
	 * The state a consumer meets when the message lands just before its
	 * arm: the worker's own arm (here, outside cqpoll, to set the scene)
	 * drains the internal eventfd and a shared-memory interface's signal
	 * datagram, and leaves the interface unarmed (BUSY: an unread FIFO
	 * entry); nothing but the message itself is left to wake anyone. It
	 * stops at the first busy part (e.g. its eventfd): called again until
	 * the fd is quiet.
	 */
	for (k = 0; k < 4 && efd_readable(); k++)
		ucp_worker_arm(ux.b);
	*lost = 0;
	if (naive) {
		TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
		r = cqpoll_cq_wait(cq, 200);
		TEST_ASSERT(r >= 0, "wait: %d", r);
		if (r == 0 && cqpoll_poll_burst(cq, c, 4) == 1)
			*lost = 1;
	} else {
		r = cqpoll_poll_and_arm(cq, c, 4);
		TEST_ASSERT_EQ(r, 1);
		TEST_ASSERT_EQ(c[0].wr_id, 3);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	}
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
case_transition(void)
{
	int lost, i, caught = 0;

	for (i = 0; i < 5; i++) {
		TEST_ASSERT_EQ(sleep_after_pending(0, &lost), TEST_PASS);
		TEST_ASSERT_EQ(sleep_after_pending(1, &lost), TEST_PASS);
		caught += lost;
	}
	printf("  naive transition: %d of 5 sleeps slept past a completion\n", caught);
	/*
	 * Shared memory covers the naive sleep here: once armed, an interface
	 * stays armed or keeps a signal datagram that keeps the fd readable
	 * (drained only when the worker's arm reaches it), so a sleep after a
	 * bare arm still wakes. tcp wakes from socket readiness only, which
	 * the arm's progress consumed: there the control must be caught.
	 */
	if (strcmp(tls_name, "tcp") == 0)
		TEST_ASSERT(caught > 0, "the naive transition must be caught on tcp");
	return TEST_PASS;
}

struct signaller {
	struct cqpoll_cq *cq;
	int r;
};

static void *
signal_thread(void *arg)
{
	struct signaller *s = arg;

	usleep(20000);
	s->r = cqpoll_ucx_cq_signal(s->cq);
	return NULL;
}

/* Another thread wakes the sleeping consumer: a spurious event, at once. */
static int
case_signal(void)
{
	struct cqpoll_cq *cq = open_cq(64);
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	struct signaller s;
	pthread_t t;
	uint64_t t0;
	int r;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	s = (struct signaller){ .cq = cq, .r = -1 };
	TEST_ASSERT_EQ(pthread_create(&t, NULL, signal_thread, &s), 0);
	t0 = test_now_ns();
	r = cqpoll_cq_wait(cq, 5000);
	pthread_join(t, NULL);
	TEST_ASSERT_EQ(s.r, 0);
	TEST_ASSERT_EQ(r, 1);
	TEST_ASSERT(test_now_ns() - t0 < 2000000000ull, "woken by the signal");
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	/* The signal is drained by the next arm: asleep again, armed. */
	while ((r = cqpoll_poll_and_arm(cq, c, 4)) > 0 || r == -EAGAIN)
		;
	TEST_ASSERT_EQ(r, 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 20), 0);
	cqpoll_cq_stats_get(cq, &st);
	TEST_ASSERT_EQ(st.spurious_events, 1);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* size requests outstanding: the next post is refused; destroy cancels them. */
static int
case_full_and_cancel(void)
{
	struct cqpoll_cq *cq = open_cq(8);
	struct cqpoll_completion c[8];
	struct cqpoll_cq_info info;
	uint32_t i;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.size, 8);
	TEST_ASSERT_EQ(info.arm, CQPOLL_ARM_REPORT_MISSED);
	for (i = 0; i < 8; i++)
		TEST_ASSERT_EQ(cqpoll_ucx_tag_recv(cq, ux.buf_b[i], TEST_UCX_BUF,
						   1000 + i, UINT64_MAX, i), 0);
	TEST_ASSERT_EQ(cqpoll_ucx_tag_recv(cq, ux.buf_b[0], TEST_UCX_BUF, 2000,
					   UINT64_MAX, 99), -ENOBUFS);
	/* One completes and is polled: room for one more. */
	TEST_ASSERT_EQ(test_ucx_send(&ux, 1000, 8), 0);
	TEST_ASSERT_EQ(poll_n(cq, c, 1), 1);
	TEST_ASSERT_EQ(c[0].wr_id, 0);
	TEST_ASSERT_EQ(cqpoll_ucx_tag_recv(cq, ux.buf_b[0], TEST_UCX_BUF, 2000,
					   UINT64_MAX, 99), 0);
	/* Eight receives left posted: destroy cancels them (ASan sees the rest). */
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
case_bad_args(void)
{
	struct cqpoll_cq *sw = cqpoll_sw_cq_create(NULL);
	struct cqpoll_ucx_conf big = { .size = (1u << 24) + 1 };
	ucp_params_t p = { .field_mask = UCP_PARAM_FIELD_FEATURES,
			   .features = UCP_FEATURE_TAG };
	ucp_context_h ctx;
	ucp_worker_h w;

	errno = 0;
	TEST_ASSERT(cqpoll_ucx_cq_create(NULL, NULL) == NULL && errno == EINVAL,
		    "NULL worker");
	errno = 0;
	TEST_ASSERT(cqpoll_ucx_cq_create(ux.b, &big) == NULL && errno == EINVAL,
		    "size too big");
	TEST_ASSERT(sw != NULL, "sw");
	TEST_ASSERT_EQ(cqpoll_ucx_tag_recv(sw, ux.buf_b[0], 8, 0, 0, 0), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_ucx_tag_send(sw, ux.ep_ba, ux.buf_b[0], 8, 0, 0), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_ucx_cq_signal(sw), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_ucx_cq_signal(NULL), -EINVAL);
	errno = 0;
	TEST_ASSERT(cqpoll_ucx_cq_worker(sw) == NULL && errno == EINVAL, "worker of sw");
	cqpoll_cq_destroy(sw);
	/* A worker without UCP_FEATURE_WAKEUP has nothing to sleep on. */
	TEST_ASSERT_EQ(ucp_init(&p, NULL, &ctx), UCS_OK);
	TEST_ASSERT_EQ(test_ucx_worker(ctx, &w), UCS_OK);
	errno = 0;
	TEST_ASSERT(cqpoll_ucx_cq_create(w, NULL) == NULL && errno == EOPNOTSUPP,
		    "no wake-up feature: %s", strerror(errno));
	ucp_worker_destroy(w);
	ucp_cleanup(ctx);
	return TEST_PASS;
}

/*
 * One CQ per worker: a second wrap of the same worker is refused (EBUSY)
 * until the first CQ is destroyed; size 1 is one request (it became 2).
 */
static int
case_wrapped_twice(void)
{
	struct cqpoll_ucx_conf one = { .size = 1 };
	struct cqpoll_cq_info info;
	struct cqpoll_cq *cq, *again;

	cq = cqpoll_ucx_cq_create(ux.b, &one);
	TEST_ASSERT(cq != NULL, "first wrap: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.size, 1);
	errno = 0;
	again = cqpoll_ucx_cq_create(ux.b, NULL);
	TEST_ASSERT(again == NULL && errno == EBUSY, "second wrap of one worker: %p, %s",
		    (void *)again, strerror(errno));
	/* Another worker is another matter. */
	again = cqpoll_ucx_cq_create(ux.a, NULL);
	TEST_ASSERT(again != NULL, "the other worker: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_cq_destroy(again), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	/* Released with its CQ. */
	cq = cqpoll_ucx_cq_create(ux.b, NULL);
	TEST_ASSERT(cq != NULL, "wrap after destroy: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return TEST_PASS;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tls", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct {
		const char *name;
		int (*fn)(void);
	} cases[] = {
		{ "fields", case_fields },
		{ "events", case_events },
		{ "transition", case_transition },
		{ "signal", case_signal },
		{ "full-and-cancel", case_full_and_cancel },
		{ "bad-args", case_bad_args },
		{ "wrapped-twice", case_wrapped_twice },
	};
	const char *tls = "posix";
	char why[256];
	size_t i;
	int o, r, failed = 0;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o != 't')
			return TEST_FAIL;
		tls = optarg;
	}
	tls_name = tls;
	r = test_ucx_open(&ux, tls, why, sizeof(why));
	if (r == 0)
		r = test_ucx_hello(&ux, why, sizeof(why));
	if (r != 0) {
		printf("%s: %s\n", r == -ENODATA ? "skip" : "FAIL", why);
		test_ucx_close(&ux);
		return r == -ENODATA ? TEST_SKIP : TEST_FAIL;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = cases[i].fn();
		printf("ucx-%-6s %-16s %s\n", tls, cases[i].name,
		       r == TEST_PASS ? "ok" : "FAIL");
		failed += r != TEST_PASS;
	}
	test_ucx_close(&ux);
	return failed != 0 ? TEST_FAIL : TEST_PASS;
}
