/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core API on a scripted mock driver: argument checking, the poll-and-arm
 * sequence for each arm semantics, arming state, event batching and
 * acknowledgement. The mock records every call, so the tests check exactly
 * which device operations the core issued, in which order.
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

struct mock {
	int efd;
	/* Scripted results, consumed in order; past the end: 0. */
	int poll_script[16];
	int arm_script[16];
	int arm_after;  /* what arms past the script return */
	unsigned int n_poll, n_arm, arm_calls;
	char trace[64]; /* 'P' poll with results, 'p' empty poll, 'A' arm */
	unsigned int trace_len;
	unsigned int acked, ack_calls;
	int destroyed;
};

static void
trace(struct mock *m, char c)
{
	if (m->trace_len + 1 < sizeof(m->trace))
		m->trace[m->trace_len++] = c;
}

static int
mock_poll(void *priv, struct cqpoll_completion *c, unsigned int n)
{
	struct mock *m = priv;
	int r = m->n_poll < 16 ? m->poll_script[m->n_poll] : 0;
	int i;

	m->n_poll++;
	if (r > (int)n)
		r = (int)n;
	for (i = 0; i < r; i++)
		c[i].wr_id = (uint64_t)i;
	trace(m, r > 0 ? 'P' : r == 0 ? 'p' : 'E');
	return r;
}

static int
mock_arm(void *priv)
{
	struct mock *m = priv;

	trace(m, 'A');
	/* An unbounded re-arm loop would never stop: report it instead. */
	if (++m->arm_calls > 100000)
		return -ELOOP;
	return m->n_arm < 16 ? m->arm_script[m->n_arm++] : m->arm_after;
}

static int
mock_event_fd(void *priv)
{
	return ((struct mock *)priv)->efd;
}

static int
mock_event_get(void *priv)
{
	struct mock *m = priv;
	uint64_t v;

	if (read(m->efd, &v, sizeof(v)) != sizeof(v))
		return errno == EAGAIN ? 0 : -errno;
	return (int)v;
}

static int
mock_event_ack(void *priv, unsigned int n)
{
	struct mock *m = priv;

	m->acked += n;
	m->ack_calls++;
	return 0;
}

static void
mock_destroy(void *priv)
{
	struct mock *m = priv;

	m->destroyed = 1;
}

static const struct cqpoll_driver_ops mock_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "mock",
	.arm = mock_arm,
	.event_fd = mock_event_fd,
	.event_get = mock_event_get,
	.event_ack = mock_event_ack,
	.destroy = mock_destroy,
};

static struct cqpoll_cq *
mock_cq(struct mock *m, enum cqpoll_arm_semantics arm, unsigned int batch)
{
	struct cqpoll_cq_params p = { .arm = arm, .size = 64, .event_ack_batch = batch };

	memset(m, 0, sizeof(*m));
	m->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (m->efd < 0)
		return NULL;
	return cqpoll_cq_alloc(&mock_ops, mock_poll, m, &p);
}

static void
mock_raise(struct mock *m, uint64_t n)
{
	if (write(m->efd, &n, sizeof(n)) != sizeof(n))
		abort();
}

static int
drop(struct cqpoll_cq *cq, struct mock *m)
{
	cqpoll_cq_destroy(cq);
	close(m->efd);
	return m->destroyed ? TEST_PASS : TEST_FAIL;
}

/*
 * The size at the head of a driver's table (libfabric's fi_ops_* rule):
 * older layouts, and newer ones that give ops this library does not know,
 * are refused with EPROTO; a newer layout whose extra members are all NULL
 * is taken, and a table from before the size field (its name first) is
 * refused, not read as ops.
 */
static int
test_ops_size(void)
{
	struct cqpoll_cq_params p = { .arm = CQPOLL_ARM_EDGE, .size = 64 };
	struct {
		struct cqpoll_driver_ops ops;
		void (*newer_op)(void);
	} newer = { .ops = mock_ops };
	struct cqpoll_driver_ops t = mock_ops;
	struct mock m;
	struct cqpoll_cq *cq;

	memset(&m, 0, sizeof(m));
	t.size = 0;
	errno = 0;
	TEST_ASSERT(cqpoll_cq_alloc(&t, mock_poll, &m, &p) == NULL && errno == EPROTO,
		    "a table without its size is refused");
	t.size = CQPOLL_DRIVER_OPS_SIZE_MIN - sizeof(void *);
	errno = 0;
	TEST_ASSERT(cqpoll_cq_alloc(&t, mock_poll, &m, &p) == NULL && errno == EPROTO,
		    "a table older than the oldest layout is refused");
	/* Before the size field, a table began with its name. */
	t.size = (size_t)(uintptr_t)"mock";
	errno = 0;
	TEST_ASSERT(cqpoll_cq_alloc(&t, mock_poll, &m, &p) == NULL && errno == EPROTO,
		    "a table from before the size field is refused");

	newer.ops.size = sizeof(newer);
	cq = cqpoll_cq_alloc(&newer.ops, mock_poll, &m, &p);
	TEST_ASSERT(cq != NULL, "a newer table without newer ops is taken");
	cqpoll_cq_destroy(cq);
	newer.newer_op = abort;
	errno = 0;
	TEST_ASSERT(cqpoll_cq_alloc(&newer.ops, mock_poll, &m, &p) == NULL &&
		    errno == EPROTO, "a newer table giving an unknown op is refused");
	return TEST_PASS;
}

static int
test_bad_arguments(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	struct cqpoll_cq_info info;
	struct cqpoll_cq_params p = { .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_driver_ops incomplete = mock_ops;
	enum cqpoll_arm_semantics arm;
	struct mock m;
	struct cqpoll_cq *cq;

	TEST_ASSERT_EQ(cqpoll_poll_burst(NULL, c, 4), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(NULL, c, 4), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_event_fd(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_event_ack(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_wait(NULL, 10), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(NULL, &st), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_stats_reset(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_info_get(NULL, &info), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_arm_naive(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_stranded(NULL), -EINVAL);
	TEST_ASSERT(!cqpoll_cq_is_armed(NULL), "NULL is not armed");
	TEST_ASSERT(cqpoll_cq_priv(NULL) == NULL, "NULL has no priv");
	cqpoll_cq_destroy(NULL);
	TEST_ASSERT_EQ(cqpoll_arm_semantics_parse(NULL, &arm), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_arm_semantics_parse("edge", NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_arm_semantics_parse("sideways", &arm), -EINVAL);
	TEST_ASSERT(strcmp(cqpoll_arm_semantics_name((enum cqpoll_arm_semantics)42),
			   "unknown") == 0, "out-of-range name");

	incomplete.arm = NULL;
	errno = 0;
	TEST_ASSERT(cqpoll_cq_alloc(&incomplete, mock_poll, &m, &p) == NULL &&
		    errno == EINVAL, "an ops table without arm is refused");
	TEST_ASSERT(cqpoll_cq_alloc(&mock_ops, NULL, &m, &p) == NULL && errno == EINVAL,
		    "no poll function");
	p.arm = (enum cqpoll_arm_semantics)3;
	TEST_ASSERT(cqpoll_cq_alloc(&mock_ops, mock_poll, &m, &p) == NULL &&
		    errno == EINVAL, "unknown arm semantics");

	cq = mock_cq(&m, CQPOLL_ARM_EDGE, 0);
	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, NULL, 4), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 0), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 0), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 0), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, -1), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 3600001), -EINVAL);
	/* Not armed: sleeping could sleep through a completion. */
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 10), -EAGAIN);
	TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), -ENOTSUP);
	TEST_ASSERT_EQ(m.n_arm, 0);
	TEST_ASSERT(cqpoll_cq_driver(cq) == &mock_ops, "driver table");
	/* A handle of another driver is refused by the sw producer. */
	TEST_ASSERT_EQ(cqpoll_sw_post(cq, c), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_sw_emu_set_hook(cq, CQPOLL_SW_HOOK_AFTER_ARM, NULL, NULL),
		       -EINVAL);
	return drop(cq, &m);
}

static int
test_names(void)
{
	enum cqpoll_arm_semantics a, b;

	for (a = CQPOLL_ARM_LEVEL; a <= CQPOLL_ARM_REPORT_MISSED; a++) {
		TEST_ASSERT_EQ(cqpoll_arm_semantics_parse(cqpoll_arm_semantics_name(a), &b), 0);
		TEST_ASSERT_EQ(a, b);
	}
	TEST_ASSERT(strlen(cqpoll_version()) >= 5, "version string");
	return TEST_PASS;
}

/* Expected device traces: p = empty poll, P = poll with results, A = arm. */
static int
check_sequence(enum cqpoll_arm_semantics arm, const int *polls, const int *arms,
	       int expect_ret, const char *expect_trace, int expect_armed)
{
	struct cqpoll_completion c[8];
	struct mock m;
	struct cqpoll_cq *cq = mock_cq(&m, arm, 0);
	int r, i;

	TEST_ASSERT(cq != NULL, "create");
	for (i = 0; i < 16; i++) {
		m.poll_script[i] = polls[i];
		m.arm_script[i] = arms[i];
	}
	r = cqpoll_poll_and_arm(cq, c, 8);
	TEST_ASSERT_EQ(r, expect_ret);
	m.trace[m.trace_len] = '\0';
	TEST_ASSERT(strcmp(m.trace, expect_trace) == 0, "%s: trace %s, expected %s",
		    cqpoll_arm_semantics_name(arm), m.trace, expect_trace);
	TEST_ASSERT_EQ(cqpoll_cq_is_armed(cq), expect_armed);
	return drop(cq, &m);
}

static int
test_sequences(void)
{
	static const int none[16];
	static const int first_full[16] = { 3 };
	static const int second_full[16] = { 0, 2 };
	static const int third_full[16] = { 0, 0, 1 };
	static const int miss_twice[16] = { 1, 1, 0 };

	/* Completions first: returned, nothing armed. */
	if (check_sequence(CQPOLL_ARM_EDGE, first_full, none, 3, "P", 0) ||
	    check_sequence(CQPOLL_ARM_LEVEL, first_full, none, 3, "P", 0) ||
	    check_sequence(CQPOLL_ARM_REPORT_MISSED, first_full, none, 3, "P", 0))
		return TEST_FAIL;
	/* Level: the device covers what is already there; no second poll. */
	if (check_sequence(CQPOLL_ARM_LEVEL, none, none, 0, "pA", 1))
		return TEST_FAIL;
	/* Edge: always poll after the arm; what it finds is returned, armed. */
	if (check_sequence(CQPOLL_ARM_EDGE, none, none, 0, "pAp", 1) ||
	    check_sequence(CQPOLL_ARM_EDGE, second_full, none, 2, "pAP", 1))
		return TEST_FAIL;
	/* Report-missed: no report, done; reports loop until a clean arm. */
	if (check_sequence(CQPOLL_ARM_REPORT_MISSED, none, none, 0, "pA", 1) ||
	    check_sequence(CQPOLL_ARM_REPORT_MISSED, none, miss_twice, 0, "pApApA", 1) ||
	    check_sequence(CQPOLL_ARM_REPORT_MISSED, third_full, miss_twice, 1, "pApAP", 0))
		return TEST_FAIL;
	/* A level driver that reports a miss is handled the same way. */
	if (check_sequence(CQPOLL_ARM_LEVEL, none, miss_twice, 0, "pApApA", 1))
		return TEST_FAIL;
	return TEST_PASS;
}

static int
test_armed_until_event(void)
{
	struct cqpoll_completion c[8];
	struct cqpoll_cq_stats st;
	struct mock m;
	struct cqpoll_cq *cq = mock_cq(&m, CQPOLL_ARM_EDGE, 0);

	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
	/* Still armed: no second doorbell. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
	TEST_ASSERT_EQ(m.n_arm, 1);
	/* Timeout: still armed, the wait may be repeated. */
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1), 0);
	TEST_ASSERT(cqpoll_cq_is_armed(cq), "armed after a timeout");
	mock_raise(&m, 1);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
	TEST_ASSERT(!cqpoll_cq_is_armed(cq), "an event disarms");
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 10), -EAGAIN);
	/* The first poll after the event finds nothing: spurious. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
	TEST_ASSERT_EQ(m.n_arm, 2);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.events, 1);
	TEST_ASSERT_EQ(st.spurious_events, 1);
	TEST_ASSERT_EQ(st.waits, 2);
	TEST_ASSERT_EQ(st.wait_timeouts, 1);
	TEST_ASSERT_EQ(st.arms, 2);
	TEST_ASSERT_EQ(st.polls, 5);
	TEST_ASSERT_EQ(st.empty_polls, 5);
	TEST_ASSERT_EQ(cqpoll_cq_stats_reset(cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.polls + st.events + st.arms + st.waits, 0);
	return drop(cq, &m);
}

static int
test_event_ack_batching(void)
{
	struct cqpoll_cq_info info;
	struct mock m;
	struct cqpoll_cq *cq = mock_cq(&m, CQPOLL_ARM_EDGE, 4);
	int i;

	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.event_ack_batch, 4);
	TEST_ASSERT(strcmp(info.driver, "mock") == 0, "driver name");
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 0);
	for (i = 0; i < 3; i++) {
		mock_raise(&m, 1);
		TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 1);
	}
	TEST_ASSERT_EQ(m.ack_calls, 0);
	mock_raise(&m, 1);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 1);
	TEST_ASSERT_EQ(m.ack_calls, 1);
	TEST_ASSERT_EQ(m.acked, 4);
	mock_raise(&m, 1);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 1);
	TEST_ASSERT_EQ(cqpoll_cq_event_ack(cq), 0);
	TEST_ASSERT_EQ(m.acked, 5);
	mock_raise(&m, 2);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 2);
	/* Destroy acknowledges the rest: verbs would block otherwise. */
	cqpoll_cq_destroy(cq);
	TEST_ASSERT_EQ(m.acked, 7);
	close(m.efd);
	return TEST_PASS;
}

static void
ignore_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
		   unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	(void)n;
	(void)arg;
}

/*
 * A report-missed device that says "missed" on every arm while its polls find
 * nothing: poll-and-arm gives up after a bounded number of arms with -EAGAIN
 * (not armed), and a group does not sleep on such a CQ. The unbounded loop
 * this replaces is caught by the mock (-ELOOP after 100000 arms).
 */
static int
test_missed_reports_bounded(void)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					.wait_timeout_ms = 1000 };
	struct cqpoll_completion c[8];
	struct cqpoll_cq_stats st;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	struct mock m;

	cq = mock_cq(&m, CQPOLL_ARM_REPORT_MISSED, 0);
	TEST_ASSERT(cq != NULL, "create");
	m.n_arm = 16; /* no script: every arm reports a miss */
	m.arm_after = 1;
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), -EAGAIN);
	TEST_ASSERT(!cqpoll_cq_is_armed(cq), "not armed");
	TEST_ASSERT_EQ(m.arm_calls, 64);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.missed_reports, 64);
	/* The next call tries again, and a clean arm ends it as usual. */
	m.arm_after = 0;
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
	TEST_ASSERT(cqpoll_cq_is_armed(cq), "armed");
	TEST_ASSERT_EQ(drop(cq, &m), TEST_PASS);

	/* A group never sleeps on a CQ it could not arm. */
	cq = mock_cq(&m, CQPOLL_ARM_REPORT_MISSED, 0);
	TEST_ASSERT(cq != NULL, "create");
	m.n_arm = 16;
	m.arm_after = 1;
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(g != NULL, "group");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, ignore_completions, NULL), 0);
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), -EAGAIN);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), -EAGAIN);
	m.arm_after = 0;
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_remove(g, cq), 0);
	cqpoll_group_destroy(g);
	return drop(cq, &m);
}

/*
 * The same device in a busy group whose idle CQs go cold: a CQ that could
 * not be armed stays hot (polled every iteration) and the loop goes on; it
 * goes cold once an arm takes. The group must not stop with -EAGAIN.
 */
static int
test_missed_reports_busy_cold(void)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_BUSY,
					.cold_us = 100 };
	struct cqpoll_group_stats gs;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	struct mock m;
	unsigned int i;

	cq = mock_cq(&m, CQPOLL_ARM_REPORT_MISSED, 0);
	TEST_ASSERT(cq != NULL, "create");
	m.n_arm = 16; /* no script: every arm reports a miss */
	m.arm_after = 1;
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(g != NULL, "group");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, ignore_completions, NULL), 0);
	/* Idle for longer than cold_us before each iteration. */
	for (i = 0; i < 3; i++) {
		usleep(1000);
		TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	}
	TEST_ASSERT(m.arm_calls >= 64, "%u arms", m.arm_calls);
	TEST_ASSERT(!cqpoll_cq_is_armed(cq), "not armed");
	TEST_ASSERT_EQ(cqpoll_group_stats_get(g, &gs), 0);
	TEST_ASSERT_EQ(gs.cold_arms, 0);
	/* The iteration's clock is the end of the one before: a few may pass. */
	m.arm_after = 0;
	for (i = 0; i < 8 && !cqpoll_cq_is_armed(cq); i++) {
		usleep(1000);
		TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	}
	TEST_ASSERT(cqpoll_cq_is_armed(cq), "armed");
	TEST_ASSERT_EQ(cqpoll_group_stats_get(g, &gs), 0);
	TEST_ASSERT_EQ(gs.cold_arms, 1);
	TEST_ASSERT_EQ(cqpoll_group_remove(g, cq), 0);
	cqpoll_group_destroy(g);
	return drop(cq, &m);
}

/*
 * CQ states (contract.md, section 11): names and errnos, a report from
 * another party delivers what the CQ holds before the errno, a wait never
 * sleeps on a failed CQ, a group refuses one, and the callback's rules.
 */
static void
noop_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
	void *arg)
{
	(void)cq;
	(void)c;
	(void)n;
	(void)arg;
}

static void
noop_failure(struct cqpoll_group *g, struct cqpoll_cq *cq,
	     const struct cqpoll_cq_failure *f, void *arg)
{
	(void)g;
	(void)cq;
	(void)f;
	(void)arg;
}

static int
test_cq_states(void)
{
	static const int errnos[] = { 0, -EOVERFLOW, -ENODEV, -ENETDOWN, -ESHUTDOWN,
				      -EBADF, -EIO };
	struct cqpoll_completion c[4], p = { .wr_id = 1 };
	struct cqpoll_cq_failure f;
	struct cqpoll_cq_info info;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	unsigned int i;
	uint64_t t0;

	for (i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		TEST_ASSERT_EQ(cqpoll_cq_state_errno((enum cqpoll_cq_state)i), errnos[i]);
	TEST_ASSERT_EQ(cqpoll_cq_state_errno((enum cqpoll_cq_state)99), -EINVAL);
	TEST_ASSERT(strcmp(cqpoll_cq_state_name(CQPOLL_CQ_STATE_DEVICE_LOST),
			   "device-lost") == 0, "name");
	TEST_ASSERT(strcmp(cqpoll_cq_state_name((enum cqpoll_cq_state)99), "unknown") == 0,
		    "unknown");
	TEST_ASSERT_EQ(cqpoll_cq_state_get(NULL, &f), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_fail(NULL, -EIO, NULL), -EINVAL);

	cq = cqpoll_sw_cq_create(NULL);
	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_cq_state_get(cq, &f), CQPOLL_CQ_STATE_OK);
	TEST_ASSERT(f.error == 0 && f.cause == NULL, "ok has no cause");
	TEST_ASSERT_EQ(cqpoll_cq_fail(cq, 5, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_sw_post(cq, &p), 0);
	TEST_ASSERT_EQ(cqpoll_sw_post(cq, &p), 0);
	/* Reported failed by someone else (an async event reader). */
	TEST_ASSERT_EQ(cqpoll_cq_fail(cq, -ENODEV, "test: device gone"), 0);
	TEST_ASSERT_EQ(cqpoll_cq_fail(cq, -EOVERFLOW, "test: again"), -EALREADY);
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.state, CQPOLL_CQ_STATE_DEVICE_LOST);
	TEST_ASSERT_EQ(cqpoll_cq_state_get(cq, &f), CQPOLL_CQ_STATE_DEVICE_LOST);
	TEST_ASSERT(f.error == -ENODEV && strcmp(f.cause, "test: device gone") == 0,
		    "cause %s", f.cause);
	/* Not drained: a wait says "poll it", at once. */
	t0 = test_now_ns();
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 2000), 1);
	TEST_ASSERT(test_now_ns() - t0 < 100000000ull, "no sleep");
	/* What it held first, then the errno, for good. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 1), 1);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), -ENODEV);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), -ENODEV);
	TEST_ASSERT(!cqpoll_cq_is_armed(cq), "a dead CQ is not armed");
	t0 = test_now_ns();
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 2000), -ENODEV);
	TEST_ASSERT(test_now_ns() - t0 < 100000000ull, "no sleep");
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 1);
	/* A group refuses a dead CQ; the callback's registration rules. */
	g = cqpoll_group_create(NULL);
	TEST_ASSERT(g != NULL, "group");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, noop_cb, NULL), -ENODEV);
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_register(g, NULL, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_unregister(g, noop_failure, NULL), -ENOENT);
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_register(g, noop_failure, NULL), 0);
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_register(g, noop_failure, NULL), -EEXIST);
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_unregister(g, noop_failure, g), -ENOENT);
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_unregister(g, noop_failure, NULL), 0);
	TEST_ASSERT_EQ(cqpoll_group_failed_count(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_failed_count(NULL), 0);
	cqpoll_group_destroy(g);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_ops_size),
	TEST_CASE(test_bad_arguments),
	TEST_CASE(test_cq_states),
	TEST_CASE(test_names),
	TEST_CASE(test_sequences),
	TEST_CASE(test_missed_reports_bounded),
	TEST_CASE(test_missed_reports_busy_cold),
	TEST_CASE(test_armed_until_event),
	TEST_CASE(test_event_ack_batching),
};

TEST_MAIN("api", cases)
