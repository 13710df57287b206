/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Failed and flushed work of cqpoll mlx5 QPs on the emulated device: every
 * completion, unsignalled work included, carries its wr_id; the QP in error
 * flushes its send and receive queues one completion per WQE and retires
 * them; bad lkey, bad rkey, receiver not ready, receive too small; work
 * posted in error; RESET restarts the counters.
 */

#include <endian.h>
#include <stdio.h>

#include "cqpoll_test.h"
#include "mlx5_qp_test.h"

static int
drain(struct qp_pair *p, struct cqpoll_cq *cq, struct cqpoll_completion *c, int max)
{
	int n = 0, r, idle = 0;

	while (n < max && idle < 10) {
		cqpoll_mlx5_emu_run(p->ctx);
		r = cqpoll_poll_burst(cq, c + n, (unsigned int)(max - n));
		if (r < 0)
			return r;
		n += r;
		idle = r == 0 ? idle + 1 : 0;
	}
	return n;
}

static struct cqpoll_mlx5_send_wr
wr_of(struct qp_pair *p, uint64_t id, uint32_t op, uint32_t flags, struct cqpoll_mlx5_sge *sg)
{
	return (struct cqpoll_mlx5_send_wr){ .wr_id = id, .sg_list = sg, .num_sge = 1,
		.opcode = op, .flags = flags, .remote_addr = (uintptr_t)p->buf + 8192,
		.rkey = p->mr->rkey };
}

static int
post_recvs(struct qp_pair *p, int side, uint64_t id0, int n, uint32_t len)
{
	int i;

	for (i = 0; i < n; i++) {
		struct cqpoll_mlx5_sge s = { (uintptr_t)p->buf + 16384 + 64 * i, len, p->mr->lkey };
		struct cqpoll_mlx5_recv_wr rw = { .wr_id = id0 + (uint64_t)i, .sg_list = &s,
						  .num_sge = 1 };

		if (cqpoll_mlx5_qp_post_recv(p->qp[side], &rw, 1) != 1)
			return -1;
	}
	return 0;
}

#define EXPECT(c, id, st, op) do { \
	TEST_ASSERT((c).flags & CQPOLL_COMPLETION_F_WR_ID, "no wr_id flag for %llu", \
		    (unsigned long long)(id)); \
	TEST_ASSERT_EQ((c).wr_id, id); \
	TEST_ASSERT_EQ((c).status, st); \
	TEST_ASSERT_EQ((c).opcode, op); \
} while (0)

static int
test_bad_lkey_flushes(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16, .max_recv_wr = 4 };
	struct cqpoll_mlx5_sge good = { 0, 32, 0 }, bad;
	struct cqpoll_mlx5_send_wr w[4];
	struct cqpoll_completion c[16];
	struct qp_pair p;
	uint32_t i;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	good.addr = (uintptr_t)p.buf;
	good.lkey = p.mr->lkey;
	bad = good;
	bad.lkey = p.mr->lkey + 1;
	TEST_ASSERT_EQ(post_recvs(&p, 1, 500, 4, 64), 0);
	TEST_ASSERT_EQ(post_recvs(&p, 0, 700, 2, 64), 0);
	w[0] = wr_of(&p, 10, CQPOLL_MLX5_WR_RDMA_WRITE, CQPOLL_MLX5_SEND_F_SIGNALED, &good);
	w[1] = wr_of(&p, 11, CQPOLL_MLX5_WR_SEND, 0, &bad);
	w[2] = wr_of(&p, 12, CQPOLL_MLX5_WR_RDMA_WRITE, 0, &good);
	w[3] = wr_of(&p, 13, CQPOLL_MLX5_WR_SEND, CQPOLL_MLX5_SEND_F_SIGNALED, &good);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], w, 4), 4);
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 16), 6);
	EXPECT(c[0], 10, CQPOLL_STATUS_SUCCESS, CQPOLL_OP_RDMA_WRITE);
	/* Unsignalled, but failed: its own completion, with its wr_id. */
	EXPECT(c[1], 11, CQPOLL_STATUS_LOC_PROT_ERR, CQPOLL_OP_SEND);
	EXPECT(c[2], 12, CQPOLL_STATUS_WR_FLUSH_ERR, CQPOLL_OP_RDMA_WRITE);
	EXPECT(c[3], 13, CQPOLL_STATUS_WR_FLUSH_ERR, CQPOLL_OP_SEND);
	EXPECT(c[4], 700, CQPOLL_STATUS_WR_FLUSH_ERR, CQPOLL_OP_RECV);
	EXPECT(c[5], 701, CQPOLL_STATUS_WR_FLUSH_ERR, CQPOLL_OP_RECV);
	/* Posted in error: flushed too, and the queue retired to the last request. */
	for (i = 0; i < p.caps[0].max_send_wr; i++) {
		w[0].wr_id = 100 + i;
		w[0].flags = 0;
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], w, 1), 1);
	}
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], w, 1), -ENOMEM);
	for (i = 0; i < p.caps[0].max_send_wr; i++) {
		TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 1), 1);
		EXPECT(c[0], 100 + i, CQPOLL_STATUS_WR_FLUSH_ERR, CQPOLL_OP_RDMA_WRITE);
	}
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], w, 1), 1);
	/* B saw nothing: the failed send took none of its receives. */
	TEST_ASSERT_EQ(drain(&p, p.cq[1], c, 16), 0);
	qp_pair_close(&p);
	return TEST_PASS;
}

static int
test_bad_rkey(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16 };
	struct cqpoll_mlx5_sge sg;
	struct cqpoll_mlx5_send_wr w;
	struct cqpoll_completion c[4];
	struct qp_pair p;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	sg = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 8, p.mr->lkey };
	w = wr_of(&p, 21, CQPOLL_MLX5_WR_RDMA_WRITE, 0, &sg);
	w.rkey ^= 0x100;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), 1);
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 4), 1);
	EXPECT(c[0], 21, CQPOLL_STATUS_REM_ACCESS_ERR, CQPOLL_OP_RDMA_WRITE);
	/* Out of the region: the same. */
	w = wr_of(&p, 22, CQPOLL_MLX5_WR_ATOMIC_FA, 0, &sg);
	w.remote_addr = (uintptr_t)p.buf + p.len;
	TEST_ASSERT_EQ(qp_pair_modify(p.qp[0], IBV_QPS_RESET, 0, 0), 0);
	TEST_ASSERT_EQ(qp_pair_modify(p.qp[0], IBV_QPS_INIT, 0, 0), 0);
	TEST_ASSERT_EQ(qp_pair_modify(p.qp[0], IBV_QPS_RTR, p.caps[1].qp_num, 0), 0);
	TEST_ASSERT_EQ(qp_pair_modify(p.qp[0], IBV_QPS_RTS, 0, 7), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), 1);
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 4), 1);
	EXPECT(c[0], 22, CQPOLL_STATUS_REM_ACCESS_ERR, CQPOLL_OP_FETCH_ADD);
	TEST_ASSERT_EQ(c[0].wqe_counter, 0);
	qp_pair_close(&p);
	return TEST_PASS;
}

static int
test_receiver_not_ready(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16 };
	struct cqpoll_mlx5_sge sg;
	struct cqpoll_mlx5_send_wr w;
	struct cqpoll_completion c[4];
	struct qp_pair p;

	/* rnr_retry 7 waits for the receive, for ever. */
	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	sg = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 8, p.mr->lkey };
	w = wr_of(&p, 31, CQPOLL_MLX5_WR_SEND, CQPOLL_MLX5_SEND_F_SIGNALED, &sg);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), 1);
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 4), 0);
	TEST_ASSERT_EQ(post_recvs(&p, 1, 800, 1, 64), 0);
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 4), 1);
	EXPECT(c[0], 31, CQPOLL_STATUS_SUCCESS, CQPOLL_OP_SEND);
	TEST_ASSERT_EQ(drain(&p, p.cq[1], c, 4), 1);
	EXPECT(c[0], 800, CQPOLL_STATUS_SUCCESS, CQPOLL_OP_RECV);
	TEST_ASSERT_EQ(c[0].byte_len, 8);
	qp_pair_close(&p);
	/* rnr_retry 0 gives up. */
	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 0), 0);
	sg = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 8, p.mr->lkey };
	w = wr_of(&p, 32, CQPOLL_MLX5_WR_RDMA_WRITE_IMM, 0, &sg);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), 1);
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 4), 1);
	EXPECT(c[0], 32, CQPOLL_STATUS_RNR_RETRY_EXC_ERR, CQPOLL_OP_RDMA_WRITE);
	qp_pair_close(&p);
	return TEST_PASS;
}

static int
test_receive_too_small(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16 };
	struct cqpoll_mlx5_sge sg;
	struct cqpoll_mlx5_send_wr w;
	struct cqpoll_completion c[4];
	struct qp_pair p;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	TEST_ASSERT_EQ(post_recvs(&p, 1, 900, 2, 4), 0);
	sg = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 16, p.mr->lkey };
	w = wr_of(&p, 41, CQPOLL_MLX5_WR_SEND_IMM, 0, &sg);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), 1);
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 4), 1);
	EXPECT(c[0], 41, CQPOLL_STATUS_REM_INV_REQ_ERR, CQPOLL_OP_SEND);
	/* B failed with the receive, then flushed the other. */
	TEST_ASSERT_EQ(drain(&p, p.cq[1], c, 4), 2);
	EXPECT(c[0], 900, CQPOLL_STATUS_LOC_LEN_ERR, CQPOLL_OP_RECV);
	EXPECT(c[1], 901, CQPOLL_STATUS_WR_FLUSH_ERR, CQPOLL_OP_RECV);
	qp_pair_close(&p);
	return TEST_PASS;
}

int
main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_bad_lkey_flushes),
		TEST_CASE(test_bad_rkey),
		TEST_CASE(test_receiver_not_ready),
		TEST_CASE(test_receive_too_small),
	};

	return test_run("mlx5-qp-errors", cases, sizeof(cases) / sizeof(cases[0]));
}
