/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll mlx5 shared receive queues on the emulated device.
 *
 * test_api: sizes as rdma-core's provider makes them, the queue full at
 * max_wr outstanding (-ENOMEM), invalid receives and limits refused, a QP
 * on an SRQ without a receive queue of its own (its receive post refused),
 * the SRQ's destroy refused with -EBUSY while a QP uses it.
 *
 * test_traffic: 10^6 mixed requests (-Dmlx5_srq_requests; sends, sends with
 * immediate, writes with and without immediate, and the receives posted)
 * over two QPs sharing one SRQ per side, their four CQs polled in a random
 * order with random bursts, so that SRQ WQEs come back out of the order the
 * device took them. Expected values come from the model of rdma-core's free
 * list (test/mlx5_srq_model.h): the WQE each post takes and so the WQE index
 * each receive completion names, the posts refused when the list is full;
 * every send's wr_id once and in order per QP; every receive's wr_id once,
 * each QP's in the SRQ's order, with the payload of its QP's next send; the
 * limit event exactly when the count the SRQ holds drops below the armed
 * limit, once; a QP put in error flushes its sends, in order, and none of
 * the SRQ's receives, which the other QP then takes in order.
 *
 * test_threads: two threads post to one SRQ at once while a third sends and
 * polls: every receive once, each poster's in its own order (under TSan in
 * the sanitizer builds: the SRQ's lock).
 *
 * --expect-caught: the negative control, linked against a build of
 * libcqpoll whose SRQ gives a WQE back to its free list when it is posted,
 * not when its completion is retired: the traffic check must fail.
 */

#include <endian.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "cqpoll_test.h"
#include "mlx5_qp_test.h"
#include "mlx5_srq_model.h"
#include "mlx5_wqe_model.h"

#ifndef TEST_MLX5_SRQ_REQUESTS
#define TEST_MLX5_SRQ_REQUESTS 1000000
#endif

#define NQP 4                /* 0, 1 on SRQ 0 (side A); 2, 3 on SRQ 1 (side B) */
#define SRQ_WR 200           /* 256 WQEs: max_wr 255 */
#define SSLOTS 1024          /* send slots per QP: more than can be outstanding */
#define SLOT 256
#define RXRING 4096          /* receives a QP is owed, at most */
#define SEND_OFF 0
#define RECV_OFF (SEND_OFF + NQP * SSLOTS * SLOT)
#define RSIDE (256 * SLOT)
#define WRITE_OFF (RECV_OFF + 2 * RSIDE)
#define WRITE_LEN 65536
#define BUF_LEN (WRITE_OFF + 2 * WRITE_LEN)
#define IDLE_LOOKS 100000

struct sent {
	uint64_t seq;
	uint32_t len;
	uint32_t imm;
	uint8_t op;
	uint8_t sender;
};

struct run {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct cqpoll_cq *cq[NQP];
	struct cqpoll_mlx5_qp *qp[NQP];
	struct cqpoll_mlx5_qp_caps caps[NQP];
	struct cqpoll_mlx5_srq *srq[2];
	uint32_t max_wr[2];
	struct srq_model model[2];
	uint64_t n, requests;
	uint64_t sposted[NQP], sdone[NQP];
	struct sent sent[NQP][SSLOTS];
	struct sent rexp[NQP][RXRING];   /* the sends whose receives a QP is owed */
	uint64_t rexp_head[NQP], rexp_tail[NQP];
	uint64_t rposted[2], rdone[2];
	uint16_t *ridx[2];           /* by receive sequence: the WQE the model gave it */
	uint8_t *rseen[2];
	uint64_t rcap;
	uint64_t rlast[NQP];         /* next receive sequence a QP may take, at least */
	int refill_off[2];
	int flushing;                /* sends only; QP 0's complete flushed */
	uint64_t rnd;
};

static uint8_t
gen(uint64_t key, uint32_t i)
{
	return (uint8_t)(key * 131 + i * 7 + (key >> 8));
}

static int
srq_open(struct run *r)
{
	struct cqpoll_mlx5_emu_conf cc = {
		.size = 4096, .arm = CQPOLL_ARM_LEVEL, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	struct cqpoll_mlx5_srq_conf sc = { .max_wr = SRQ_WR, .max_sge = 2 };
	struct cqpoll_mlx5_qp_conf qc = { .max_send_wr = 64, .max_send_sge = 1,
					  .max_inline_data = 0 };
	struct cqpoll_mlx5_srq_attr a;
	int i;

	r->ctx = cqpoll_mlx5_emu_open();
	TEST_ASSERT(r->ctx != NULL, "emu open");
	r->pd = cqpoll_mlx5_emu_alloc_pd(r->ctx);
	r->buf = aligned_alloc(4096, BUF_LEN);
	TEST_ASSERT(r->pd != NULL && r->buf != NULL, "pd, buffer");
	memset(r->buf, 0, BUF_LEN);
	r->mr = cqpoll_mlx5_emu_reg_mr(r->pd, r->buf, BUF_LEN, QP_ACCESS);
	TEST_ASSERT(r->mr != NULL, "mr");
	for (i = 0; i < 2; i++) {
		r->srq[i] = cqpoll_mlx5_srq_create(r->pd, &sc);
		TEST_ASSERT(r->srq[i] != NULL, "srq create: %d", errno);
		TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(r->srq[i], &a), 0);
		/* align_queue_size(max_wr + 1) WQEs, one the list's anchor. */
		TEST_ASSERT_EQ(a.max_wr, 255);
		TEST_ASSERT_EQ(a.max_sge, 3);
		TEST_ASSERT_EQ(a.outstanding, 0);
		TEST_ASSERT_EQ(a.limit, 0);
		r->max_wr[i] = a.max_wr;
		TEST_ASSERT_EQ(srq_model_init(&r->model[i], SRQ_WR), 0);
		TEST_ASSERT_EQ(r->model[i].nwqes - 1, a.max_wr);
		r->ridx[i] = calloc(r->rcap, sizeof(uint16_t));
		r->rseen[i] = calloc(r->rcap, 1);
		TEST_ASSERT(r->ridx[i] != NULL && r->rseen[i] != NULL, "out of memory");
	}
	for (i = 0; i < NQP; i++) {
		r->cq[i] = cqpoll_mlx5_emu_cq_create(&cc);
		TEST_ASSERT(r->cq[i] != NULL, "cq");
		qc.send_cq = qc.recv_cq = r->cq[i];
		qc.srq = r->srq[i / 2];
		r->qp[i] = cqpoll_mlx5_qp_create(r->pd, &qc);
		TEST_ASSERT(r->qp[i] != NULL, "qp create: %d", errno);
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_caps(r->qp[i], &r->caps[i]), 0);
		TEST_ASSERT_EQ(r->caps[i].max_recv_wr, 0);
		TEST_ASSERT(r->caps[i].max_send_wr <= SSLOTS, "send slots");
	}
	for (i = 0; i < NQP; i++) {
		TEST_ASSERT_EQ(qp_pair_modify(r->qp[i], IBV_QPS_INIT, 0, 0), 0);
		TEST_ASSERT_EQ(qp_pair_modify(r->qp[i], IBV_QPS_RTR, r->caps[i ^ 2].qp_num, 0), 0);
		TEST_ASSERT_EQ(qp_pair_modify(r->qp[i], IBV_QPS_RTS, 0, 7), 0);
	}
	return TEST_PASS;
}

static int
srq_close(struct run *r)
{
	int i;

	/* ibv_destroy_srq(3): not while a QP is associated with it. */
	if (r->srq[0] != NULL && r->qp[0] != NULL)
		TEST_ASSERT_EQ(cqpoll_mlx5_srq_destroy(r->srq[0]), -EBUSY);
	for (i = 0; i < NQP; i++)
		if (r->qp[i] != NULL)
			TEST_ASSERT_EQ(cqpoll_mlx5_qp_destroy(r->qp[i]), 0);
	for (i = 0; i < 2; i++) {
		if (r->srq[i] != NULL)
			TEST_ASSERT_EQ(cqpoll_mlx5_srq_destroy(r->srq[i]), 0);
		srq_model_fini(&r->model[i]);
		free(r->ridx[i]);
		free(r->rseen[i]);
	}
	for (i = 0; i < NQP; i++)
		if (r->cq[i] != NULL)
			cqpoll_cq_destroy(r->cq[i]);
	if (r->mr != NULL)
		cqpoll_mlx5_emu_dereg_mr(r->mr);
	if (r->pd != NULL)
		cqpoll_mlx5_emu_dealloc_pd(r->pd);
	if (r->ctx != NULL)
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_close(r->ctx), 0);
	free(r->buf);
	return TEST_PASS;
}

static uint8_t *
rslot(struct run *r, int side, uint32_t idx)
{
	return r->buf + RECV_OFF + (size_t)side * RSIDE + (size_t)idx * SLOT;
}

/*
 * Post a burst of receives to side @p side's SRQ, at times more than it can
 * hold: the driver must take exactly what the model's free list takes.
 */
static int
refill(struct run *r, int side)
{
	struct cqpoll_mlx5_recv_wr w[40] = { { 0 } };
	struct cqpoll_mlx5_sge sg[40][2];
	uint32_t want, k, room = r->max_wr[side] - (uint32_t)(r->rposted[side] - r->rdone[side]);
	int32_t idx;
	int got;

	if (r->refill_off[side] || room == 0)
		return TEST_PASS;
	want = 1 + (uint32_t)(test_rnd(&r->rnd) % 32);
	if (want > room && test_rnd(&r->rnd) % 4 != 0)
		want = room;
	if (want > room + 2)
		want = room + 2;
	for (k = 0; k < want; k++) {
		uint64_t s = r->rposted[side] + k;

		idx = srq_model_post(&r->model[side]);
		if (idx < 0)
			break;
		TEST_ASSERT(s < r->rcap, "receive sequence over the test's records");
		r->ridx[side][s] = (uint16_t)idx;
		sg[k][0] = (struct cqpoll_mlx5_sge){ (uintptr_t)rslot(r, side, (uint32_t)idx), 128,
						     r->mr->lkey };
		sg[k][1] = (struct cqpoll_mlx5_sge){ (uintptr_t)rslot(r, side, (uint32_t)idx) + 128,
						     128, r->mr->lkey };
		w[k] = (struct cqpoll_mlx5_recv_wr){ .wr_id = s, .sg_list = sg[k], .num_sge = 2 };
	}
	/* The calls past the model's room: the same WQEs, which must be refused. */
	for (; k < want; k++)
		w[k] = w[0];
	got = cqpoll_mlx5_srq_post_recv(r->srq[side], w, want);
	if (want > room) {
		TEST_ASSERT(got == (room != 0 ? (int)room : -ENOMEM),
			    "post of %u with room for %u: %d", want, room, got);
	} else {
		TEST_ASSERT_EQ(got, want);
	}
	r->rposted[side] += (uint64_t)(got > 0 ? got : 0);
	r->requests += (uint64_t)(got > 0 ? got : 0);
	return TEST_PASS;
}

static int
check_send(struct run *r, int q, const struct cqpoll_completion *c)
{
	const struct sent *e = &r->sent[q][r->sdone[q] % SSLOTS];

	TEST_ASSERT(c->flags & CQPOLL_COMPLETION_F_WR_ID, "send completion without wr_id");
	TEST_ASSERT(c->wr_id == r->sdone[q] && r->sdone[q] < r->sposted[q],
		    "qp %d: send wr_id %" PRIu64 ", expected %" PRIu64, q, c->wr_id, r->sdone[q]);
	TEST_ASSERT_EQ(c->qp_num, r->caps[q].qp_num);
	if (r->flushing && q == 0) {
		TEST_ASSERT_EQ(c->status, CQPOLL_STATUS_WR_FLUSH_ERR);
	} else {
		TEST_ASSERT_EQ(c->status, CQPOLL_STATUS_SUCCESS);
		TEST_ASSERT_EQ(c->opcode, model_req_opcode(e->op));
	}
	r->sdone[q]++;
	return TEST_PASS;
}

static int
check_recv(struct run *r, int q, const struct cqpoll_completion *c)
{
	int side = q / 2;
	uint64_t s = c->wr_id;
	const struct sent *e;
	const uint8_t *b;
	uint32_t idx, i;
	uint64_t key;

	TEST_ASSERT(c->flags & CQPOLL_COMPLETION_F_WR_ID, "qp %d: receive without wr_id", q);
	TEST_ASSERT(s < r->rposted[side] && !r->rseen[side][s],
		    "qp %d: receive wr_id %" PRIu64 " not outstanding", q, s);
	/* Each QP takes the SRQ's receives in the order they were posted. */
	TEST_ASSERT(s >= r->rlast[q], "qp %d: receive %" PRIu64 " after %" PRIu64, q, s,
		    r->rlast[q]);
	idx = r->ridx[side][s];
	TEST_ASSERT(c->flags & CQPOLL_COMPLETION_F_WQE_COUNTER, "no WQE counter");
	TEST_ASSERT(c->wqe_counter == idx, "qp %d: receive %" PRIu64 " in WQE %u, the model's %u",
		    q, s, c->wqe_counter, idx);
	TEST_ASSERT_EQ(c->status, CQPOLL_STATUS_SUCCESS);
	TEST_ASSERT(r->rexp_tail[q] < r->rexp_head[q], "qp %d: a receive nobody sent", q);
	e = &r->rexp[q][r->rexp_tail[q]++ % RXRING];
	TEST_ASSERT_EQ(c->qp_num, r->caps[q].qp_num);
	TEST_ASSERT_EQ(c->byte_len, e->len);
	TEST_ASSERT_EQ(c->opcode, e->op == CQPOLL_MLX5_WR_RDMA_WRITE_IMM ?
		       CQPOLL_OP_RECV_RDMA_WITH_IMM : CQPOLL_OP_RECV);
	TEST_ASSERT_EQ(!!(c->flags & CQPOLL_COMPLETION_F_IMM), e->op != CQPOLL_MLX5_WR_SEND);
	if (e->op != CQPOLL_MLX5_WR_SEND)
		TEST_ASSERT_EQ(c->imm_data, e->imm);
	if (e->op != CQPOLL_MLX5_WR_RDMA_WRITE_IMM) {
		b = rslot(r, side, idx);
		key = (uint64_t)e->sender << 56 | e->seq;
		for (i = 0; i < e->len; i++)
			TEST_ASSERT(b[i] == gen(key, i), "qp %d: receive %" PRIu64 " byte %u",
				    q, s, i);
	}
	r->rseen[side][s] = 1;
	r->rlast[q] = s + 1;
	r->rdone[side]++;
	/* The driver gave the WQE back when it read this completion: so does the model. */
	srq_model_free(&r->model[side], idx);
	return TEST_PASS;
}

/* Post a burst on QP @p q (to QP q ^ 2); @p n 0: a random size. */
static int
send_burst(struct run *r, int q, uint32_t n)
{
	struct cqpoll_mlx5_send_wr w[16];
	struct cqpoll_mlx5_sge sg[16];
	uint32_t k, len, op;
	uint64_t x, seq;
	uint8_t *local;
	int got, peer = q ^ 2;

	if (n == 0)
		n = 1 + (uint32_t)(test_rnd(&r->rnd) % 16);
	for (k = 0; k < n; k++) {
		struct sent *e;

		seq = r->sposted[q] + k;
		e = &r->sent[q][seq % SSLOTS];
		x = test_rnd(&r->rnd);
		op = r->flushing ? CQPOLL_MLX5_WR_SEND : (uint32_t)(x % 4);
		op = op == 3 ? CQPOLL_MLX5_WR_RDMA_WRITE : op == 2 ? CQPOLL_MLX5_WR_RDMA_WRITE_IMM : op;
		len = (uint32_t)((x >> 8) % (2 * 128 + 1));
		local = r->buf + SEND_OFF + ((size_t)q * SSLOTS + seq % SSLOTS) * SLOT;
		for (uint32_t i = 0; i < len; i++)
			local[i] = gen((uint64_t)q << 56 | seq, i);
		sg[k] = (struct cqpoll_mlx5_sge){ (uintptr_t)local, len, r->mr->lkey };
		memset(&w[k], 0, sizeof(w[k]));
		w[k].wr_id = seq;
		w[k].opcode = op;
		w[k].sg_list = &sg[k];
		w[k].num_sge = 1;
		w[k].flags = CQPOLL_MLX5_SEND_F_SIGNALED;
		w[k].rkey = r->mr->rkey;
		w[k].remote_addr = (uintptr_t)r->buf + WRITE_OFF + (size_t)(peer / 2) * WRITE_LEN +
			(x >> 24) % (WRITE_LEN - SLOT);
		if (op != CQPOLL_MLX5_WR_SEND && op != CQPOLL_MLX5_WR_RDMA_WRITE)
			w[k].imm_data = htobe32((uint32_t)(x >> 32));
		*e = (struct sent){ .seq = seq, .len = len, .imm = w[k].imm_data, .op = (uint8_t)op,
				    .sender = (uint8_t)q };
	}
	got = cqpoll_mlx5_qp_post_send(r->qp[q], w, n);
	TEST_ASSERT(got > 0 || got == -ENOMEM, "post send: %d", got);
	for (k = 0; got > 0 && k < (uint32_t)got; k++) {
		const struct sent *e = &r->sent[q][(r->sposted[q] + k) % SSLOTS];

		/* What the peer's next receive must hold; none for a plain write. */
		if (e->op == CQPOLL_MLX5_WR_RDMA_WRITE)
			continue;
		TEST_ASSERT(r->rexp_head[peer] - r->rexp_tail[peer] < RXRING, "receive ring");
		r->rexp[peer][r->rexp_head[peer]++ % RXRING] = *e;
	}
	if (got > 0) {
		r->sposted[q] += (uint64_t)got;
		r->requests += (uint64_t)got;
	}
	return TEST_PASS;
}

/*
 * Let the device work and read the four CQs in a random order with random
 * bursts, some skipped (@p all: every CQ until all are empty and the device
 * idle). Completions read, or -1 on a failed check.
 */
static int
progress(struct run *r, int all)
{
	struct cqpoll_completion c[64];
	int n, i, k, q, got = 0, round;
	int order[NQP] = { 0, 1, 2, 3 };

	do {
		round = cqpoll_mlx5_emu_run(r->ctx);
		for (k = NQP - 1; k > 0; k--) {
			int j = (int)(test_rnd(&r->rnd) % (uint64_t)(k + 1)), t = order[k];

			order[k] = order[j];
			order[j] = t;
		}
		for (k = 0; k < NQP; k++) {
			q = order[k];
			if (!all && test_rnd(&r->rnd) % 4 == 0)
				continue;
			do {
				n = cqpoll_poll_burst(r->cq[q], c,
						      all ? 64 : 1 + (unsigned int)(test_rnd(&r->rnd) % 64));
				if (n < 0)
					return -1;
				for (i = 0; i < n; i++) {
					int rc = c[i].opcode == CQPOLL_OP_RECV ||
						c[i].opcode == CQPOLL_OP_RECV_RDMA_WITH_IMM ?
						check_recv(r, q, &c[i]) : check_send(r, q, &c[i]);

					if (rc != TEST_PASS)
						return -1;
				}
				got += n;
				round += n;
			} while (all && n > 0);
		}
	} while (all && round > 0);
	if (refill(r, 0) != TEST_PASS || refill(r, 1) != TEST_PASS)
		return -1;
	return got;
}

static int
outstanding_is(struct run *r, int side)
{
	struct cqpoll_mlx5_srq_attr a;

	TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(r->srq[side], &a), 0);
	TEST_ASSERT_EQ(a.outstanding, r->rposted[side] - r->rdone[side]);
	TEST_ASSERT_EQ(a.qps, 2);
	return TEST_PASS;
}

static int
traffic(struct run *r)
{
	struct cqpoll_mlx5_srq_attr a;
	uint64_t idle = 0, min_out = 0, s;
	uint32_t limit = 0;
	int q, got, armed = 0, m;

	r->refill_off[0] = r->refill_off[1] = 0;
	TEST_ASSERT(progress(r, 1) >= 0, "first refill");
	while (r->requests < r->n) {
		/* The limit of side B, armed a third of the way with its SRQ full. */
		if (!armed && r->requests >= r->n / 3) {
			TEST_ASSERT(progress(r, 1) >= 0, "before the limit");
			while (r->rposted[1] - r->rdone[1] < r->max_wr[1])
				TEST_ASSERT_EQ(refill(r, 1), TEST_PASS);
			limit = r->max_wr[1] / 2;
			TEST_ASSERT_EQ(cqpoll_mlx5_srq_arm_limit(r->srq[1], limit), 0);
			TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(r->srq[1], &a), 0);
			TEST_ASSERT_EQ(a.limit, limit);
			TEST_ASSERT_EQ(a.limit_events, 0);
			r->refill_off[1] = 1;
			min_out = r->max_wr[1];
			armed = 1;
		}
		q = (int)(test_rnd(&r->rnd) % NQP);
		TEST_ASSERT_EQ(send_burst(r, q, 0), TEST_PASS);
		got = progress(r, armed == 1);
		TEST_ASSERT(got >= 0, "at request %" PRIu64, r->requests);
		if (armed == 1) {
			/* Drained: what the SRQ holds is what is outstanding. */
			if (r->rposted[1] - r->rdone[1] < min_out)
				min_out = r->rposted[1] - r->rdone[1];
			TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(r->srq[1], &a), 0);
			TEST_ASSERT(a.limit_events == (min_out < limit),
				    "%u limit events with %" PRIu64 " held at least, limit %u",
				    a.limit_events, min_out, limit);
			if (a.limit_events == 1) {
				/* ibv_query_srq(3): 0 once the event disarmed it. */
				TEST_ASSERT_EQ(a.limit, 0);
				r->refill_off[1] = 0;
				armed = 2;
			}
		}
		if (got == 0) {
			TEST_ASSERT(++idle < IDLE_LOOKS, "no progress at request %" PRIu64,
				    r->requests);
		} else {
			idle = 0;
		}
	}
	TEST_ASSERT_EQ(armed, 2);
	/* Everything in. */
	TEST_ASSERT(progress(r, 1) >= 0, "draining");
	for (q = 0; q < NQP; q++) {
		TEST_ASSERT_EQ(r->sdone[q], r->sposted[q]);
		TEST_ASSERT_EQ(r->rexp_tail[q], r->rexp_head[q]);
	}
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(r->srq[1], &a), 0);
	TEST_ASSERT_EQ(a.limit_events, 1);
	TEST_ASSERT_EQ(outstanding_is(r, 0), TEST_PASS);
	TEST_ASSERT_EQ(outstanding_is(r, 1), TEST_PASS);
	/* The SRQ's receives were taken as a prefix of those posted. */
	for (s = 0; s < r->rdone[0]; s++)
		TEST_ASSERT(r->rseen[0][s], "side A receive %" PRIu64 " skipped", s);

	/* QP 0 in error: its sends flushed in order, the SRQ's receives kept. */
	r->refill_off[0] = 1;
	r->flushing = 1;
	TEST_ASSERT_EQ(send_burst(r, 0, 8), TEST_PASS);
	r->rexp_head[2] = r->rexp_tail[2];
	TEST_ASSERT_EQ(qp_pair_modify(r->qp[0], IBV_QPS_ERR, 0, 0), 0);
	s = r->rdone[0];
	TEST_ASSERT(progress(r, 1) >= 0, "flush");
	TEST_ASSERT_EQ(r->sdone[0], r->sposted[0]);
	TEST_ASSERT_EQ(r->rdone[0], s);
	TEST_ASSERT_EQ(outstanding_is(r, 0), TEST_PASS);
	/* The other QP takes them, the next ones in the SRQ's order. */
	m = (int)(r->rposted[0] - r->rdone[0] < 16 ? r->rposted[0] - r->rdone[0] : 16);
	TEST_ASSERT(m > 0, "nothing left posted on side A");
	/* Sends only (flushing), each taking a receive. */
	TEST_ASSERT_EQ(send_burst(r, 3, (uint32_t)m), TEST_PASS);
	TEST_ASSERT(progress(r, 1) >= 0, "after the flush");
	TEST_ASSERT_EQ(r->rdone[0], s + (uint64_t)m);
	for (; s < r->rdone[0]; s++)
		TEST_ASSERT(r->rseen[0][s], "side A receive %" PRIu64 " not taken in order", s);
	TEST_ASSERT_EQ(outstanding_is(r, 0), TEST_PASS);
	printf("%" PRIu64 " requests: sends %" PRIu64 ", receives %" PRIu64 " + %" PRIu64 "\n",
	       r->requests, r->sposted[0] + r->sposted[1] + r->sposted[2] + r->sposted[3],
	       r->rposted[0], r->rposted[1]);
	return TEST_PASS;
}

static int expect_caught;

static int
test_traffic(void)
{
	struct run *r = calloc(1, sizeof(*r));
	int rc;

	TEST_ASSERT(r != NULL, "out of memory");
	r->n = TEST_MLX5_SRQ_REQUESTS;
	r->rcap = r->n + 4096;
	r->rnd = 0x9e3779b97f4a7c15ull;
	rc = srq_open(r);
	if (rc == TEST_PASS)
		rc = traffic(r);
	if (srq_close(r) != TEST_PASS && !expect_caught)
		rc = TEST_FAIL;
	free(r);
	if (expect_caught) {
		TEST_ASSERT(rc != TEST_PASS, "the negative control ran through");
		fprintf(stderr, "caught: the SRQ handed out a WQE before its completion\n");
		return TEST_PASS;
	}
	return rc;
}

static int
test_api(void)
{
	struct cqpoll_mlx5_emu_conf cc = {
		.size = 256, .arm = CQPOLL_ARM_LEVEL, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	struct cqpoll_mlx5_srq_conf sc = { .max_wr = 5, .max_sge = 3 };
	struct cqpoll_mlx5_qp_conf qc = { 0 };
	struct cqpoll_mlx5_sge sg[4] = { { 0x1000, 8, 1 }, { 0x2000, 8, 1 }, { 0x3000, 8, 1 },
					 { 0x4000, 8, 1 } };
	struct cqpoll_mlx5_recv_wr w[9];
	struct cqpoll_mlx5_srq_attr a;
	struct cqpoll_mlx5_qp_caps caps;
	struct ibv_context *ctx = cqpoll_mlx5_emu_open();
	struct ibv_pd *pd = ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(ctx) : NULL;
	struct cqpoll_mlx5_srq *srq;
	struct cqpoll_mlx5_qp *qp;
	struct cqpoll_cq *cq;
	int i;

	TEST_ASSERT(pd != NULL, "emu");
	errno = 0;
	TEST_ASSERT(cqpoll_mlx5_srq_create(NULL, &sc) == NULL && errno == EINVAL, "NULL pd");
	srq = cqpoll_mlx5_srq_create(pd, &sc);
	TEST_ASSERT(srq != NULL, "create: %d", errno);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(srq, &a), 0);
	/* rdma-core: 8 WQEs of 64 bytes (16 + 3 x 16, a power of two). */
	TEST_ASSERT_EQ(a.max_wr, 7);
	TEST_ASSERT_EQ(a.max_sge, 3);
	TEST_ASSERT(a.srqn != 0, "no SRQ number");
	TEST_ASSERT_EQ(a.qps, 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(srq, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_arm_limit(srq, 8), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_arm_limit(NULL, 1), -EINVAL);
	for (i = 0; i < 9; i++)
		w[i] = (struct cqpoll_mlx5_recv_wr){ .wr_id = (uint64_t)i, .sg_list = sg,
						     .num_sge = 3 };
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_post_recv(srq, w, 0), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_post_recv(NULL, w, 1), -EINVAL);
	w[0].num_sge = 4;
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_post_recv(srq, w, 1), -EINVAL);
	w[0].num_sge = 3;
	/* max_wr outstanding, then full: rdma-core's ENOMEM. */
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_post_recv(srq, w, 9), 7);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_post_recv(srq, w, 1), -ENOMEM);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(srq, &a), 0);
	TEST_ASSERT_EQ(a.outstanding, 7);

	cq = cqpoll_mlx5_emu_cq_create(&cc);
	TEST_ASSERT(cq != NULL, "cq");
	qc.send_cq = qc.recv_cq = cq;
	qc.srq = srq;
	qp = cqpoll_mlx5_qp_create(pd, &qc);
	TEST_ASSERT(qp != NULL, "qp on the SRQ: %d", errno);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_caps(qp, &caps), 0);
	TEST_ASSERT_EQ(caps.max_recv_wr, 0);
	TEST_ASSERT_EQ(caps.rq_wqe_cnt, 0);
	TEST_ASSERT_EQ(qp_pair_modify(qp, IBV_QPS_INIT, 0, 0), 0);
	/* Its receives are the SRQ's. */
	w[0].num_sge = 1;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_recv(qp, w, 1), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(srq, &a), 0);
	TEST_ASSERT_EQ(a.qps, 1);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_destroy(srq), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_destroy(qp), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_destroy(srq), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_destroy(NULL), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_dealloc_pd(pd), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_close(ctx), 0);
	return TEST_PASS;
}

/*
 * A receive too small on an SRQ: its receiver's error CQE names the SRQ WQE
 * (wr_id, WQE back), the receiver goes to error and flushes none of the
 * SRQ's other receives, which the second receiver then takes in order.
 */
static int
test_recv_error(void)
{
	struct cqpoll_mlx5_emu_conf cc = {
		.size = 256, .arm = CQPOLL_ARM_LEVEL, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	struct cqpoll_mlx5_srq_conf sc = { .max_wr = 4, .max_sge = 1 };
	struct cqpoll_mlx5_qp_conf qc = { .max_send_wr = 8 };
	struct run *r = calloc(1, sizeof(*r));
	struct cqpoll_mlx5_recv_wr w[3];
	struct cqpoll_mlx5_sge rs[3], ss;
	struct cqpoll_mlx5_send_wr sw;
	struct cqpoll_mlx5_srq_attr a;
	struct cqpoll_completion c[8];
	int i, n;

	TEST_ASSERT(r != NULL, "out of memory");
	r->ctx = cqpoll_mlx5_emu_open();
	r->pd = r->ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(r->ctx) : NULL;
	r->buf = aligned_alloc(4096, 8192);
	TEST_ASSERT(r->pd != NULL && r->buf != NULL, "emu");
	memset(r->buf, 0x5a, 8192);
	r->mr = cqpoll_mlx5_emu_reg_mr(r->pd, r->buf, 8192, QP_ACCESS);
	r->srq[0] = r->mr != NULL ? cqpoll_mlx5_srq_create(r->pd, &sc) : NULL;
	TEST_ASSERT(r->srq[0] != NULL, "srq");
	/* 0, 1: receivers on the SRQ; 2, 3: their senders. */
	for (i = 0; i < NQP; i++) {
		r->cq[i] = cqpoll_mlx5_emu_cq_create(&cc);
		qc.send_cq = qc.recv_cq = r->cq[i];
		qc.srq = i < 2 ? r->srq[0] : NULL;
		r->qp[i] = r->cq[i] != NULL ? cqpoll_mlx5_qp_create(r->pd, &qc) : NULL;
		TEST_ASSERT(r->qp[i] != NULL, "qp %d", i);
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_caps(r->qp[i], &r->caps[i]), 0);
	}
	for (i = 0; i < NQP; i++) {
		TEST_ASSERT_EQ(qp_pair_modify(r->qp[i], IBV_QPS_INIT, 0, 0), 0);
		TEST_ASSERT_EQ(qp_pair_modify(r->qp[i], IBV_QPS_RTR, r->caps[i ^ 2].qp_num, 0), 0);
		TEST_ASSERT_EQ(qp_pair_modify(r->qp[i], IBV_QPS_RTS, 0, 7), 0);
	}
	for (i = 0; i < 3; i++) {
		rs[i] = (struct cqpoll_mlx5_sge){ (uintptr_t)r->buf + 4096 + 64 * i, 16,
						  r->mr->lkey };
		w[i] = (struct cqpoll_mlx5_recv_wr){ .wr_id = 100 + (uint64_t)i, .sg_list = &rs[i],
						     .num_sge = 1 };
	}
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_post_recv(r->srq[0], w, 3), 3);
	/* 64 bytes into 16: receiver 0 fails (rdma-core: IBV_WC_LOC_LEN_ERR). */
	ss = (struct cqpoll_mlx5_sge){ (uintptr_t)r->buf, 64, r->mr->lkey };
	sw = (struct cqpoll_mlx5_send_wr){ .wr_id = 7, .sg_list = &ss, .num_sge = 1,
					   .opcode = CQPOLL_MLX5_WR_SEND,
					   .flags = CQPOLL_MLX5_SEND_F_SIGNALED };
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(r->qp[2], &sw, 1), 1);
	cqpoll_mlx5_emu_run(r->ctx);
	n = cqpoll_poll_burst(r->cq[0], c, 8);
	TEST_ASSERT_EQ(n, 1);
	TEST_ASSERT_EQ(c[0].status, CQPOLL_STATUS_LOC_LEN_ERR);
	TEST_ASSERT(c[0].flags & CQPOLL_COMPLETION_F_WR_ID, "error without wr_id");
	TEST_ASSERT_EQ(c[0].wr_id, 100);
	TEST_ASSERT_EQ(c[0].wqe_counter, 0);
	/* Nothing more, flushed or not, on the failed receiver. */
	cqpoll_mlx5_emu_run(r->ctx);
	TEST_ASSERT_EQ(cqpoll_poll_burst(r->cq[0], c, 8), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(r->srq[0], &a), 0);
	TEST_ASSERT_EQ(a.outstanding, 2);
	/* The second receiver takes the next two, in the SRQ's order. */
	ss.length = 16;
	for (i = 0; i < 2; i++) {
		sw.wr_id = 8 + (uint64_t)i;
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(r->qp[3], &sw, 1), 1);
		cqpoll_mlx5_emu_run(r->ctx);
		n = cqpoll_poll_burst(r->cq[1], c, 8);
		TEST_ASSERT_EQ(n, 1);
		TEST_ASSERT_EQ(c[0].status, CQPOLL_STATUS_SUCCESS);
		TEST_ASSERT_EQ(c[0].wr_id, 101 + (uint64_t)i);
		TEST_ASSERT_EQ(c[0].wqe_counter, 1 + i);
	}
	TEST_ASSERT_EQ(cqpoll_mlx5_srq_query(r->srq[0], &a), 0);
	TEST_ASSERT_EQ(a.outstanding, 0);
	r->rcap = 0;
	return srq_close(r) == TEST_PASS ? (free(r), TEST_PASS) : TEST_FAIL;
}

#define THR_RECVS 20000u

struct poster {
	struct cqpoll_mlx5_srq *srq;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint64_t id;
	int err;
};

static void *
poster_run(void *arg)
{
	struct poster *p = arg;
	struct cqpoll_mlx5_sge sg = { (uintptr_t)p->buf, 64, p->mr->lkey };
	struct cqpoll_mlx5_recv_wr w[4];
	uint32_t k = 0, i, n;
	int got;

	while (k < THR_RECVS) {
		n = THR_RECVS - k < 4 ? THR_RECVS - k : 4;
		for (i = 0; i < n; i++)
			w[i] = (struct cqpoll_mlx5_recv_wr){ .wr_id = p->id << 32 | (k + i),
							     .sg_list = &sg, .num_sge = 1 };
		got = cqpoll_mlx5_srq_post_recv(p->srq, w, n);
		if (got == -ENOMEM) {
			sched_yield();
			continue;
		}
		if (got <= 0) {
			p->err = got;
			return NULL;
		}
		k += (uint32_t)got;
	}
	return NULL;
}

static int
test_threads(void)
{
	struct cqpoll_mlx5_emu_conf cc = {
		.size = 1024, .arm = CQPOLL_ARM_LEVEL, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	struct cqpoll_mlx5_srq_conf sc = { .max_wr = 64, .max_sge = 1 };
	struct cqpoll_mlx5_qp_conf qc = { .max_send_wr = 32 };
	struct run *r = calloc(1, sizeof(*r));
	struct poster p[2];
	pthread_t th[2];
	struct cqpoll_completion c[64];
	struct cqpoll_mlx5_sge ss;
	struct cqpoll_mlx5_send_wr sw;
	uint64_t sent = 0, sdone = 0, got = 0, next[2] = { 0, 0 }, idle = 0;
	int i, n;

	TEST_ASSERT(r != NULL, "out of memory");
	r->ctx = cqpoll_mlx5_emu_open();
	r->pd = r->ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(r->ctx) : NULL;
	r->buf = aligned_alloc(4096, 8192);
	TEST_ASSERT(r->pd != NULL && r->buf != NULL, "emu");
	memset(r->buf, 0, 8192);
	r->mr = cqpoll_mlx5_emu_reg_mr(r->pd, r->buf, 8192, QP_ACCESS);
	r->srq[0] = r->mr != NULL ? cqpoll_mlx5_srq_create(r->pd, &sc) : NULL;
	TEST_ASSERT(r->srq[0] != NULL, "srq");
	/* 0: the receiver on the SRQ, 2: its sender. */
	for (i = 0; i < NQP; i += 2) {
		r->cq[i] = cqpoll_mlx5_emu_cq_create(&cc);
		qc.send_cq = qc.recv_cq = r->cq[i];
		qc.srq = i == 0 ? r->srq[0] : NULL;
		r->qp[i] = r->cq[i] != NULL ? cqpoll_mlx5_qp_create(r->pd, &qc) : NULL;
		TEST_ASSERT(r->qp[i] != NULL, "qp %d", i);
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_caps(r->qp[i], &r->caps[i]), 0);
	}
	for (i = 0; i < NQP; i += 2) {
		TEST_ASSERT_EQ(qp_pair_modify(r->qp[i], IBV_QPS_INIT, 0, 0), 0);
		TEST_ASSERT_EQ(qp_pair_modify(r->qp[i], IBV_QPS_RTR, r->caps[i ^ 2].qp_num, 0), 0);
		TEST_ASSERT_EQ(qp_pair_modify(r->qp[i], IBV_QPS_RTS, 0, 7), 0);
	}
	for (i = 0; i < 2; i++) {
		p[i] = (struct poster){ .srq = r->srq[0], .mr = r->mr,
					.buf = r->buf + 4096 + 1024 * i, .id = (uint64_t)i + 1 };
		TEST_ASSERT_EQ(pthread_create(&th[i], NULL, poster_run, &p[i]), 0);
	}
	ss = (struct cqpoll_mlx5_sge){ (uintptr_t)r->buf, 8, r->mr->lkey };
	sw = (struct cqpoll_mlx5_send_wr){ .sg_list = &ss, .num_sge = 1,
					   .opcode = CQPOLL_MLX5_WR_SEND,
					   .flags = CQPOLL_MLX5_SEND_F_SIGNALED };
	while (got < 2 * THR_RECVS && idle < 100000000) {
		if (sent < 2 * THR_RECVS && sent - sdone < r->caps[2].max_send_wr) {
			sw.wr_id = sent;
			if (cqpoll_mlx5_qp_post_send(r->qp[2], &sw, 1) == 1)
				sent++;
		}
		cqpoll_mlx5_emu_run(r->ctx);
		n = cqpoll_poll_burst(r->cq[2], c, 64);
		TEST_ASSERT(n >= 0, "send poll");
		for (i = 0; i < n; i++) {
			TEST_ASSERT_EQ(c[i].status, CQPOLL_STATUS_SUCCESS);
			TEST_ASSERT_EQ(c[i].wr_id, sdone);
			sdone++;
		}
		n = cqpoll_poll_burst(r->cq[0], c, 64);
		TEST_ASSERT(n >= 0, "receive poll");
		idle = n == 0 ? idle + 1 : 0;
		for (i = 0; i < n; i++) {
			uint64_t t = c[i].wr_id >> 32;

			TEST_ASSERT(c[i].flags & CQPOLL_COMPLETION_F_WR_ID, "receive without wr_id");
			TEST_ASSERT_EQ(c[i].status, CQPOLL_STATUS_SUCCESS);
			TEST_ASSERT(t == 1 || t == 2, "wr_id 0x%" PRIx64, c[i].wr_id);
			/* Once each, each poster's in its order. */
			TEST_ASSERT_EQ(c[i].wr_id & 0xffffffffu, next[t - 1]);
			next[t - 1]++;
			got++;
		}
	}
	for (i = 0; i < 2; i++) {
		TEST_ASSERT_EQ(pthread_join(th[i], NULL), 0);
		TEST_ASSERT_EQ(p[i].err, 0);
		TEST_ASSERT_EQ(next[i], THR_RECVS);
	}
	TEST_ASSERT_EQ(got, 2 * THR_RECVS);
	r->rcap = 0;
	return srq_close(r) == TEST_PASS ? (free(r), TEST_PASS) : TEST_FAIL;
}

int
main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_api),
		TEST_CASE(test_recv_error),
		TEST_CASE(test_threads),
		TEST_CASE(test_traffic),
	};
	static const struct test_case control[] = {
		TEST_CASE(test_traffic),
	};

	expect_caught = argc > 1 && strcmp(argv[1], "--expect-caught") == 0;
	if (expect_caught)
		return test_run("mlx5-srq-control", control, 1);
	return test_run("mlx5-srq", cases, sizeof(cases) / sizeof(cases[0]));
}
