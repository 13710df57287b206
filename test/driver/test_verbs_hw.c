/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs driver on every real RDMA device found: create a CQ through the
 * production path, check that it polls empty, arms, and that the transition
 * and the safety-net sleep behave. No QP traffic: that needs a loopback pair
 * (testpmd-cq --dev=verbs:<ibdev>). Skips (77) when there is no device.
 */

#include <errno.h>

#include "cqpoll.h"
#include "cqpoll_ibv.h"
#include "cqpoll_test.h"
#include "cqpoll_verbs.h"

static int
one_device(struct ibv_device *dev)
{
	struct cqpoll_completion c[8];
	struct cqpoll_cq_stats st;
	struct ibv_context *ctx;
	struct cqpoll_cq *cq;

	ctx = ibv_open_device(dev);
	TEST_ASSERT(ctx != NULL, "%s: ibv_open_device: %s", ibv_get_device_name(dev),
		    strerror(errno));
	cq = cqpoll_verbs_cq_create(ctx, NULL);
	TEST_ASSERT(cq != NULL, "%s: create: %s", ibv_get_device_name(dev), strerror(errno));
	printf("%s: extended CQ: %d\n", ibv_get_device_name(dev), cqpoll_verbs_cq_is_ex(cq));
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 8), 0);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
	TEST_ASSERT(cqpoll_cq_is_armed(cq), "armed");
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 10), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.arms, 1);
	TEST_ASSERT_EQ(st.wait_timeouts, 1);
	cqpoll_cq_destroy(cq);
	TEST_ASSERT_EQ(ibv_close_device(ctx), 0);
	return TEST_PASS;
}

int
main(void)
{
	struct ibv_device **list;
	int n = 0, i, failed = 0;

	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0) {
		printf("no RDMA device: ibv_get_device_list() found none (%s); skipped\n",
		       list == NULL ? strerror(errno) : "empty list");
		if (list != NULL)
			ibv_free_device_list(list);
		return TEST_SKIP;
	}
	for (i = 0; i < n; i++) {
		int r = one_device(list[i]);

		printf("%-20s %s\n", ibv_get_device_name(list[i]), r == TEST_PASS ? "ok" : "FAIL");
		failed += r != TEST_PASS;
	}
	ibv_free_device_list(list);
	return failed != 0 ? TEST_FAIL : TEST_PASS;
}
