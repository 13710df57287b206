/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mlx5 driver on a real device: create a CQ on the first mlx5 device,
 * check what mlx5dv reported, arm it, and see that an empty armed CQ stays
 * quiet; then CQs of both drivers on ONE completion channel, chosen by
 * cqpoll_cq_from_ibv() as the caller asked (verbs unless WQE counters are
 * accepted), armed, quiet, and destroyed without a hang. Skips (77) where no
 * mlx5 device exists, which is every machine this project has been built on
 * so far. Without a QP nothing completes, so the data path is covered only
 * on the emulator.
 */

#include <errno.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "cqpoll.h"
#include "cqpoll_ibv.h"
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

/* An mlx5 CQ and a verbs CQ of one device on one channel. */
static int
shared_channel(struct ibv_context *ctx)
{
	struct cqpoll_ibv_conf direct = { .flags = CQPOLL_IBV_F_WQE_COUNTER };
	struct cqpoll_mlx5_conf mconf = { .size = 64 };
	struct cqpoll_completion c[8];
	struct ibv_comp_channel *ch;
	struct cqpoll_cq_info info;
	struct cqpoll_cq *cq[3];
	struct ibv_cq *v[2];
	int i;

	ch = ibv_create_comp_channel(ctx);
	TEST_ASSERT(ch != NULL, "channel: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		v[i] = ibv_create_cq(ctx, 63, NULL, ch, 0);
		TEST_ASSERT(v[i] != NULL, "ibv_create_cq: %s", strerror(errno));
	}
	cq[0] = cqpoll_cq_from_ibv(v[0], ch, NULL);
	cq[1] = cqpoll_cq_from_ibv(v[1], ch, &direct);
	mconf.channel = ch;
	cq[2] = cqpoll_mlx5_cq_create(ctx, &mconf);
	TEST_ASSERT(cq[0] != NULL && cq[1] != NULL && cq[2] != NULL, "attach: %s",
		    strerror(errno));
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq[0], &info), 0);
	TEST_ASSERT(strcmp(info.driver, "verbs") == 0, "no choice made: %s", info.driver);
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq[1], &info), 0);
	TEST_ASSERT(strcmp(info.driver, "mlx5") == 0, "WQE counters accepted: %s",
		    info.driver);
	for (i = 0; i < 3; i++)
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq[i], c, 8), 0);
	for (i = 0; i < 3; i++)
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq[i], 20), 0);
	for (i = 0; i < 3; i++)
		cqpoll_cq_destroy(cq[i]);
	/* Blocks if an event read were left unacknowledged. */
	for (i = 0; i < 2; i++)
		TEST_ASSERT_EQ(ibv_destroy_cq(v[i]), 0);
	TEST_ASSERT_EQ(ibv_destroy_comp_channel(ch), 0);
	return TEST_PASS;
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
	if (shared_channel(ctx) != TEST_PASS)
		return TEST_FAIL;
	ibv_close_device(ctx);
	return TEST_PASS;
}
