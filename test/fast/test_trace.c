/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core's trace hook without DPDK: each event fires where it should, with
 * the right arguments, from a group and from a lone CQ; with no hook (the
 * negative control) nothing is reported.
 */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_sw_emu.h"
#include "cqpoll_test.h"
#include "cqpoll_trace.h"

struct seen {
	unsigned int arms, transitions, sleeps, decisions_sleep, mode_changes;
	unsigned int wakes[CQPOLL_TRACE_WAKE_RECOVERY + 1];
	unsigned int cq_recoveries; /* a CQ's own recovery (no group) */
	const void *last_group, *last_cq;
	int last_timeout;
	uint32_t last_found, last_completions;
	enum cqpoll_group_mode from, to;
};

static struct seen seen;

static void
on_arm(void *arg, const struct cqpoll_cq *cq, int missed)
{
	(void)arg;
	(void)missed;
	seen.arms++;
	seen.last_cq = cq;
}

static void
on_transition(void *arg, const struct cqpoll_group *g, uint32_t active,
	      uint32_t n, uint32_t found)
{
	(void)arg;
	(void)active;
	(void)n;
	seen.transitions++;
	seen.last_group = g;
	seen.last_found = found;
}

static void
on_sleep(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	 int timeout_ms)
{
	(void)arg;
	seen.sleeps++;
	seen.last_group = g;
	seen.last_cq = cq;
	seen.last_timeout = timeout_ms;
}

static void
on_wake(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	enum cqpoll_trace_wake why, uint64_t asleep_ns, uint32_t completions)
{
	(void)arg;
	(void)asleep_ns;
	if (why == CQPOLL_TRACE_WAKE_RECOVERY && g == NULL) {
		seen.cq_recoveries++;
		return;
	}
	seen.wakes[why]++;
	seen.last_group = g;
	seen.last_cq = cq;
	seen.last_completions = completions;
}

static void
on_mode(void *arg, const struct cqpoll_group *g, enum cqpoll_group_mode from,
	enum cqpoll_group_mode to)
{
	(void)arg;
	(void)g;
	seen.mode_changes++;
	seen.from = from;
	seen.to = to;
}

static void
on_decision(void *arg, const struct cqpoll_group *g, uint32_t completions,
	    enum cqpoll_policy_action action)
{
	(void)arg;
	(void)g;
	(void)completions;
	if (action == CQPOLL_POLICY_SLEEP)
		seen.decisions_sleep++;
}

static const struct cqpoll_trace_hook hook = {
	.arm = on_arm,
	.transition = on_transition,
	.sleep = on_sleep,
	.wake = on_wake,
	.mode_change = on_mode,
	.policy_decision = on_decision,
};

static void
on_comp(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	*(unsigned int *)arg += n;
}

static int
post(struct cqpoll_cq *cq, uint64_t id)
{
	struct cqpoll_completion c = { .wr_id = id, .byte_len = 8 };

	return cqpoll_sw_post(cq, &c);
}

/* A group's transition, sleep, and wakes by timeout, event and thread. */
static int
group_events(bool hooked)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					.wait_timeout_ms = 1 };
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	unsigned int got = 0;

	memset(&seen, 0, sizeof(seen));
	TEST_ASSERT_EQ(cqpoll_trace_set_hook(hooked ? &hook : NULL), 0);
	cq = cqpoll_sw_cq_create(NULL);
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(cq != NULL && g != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, on_comp, &got), 0);

	/* Nothing there: arm, transition, sleep 1 ms, timeout. */
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	/* Armed and asleep in an external loop; a completion fires the arm. */
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 0);
	TEST_ASSERT_EQ(post(cq, 1), 0);
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), 1);
	/* Another thread's wake-up (here, this one) ends the next sleep. */
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0); /* re-arms, times out */
	TEST_ASSERT_EQ(cqpoll_group_wakeup(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	/* Adaptive, spin 0: the policy decides to sleep; then a mode change. */
	TEST_ASSERT_EQ(cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_ADAPTIVE), 0);
	TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "adaptive iteration");
	TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "adaptive iteration");
	TEST_ASSERT_EQ(got, 1);

	if (!hooked) {
		TEST_ASSERT(seen.arms + seen.transitions + seen.sleeps +
			    seen.mode_changes + seen.decisions_sleep +
			    seen.wakes[0] + seen.wakes[1] + seen.wakes[2] == 0,
			    "events reported without a hook");
	} else {
		TEST_ASSERT(seen.arms >= 2, "arms %u", seen.arms);
		TEST_ASSERT(seen.transitions >= 3, "transitions %u",
			    seen.transitions);
		TEST_ASSERT(seen.sleeps >= 3, "sleeps %u", seen.sleeps);
		TEST_ASSERT(seen.wakes[CQPOLL_TRACE_WAKE_TIMEOUT] >= 1, "timeout");
		TEST_ASSERT_EQ(seen.wakes[CQPOLL_TRACE_WAKE_EVENT], 1);
		/* The wake-up, and the kick of the mode change. */
		TEST_ASSERT(seen.wakes[CQPOLL_TRACE_WAKE_XTHREAD] >= 1, "xthread");
		TEST_ASSERT_EQ(seen.mode_changes, 1);
		TEST_ASSERT(seen.from == CQPOLL_GROUP_MODE_INTERRUPT &&
			    seen.to == CQPOLL_GROUP_MODE_ADAPTIVE, "mode change");
		TEST_ASSERT(seen.decisions_sleep >= 1, "no decision to sleep");
		TEST_ASSERT(seen.last_group == g, "group argument");
	}
	cqpoll_trace_set_hook(NULL);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_group_events(void)
{
	return group_events(true);
}

/* Negative control: the same run with no hook reports nothing. */
static int
test_group_no_hook(void)
{
	return group_events(false);
}

/* A lone CQ: arm, sleep in cqpoll_cq_wait() with its timeout, wakes. */
static int
test_cq_events(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq;

	memset(&seen, 0, sizeof(seen));
	cqpoll_trace_set_hook(&hook);
	cq = cqpoll_sw_cq_create(NULL);
	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(seen.arms, 1);
	TEST_ASSERT(seen.last_cq == cq, "arm's cq");
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1), 0);
	TEST_ASSERT(seen.sleeps == 1 && seen.last_timeout == 1 &&
		    seen.last_group == NULL, "sleep of a lone cq");
	TEST_ASSERT_EQ(seen.wakes[CQPOLL_TRACE_WAKE_TIMEOUT], 1);
	TEST_ASSERT_EQ(post(cq, 1), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
	TEST_ASSERT_EQ(seen.wakes[CQPOLL_TRACE_WAKE_EVENT], 1);
	TEST_ASSERT(seen.last_cq == cq, "wake's cq");
	cqpoll_trace_set_hook(NULL);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* Inside the arm: post a completion and consume its event behind our back. */
static void
post_and_steal(void *arg)
{
	struct cqpoll_cq *cq = arg;
	uint64_t v;
	static int fired;
	struct cqpoll_completion c = { .wr_id = 9, .byte_len = 8 };

	if (fired++ != 0)
		return;
	if (cqpoll_sw_emu_post(cq, &c) != 0 ||
	    read(cqpoll_cq_event_fd(cq), &v, sizeof(v)) != sizeof(v))
		abort();
}

/*
 * An event lost during the arm: the group's timeout finds the completion,
 * and the wake is reported as a recovery, not a plain timeout.
 */
static int
test_group_recovery(void)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					.wait_timeout_ms = 1 };
	struct cqpoll_sw_emu_conf sc = { .arm = CQPOLL_ARM_LEVEL };
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	unsigned int got = 0, i;

	memset(&seen, 0, sizeof(seen));
	/* The emulated sw CQ: its arm has a hook to lose the event in. */
	cq = cqpoll_sw_emu_cq_create(&sc);
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(cq != NULL && g != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, on_comp, &got), 0);
	TEST_ASSERT_EQ(cqpoll_sw_emu_set_hook(cq, CQPOLL_SW_HOOK_AFTER_ARM,
					  post_and_steal, cq), 0);
	cqpoll_trace_set_hook(&hook);
	for (i = 0; i < 10 && got == 0; i++)
		TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "run");
	cqpoll_trace_set_hook(NULL);
	TEST_ASSERT_EQ(got, 1);
	TEST_ASSERT_EQ(seen.wakes[CQPOLL_TRACE_WAKE_RECOVERY], 1);
	TEST_ASSERT_EQ(seen.wakes[CQPOLL_TRACE_WAKE_TIMEOUT], 0);
	TEST_ASSERT_EQ(seen.last_completions, 1);
	/* And the CQ that held the work says so, with no group. */
	TEST_ASSERT_EQ(seen.cq_recoveries, 1);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_names(void)
{
	TEST_ASSERT(strcmp(cqpoll_trace_wake_name(CQPOLL_TRACE_WAKE_RECOVERY),
			   "recovery") == 0, "recovery");
	TEST_ASSERT(strcmp(cqpoll_trace_wake_name((enum cqpoll_trace_wake)9),
			   "unknown") == 0, "out of range");
	TEST_ASSERT(cqpoll_trace_get_hook() == NULL, "no hook by default");
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_names),
	TEST_CASE(test_group_events),
	TEST_CASE(test_group_no_hook),
	TEST_CASE(test_cq_events),
	TEST_CASE(test_group_recovery),
};

TEST_MAIN("trace", cases)
