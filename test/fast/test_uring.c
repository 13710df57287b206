/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring driver on the running kernel: the edge of its arm, deterministic
 * (NOPs complete inside io_uring_submit(), so "completed while disarmed" is
 * a program order, not a race), the CQE mapping, the overflow flush,
 * attaching to a ring the caller made, and a ring lost under the poller. Skips (77) where io_uring is
 * unavailable.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cq_event_test.h"
#include "cqpoll_test.h"
#include "uring_test.h"

static int inject;

enum transition { CORRECT, NAIVE };

/*
 * A NOP completes while the CQ is disarmed (polling), then the consumer
 * goes to sleep by @p t. Returns 1 if it would sleep with a completion in
 * the CQ and no event to end the sleep (a lost wake-up), 0 if not, or
 * TEST_FAIL if a step misbehaves.
 */
static int
sleep_after_silent_cqe(enum transition t, int *lost)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq = cqpoll_uring_cq_create(NULL);
	struct io_uring *ring;
	int r;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	ring = cqpoll_uring_cq_ring(cq);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	/* Completed (and its CQE written) before io_uring_submit() returns. */
	TEST_ASSERT_EQ(test_uring_nop(ring, 42, 0, false, 0), 0);
	if (t == NAIVE) {
		TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
	} else {
		/* The first call finds the CQE after its arm, the second arms. */
		r = cqpoll_poll_and_arm(cq, c, 4);
		TEST_ASSERT_EQ(r, 1);
		TEST_ASSERT_EQ(c[0].wr_id, 42);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	}
	TEST_ASSERT(cqpoll_cq_is_armed(cq), "the transition armed");
	/* The edge: the CQE that came while disarmed raised nothing. */
	TEST_ASSERT(!test_cq_event_within(cq, 0), "no event for a CQE posted while disarmed");
	/* What the consumer is about to sleep on: a CQE and no event. */
	*lost = io_uring_cq_ready(ring) != 0;
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 20), 0);
	/* Armed now: the next NOP raises one, and the sleep ends at once. */
	TEST_ASSERT_EQ(test_uring_nop(ring, 43, 0, false, 0), 0);
	TEST_ASSERT(test_cq_event_within(cq, 0), "a CQE posted while armed raises an event");
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 2000), 1);
	r = cqpoll_poll_burst(cq, c, 4);
	TEST_ASSERT_EQ(r, t == NAIVE ? 2 : 1);
	TEST_ASSERT_EQ(c[r - 1].wr_id, 43);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* poll-and-arm never sleeps on the silent CQE; the naive transition does. */
static int
test_edge(void)
{
	int lost = -1;

	TEST_ASSERT_EQ(sleep_after_silent_cqe(CORRECT, &lost), TEST_PASS);
	TEST_ASSERT(lost == 0, "poll-and-arm left a completion to sleep on");
	TEST_ASSERT_EQ(sleep_after_silent_cqe(NAIVE, &lost), TEST_PASS);
	TEST_ASSERT(lost == 1, "negative control: the naive transition must be caught");
	return TEST_PASS;
}

/* Busy polling is disarmed: CQEs do not write the eventfd meanwhile. */
static int
test_disarmed_while_polling(void)
{
	struct cqpoll_completion c[4];
	uint64_t v = 0;
	ssize_t r;
	struct cqpoll_cq *cq = cqpoll_uring_cq_create(NULL);
	struct io_uring *ring;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	ring = cqpoll_uring_cq_ring(cq);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(test_uring_nop(ring, 1, 0, false, 0), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 2000), 1);
	/* The event disarmed the CQ: these raise nothing. */
	TEST_ASSERT_EQ(test_uring_nop(ring, 2, 0, false, 0), 0);
	TEST_ASSERT_EQ(test_uring_nop(ring, 3, 0, false, 0), 0);
	/*
	 * The wait slept on the ring itself (uring_wait.c), which takes the
	 * event without reading the eventfd: NOP 1, posted while armed,
	 * left its count of 1 there; 2 and 3 must have added nothing.
	 */
	r = read(cqpoll_cq_event_fd(cq), &v, sizeof(v));
	TEST_ASSERT(r < 0 ? errno == EAGAIN : v == 1, "eventfd count %llu after 3 NOPs, 1 armed",
		    r < 0 ? 0ull : (unsigned long long)v);
	TEST_ASSERT(!test_cq_event_within(cq, 0), "disarmed while polling");
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 3);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_mapping(void)
{
	static const struct {
		int32_t res;
		uint8_t status;
		uint32_t byte_len, vendor_err;
	} want[] = {
		{ 1234, CQPOLL_STATUS_SUCCESS, 1234, 0 },
		{ -EIO, CQPOLL_STATUS_GENERAL_ERR, 0, EIO },
		{ -ECANCELED, CQPOLL_STATUS_WR_FLUSH_ERR, 0, ECANCELED },
	};
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq;
	struct io_uring *ring;
	unsigned int i;

	if (!inject) {
		printf("  NOPs cannot inject results on this kernel (< 6.12)\n");
		return TEST_SKIP;
	}
	cq = cqpoll_uring_cq_create(NULL);
	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	ring = cqpoll_uring_cq_ring(cq);
	for (i = 0; i < 3; i++)
		TEST_ASSERT_EQ(test_uring_nop(ring, 0xabcdef0000ull + i, want[i].res,
					      true, 0), 0);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 3);
	for (i = 0; i < 3; i++) {
		TEST_ASSERT_EQ(c[i].wr_id, 0xabcdef0000ull + i);
		TEST_ASSERT_EQ(c[i].flags, CQPOLL_COMPLETION_F_WR_ID);
		TEST_ASSERT_EQ(c[i].status, want[i].status);
		TEST_ASSERT_EQ(c[i].byte_len, want[i].byte_len);
		TEST_ASSERT_EQ(c[i].vendor_err, want[i].vendor_err);
		TEST_ASSERT_EQ(c[i].timestamp, 0);
	}
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* More completions than the ring holds: kept by the kernel, flushed, in order. */
static int
test_overflow(void)
{
	struct cqpoll_uring_conf conf = { .size = 8 };
	struct cqpoll_completion c[4];
	struct cqpoll_cq_info info;
	struct cqpoll_cq *cq = cqpoll_uring_cq_create(&conf);
	struct io_uring *ring;
	uint64_t next = 0, i;
	int r;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	ring = cqpoll_uring_cq_ring(cq);
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.size, 8);
	for (i = 0; i < 3 * 8 + 5; i++)
		TEST_ASSERT_EQ(test_uring_nop(ring, i, 0, false, 0), 0);
	TEST_ASSERT(*ring->sq.kflags & IORING_SQ_CQ_OVERFLOW, "the ring overflowed");
	while ((r = cqpoll_poll_burst(cq, c, 4)) > 0)
		for (i = 0; i < (uint64_t)r; i++)
			TEST_ASSERT_EQ(c[i].wr_id, next++);
	TEST_ASSERT_EQ(r, 0);
	TEST_ASSERT_EQ(next, 3 * 8 + 5);
	TEST_ASSERT_EQ(*ring->cq.koverflow, 0);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* A ring the caller made: attached, used, given back as it was. */
static int
test_attach(void)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SINGLE_ISSUER |
					      IORING_SETUP_DEFER_TASKRUN };
	struct cqpoll_completion c[4];
	struct io_uring ring, deferred;
	struct cqpoll_cq *cq, *cq2;
	int r;

	TEST_ASSERT_EQ(io_uring_queue_init(16, &ring, 0), 0);
	cq = cqpoll_uring_cq_attach(&ring, NULL);
	TEST_ASSERT(cq != NULL, "attach: %s", strerror(errno));
	TEST_ASSERT(cqpoll_uring_cq_ring(cq) == &ring, "the caller's ring");
	/* One eventfd per ring: a second CQ on it is refused. */
	errno = 0;
	cq2 = cqpoll_uring_cq_attach(&ring, NULL);
	TEST_ASSERT(cq2 == NULL && errno == EBUSY, "second attach: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(test_uring_nop(&ring, 9, 0, false, 0), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 2000), 1);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
	TEST_ASSERT_EQ(c[0].wr_id, 9);
	cqpoll_cq_destroy(cq);
	TEST_ASSERT_EQ(*ring.cq.kflags & IORING_CQ_EVENTFD_DISABLED, 0);
	/* The ring is given back without our eventfd: it takes another. */
	cq = cqpoll_uring_cq_attach(&ring, NULL);
	TEST_ASSERT(cq != NULL, "attach again: %s", strerror(errno));
	cqpoll_cq_destroy(cq);
	io_uring_queue_exit(&ring);

	/* Completions that appear only when the consumer enters the kernel. */
	r = io_uring_queue_init_params(4, &deferred, &p);
	if (r == 0) {
		errno = 0;
		TEST_ASSERT(cqpoll_uring_cq_attach(&deferred, NULL) == NULL &&
			    errno == EINVAL, "DEFER_TASKRUN refused");
		io_uring_queue_exit(&deferred);
	}
	errno = 0;
	TEST_ASSERT(cqpoll_uring_cq_attach(NULL, NULL) == NULL && errno == EINVAL,
		    "NULL ring");
	TEST_ASSERT(cqpoll_uring_cq_ring(NULL) == NULL, "NULL CQ");
	return TEST_PASS;
}

static int ring_lost_reports;

static void
on_ring_lost(struct cqpoll_group *g, struct cqpoll_cq *cq,
	     const struct cqpoll_cq_failure *f, void *arg)
{
	(void)g;
	(void)arg;
	if (f->state == CQPOLL_CQ_STATE_QUEUE_LOST && f->error == -EBADF &&
	    cqpoll_cq_destroy(cq) == 0)
		ring_lost_reports++;
	else
		ring_lost_reports = -100;
}

static void
count_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
	 void *arg)
{
	(void)cq;
	(void)c;
	*(unsigned int *)arg += n;
}

/*
 * A ring whose fd is closed under the poller (here: its number now names
 * /dev/null, so the later io_uring_queue_exit() closes that, not someone
 * else's file): the next arm finds it gone, the CQ fails with -EBADF
 * (queue lost), and in a group the other CQ goes on.
 */
static int
test_ring_lost(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 20 };
	struct cqpoll_completion c[4];
	struct cqpoll_cq_info info;
	struct cqpoll_cq *a, *b;
	struct cqpoll_group *g;
	unsigned int got = 0;
	uint64_t t0;
	int devnull, i, r;

	/* Alone: poll-and-arm returns the state's errno, and keeps to it. */
	a = cqpoll_uring_cq_create(NULL);
	TEST_ASSERT(a != NULL, "create: %s", strerror(errno));
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	TEST_ASSERT(devnull >= 0, "/dev/null");
	TEST_ASSERT(dup2(devnull, cqpoll_uring_cq_ring(a)->ring_fd) >= 0, "dup2");
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(a, c, 4), -EBADF);
	TEST_ASSERT_EQ(cqpoll_poll_burst(a, c, 4), -EBADF);
	TEST_ASSERT_EQ(cqpoll_cq_wait(a, 1000), -EBADF);
	TEST_ASSERT_EQ(cqpoll_cq_info_get(a, &info), 0);
	TEST_ASSERT_EQ(info.state, CQPOLL_CQ_STATE_QUEUE_LOST);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(a), 0);

	/*
	 * Alone, after a sleep on the ring itself (the arm then skips its
	 * fstat(2)): the next sleep's io_uring_enter() finds the ring lost
	 * at once, and the poll after it returns the state's errno.
	 */
	a = cqpoll_uring_cq_create(NULL);
	TEST_ASSERT(a != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(a, c, 4), 0);
	TEST_ASSERT_EQ(test_uring_nop(cqpoll_uring_cq_ring(a), 5, 0, false, 0), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(a, 1000), 1);
	TEST_ASSERT_EQ(cqpoll_poll_burst(a, c, 4), 1);
	TEST_ASSERT(dup2(devnull, cqpoll_uring_cq_ring(a)->ring_fd) >= 0, "dup2");
	r = cqpoll_poll_and_arm(a, c, 4);
	if (r == 0) {
		t0 = test_now_ns();
		TEST_ASSERT_EQ(cqpoll_cq_wait(a, 1000), 1);
		TEST_ASSERT(test_now_ns() - t0 < 500000000ull, "the lost ring ended the sleep at once");
		/* The first empty poll after the report latches it. */
		r = cqpoll_poll_burst(a, c, 4);
		if (r == 0)
			r = cqpoll_poll_burst(a, c, 4);
	}
	TEST_ASSERT_EQ(r, -EBADF);
	TEST_ASSERT_EQ(cqpoll_cq_info_get(a, &info), 0);
	TEST_ASSERT_EQ(info.state, CQPOLL_CQ_STATE_QUEUE_LOST);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(a), 0);

	/* In a group: the lost ring leaves, the other delivers. */
	a = cqpoll_uring_cq_create(NULL);
	b = cqpoll_uring_cq_create(NULL);
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(a != NULL && b != NULL && g != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_register(g, on_ring_lost, NULL), 0);
	TEST_ASSERT_EQ(cqpoll_group_add(g, a, count_cb, &got), 0);
	TEST_ASSERT_EQ(cqpoll_group_add(g, b, count_cb, &got), 0);
	TEST_ASSERT(dup2(devnull, cqpoll_uring_cq_ring(a)->ring_fd) >= 0, "dup2");
	ring_lost_reports = 0;
	for (i = 0; i < 4; i++) {
		TEST_ASSERT_EQ(test_uring_nop(cqpoll_uring_cq_ring(b), 7, 0, false, 0), 0);
		TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "run once");
		TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "run once");
	}
	TEST_ASSERT_EQ(ring_lost_reports, 1);
	TEST_ASSERT_EQ(cqpoll_group_count(g), 1);
	TEST_ASSERT_EQ(got, 4);
	cqpoll_group_destroy(g);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(b), 0);
	close(devnull);
	return TEST_PASS;
}

static int
test_bad_args(void)
{
	struct cqpoll_uring_conf conf = { .size = 1u << 30 };

	errno = 0;
	TEST_ASSERT(cqpoll_uring_cq_create(&conf) == NULL && errno == EINVAL,
		    "oversized ring refused");
	return TEST_PASS;
}

static void
on_watchdog(int sig)
{
	(void)sig;
}

/* A timeout on the CQ's own ring: its CQE lands @p ms from now. */
static int
ring_timeout(struct io_uring *ring, unsigned int ms, uint64_t user_data)
{
	static struct __kernel_timespec ts;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (sqe == NULL)
		return -EBUSY;
	ts.tv_sec = 0;
	ts.tv_nsec = (long long)ms * 1000000;
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = user_data;
	return io_uring_submit(ring) == 1 ? 0 : -EIO;
}

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * The safety net's timeout on the ring's own wait, set once per period on
 * a ring of the driver's (uring_wait.c), not per sleep: every sleep of an
 * idle CQ still ends within its timeout, no sooner than half of it, as a
 * timeout (counted, never delivered as a completion); a NOP ends a sleep
 * at once, as its event; and the alarm, moved or spent, never shows in
 * the CQ. Negative control: a build that believes its alarm set and sets
 * none must be caught by the watchdog (a signal ends that sleep with
 * -EINTR after a second) instead of sleeping forever.
 */
static int
test_alarm(void)
{
	struct sigaction sa = { .sa_handler = on_watchdog };
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	struct cqpoll_cq *cq = cqpoll_uring_cq_create(NULL);
	struct io_uring *ring;
	uint64_t t0, dt;
	int i, r;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	ring = cqpoll_uring_cq_ring(cq);
	TEST_ASSERT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	for (i = 0; i < 12; i++) {
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		/* Every other sleep is ended by a NOP before its alarm. */
		if (i % 2 == 1)
			TEST_ASSERT_EQ(test_uring_nop(ring, 100 + (uint64_t)i, 0, false, 0), 0);
		alarm(1);
		t0 = mono_ms();
		r = cqpoll_cq_wait(cq, 20);
		dt = mono_ms() - t0;
		alarm(0);
		TEST_ASSERT(r != -EINTR, "sleep %d not ended by its 20 ms timeout in 1 s", i);
		if (i % 2 == 1) {
			TEST_ASSERT_EQ(r, 1);
			TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
			TEST_ASSERT_EQ(c[0].wr_id, 100 + (uint64_t)i);
			continue;
		}
		TEST_ASSERT_EQ(r, 0);
		/* Half the timeout at least (the clock in ms: one less). */
		TEST_ASSERT(dt >= 9, "sleep %d timed out after %" PRIu64 " ms", i, dt);
		/* The alarm's CQE is the driver's: never a completion. */
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	}
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.wait_timeouts, 6);
	/*
	 * Sleeps ended by the ring's own 2 ms timeouts (a CQE the kernel
	 * posts while the consumer sleeps): the alarm set by the first
	 * stays, and is moved as the sleeps pass its half; none of them
	 * times out, and only the timeouts' CQEs come out.
	 */
	for (i = 0; i < 16; i++) {
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		TEST_ASSERT_EQ(ring_timeout(ring, 2, 200 + (uint64_t)i), 0);
		alarm(1);
		r = cqpoll_cq_wait(cq, 20);
		alarm(0);
		TEST_ASSERT_EQ(r, 1);
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
		TEST_ASSERT_EQ(c[0].wr_id, 200 + (uint64_t)i);
	}
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.wait_timeouts, 6);
	/* A shorter timeout than the alarm's (200 ms, just set): moved. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(ring_timeout(ring, 2, 300), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 200), 1);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	alarm(1);
	t0 = mono_ms();
	r = cqpoll_cq_wait(cq, 5);
	dt = mono_ms() - t0;
	alarm(0);
	TEST_ASSERT(r == 0 && dt < 150, "a 5 ms sleep after a 200 ms one: %d after %" PRIu64 " ms",
		    r, dt);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_edge),
	TEST_CASE(test_disarmed_while_polling),
	TEST_CASE(test_mapping),
	TEST_CASE(test_overflow),
	TEST_CASE(test_attach),
	TEST_CASE(test_ring_lost),
	TEST_CASE(test_bad_args),
	TEST_CASE(test_alarm),
};

/* Usage: test_uring [CASE]: every case, or the one named. */
int
main(int argc, char **argv)
{
	char why[256];
	size_t i;

	inject = test_uring_probe(why, sizeof(why));
	if (inject < 0) {
		printf("skip: %s\n", why);
		return TEST_SKIP;
	}
	if (argc < 2)
		return test_run("uring", cases, sizeof(cases) / sizeof(cases[0]));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strcmp(cases[i].name, argv[1]) == 0)
			return test_run("uring", &cases[i], 1);
	fprintf(stderr, "test_uring: no case %s\n", argv[1]);
	return TEST_FAIL;
}
