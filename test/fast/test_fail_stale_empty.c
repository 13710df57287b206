/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A failure reported from elsewhere (cqpoll_cq_fail()) is latched only by a
 * poll that found the CQ drained, not by one whose empty read came before
 * the device's last entries (doc/guides/contract.md, section 11, "What it
 * held comes first"). cqpoll_poll_burst() reads the CQ, then looks for a
 * report; a consumer preempted between the two lets the device write its
 * last entries and report the failure in between, and a latch on that
 * stale "empty" swaps the poll for the errno with the entries unread.
 *
 * The CQ here is a driver whose poll, when told, does exactly that: finds
 * its ring empty, then (standing for the device thread while the consumer
 * was preempted) writes an entry and reports the failure, and returns 0.
 * The entry must come out of a later poll, before the errno.
 *
 * usage: test_fail_stale_empty [--expect-fail]
 *
 * --expect-fail is the negative control's verdict: built against a
 * test-only library that latches on any empty poll
 * (-DCQPOLL_MUTANT_LATCH_STALE_EMPTY=1), the entry is lost and the check
 * must fail.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_test.h"

#define LAST_ID 77

struct stale {
	int efd;
	struct cqpoll_cq *cq;
	bool late_post; /* the next empty read lets the device post and fail */
	bool held;      /* the entry the device wrote */
};

static int
s_poll(void *priv, struct cqpoll_completion *c, unsigned int n)
{
	struct stale *q = priv;

	if (n == 0)
		return 0;
	if (q->held) {
		q->held = false;
		memset(c, 0, sizeof(*c));
		c->wr_id = LAST_ID;
		c->flags = CQPOLL_COMPLETION_F_WR_ID;
		return 1;
	}
	/* Empty. Then, before this poll's caller looks for a report: */
	if (q->late_post) {
		q->late_post = false;
		q->held = true;
		if (cqpoll_cq_fail(q->cq, -ENODEV, "failed after its last entry") != 0)
			abort();
	}
	return 0;
}

static int
s_arm(void *priv)
{
	(void)priv;
	return 0;
}

static int
s_event_fd(void *priv)
{
	return ((struct stale *)priv)->efd;
}

static int
s_event_get(void *priv)
{
	uint64_t v;

	if (read(((struct stale *)priv)->efd, &v, sizeof(v)) != sizeof(v))
		return errno == EAGAIN ? 0 : -errno;
	return 1;
}

static void
s_destroy(void *priv)
{
	close(((struct stale *)priv)->efd);
}

static const struct cqpoll_driver_ops stale_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "stale",
	.arm = s_arm,
	.event_fd = s_event_fd,
	.event_get = s_event_get,
	.destroy = s_destroy,
};

int
main(int argc, char **argv)
{
	struct cqpoll_cq_params p = { .arm = CQPOLL_ARM_EDGE, .size = 64,
				      .flags = CQPOLL_CQ_PARAMS_F_NO_FIRED };
	bool expect_fail = argc > 1 && strcmp(argv[1], "--expect-fail") == 0;
	struct cqpoll_completion c[4];
	struct stale q = { .late_post = true };
	int r[4], i, got = 0, ok;

	if (argc > 1 && !expect_fail) {
		fprintf(stderr, "usage: %s [--expect-fail]\n", argv[0]);
		return 2;
	}
	q.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	q.cq = cqpoll_cq_alloc(&stale_ops, s_poll, &q, &p);
	if (q.efd < 0 || q.cq == NULL) {
		fprintf(stderr, "cq: %s\n", strerror(errno));
		return TEST_FAIL;
	}
	for (i = 0; i < 4; i++) {
		c[0].wr_id = 0;
		r[i] = cqpoll_poll_burst(q.cq, c, 4);
		if (r[i] == 1 && c[0].wr_id == LAST_ID)
			got++;
	}
	printf("fail-stale-empty: polls %d %d %d %d, the last entry %s\n",
	       r[0], r[1], r[2], r[3], got == 1 ? "delivered" : "lost");
	/* Empty (stale), the entry, then the errno within two polls. */
	ok = r[0] == 0 && got == 1 && r[1] == 1 &&
	     (r[2] == -ENODEV || (r[2] == 0 && r[3] == -ENODEV));
	cqpoll_cq_destroy(q.cq);
	if (expect_fail)
		return ok ? TEST_FAIL : TEST_PASS;
	return ok ? TEST_PASS : TEST_FAIL;
}
