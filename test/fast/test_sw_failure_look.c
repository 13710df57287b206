/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A software CQ's poll gives an injected failure's errno only after every
 * entry written before the failure went out (doc/guides/contract.md,
 * section 11, "What it held comes first"), even an entry that became
 * visible between the poll's empty look and its read of the failure: the
 * device posting its last entry and then failing, in that window (as a
 * device thread that fails the CQ right after its last post may, the
 * device window of failure-overrun-sw). The emulator's hook at
 * CQPOLL_SW_HOOK_ERROR_LOOK makes the post and the failure land exactly
 * there: the poll must return the entry, and the next one the errno.
 *
 * usage: test_sw_failure_look [--expect-fail]
 *
 * --expect-fail is the negative control's verdict: built against a
 * test-only library whose poll gives the errno at once
 * (-DCQPOLL_MUTANT_SW_ERROR_NO_SECOND_LOOK=1), the entry is lost and the
 * check must fail.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cqpoll.h"
#include "cqpoll_sw_emu.h"
#include "cqpoll_test.h"

#define LAST_ID 42

struct window {
	struct cqpoll_cq *cq;
	int posted, failed;
};

/* The device, inside the consumer's look: its last post, then the failure. */
static void
post_then_fail(void *arg)
{
	struct window *w = arg;
	struct cqpoll_completion c = { .wr_id = LAST_ID, .byte_len = 64,
				       .opcode = CQPOLL_OP_RECV };

	/* Once: the post and the failure look at the failure too. */
	cqpoll_sw_emu_set_hook(w->cq, CQPOLL_SW_HOOK_ERROR_LOOK, NULL, NULL);
	w->posted = cqpoll_sw_emu_post(w->cq, &c);
	w->failed = cqpoll_sw_emu_fail(w->cq, -EOVERFLOW, NULL, 0, 0);
}

static int
check(enum cqpoll_arm_semantics arm)
{
	struct cqpoll_sw_emu_conf conf = { .size = 8, .arm = arm };
	struct cqpoll_completion c[4];
	struct window w = { 0 };
	int p1, p2, p3 = 0, ok;

	w.cq = cqpoll_sw_emu_cq_create(&conf);
	TEST_ASSERT(w.cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_sw_emu_set_hook(w.cq, CQPOLL_SW_HOOK_ERROR_LOOK,
					      post_then_fail, &w), 0);
	c[0].wr_id = 0;
	p1 = cqpoll_poll_burst(w.cq, c, 4);
	p2 = cqpoll_poll_burst(w.cq, c + 1, 3);
	/* The poll that finds it drained may latch the report first. */
	if (p2 == 0)
		p3 = cqpoll_poll_burst(w.cq, c + 1, 3);
	printf("  %-14s: post %d, fail %d; polls %d (wr_id %llu), %d, %d\n",
	       cqpoll_arm_semantics_name(arm), w.posted, w.failed, p1,
	       (unsigned long long)c[0].wr_id, p2, p3);
	ok = w.posted == 0 && w.failed == 0 && p1 == 1 && c[0].wr_id == LAST_ID &&
	     (p2 == -EOVERFLOW || (p2 == 0 && p3 == -EOVERFLOW));
	if (!ok)
		printf("%s: the entry posted before the failure was %s\n",
		       cqpoll_arm_semantics_name(arm),
		       p1 == 1 ? "delivered, the errno not after it" : "lost");
	cqpoll_cq_destroy(w.cq);
	return ok ? TEST_PASS : TEST_FAIL;
}

int
main(int argc, char **argv)
{
	static const enum cqpoll_arm_semantics arms[] = {
		CQPOLL_ARM_LEVEL, CQPOLL_ARM_EDGE, CQPOLL_ARM_REPORT_MISSED,
	};
	bool expect_fail = argc > 1 && strcmp(argv[1], "--expect-fail") == 0;
	unsigned int i, failed = 0, n = sizeof(arms) / sizeof(arms[0]);

	if (argc > 1 && !expect_fail) {
		fprintf(stderr, "usage: %s [--expect-fail]\n", argv[0]);
		return 2;
	}
	for (i = 0; i < n; i++)
		if (check(arms[i]) != TEST_PASS)
			failed++;
	printf("sw-failure-second-look: %u of %u failed%s\n", failed, n,
	       expect_fail ? " (negative control: every one must fail)" : "");
	if (expect_fail)
		return failed == n ? TEST_PASS : TEST_FAIL;
	return failed != 0 ? TEST_FAIL : TEST_PASS;
}
