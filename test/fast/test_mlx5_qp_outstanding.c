/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests outstanding on a cqpoll mlx5 QP are capped at its caps'
 * max_send_wr and max_recv_wr, as rdma-core caps them. Primary source:
 * rdma-core providers/mlx5/qp.c, mlx5_wq_overflow() (v44.0 and HEAD
 * 691953d8d5): "cur = wq->head - wq->tail; ... return cur + nreq >=
 * wq->max_post;", checked before each request of _mlx5_post_send() and
 * mlx5_post_recv(), which then fail with ENOMEM; max_post is what
 * providers/mlx5/verbs.c writes back as cap.max_send_wr / cap.max_recv_wr
 * (sq.max_post = wq_size / wqe_size), and tail moves only with completions
 * (sq.tail = wqe_head[idx] + 1 in mlx5_parse_cqe()). So: max_send_wr
 * requests posted and none completed, the next one is refused with ENOMEM;
 * a completion frees what it retires and no more. With every request
 * signalled, a CQ of max_send_wr entries then never overruns (the emulated
 * device set to raise the overrun as a real one does).
 */

#include <stdio.h>

#include "cqpoll_test.h"
#include "mlx5_qp_test.h"

static struct cqpoll_mlx5_send_wr
write_wr(struct qp_pair *p, struct cqpoll_mlx5_sge *sg, uint64_t id, int signaled)
{
	*sg = (struct cqpoll_mlx5_sge){ (uintptr_t)p->buf, 8, p->mr->lkey };
	return (struct cqpoll_mlx5_send_wr){ .wr_id = id, .sg_list = sg, .num_sge = 1,
		.opcode = CQPOLL_MLX5_WR_RDMA_WRITE,
		.flags = signaled ? CQPOLL_MLX5_SEND_F_SIGNALED : 0,
		.remote_addr = (uintptr_t)p->buf + 8192, .rkey = p->mr->rkey };
}

/* Completions of @p cq until @p want or the device has nothing more. */
static int
drain(struct qp_pair *p, struct cqpoll_cq *cq, struct cqpoll_completion *c, int want)
{
	int n = 0, r, idle = 0;

	while (n < want && idle < 10) {
		cqpoll_mlx5_emu_run(p->ctx);
		r = cqpoll_poll_burst(cq, c + n, (unsigned int)(want - n));
		if (r < 0)
			return r;
		n += r;
		idle = r == 0 ? idle + 1 : 0;
	}
	return n;
}

/*
 * max_send_wr one-block requests (the ring has room for four times as many):
 * the next is refused, alone or in a burst; a completion in the middle frees
 * the requests up to it, no more.
 */
static int
test_send_cap(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16 };
	struct cqpoll_mlx5_send_wr w[40];
	struct cqpoll_mlx5_sge sg[40];
	struct cqpoll_completion c[40];
	struct qp_pair p;
	uint32_t i, max;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	max = p.caps[0].max_send_wr;
	TEST_ASSERT(max >= 16 && max < 40, "max_send_wr %u", max);
	TEST_ASSERT(p.caps[0].sq_wqebb_cnt > max, "ring of %u blocks", p.caps[0].sq_wqebb_cnt);
	/* One by one; the one in the middle signalled. */
	for (i = 0; i < max; i++) {
		w[0] = write_wr(&p, &sg[0], i, i == max / 2 - 1);
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], w, 1), 1);
	}
	w[0] = write_wr(&p, &sg[0], 1000, 1);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], w, 1), -ENOMEM);
	/* The device ran the first half: still nothing retired before the poll. */
	cqpoll_mlx5_emu_run(p.ctx);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], w, 1), -ENOMEM);
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 1), 1);
	TEST_ASSERT_EQ(c[0].wr_id, max / 2 - 1);
	/* max / 2 retired: a burst of more gets exactly those in. */
	for (i = 0; i < max; i++)
		w[i] = write_wr(&p, &sg[i], 100 + i, i == max / 2 - 1);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], w, max), (int)(max / 2));
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], w, 1), -ENOMEM);
	qp_pair_close(&p);
	return TEST_PASS;
}

/*
 * Every request signalled, the CQ as large as max_send_wr (rounded up to a
 * power of two, as a verbs CQ is): posting until refused, then letting the
 * device run, never overruns it.
 */
static int
test_cq_from_caps(void)
{
	struct cqpoll_mlx5_emu_conf cc = { .arm = CQPOLL_ARM_LEVEL,
		.emu_flags = CQPOLL_MLX5_EMU_F_MANUAL | CQPOLL_MLX5_EMU_F_OVERRUN_ERROR };
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16, .max_recv_wr = 1 };
	struct ibv_context *ctx = cqpoll_mlx5_emu_open();
	struct ibv_pd *pd = ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(ctx) : NULL;
	static uint8_t buf[16384] __attribute__((aligned(64)));
	struct ibv_mr *mr = pd != NULL ? cqpoll_mlx5_emu_reg_mr(pd, buf, sizeof(buf),
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	struct cqpoll_mlx5_qp_caps caps;
	struct cqpoll_completion c[64];
	struct cqpoll_mlx5_send_wr w;
	struct cqpoll_mlx5_sge sg;
	struct cqpoll_mlx5_qp *qp;
	struct ibv_qp_attr a;
	struct cqpoll_cq *cq;
	uint32_t posted = 0;
	int n, r = 0;

	TEST_ASSERT(mr != NULL, "setup");
	/* The caps first, from a QP of the same conf. */
	cc.size = 1;
	cq = cqpoll_mlx5_emu_cq_create(&cc);
	conf.send_cq = conf.recv_cq = cq;
	qp = cq != NULL ? cqpoll_mlx5_qp_create(pd, &conf) : NULL;
	TEST_ASSERT(qp != NULL, "qp create: %d", errno);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_caps(qp, &caps), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_destroy(qp), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	cc.size = caps.max_send_wr;
	cq = cqpoll_mlx5_emu_cq_create(&cc);
	conf.send_cq = conf.recv_cq = cq;
	qp = cq != NULL ? cqpoll_mlx5_qp_create(pd, &conf) : NULL;
	TEST_ASSERT(qp != NULL, "qp create: %d", errno);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_caps(qp, &caps), 0);
	memset(&a, 0, sizeof(a));
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	a.dest_qp_num = caps.qp_num;
	a.rnr_retry = 7;
	for (a.qp_state = IBV_QPS_INIT; a.qp_state <= IBV_QPS_RTS && r == 0; a.qp_state++)
		r = cqpoll_mlx5_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS |
					  IBV_QP_DEST_QPN | IBV_QP_RNR_RETRY);
	TEST_ASSERT_EQ(r, 0);
	sg = (struct cqpoll_mlx5_sge){ (uintptr_t)buf, 8, mr->lkey };
	w = (struct cqpoll_mlx5_send_wr){ .sg_list = &sg, .num_sge = 1,
		.opcode = CQPOLL_MLX5_WR_RDMA_WRITE, .flags = CQPOLL_MLX5_SEND_F_SIGNALED,
		.remote_addr = (uintptr_t)buf + 8192, .rkey = mr->rkey };
	while (posted < 4 * caps.sq_wqebb_cnt) {
		w.wr_id = posted;
		r = cqpoll_mlx5_qp_post_send(qp, &w, 1);
		if (r != 1)
			break;
		posted++;
	}
	/* Overrun (a poll < 0) if more were let in than the CQ holds. */
	cqpoll_mlx5_emu_run(ctx);
	n = cqpoll_poll_burst(cq, c, 64);
	TEST_ASSERT(n == (int)posted, "%u posted, poll: %d", posted, n);
	TEST_ASSERT_EQ(r, -ENOMEM);
	TEST_ASSERT_EQ(posted, caps.max_send_wr);
	TEST_ASSERT_EQ(c[n - 1].wr_id, posted - 1);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_destroy(qp), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_dereg_mr(mr), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_dealloc_pd(pd), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_close(ctx), 0);
	return TEST_PASS;
}

/* max_recv_wr receives posted: the next is refused; a completion frees one. */
static int
test_recv_cap(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16, .max_recv_wr = 8 };
	struct cqpoll_mlx5_sge sg, rs;
	struct cqpoll_mlx5_recv_wr rw;
	struct cqpoll_mlx5_send_wr w;
	struct cqpoll_completion c[4];
	struct qp_pair p;
	uint32_t i;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	rs = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf + 16384, 64, p.mr->lkey };
	rw = (struct cqpoll_mlx5_recv_wr){ .sg_list = &rs, .num_sge = 1 };
	for (i = 0; i < p.caps[1].max_recv_wr; i++) {
		rw.wr_id = 500 + i;
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_recv(p.qp[1], &rw, 1), 1);
	}
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_recv(p.qp[1], &rw, 1), -ENOMEM);
	w = write_wr(&p, &sg, 1, 1);
	w.opcode = CQPOLL_MLX5_WR_SEND;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &w, 1), 1);
	TEST_ASSERT_EQ(drain(&p, p.cq[1], c, 1), 1);
	TEST_ASSERT_EQ(c[0].wr_id, 500);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_recv(p.qp[1], &rw, 1), 1);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_recv(p.qp[1], &rw, 1), -ENOMEM);
	qp_pair_close(&p);
	return TEST_PASS;
}

int
main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_send_cap),
		TEST_CASE(test_cq_from_caps),
		TEST_CASE(test_recv_cap),
	};

	return test_run("mlx5-qp-outstanding", cases, sizeof(cases) / sizeof(cases[0]));
}
