/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mlx5 QP's send with invalidate, its signal-all option and its
 * fixed-route burst post (cqpoll_mlx5_qp_post_burst()), byte for byte
 * against the model written from rdma-core's post path
 * (test/mlx5_wqe_model.h), and their completions against rdma-core's
 * cq.c: a send with invalidate completes as IBV_WC_SEND at the sender
 * (handle_good_req) and as IBV_WC_RECV with IBV_WC_WITH_INV and the rkey
 * in host order at the receiver (handle_responder, MLX5_CQE_RESP_SEND_INV);
 * under sq_sig_all every request comes back. Built against the test-only
 * library that ignores signal-all (test/mutants/), the signal-all case
 * must fail: it is the option's negative control.
 */

#include <endian.h>
#include <stdio.h>

#include "cqpoll_test.h"
#include "mlx5_qp_test.h"
#include "mlx5_wqe_model.h"

#define RKEY_INV 0x12345678u

/* Compare the ring at @p counter with the model of @p wr; 0 or the first byte off + 1. */
static int
wqe_diff(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wr, uint32_t counter,
	 uint32_t qpn, int sig_all, struct model_wqe *m)
{
	uint8_t ring[MODEL_WQE_MAX];
	uint32_t i;

	model_wqe_build_sig(m, wr, counter, qpn, sig_all);
	qp_ring_read(qp, counter, ring, m->ds * 16);
	for (i = 0; i < m->ds * 16; i++) {
		if (m->mask[i] && ring[i] != m->bytes[i]) {
			fprintf(stderr, "WQE at %u, byte %u: ring %02x, model %02x\n",
				counter, i, ring[i], m->bytes[i]);
			return (int)i + 1;
		}
	}
	return 0;
}

/* Poll @p cq with the device running until @p max completions or a quiet spell. */
static int
drain(struct qp_pair *p, struct cqpoll_cq *cq, struct cqpoll_completion *c, int max)
{
	int n = 0, r, idle = 0;

	while (n < max && idle < 20) {
		cqpoll_mlx5_emu_run(p->ctx);
		r = cqpoll_poll_burst(cq, c + n, (unsigned int)(max - n));
		if (r < 0)
			return r;
		n += r;
		idle = r == 0 ? idle + 1 : 0;
	}
	return n;
}

/* @p n receives of 256 bytes on B, wr_ids from @p id. */
static int
post_recvs(struct qp_pair *p, uint32_t n, uint64_t id)
{
	struct cqpoll_mlx5_sge s = { (uintptr_t)p->buf + 32768, 256, p->mr->lkey };
	struct cqpoll_mlx5_recv_wr w = { .sg_list = &s, .num_sge = 1 };
	uint32_t k;

	for (k = 0; k < n; k++) {
		w.wr_id = id + k;
		if (cqpoll_mlx5_qp_post_recv(p->qp[1], &w, 1) != 1)
			return -1;
	}
	return 0;
}

/*
 * Send with invalidate through the general post (one entry, two, inline) and
 * the route: the WQEs, then the sender's and the receiver's completions.
 */
static int
test_send_inv(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 64, .max_send_sge = 2,
					    .max_inline_data = 64,
					    .burst_opcode = CQPOLL_MLX5_WR_SEND_INV };
	struct cqpoll_completion c[16];
	struct cqpoll_mlx5_sge sg[2];
	struct cqpoll_mlx5_send_wr wr;
	struct model_wqe m;
	struct qp_pair p;
	uint32_t counter = 0, k, qpn;
	static const uint32_t len[4] = { 40, 40 + 24, 17, 40 };
	int n;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	qpn = p.caps[0].qp_num;
	TEST_ASSERT_EQ(post_recvs(&p, 5, 900), 0);
	sg[0] = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 40, p.mr->lkey };
	sg[1] = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf + 100, 24, p.mr->lkey };
	for (k = 0; k < 4; k++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 500 + k;
		wr.sg_list = sg;
		wr.num_sge = k == 1 ? 2 : 1;
		wr.opcode = CQPOLL_MLX5_WR_SEND_INV;
		wr.invalidate_rkey = RKEY_INV + k;
		wr.flags = k == 1 ? 0 : CQPOLL_MLX5_SEND_F_SIGNALED;
		if (k == 2) {
			wr.flags |= CQPOLL_MLX5_SEND_F_INLINE;
			sg[0].length = 17;
		}
		n = k == 3 ? cqpoll_mlx5_qp_post_burst(p.qp[0], &wr, 1) :
			cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1);
		TEST_ASSERT(n == 1, "request %u: %d", k, n);
		TEST_ASSERT(wqe_diff(p.qp[0], &wr, counter, qpn, 0, &m) == 0, "request %u", k);
		counter += m.nbb;
		sg[0].length = 40;
	}
	/* A plain send after them: its receive carries no invalidated rkey. */
	wr.opcode = CQPOLL_MLX5_WR_SEND;
	wr.wr_id = 504;
	wr.num_sge = 1;
	wr.flags = CQPOLL_MLX5_SEND_F_SIGNALED;
	wr.invalidate_rkey = 0;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), 1);
	/* Sender: IBV_WC_SEND for the signalled ones (handle_good_req). */
	n = drain(&p, p.cq[0], c, 16);
	TEST_ASSERT_EQ(n, 4);
	for (k = 0; k < 4; k++) {
		TEST_ASSERT_EQ(c[k].status, CQPOLL_STATUS_SUCCESS);
		TEST_ASSERT_EQ(c[k].opcode, CQPOLL_OP_SEND);
		TEST_ASSERT_EQ(c[k].wr_id, k == 0 ? 500u : 501u + k);
	}
	/* Receiver: IBV_WC_RECV, WITH_INV, the rkey in host order (handle_responder). */
	n = drain(&p, p.cq[1], c, 16);
	TEST_ASSERT_EQ(n, 5);
	for (k = 0; k < 5; k++) {
		TEST_ASSERT_EQ(c[k].status, CQPOLL_STATUS_SUCCESS);
		TEST_ASSERT_EQ(c[k].opcode, CQPOLL_OP_RECV);
		TEST_ASSERT_EQ(c[k].wr_id, 900 + k);
		if (k == 4) {
			TEST_ASSERT(!(c[k].flags & CQPOLL_COMPLETION_F_INV), "plain send: F_INV");
			continue;
		}
		TEST_ASSERT(c[k].flags & CQPOLL_COMPLETION_F_INV, "receive %u: no F_INV", k);
		TEST_ASSERT(!(c[k].flags & CQPOLL_COMPLETION_F_IMM), "receive %u: F_IMM", k);
		TEST_ASSERT_EQ(c[k].imm_data, RKEY_INV + k);
		TEST_ASSERT_EQ(c[k].byte_len, len[k]);
	}
	qp_pair_close(&p);
	return TEST_PASS;
}

/*
 * Signal-all: unsignalled requests through every post path each ask for a
 * CQE (MLX5_WQE_CTRL_CQ_UPDATE, as rdma-core's sq_signal_bits) and each
 * comes back with its wr_id.
 */
static int
test_sig_all(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 64, .max_send_sge = 2,
					    .max_inline_data = 64,
					    .flags = CQPOLL_MLX5_QP_F_SIG_ALL,
					    .burst_opcode = CQPOLL_MLX5_WR_RDMA_WRITE };
	struct cqpoll_completion c[32];
	struct cqpoll_mlx5_sge sg[2];
	struct cqpoll_mlx5_send_wr wr[8];
	struct model_wqe m;
	struct qp_pair p;
	uint32_t counter = 0, k, qpn, posted = 0;
	int n;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	qpn = p.caps[0].qp_num;
	TEST_ASSERT_EQ(post_recvs(&p, 8, 900), 0);
	sg[0] = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 40, p.mr->lkey };
	sg[1] = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf + 100, 24, p.mr->lkey };
	for (k = 0; k < 8; k++) {
		wr[k] = (struct cqpoll_mlx5_send_wr){ .wr_id = 700 + k, .sg_list = sg,
			.num_sge = 1, .opcode = CQPOLL_MLX5_WR_RDMA_WRITE,
			.remote_addr = (uintptr_t)p.buf + 16384, .rkey = p.mr->rkey };
	}
	/* The general call's one-entry loop: two writes, the second fenced. */
	wr[1].flags = CQPOLL_MLX5_SEND_F_FENCE;
	/* Its general path: two entries; inline; a send with invalidate; a send. */
	wr[2].num_sge = 2;
	wr[3].opcode = CQPOLL_MLX5_WR_SEND;
	wr[3].flags = CQPOLL_MLX5_SEND_F_INLINE;
	wr[4].opcode = CQPOLL_MLX5_WR_SEND_INV;
	wr[4].invalidate_rkey = RKEY_INV;
	wr[5].opcode = CQPOLL_MLX5_WR_SEND_IMM;
	wr[5].imm_data = htobe32(0xabcd);
	n = cqpoll_mlx5_qp_post_send(p.qp[0], wr, 2);
	TEST_ASSERT_EQ(n, 2);
	n = cqpoll_mlx5_qp_post_send(p.qp[0], wr + 2, 4);
	TEST_ASSERT_EQ(n, 4);
	/* The route: two writes. */
	n = cqpoll_mlx5_qp_post_burst(p.qp[0], wr + 6, 2);
	TEST_ASSERT_EQ(n, 2);
	for (k = 0; k < 8; k++) {
		TEST_ASSERT(wqe_diff(p.qp[0], &wr[k], counter, qpn, 1, &m) == 0, "request %u", k);
		counter += m.nbb;
		posted++;
	}
	/* None of them asked; every one answers, in order, with its wr_id. */
	n = drain(&p, p.cq[0], c, 32);
	TEST_ASSERT_EQ((uint32_t)n, posted);
	for (k = 0; k < posted; k++) {
		TEST_ASSERT_EQ(c[k].status, CQPOLL_STATUS_SUCCESS);
		TEST_ASSERT(c[k].flags & CQPOLL_COMPLETION_F_WR_ID, "completion %u: no wr_id", k);
		TEST_ASSERT_EQ(c[k].wr_id, 700 + k);
	}
	qp_pair_close(&p);
	return TEST_PASS;
}

/* Keep B's receives ahead of @p need sends; its completions read as they come. */
static int
recvs_ahead(struct qp_pair *p, uint32_t *posted, uint32_t *done, uint32_t need)
{
	struct cqpoll_completion c[64];
	int n;

	do {
		n = cqpoll_poll_burst(p->cq[1], c, 64);
		if (n < 0)
			return -1;
		*done += (uint32_t)n;
	} while (n == 64);
	while (*posted - *done < need) {
		if (*posted - *done >= p->caps[1].max_recv_wr)
			return 0;
		if (post_recvs(p, 1, *posted) != 0)
			return -1;
		(*posted)++;
	}
	return 0;
}

/*
 * The route of each opcode: bursts of 1 to 32 over the ring's end (and, for
 * the write, over the 16-bit counter's), flags mixed (INLINE not read), the
 * WQEs against the model of the same request, the doorbell record and the
 * register; every signalled request back with its wr_id.
 */
static int
route_run(uint32_t op, uint32_t blocks)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 64, .max_recv_wr = 256,
					    .burst_opcode = op };
	struct cqpoll_mlx5_send_wr wr[32], mw;
	struct cqpoll_mlx5_sge sg[32];
	struct cqpoll_completion c[64];
	const int recv = op != CQPOLL_MLX5_WR_RDMA_WRITE && op != CQPOLL_MLX5_WR_RDMA_READ;
	uint32_t counter = 0, round, k, i, rposted = 0, rdone = 0, want = 0, got = 0, doorbells = 0;
	uint32_t stalls = 0;
	uint64_t reg;
	struct model_wqe m;
	struct mlx5dv_qp dv;
	struct qp_pair p;
	int n, off;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 4096, 65536, 7), 0);
	cqpoll_mlx5_emu_qp_dv(cqpoll_mlx5_qp_ibv(p.qp[0]), &dv);
	for (round = 0; counter < blocks; round++) {
		k = 1 + (round * 7) % 32;
		for (i = 0; i < k; i++) {
			sg[i] = (struct cqpoll_mlx5_sge){
				(uintptr_t)p.buf + (round * 13 + i) % 8192, 1 + (round + i) % 200,
				p.mr->lkey };
			wr[i] = (struct cqpoll_mlx5_send_wr){ .wr_id = (uint64_t)round << 8 | i,
				.sg_list = &sg[i], .num_sge = 1 + i % 3, .opcode = 77,
				.flags = ((round + i) % 5 == 0 ? CQPOLL_MLX5_SEND_F_SOLICITED : 0) |
					((round + i) % 7 == 0 ? CQPOLL_MLX5_SEND_F_FENCE : 0) |
					((round + i) % 3 == 0 ? CQPOLL_MLX5_SEND_F_INLINE : 0) |
					(i == k - 1 ? CQPOLL_MLX5_SEND_F_SIGNALED : 0),
				.imm_data = htobe32(round * 32 + i),
				.remote_addr = (uintptr_t)p.buf + 16384 + (round % 64) * 256,
				.rkey = p.mr->rkey };
		}
		for (off = 0; off < (int)k; off += n) {
			if (recv && recvs_ahead(&p, &rposted, &rdone, k - (uint32_t)off) != 0)
				TEST_ASSERT(0, "receives");
			n = cqpoll_mlx5_qp_post_burst(p.qp[0], wr + off, k - (uint32_t)off);
			if (n == -ENOMEM) {
				TEST_ASSERT(++stalls < 100000, "round %u: no room for ever", round);
				got += (uint32_t)drain(&p, p.cq[0], c, 64);
				n = 0;
				continue;
			}
			TEST_ASSERT(n > 0, "round %u: %d", round, n);
			for (i = (uint32_t)off; i < (uint32_t)(off + n); i++) {
				/* The route's request: its opcode, the first entry, by pointer. */
				mw = wr[i];
				mw.opcode = op;
				mw.num_sge = 1;
				mw.flags &= ~CQPOLL_MLX5_SEND_F_INLINE;
				TEST_ASSERT(wqe_diff(p.qp[0], &mw, counter, p.caps[0].qp_num, 0,
						     &m) == 0, "opcode %u round %u WQE %u", op, round,
					    i);
				counter += m.nbb;
				want += (mw.flags & CQPOLL_MLX5_SEND_F_SIGNALED) != 0;
			}
			TEST_ASSERT_EQ(be32toh(dv.dbrec[1]), counter & 0xffff);
			memcpy(&reg, (uint8_t *)dv.bf.reg + (doorbells++ % 2) * dv.bf.size, 8);
			TEST_ASSERT(memcmp(&reg, m.bytes, 8) == 0, "round %u: register", round);
		}
		if (round % 4 == 0)
			got += (uint32_t)drain(&p, p.cq[0], c, 64);
	}
	while (got < want) {
		n = drain(&p, p.cq[0], c, 64);
		if (recv)
			recvs_ahead(&p, &rposted, &rdone, 64);
		TEST_ASSERT(n > 0, "opcode %u: %u of %u completions", op, got, want);
		for (i = 0; i < (uint32_t)n; i++)
			TEST_ASSERT_EQ(c[i].status, CQPOLL_STATUS_SUCCESS);
		got += (uint32_t)n;
	}
	TEST_ASSERT_EQ(got, want);
	qp_pair_close(&p);
	return TEST_PASS;
}

static int
test_route(void)
{
	static const uint32_t ops[] = {
		CQPOLL_MLX5_WR_SEND, CQPOLL_MLX5_WR_SEND_IMM, CQPOLL_MLX5_WR_SEND_INV,
		CQPOLL_MLX5_WR_RDMA_WRITE_IMM, CQPOLL_MLX5_WR_RDMA_READ,
	};
	size_t i;

	/* 70000 blocks: the 16-bit counter wraps. */
	if (route_run(CQPOLL_MLX5_WR_RDMA_WRITE, 70000) != TEST_PASS)
		return TEST_FAIL;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (route_run(ops[i], 3000) != TEST_PASS)
			return TEST_FAIL;
	return TEST_PASS;
}

/* What the route refuses, and the QPs that cannot be made. */
static int
test_route_refusals(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 8,
					    .burst_opcode = CQPOLL_MLX5_WR_RDMA_WRITE };
	struct cqpoll_mlx5_sge sg = { 0, 8, 0 }, empty = { 0, 0, 0 };
	struct cqpoll_mlx5_send_wr wr[12];
	struct cqpoll_completion c[16];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct mlx5dv_qp dv;
	struct qp_pair p;
	uint32_t i, cnt;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	cqpoll_mlx5_emu_qp_dv(cqpoll_mlx5_qp_ibv(p.qp[0]), &dv);
	cnt = p.caps[0].max_send_wr;
	TEST_ASSERT(cnt < 12, "max_send_wr %u", cnt);
	sg = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 8, p.mr->lkey };
	empty.lkey = p.mr->lkey;
	for (i = 0; i < 12; i++)
		wr[i] = (struct cqpoll_mlx5_send_wr){ .wr_id = i, .sg_list = &sg,
			.remote_addr = (uintptr_t)p.buf + 4096, .rkey = p.mr->rkey };
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_burst(p.qp[0], wr, 0), -EINVAL);
	/* An empty entry: refused first, the end of the burst later (no WQE for it). */
	wr[0].sg_list = &empty;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_burst(p.qp[0], wr, 3), -EINVAL);
	TEST_ASSERT_EQ(be32toh(dv.dbrec[1]), 0);
	wr[0].sg_list = &sg;
	wr[2].sg_list = &empty;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_burst(p.qp[0], wr, 3), 2);
	TEST_ASSERT_EQ(be32toh(dv.dbrec[1]), 2);
	wr[2].sg_list = &sg;
	/* max_send_wr outstanding: the first ones that fit, then -ENOMEM. */
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_burst(p.qp[0], wr, 12), (int)cnt - 2);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_burst(p.qp[0], wr, 1), -ENOMEM);
	/* None was signalled: nothing comes back, nothing is retired. */
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 16), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_burst(p.qp[0], wr, 1), -ENOMEM);
	/* Not in RTS: refused. */
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_modify(p.qp[0], &a, IBV_QP_STATE), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_burst(p.qp[0], wr, 1), -EINVAL);
	qp_pair_close(&p);
	/* No route for an atomic; no unknown flag. */
	conf.burst_opcode = CQPOLL_MLX5_WR_ATOMIC_CS;
	TEST_ASSERT(qp_pair_open(&p, &conf, 256, 65536, 7) == -EINVAL, "atomic route taken");
	conf.burst_opcode = 0;
	conf.flags = 1u << 7;
	TEST_ASSERT(qp_pair_open(&p, &conf, 256, 65536, 7) == -EINVAL, "unknown flag taken");
	return TEST_PASS;
}

int
main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_send_inv),
		TEST_CASE(test_sig_all),
		TEST_CASE(test_route),
		TEST_CASE(test_route_refusals),
	};
	static const struct test_case control[] = {
		TEST_CASE(test_sig_all),
	};

	/* The negative control runs the signal-all case alone. */
	if (argc > 1 && strcmp(argv[1], "--sig-all-only") == 0)
		return test_run("mlx5-qp-route-control", control, 1);
	return test_run("mlx5-qp-route", cases, sizeof(cases) / sizeof(cases[0]));
}
