/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory safety of cqpoll mlx5 QPs on the emulated device, for requests and
 * sizes no correct caller makes: inline entries whose lengths add up past
 * 2^32 are refused (not summed modulo 2^32 and then copied whole); a CQ
 * under a live QP is not destroyed; the emulated device refuses QP sizes it
 * cannot lay out, as rdma-core's provider refuses them (EINVAL from
 * mlx5_calc_sq_size / mlx5_calc_rq_size), instead of wrapping or looping.
 * Run under ASan too: before the fixes these cases crash or read freed
 * memory.
 */

#include <stdio.h>

#include "cqpoll_test.h"
#include "mlx5_qp_test.h"

/*
 * Two inline entries of 0xfffffff0 and 0x20 bytes: 16 bytes modulo 2^32,
 * within any max_inline_data. Refused whole, nothing written to the ring
 * (the next valid request lands where the refused one would have).
 */
static int
test_inline_sum_wraps(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16, .max_send_sge = 2,
					    .max_inline_data = 64 };
	static uint8_t before[16384], after[16384];
	struct cqpoll_mlx5_sge sg[2];
	struct cqpoll_mlx5_send_wr w;
	struct qp_pair p;
	uint32_t ring;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	ring = p.caps[0].sq_wqebb_cnt * 64;
	TEST_ASSERT(ring <= sizeof(before), "ring of %u bytes", ring);
	qp_ring_read(p.qp[0], 0, before, ring);
	sg[0] = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 0xfffffff0u, p.mr->lkey };
	sg[1] = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 0x20, p.mr->lkey };
	w = (struct cqpoll_mlx5_send_wr){ .wr_id = 1, .sg_list = sg, .num_sge = 2,
		.opcode = CQPOLL_MLX5_WR_RDMA_WRITE, .flags = CQPOLL_MLX5_SEND_F_INLINE |
		CQPOLL_MLX5_SEND_F_SIGNALED, .remote_addr = (uintptr_t)p.buf + 8192,
		.rkey = p.mr->rkey };
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), -EINVAL);
	/* The other order, and the same total through one entry of the limit. */
	sg[0].length = 0x20;
	sg[1].length = 0xfffffff0u;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), -EINVAL);
	sg[0].length = p.caps[0].max_inline_data;
	sg[1].length = 0xffffffffu;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), -EINVAL);
	qp_ring_read(p.qp[0], 0, after, ring);
	TEST_ASSERT(memcmp(before, after, ring) == 0, "a refused request wrote the ring");
	/* Exactly max_inline_data over two entries still goes. */
	sg[0].length = 8;
	sg[1].length = p.caps[0].max_inline_data - 8;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), 1);
	qp_pair_close(&p);
	return TEST_PASS;
}

/*
 * A CQ a live QP posts for is refused with -EBUSY, intact and usable; once
 * the QP is gone, it is destroyed (the QP let go of it).
 */
static int
test_cq_under_qp(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16 };
	struct cqpoll_mlx5_sge sg;
	struct cqpoll_mlx5_send_wr w;
	struct cqpoll_completion c[4];
	struct qp_pair p;
	int i, n = 0;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	for (i = 0; i < 2; i++) {
		int r = cqpoll_cq_destroy(p.cq[i]);

		if (r == 0)
			p.cq[i] = NULL; /* gone: the QP's destroy would read it */
		TEST_ASSERT_EQ(r, -EBUSY);
	}
	/* Still the QP's CQ: a completion with its wr_id. */
	sg = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 8, p.mr->lkey };
	w = (struct cqpoll_mlx5_send_wr){ .wr_id = 77, .sg_list = &sg, .num_sge = 1,
		.opcode = CQPOLL_MLX5_WR_RDMA_WRITE, .flags = CQPOLL_MLX5_SEND_F_SIGNALED,
		.remote_addr = (uintptr_t)p.buf + 8192, .rkey = p.mr->rkey };
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), 1);
	for (i = 0; i < 100 && n == 0; i++) {
		cqpoll_mlx5_emu_run(p.ctx);
		n = cqpoll_poll_burst(p.cq[0], c, 4);
	}
	TEST_ASSERT_EQ(n, 1);
	TEST_ASSERT_EQ(c[0].wr_id, 77);
	for (i = 0; i < 2; i++) {
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_destroy(p.qp[i]), 0);
		p.qp[i] = NULL;
		TEST_ASSERT_EQ(cqpoll_cq_destroy(p.cq[i]), 0);
		p.cq[i] = NULL;
	}
	qp_pair_close(&p);
	return TEST_PASS;
}

/* A QP whose send and receive CQs differ holds both. */
static int
test_cq_under_qp_two_cqs(void)
{
	struct cqpoll_mlx5_emu_conf cc = { .size = 64, .arm = CQPOLL_ARM_LEVEL,
					   .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16 };
	struct ibv_context *ctx = cqpoll_mlx5_emu_open();
	struct ibv_pd *pd = ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(ctx) : NULL;
	struct cqpoll_cq *scq = cqpoll_mlx5_emu_cq_create(&cc);
	struct cqpoll_cq *rcq = cqpoll_mlx5_emu_cq_create(&cc);
	struct cqpoll_mlx5_qp *qp;
	int r;

	TEST_ASSERT(pd != NULL && scq != NULL && rcq != NULL, "setup");
	conf.send_cq = scq;
	conf.recv_cq = rcq;
	qp = cqpoll_mlx5_qp_create(pd, &conf);
	TEST_ASSERT(qp != NULL, "qp create: %d", errno);
	r = cqpoll_cq_destroy(rcq);
	if (r == 0)
		rcq = NULL;
	TEST_ASSERT_EQ(r, -EBUSY);
	r = cqpoll_cq_destroy(scq);
	if (r == 0)
		scq = NULL;
	TEST_ASSERT_EQ(r, -EBUSY);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_destroy(qp), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(scq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(rcq), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_dealloc_pd(pd), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_close(ctx), 0);
	return TEST_PASS;
}

/*
 * Sizes the emulated device cannot lay out: refused with EINVAL (rdma-core:
 * mlx5_calc_send_wqe, mlx5_calc_sq_size, mlx5_get_max_recv_wr,
 * mlx5_calc_rcv_wqe), not wrapped in 32 bits (UINT32_MAX entries or inline
 * bytes) nor looped on (a receive ring over 2^31). What the device can
 * give, at its limits, is still given.
 */
static int
test_emu_absurd_sizes(void)
{
	static const struct {
		uint32_t send_wr, recv_wr, send_sge, recv_sge, inl;
		int ok;
	} c[] = {
		{ 16, 0x80000001u, 1, 1, 0, 0 },
		{ 16, 0xffffffffu, 1, 1, 0, 0 },
		{ 16, 16, 0xffffffffu, 1, 0, 0 },
		{ 16, 16, 0x10000000u, 1, 0, 0 },
		{ 16, 16, 1, 0xffffffffu, 0, 0 },
		{ 16, 16, 1, 0x10000000u, 0, 0 },
		{ 16, 16, 1, 1, 0xffffffffu, 0 },
		{ 16, 16, 1, 1, 0xfffffff0u, 0 },
		{ 0xffffffffu, 16, 1, 1, 0, 0 },
		{ 0x80000000u, 16, 1, 1, 0, 0 },
		{ 16, 16, 1, 1, 64, 1 },
		{ 16, 32768, 1, 1, 0, 1 },
	};
	struct cqpoll_mlx5_emu_conf cc = { .size = 64, .arm = CQPOLL_ARM_LEVEL,
					   .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };
	struct ibv_context *ctx = cqpoll_mlx5_emu_open();
	struct ibv_pd *pd = ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(ctx) : NULL;
	struct cqpoll_cq *cq = cqpoll_mlx5_emu_cq_create(&cc);
	struct cqpoll_mlx5_qp_caps caps;
	struct cqpoll_mlx5_qp *qp;
	size_t i;

	TEST_ASSERT(pd != NULL && cq != NULL, "setup");
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct cqpoll_mlx5_qp_conf conf = { .send_cq = cq, .recv_cq = cq,
			.max_send_wr = c[i].send_wr, .max_recv_wr = c[i].recv_wr,
			.max_send_sge = c[i].send_sge, .max_recv_sge = c[i].recv_sge,
			.max_inline_data = c[i].inl };

		errno = 0;
		qp = cqpoll_mlx5_qp_create(pd, &conf);
		if (!c[i].ok) {
			TEST_ASSERT(qp == NULL, "case %zu: created", i);
			TEST_ASSERT_EQ(errno, EINVAL);
			continue;
		}
		TEST_ASSERT(qp != NULL, "case %zu: %d", i, errno);
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_caps(qp, &caps), 0);
		TEST_ASSERT(caps.max_send_wr >= c[i].send_wr && caps.max_recv_wr >= c[i].recv_wr &&
			    caps.max_inline_data >= c[i].inl, "case %zu: caps", i);
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_destroy(qp), 0);
	}
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_dealloc_pd(pd), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_close(ctx), 0);
	return TEST_PASS;
}

/* Usage: test_mlx5_qp_safety [CASE]: one case only (a crash stops the rest). */
int
main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_inline_sum_wraps),
		TEST_CASE(test_cq_under_qp),
		TEST_CASE(test_cq_under_qp_two_cqs),
		TEST_CASE(test_emu_absurd_sizes),
	};
	size_t i;

	for (i = 0; argc == 2 && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strcmp(argv[1], cases[i].name) == 0)
			return test_run("mlx5-qp-safety", &cases[i], 1);
	if (argc == 2) {
		fprintf(stderr, "no case %s\n", argv[1]);
		return TEST_FAIL;
	}
	return test_run("mlx5-qp-safety", cases, sizeof(cases) / sizeof(cases[0]));
}
