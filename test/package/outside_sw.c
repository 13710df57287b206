/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An application outside the tree that uses only the core and the software
 * CQ, linked by test/package/check-install.sh through pkg-config [--static]
 * --libs cqpoll and run where every stack library (libibverbs, libmlx5,
 * liburing, libfabric, UCX) is hidden: post, poll, poll-and-arm, post again
 * and sleep on the event. Prints "sw: ..." and exits 0 when each step gives
 * what the contract says.
 */

#include <stdio.h>
#include <string.h>

#include <cqpoll.h>
#include <cqpoll_sw.h>

static int
post(struct cqpoll_cq *cq, uint64_t id)
{
	struct cqpoll_completion c;

	memset(&c, 0, sizeof(c));
	c.wr_id = id;
	c.flags = CQPOLL_COMPLETION_F_WR_ID;
	return cqpoll_sw_post(cq, &c);
}

int
main(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq;
	int n, r;

	cq = cqpoll_sw_cq_create(NULL);
	if (cq == NULL) {
		perror("sw: cqpoll_sw_cq_create");
		return 1;
	}
	if (post(cq, 1) != 0 || post(cq, 2) != 0) {
		fprintf(stderr, "sw: cqpoll_sw_post failed\n");
		return 1;
	}
	n = cqpoll_poll_burst(cq, c, 4);
	if (n != 2 || c[0].wr_id != 1 || c[1].wr_id != 2) {
		fprintf(stderr, "sw: polled %d completions, expected wr_id 1 and 2\n", n);
		return 1;
	}
	while ((n = cqpoll_poll_and_arm(cq, c, 4)) > 0)
		;
	if (n != 0) {
		fprintf(stderr, "sw: cqpoll_poll_and_arm: %s\n", strerror(-n));
		return 1;
	}
	if (post(cq, 3) != 0) {
		fprintf(stderr, "sw: cqpoll_sw_post failed\n");
		return 1;
	}
	/* Armed and posted to: the event is there, the sleep ends at once. */
	r = cqpoll_cq_wait(cq, 5000);
	n = cqpoll_poll_burst(cq, c, 4);
	if (r != 1 || n != 1 || c[0].wr_id != 3) {
		fprintf(stderr, "sw: wait gave %d then %d completions\n", r, n);
		return 1;
	}
	r = cqpoll_cq_destroy(cq);
	if (r != 0) {
		fprintf(stderr, "sw: cqpoll_cq_destroy: %s\n", strerror(-r));
		return 1;
	}
	printf("sw: posted, polled, armed, woken (cqpoll %s)\n", cqpoll_version());
	return 0;
}
