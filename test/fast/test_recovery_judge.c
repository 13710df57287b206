/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recovery-judge: emu/judge/cqpoll_recovery_judge.h, the late-or-lost rule
 * the tests and testpmd-cq share, and its trace hook.
 *
 * The expected verdicts follow from epoll_wait(2): an event raised before
 * the timeout ends the wait, so work whose post returned before the
 * sleep's start plus its timeout, found by the timeout, lost its event;
 * while polling, the net's period is the timeout. Each check is chosen on
 * the safe side of the 1 ms slack by the clock reads around the call, so a
 * loaded machine cannot move a verdict.
 *
 * The hook is driven by calling the installed hook's callbacks with the
 * arguments the library passes (fake CQ and group pointers: the judge only
 * compares them): what was installed before must see each event, with its
 * own arg.
 *
 * Negative controls, the same cases against the judge built with
 * -DCQPOLL_RJ_MUTANT_ALL_LOST, which counts every recovery as lost (the
 * library's own count without post times), and with
 * -DCQPOLL_RJ_MUTANT_NO_CHAIN, which drops the hook it was installed over
 * (recovery-judge-control-all-lost, -no-chain): both must fail.
 */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "cqpoll_recovery_judge.h"
#include "cqpoll_trace.h"
#include "cqpoll_test.h"

#define MS 1000000ull

static char fake_cq[2], fake_group;
#define CQ_A ((const struct cqpoll_cq *)&fake_cq[0])
#define CQ_B ((const struct cqpoll_cq *)&fake_cq[1])
#define GROUP ((const struct cqpoll_group *)&fake_group)

/* What the caller's side saw. */
struct side {
	uint64_t t_end;
	unsigned int late, lost;
	uint64_t early;
};

static int
post_end(void *arg, const struct cqpoll_cq *cq, uint64_t *t_end)
{
	struct side *s = arg;

	if (cq != CQ_A)
		return 0;
	*t_end = s->t_end;
	return 1;
}

static void
verdict(void *arg, const struct cqpoll_cq *cq, enum cqpoll_rj_verdict v,
	uint64_t early_ns)
{
	struct side *s = arg;

	(void)cq;
	if (v == CQPOLL_RJ_LOST) {
		s->lost++;
		s->early = early_ns;
	} else {
		s->late++;
	}
}

/* The hook installed before the judge: each callback counted, arg checked. */
static unsigned int prev_calls, prev_bad_arg;
static int prev_tag;

static void
prev_arm(void *arg, const struct cqpoll_cq *cq, int missed)
{
	(void)cq, (void)missed;
	prev_calls++, prev_bad_arg += arg != &prev_tag;
}

static void
prev_transition(void *arg, const struct cqpoll_group *g, uint32_t active,
		uint32_t n, uint32_t found)
{
	(void)g, (void)active, (void)n, (void)found;
	prev_calls++, prev_bad_arg += arg != &prev_tag;
}

static void
prev_sleep(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	   int timeout_ms)
{
	(void)g, (void)cq, (void)timeout_ms;
	prev_calls++, prev_bad_arg += arg != &prev_tag;
}

static void
prev_wake(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	  enum cqpoll_trace_wake why, uint64_t asleep_ns, uint32_t completions)
{
	(void)g, (void)cq, (void)why, (void)asleep_ns, (void)completions;
	prev_calls++, prev_bad_arg += arg != &prev_tag;
}

static void
prev_mode_change(void *arg, const struct cqpoll_group *g,
		 enum cqpoll_group_mode from, enum cqpoll_group_mode to)
{
	(void)g, (void)from, (void)to;
	prev_calls++, prev_bad_arg += arg != &prev_tag;
}

static void
prev_policy_decision(void *arg, const struct cqpoll_group *g, uint32_t completions,
		     enum cqpoll_policy_action action)
{
	(void)g, (void)completions, (void)action;
	prev_calls++, prev_bad_arg += arg != &prev_tag;
}

static void
prev_cq_state(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	      enum cqpoll_cq_state state, int error)
{
	(void)g, (void)cq, (void)state, (void)error;
	prev_calls++, prev_bad_arg += arg != &prev_tag;
}

static const struct cqpoll_trace_hook prev_hook = {
	.arm = prev_arm,
	.transition = prev_transition,
	.sleep = prev_sleep,
	.wake = prev_wake,
	.mode_change = prev_mode_change,
	.policy_decision = prev_policy_decision,
	.cq_state = prev_cq_state,
	.arg = &prev_tag,
};

static const struct cqpoll_trace_hook *
judge_hook(void)
{
	static struct cqpoll_rj_watch none;

	/* The judge's hook goes in over prev_hook at the first watch. */
	if (cqpoll_trace_get_hook() == &prev_hook) {
		cqpoll_rj_watch(&none);
		cqpoll_rj_unwatch();
	}
	return cqpoll_trace_get_hook();
}

static void
recover(const struct cqpoll_trace_hook *h, const struct cqpoll_cq *cq)
{
	h->wake(h->arg, NULL, cq, CQPOLL_TRACE_WAKE_RECOVERY, 0, 1);
}

static int
test_rule(void)
{
	struct cqpoll_rj_sleep asleep = { .asleep = 1, .t_sleep = 5000 * MS,
					  .timeout_ns = 100 * MS };
	struct cqpoll_rj_sleep polling = { .asleep = 0, .t_sleep = 5000 * MS,
					   .timeout_ns = 100 * MS };
	/* A sleep's timeout ends it after half of it at least (cqpoll_group.h). */
	uint64_t d = 5050 * MS, early = 7;

	TEST_ASSERT_EQ(cqpoll_rj_deadline(&asleep, 9000 * MS), d);
	TEST_ASSERT_EQ(cqpoll_rj_deadline(&polling, 9000 * MS), 8900 * MS);
	TEST_ASSERT_EQ(cqpoll_rj_deadline(&polling, 50 * MS), 0);
	/* Still being posted: late. */
	TEST_ASSERT_EQ(cqpoll_rj_judge(0, d, &early), CQPOLL_RJ_LATE);
	TEST_ASSERT_EQ(early, 0);
	/* Within the slack of the deadline, or after it: late. */
	TEST_ASSERT_EQ(cqpoll_rj_judge(d - CQPOLL_RJ_SLACK_NS, d, NULL), CQPOLL_RJ_LATE);
	TEST_ASSERT_EQ(cqpoll_rj_judge(d + 1, d, NULL), CQPOLL_RJ_LATE);
	/* Before it by more than the slack: lost, by how much. */
	TEST_ASSERT_EQ(cqpoll_rj_judge(d - CQPOLL_RJ_SLACK_NS - 1, d, &early), CQPOLL_RJ_LOST);
	TEST_ASSERT_EQ(early, CQPOLL_RJ_SLACK_NS + 1);
	TEST_ASSERT_EQ(cqpoll_rj_judge(1, d, &early), CQPOLL_RJ_LOST);
	TEST_ASSERT_EQ(early, d - 1);
	return TEST_PASS;
}

/* After a sleep: the deadline is the sleep's start plus its timeout. */
static int
test_after_sleep(void)
{
	const struct cqpoll_trace_hook *h = judge_hook();
	struct side s = { 0 };
	struct cqpoll_rj_watch w = { .post_end = post_end, .verdict = verdict, .arg = &s };
	uint64_t t0, t1;

	cqpoll_rj_watch(&w);
	t0 = test_now_ns();
	h->sleep(h->arg, NULL, CQ_A, 100);
	t1 = test_now_ns();
	/*
	 * The sleep's timeout may end it after half of it (the safety net's
	 * alarm is due within [T/2, T]): returned before that less the
	 * slack, lost.
	 */
	s.t_end = t0 + 50 * MS - CQPOLL_RJ_SLACK_NS - 1;
	recover(h, CQ_A);
	TEST_ASSERT(s.lost == 1 && s.late == 0, "lost %u late %u", s.lost, s.late);
	TEST_ASSERT(s.early > CQPOLL_RJ_SLACK_NS && s.early <= t1 - t0 + CQPOLL_RJ_SLACK_NS + 1,
		    "posted %llu ns early", (unsigned long long)s.early);
	/* Returned at the latest deadline: late, however long the call took. */
	s.t_end = t1 + 50 * MS;
	recover(h, CQ_A);
	/* After the alarm may have rung, before the full timeout: late. */
	s.t_end = t1 + 75 * MS;
	recover(h, CQ_A);
	/* Under way: late. */
	s.t_end = 0;
	recover(h, CQ_A);
	TEST_ASSERT(s.lost == 1 && s.late == 3, "lost %u late %u", s.lost, s.late);
	/* A CQ the caller does not judge: no verdict. */
	recover(h, CQ_B);
	TEST_ASSERT(s.lost == 1 && s.late == 3, "lost %u late %u", s.lost, s.late);
	cqpoll_rj_unwatch();
	return TEST_PASS;
}

/*
 * A group's wake-up or transition ends the sleep: the deadline is then the
 * judging time less the timeout (10 s here, so that no stall of the
 * machine moves a verdict).
 */
static int
test_while_polling(void)
{
	const struct cqpoll_trace_hook *h = judge_hook();
	struct side s = { 0 };
	struct cqpoll_rj_watch w = { .post_end = post_end, .verdict = verdict, .arg = &s };
	uint64_t t0;
	int end;

	cqpoll_rj_watch(&w);
	for (end = 0; end < 2; end++) {
		h->sleep(h->arg, GROUP, NULL, 10000);
		if (end == 0)
			h->wake(h->arg, GROUP, NULL, CQPOLL_TRACE_WAKE_RECOVERY, 0, 1);
		else
			h->transition(h->arg, GROUP, 1, 1, 1);
		t0 = test_now_ns();
		/* Younger than a period when found: late (asleep, it was lost). */
		s.t_end = t0 - 5000 * MS;
		recover(h, CQ_A);
		/* Older than a period: lost. */
		s.t_end = t0 - 10000 * MS - CQPOLL_RJ_SLACK_NS - 1;
		recover(h, CQ_A);
	}
	TEST_ASSERT(s.lost == 2 && s.late == 2, "lost %u late %u", s.lost, s.late);
	cqpoll_rj_unwatch();
	return TEST_PASS;
}

static void *
other_thread(void *arg)
{
	const struct cqpoll_trace_hook *h = arg;

	h->sleep(h->arg, NULL, CQ_A, 100);
	recover(h, CQ_A);
	return NULL;
}

/*
 * A thread's own watch serves that thread only; the process-wide one serves
 * the threads without their own.
 */
static int
test_threads(void)
{
	const struct cqpoll_trace_hook *h = judge_hook();
	struct side mine = { .t_end = 1 }, all = { .t_end = 1 };
	struct cqpoll_rj_watch wm = { .post_end = post_end, .verdict = verdict, .arg = &mine };
	struct cqpoll_rj_watch wa = { .post_end = post_end, .verdict = verdict, .arg = &all };
	pthread_t t;

	cqpoll_rj_watch(&wm);
	TEST_ASSERT_EQ(pthread_create(&t, NULL, other_thread, (void *)(uintptr_t)h), 0);
	pthread_join(t, NULL);
	TEST_ASSERT(mine.lost + mine.late == 0, "another thread's recovery judged here");
	cqpoll_rj_watch_all(&wa);
	TEST_ASSERT_EQ(pthread_create(&t, NULL, other_thread, (void *)(uintptr_t)h), 0);
	pthread_join(t, NULL);
	TEST_ASSERT(all.lost == 1 && mine.lost + mine.late == 0,
		    "process-wide: lost %u; this thread's: %u", all.lost,
		    mine.lost + mine.late);
	other_thread((void *)(uintptr_t)h);
	TEST_ASSERT(mine.lost == 1 && all.lost == 1, "this thread's watch first");
	cqpoll_rj_unwatch_all();
	cqpoll_rj_unwatch();
	other_thread((void *)(uintptr_t)h);
	TEST_ASSERT(mine.lost == 1 && all.lost == 1, "judged after the unwatch");
	return TEST_PASS;
}

/* What was installed before sees every event, with its own arg. */
static int
test_chain(void)
{
	const struct cqpoll_trace_hook *h = judge_hook();
	unsigned int before = prev_calls;

	TEST_ASSERT(h != &prev_hook, "the judge's hook is not installed");
	h->arm(h->arg, CQ_A, 0);
	h->transition(h->arg, GROUP, 1, 2, 0);
	h->sleep(h->arg, GROUP, NULL, 10);
	h->wake(h->arg, GROUP, NULL, CQPOLL_TRACE_WAKE_EVENT, 5, 1);
	h->mode_change(h->arg, GROUP, CQPOLL_GROUP_MODE_BUSY, CQPOLL_GROUP_MODE_INTERRUPT);
	h->policy_decision(h->arg, GROUP, 0, CQPOLL_POLICY_SLEEP);
	h->cq_state(h->arg, GROUP, CQ_A, CQPOLL_CQ_STATE_QUEUE_LOST, -EBADF);
	TEST_ASSERT_EQ(prev_calls - before, 7);
	TEST_ASSERT_EQ(prev_bad_arg, 0);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_rule),
	TEST_CASE(test_after_sleep),
	TEST_CASE(test_while_polling),
	TEST_CASE(test_threads),
	TEST_CASE(test_chain),
};

int
main(void)
{
	cqpoll_trace_set_hook(&prev_hook);
	return test_run("recovery-judge", cases, sizeof(cases) / sizeof(cases[0]));
}
