/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poll-and-arm contract, deterministically: a completion is posted at
 * each point of the transition into sleep (before it, inside the arm before
 * and after it takes effect, and after poll-and-arm returned), for every arm
 * semantics. After the transition, the consumer must either have the
 * completion or be certain to get an event for it.
 *
 * The same check runs the naive transition (arm, then sleep) as the negative
 * control: it must catch the lost wake-up the naive code causes, or the check
 * proves nothing.
 */

#include <errno.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

enum inject {
	INJECT_BEFORE_POLL,   /* already there when the transition starts */
	INJECT_BEFORE_ARM,    /* between the last empty poll and the arm */
	INJECT_AFTER_ARM,     /* the arm is in effect; the final poll not done */
	INJECT_BEFORE_SLEEP,  /* transition done, not asleep yet */
	INJECT_COUNT,
};

static const char *const inject_names[] = {
	"before-poll", "before-arm", "after-arm", "before-sleep",
};

struct scenario {
	struct cqpoll_cq *cq;
	int posts_left;
	int posted;
};

static void
post_from_hook(void *arg)
{
	struct scenario *s = arg;
	struct cqpoll_completion c = { .wr_id = 0 };

	/* All at once, at the first time the transition passes this point. */
	while (s->posts_left > 0) {
		c.wr_id = (uint64_t)s->posted;
		if (cqpoll_sw_emu_post(s->cq, &c) != 0)
			return;
		s->posts_left--;
		s->posted++;
	}
}

/*
 * Run one transition with @p npost completions posted at @p where.
 * Sets *lost when the consumer ends up asleep with a completion it will not
 * be woken for: the device oracle says so, or the wait times out with
 * completions still in the CQ.
 */
static int
run_transition(enum cqpoll_arm_semantics arm, int keeps_armed, enum inject where,
	       int npost, int naive, int *lost)
{
	struct cqpoll_sw_emu_conf conf = { .size = 16, .arm = arm };
	struct cqpoll_completion c[16];
	struct scenario s = { .posts_left = npost };
	int consumed = 0, r, w, i;

	conf.faults.report_missed_keeps_armed = (uint32_t)keeps_armed;
	s.cq = cqpoll_sw_emu_cq_create(&conf);
	TEST_ASSERT(s.cq != NULL, "create");
	if (where == INJECT_BEFORE_POLL)
		post_from_hook(&s);
	else if (where == INJECT_BEFORE_ARM)
		cqpoll_sw_emu_set_hook(s.cq, CQPOLL_SW_HOOK_BEFORE_ARM, post_from_hook, &s);
	else if (where == INJECT_AFTER_ARM)
		cqpoll_sw_emu_set_hook(s.cq, CQPOLL_SW_HOOK_AFTER_ARM, post_from_hook, &s);

	if (naive) {
		while ((r = cqpoll_poll_burst(s.cq, c, 16)) > 0)
			consumed += r;
		TEST_ASSERT_EQ(r, 0);
		TEST_ASSERT_EQ(cqpoll_cq_arm_naive(s.cq), 0);
	} else {
		for (i = 0; i < 100 && (r = cqpoll_poll_and_arm(s.cq, c, 16)) > 0; i++)
			consumed += r;
		TEST_ASSERT_EQ(r, 0);
		TEST_ASSERT(cqpoll_cq_is_armed(s.cq), "0 means armed");
	}
	if (where == INJECT_BEFORE_SLEEP)
		post_from_hook(&s);
	TEST_ASSERT_EQ(s.posted, npost);

	*lost = cqpoll_cq_stranded(s.cq) == 1;
	if (consumed < s.posted) {
		/* Everything is in memory already: an event is now or never. */
		w = cqpoll_cq_wait(s.cq, 50);
		TEST_ASSERT(w >= 0, "wait: %d", w);
		if (w == 0)
			*lost = 1;
		while ((r = cqpoll_poll_burst(s.cq, c, 16)) > 0)
			consumed += r;
	}
	TEST_ASSERT_EQ(consumed, s.posted);
	cqpoll_cq_destroy(s.cq);
	return TEST_PASS;
}

static int
test_poll_and_arm_never_loses(void)
{
	enum cqpoll_arm_semantics arm;
	int where, npost, keeps, lost, runs = 0;

	for (arm = CQPOLL_ARM_LEVEL; arm <= CQPOLL_ARM_REPORT_MISSED; arm++)
		for (keeps = 0; keeps <= 1; keeps++)
			for (where = 0; where < INJECT_COUNT; where++)
				for (npost = 1; npost <= 3; npost++) {
					if (run_transition(arm, keeps, (enum inject)where,
							   npost, 0, &lost) != TEST_PASS)
						return TEST_FAIL;
					TEST_ASSERT(!lost, "lost wake-up: arm %s keeps %d at %s, %d posted",
						    cqpoll_arm_semantics_name(arm), keeps,
						    inject_names[where], npost);
					runs++;
				}
	TEST_ASSERT_EQ(runs, 3 * 2 * INJECT_COUNT * 3);
	return TEST_PASS;
}

/* Negative control: the same check catches the naive transition. */
static int
test_naive_loses(void)
{
	int lost, keeps;

	/* Edge: an entry between the last poll and the arm raises nothing. */
	if (run_transition(CQPOLL_ARM_EDGE, 0, INJECT_BEFORE_ARM, 1, 1, &lost) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT(lost, "naive edge transition must lose the wake-up");
	/* Report-missed: ignoring the report loses it, armed or not. */
	for (keeps = 0; keeps <= 1; keeps++) {
		if (run_transition(CQPOLL_ARM_REPORT_MISSED, keeps, INJECT_BEFORE_ARM,
				   1, 1, &lost) != TEST_PASS)
			return TEST_FAIL;
		TEST_ASSERT(lost, "naive report-missed (keeps %d) must lose it", keeps);
	}
	/* Level hardware covers the window by itself: naive is safe there. */
	if (run_transition(CQPOLL_ARM_LEVEL, 0, INJECT_BEFORE_ARM, 1, 1, &lost) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT(!lost, "level arm fires for entries already there");
	/* After the arm, even naive code is covered on every semantics. */
	if (run_transition(CQPOLL_ARM_EDGE, 0, INJECT_AFTER_ARM, 1, 1, &lost) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT(!lost, "entries after the arm fire");
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_poll_and_arm_never_loses),
	TEST_CASE(test_naive_loses),
};

TEST_MAIN("contract", cases)
