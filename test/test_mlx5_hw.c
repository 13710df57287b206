/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mlx5 driver on a real device: create a CQ on the first mlx5 device,
 * check what mlx5dv reported, arm it, and see that an empty armed CQ stays
 * quiet. Skips (77) where no mlx5 device exists, which is every machine this
 * project has been built on so far. Without a QP nothing completes, so the
 * data path is covered only on the emulator.
 */

#include <errno.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "cqpoll.h"
#include "cqpoll_mlx5.h"
#include "cqpoll_test.h"

static struct ibv_context *
open_mlx5(char *why, size_t len)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0, i;

	list = ibv_get_device_list(&n);
	if (list == NULL) {
		snprintf(why, len, "ibv_get_device_list: %s", strerror(errno));
		return NULL;
	}
	for (i = 0; i < n && ctx == NULL; i++)
		if (mlx5dv_is_supported(list[i]))
			ctx = ibv_open_device(list[i]);
	if (ctx == NULL)
		snprintf(why, len, "%d RDMA device(s), none is an mlx5 device that opens", n);
	ibv_free_device_list(list);
	return ctx;
}

int
main(void)
{
	struct cqpoll_mlx5_conf conf = { .size = 256 };
	struct cqpoll_completion c[8];
	struct ibv_context *ctx;
	struct cqpoll_cq_info info;
	struct cqpoll_cq *cq;
	char why[256];

	ctx = open_mlx5(why, sizeof(why));
	if (ctx == NULL) {
		printf("no mlx5 device: %s; skipping\n", why);
		return TEST_SKIP;
	}
	cq = cqpoll_mlx5_cq_create(ctx, &conf);
	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT(cqpoll_mlx5_cq_ibv(cq) != NULL, "verbs CQ");
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.arm, CQPOLL_ARM_LEVEL);
	TEST_ASSERT_EQ(info.size, 256);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 50), 0); /* empty: no event */
	cqpoll_cq_destroy(cq);
	ibv_close_device(ctx);
	return TEST_PASS;
}
