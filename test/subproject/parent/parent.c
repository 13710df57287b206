/* SPDX-License-Identifier: BSD-3-Clause */
/* A program of the parent project: one completion through a software CQ. */

#include <stdio.h>

#include <cqpoll.h>
#include <cqpoll_sw.h>

int
main(void)
{
	struct cqpoll_completion in = { .wr_id = 42 }, out;
	struct cqpoll_cq *cq = cqpoll_sw_cq_create(NULL);
	int n;

	if (cq == NULL || cqpoll_sw_post(cq, &in) != 0) {
		fprintf(stderr, "parent: cannot create or post\n");
		return 1;
	}
	n = cqpoll_poll_burst(cq, &out, 1);
	cqpoll_cq_destroy(cq);
	if (n != 1 || out.wr_id != 42) {
		fprintf(stderr, "parent: polled %d, wr_id %llu\n", n,
			(unsigned long long)out.wr_id);
		return 1;
	}
	printf("parent: cqpoll %s as a subproject: ok\n", cqpoll_version());
	return 0;
}
