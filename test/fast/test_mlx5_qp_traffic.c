/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 10^6 mixed requests (-Dmlx5_qp_requests) through two cqpoll mlx5 QPs on
 * the emulated device: every opcode (send, send with immediate, send with
 * invalidate, RDMA write, write with immediate, read, compare-and-swap,
 * fetch-and-add), inline and
 * not, 1 to 3 scatter/gather entries (empty ones too), fences after reads
 * and atomics, bursts of 1 to 32 with one doorbell each, every 4th request
 * signalled. Each completion's wr_id, opcode, length, status and immediate
 * (or invalidated rkey),
 * and the data (remote memory, read results, atomics' old values, received
 * payloads), are checked against expectations from the model of
 * rdma-core's semantics (test/mlx5_wqe_model.h and the shadow memory here).
 *
 * --expect-stall: the negative control, linked against a build of libcqpoll
 * whose retirement frees only the signalled WQE's own blocks: its send ring
 * must fill with work the device finished, and this test must say so.
 */

#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cqpoll_test.h"
#include "mlx5_qp_test.h"
#include "mlx5_wqe_model.h"

#ifndef TEST_MLX5_QP_REQUESTS
#define TEST_MLX5_QP_REQUESTS 1000000
#endif

#define SIGNAL_EVERY 4
#define NSLOT 2048          /* local slots: more than can be outstanding */
#define SLOT 256
#define LOCAL_OFF 0
#define REMOTE_OFF (NSLOT * SLOT)
#define REMOTE_LEN 65536
#define ATOMIC_OFF (REMOTE_OFF + REMOTE_LEN)
#define ATOMIC_CNT 512
#define RECV_OFF (ATOMIC_OFF + ATOMIC_CNT * 8)
#define RSLOTS 512
#define BUF_LEN (RECV_OFF + RSLOTS * SLOT)
#define MAX_LEN 200
#define STALL_LOOKS 100000

struct req {
	struct cqpoll_mlx5_send_wr wr;
	struct cqpoll_mlx5_sge sg[3];
	uint32_t len;
	uint8_t expect[MAX_LEN];     /* read: the remote bytes; atomic: old value */
};

/* A receive the model expects at B, in order. */
struct rexp {
	uint64_t seq;
	uint32_t len;
	uint8_t opcode;
	uint8_t imm;
	uint8_t inv;                 /* imm_data is the invalidated rkey (F_INV) */
	uint8_t data;                /* the payload lands in the receive */
	uint32_t imm_data;
};

struct run {
	struct qp_pair p;
	uint64_t n, built, posted, done;   /* done: requests known complete */
	uint64_t rposted, rdone;
	struct req req[NSLOT];
	struct rexp rexp[RSLOTS];
	uint64_t rexp_head;
	uint8_t shadow[REMOTE_LEN];
	uint64_t ashadow[ATOMIC_CNT];
	uint64_t rnd;
	int prev_ordered;                  /* the last request was a read or atomic */
	uint64_t stall;
};

static int
op_atomic(uint32_t op)
{
	return op == CQPOLL_MLX5_WR_ATOMIC_CS || op == CQPOLL_MLX5_WR_ATOMIC_FA;
}

/* Reads and atomics: what they fetch lands in the local entry. */
static int
op_fetch(uint32_t op)
{
	return op == CQPOLL_MLX5_WR_RDMA_READ || op_atomic(op);
}

/* The opcodes that carry local bytes out (and may be inline). */
static int
op_carries(uint32_t op)
{
	return !op_fetch(op);
}

static uint8_t
gen(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131 + i * 7 + (seq >> 8));
}

/* Build request @p r->built: the WQE's inputs and what it must do. */
static void
build(struct run *r)
{
	uint64_t seq = r->built++, x = test_rnd(&r->rnd);
	struct req *q = &r->req[seq % NSLOT];
	uint8_t *local = r->p.buf + LOCAL_OFF + (seq % NSLOT) * SLOT;
	uint32_t op = (uint32_t)(x % 8), len, nsge, i, off, inl;
	struct cqpoll_mlx5_send_wr *w = &q->wr;

	memset(w, 0, sizeof(*w));
	w->wr_id = seq;
	w->opcode = op;
	w->sg_list = q->sg;
	inl = op_carries(op) && (x >> 8) % 2;
	len = (uint32_t)((x >> 16) % (inl ? r->p.caps[0].max_inline_data + 1 : MAX_LEN + 1));
	if (op_atomic(op))
		len = 8;
	if (op == CQPOLL_MLX5_WR_RDMA_READ && len == 0)
		len = 1;
	nsge = op_atomic(op) ? 1 : 1 + (uint32_t)((x >> 24) % 3);
	/* Split len over the entries; the middle one may be empty. */
	for (i = 0, off = 0; i < nsge; i++) {
		uint32_t l = i == nsge - 1 ? len - off : (uint32_t)((x >> (32 + 4 * i)) % (len - off + 1));

		if (nsge == 3 && i == 1 && (x >> 40) % 4 == 0)
			l = 0;
		q->sg[i] = (struct cqpoll_mlx5_sge){ (uintptr_t)local + off, l, r->p.mr->lkey };
		off += l;
	}
	w->num_sge = nsge;
	q->len = len;
	if (op_carries(op))
		for (i = 0; i < len; i++)
			local[i] = gen(seq, i);
	else
		memset(local, 0xee, len);
	if (inl)
		w->flags |= CQPOLL_MLX5_SEND_F_INLINE;
	if (seq % SIGNAL_EVERY == SIGNAL_EVERY - 1 || seq == r->n - 1)
		w->flags |= CQPOLL_MLX5_SEND_F_SIGNALED;
	/* Work that uses what an earlier read or atomic fetched waits for it (§3). */
	if (r->prev_ordered)
		w->flags |= CQPOLL_MLX5_SEND_F_FENCE;
	r->prev_ordered = op_fetch(op);
	w->rkey = r->p.mr->rkey;
	if (op == CQPOLL_MLX5_WR_SEND_IMM || op == CQPOLL_MLX5_WR_RDMA_WRITE_IMM)
		w->imm_data = htobe32((uint32_t)seq ^ 0x5a5a5a5au);
	/* Host order; the emulated device checks no key for it. */
	if (op == CQPOLL_MLX5_WR_SEND_INV)
		w->invalidate_rkey = (uint32_t)seq * 2654435761u;
	off = (uint32_t)((x >> 48) % (REMOTE_LEN - MAX_LEN));
	w->remote_addr = (uintptr_t)r->p.buf + REMOTE_OFF + off;
	if (op == CQPOLL_MLX5_WR_RDMA_WRITE || op == CQPOLL_MLX5_WR_RDMA_WRITE_IMM)
		memcpy(r->shadow + off, local, len);
	if (op == CQPOLL_MLX5_WR_RDMA_READ)
		memcpy(q->expect, r->shadow + off, len);
	if (op_atomic(op)) {
		uint32_t a = (uint32_t)((x >> 48) % ATOMIC_CNT);
		uint64_t *sh = &r->ashadow[a];

		w->remote_addr = (uintptr_t)r->p.buf + ATOMIC_OFF + a * 8;
		memcpy(q->expect, sh, 8);
		if (op == CQPOLL_MLX5_WR_ATOMIC_CS) {
			/* Half the swaps find their compare value. */
			w->compare_add = (x >> 12) % 2 ? *sh : test_rnd(&r->rnd);
			w->swap = test_rnd(&r->rnd);
			if (w->compare_add == *sh)
				*sh = w->swap;
		} else {
			w->compare_add = test_rnd(&r->rnd) >> 20;
			*sh += w->compare_add;
		}
	}
	if (op == CQPOLL_MLX5_WR_SEND || op == CQPOLL_MLX5_WR_SEND_IMM ||
	    op == CQPOLL_MLX5_WR_SEND_INV || op == CQPOLL_MLX5_WR_RDMA_WRITE_IMM) {
		struct rexp *e = &r->rexp[r->rexp_head++ % RSLOTS];

		e->seq = seq;
		e->len = len;
		e->opcode = op == CQPOLL_MLX5_WR_RDMA_WRITE_IMM ? CQPOLL_OP_RECV_RDMA_WITH_IMM :
			CQPOLL_OP_RECV;
		/* rdma-core handle_responder: WITH_IMM as is, WITH_INV the key in host order. */
		e->imm = op == CQPOLL_MLX5_WR_SEND_IMM || op == CQPOLL_MLX5_WR_RDMA_WRITE_IMM;
		e->inv = op == CQPOLL_MLX5_WR_SEND_INV;
		e->imm_data = w->imm_data;
		e->data = op != CQPOLL_MLX5_WR_RDMA_WRITE_IMM;
	}
}

/* Keep B's receive queue full: two entries of 128 bytes each. */
static int
refill(struct run *r)
{
	while (r->rposted - r->rdone < r->p.caps[1].max_recv_wr) {
		uint8_t *b = r->p.buf + RECV_OFF + (r->rposted % RSLOTS) * SLOT;
		struct cqpoll_mlx5_sge s[2] = { { (uintptr_t)b, 128, r->p.mr->lkey },
						{ (uintptr_t)b + 128, 128, r->p.mr->lkey } };
		struct cqpoll_mlx5_recv_wr w = { .wr_id = r->rposted, .sg_list = s, .num_sge = 2 };

		TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_recv(r->p.qp[1], &w, 1), 1);
		r->rposted++;
	}
	return TEST_PASS;
}

/* A requester completion: request @p c->wr_id and every unsignalled one before it. */
static int
check_req(struct run *r, const struct cqpoll_completion *c)
{
	uint64_t s = c->wr_id, k;
	const struct req *q = &r->req[s % NSLOT];

	TEST_ASSERT(c->flags & CQPOLL_COMPLETION_F_WR_ID, "completion without wr_id");
	TEST_ASSERT(s >= r->done && s < r->posted, "wr_id %" PRIu64 " not outstanding", s);
	TEST_ASSERT(q->wr.flags & CQPOLL_MLX5_SEND_F_SIGNALED, "unsignalled %" PRIu64, s);
	for (k = r->done; k < s; k++)
		TEST_ASSERT(!(r->req[k % NSLOT].wr.flags & CQPOLL_MLX5_SEND_F_SIGNALED),
			    "signalled %" PRIu64 " skipped before %" PRIu64, k, s);
	TEST_ASSERT_EQ(c->status, CQPOLL_STATUS_SUCCESS);
	TEST_ASSERT_EQ(c->opcode, model_req_opcode(q->wr.opcode));
	TEST_ASSERT_EQ(c->qp_num, r->p.caps[0].qp_num);
	/* rdma-core: reads report the bytes read, atomics 8. */
	if (q->wr.opcode == CQPOLL_MLX5_WR_RDMA_READ)
		TEST_ASSERT_EQ(c->byte_len, q->len);
	if (op_atomic(q->wr.opcode))
		TEST_ASSERT_EQ(c->byte_len, 8);
	/* Everything up to it is done: what the reads and atomics fetched. */
	for (k = r->done; k <= s; k++) {
		const struct req *d = &r->req[k % NSLOT];
		const uint8_t *local = r->p.buf + LOCAL_OFF + (k % NSLOT) * SLOT;

		if (op_fetch(d->wr.opcode))
			TEST_ASSERT(memcmp(local, d->expect, d->len) == 0,
				    "request %" PRIu64 " (opcode %u) fetched wrong data",
				    k, d->wr.opcode);
	}
	r->done = s + 1;
	return TEST_PASS;
}

static int
check_recv(struct run *r, const struct cqpoll_completion *c)
{
	const struct rexp *e = &r->rexp[r->rdone % RSLOTS];
	const uint8_t *b = r->p.buf + RECV_OFF + (r->rdone % RSLOTS) * SLOT;
	uint32_t i;

	TEST_ASSERT(c->flags & CQPOLL_COMPLETION_F_WR_ID, "receive without wr_id");
	TEST_ASSERT_EQ(c->wr_id, r->rdone);
	TEST_ASSERT_EQ(c->status, CQPOLL_STATUS_SUCCESS);
	TEST_ASSERT_EQ(c->opcode, e->opcode);
	TEST_ASSERT_EQ(c->byte_len, e->len);
	TEST_ASSERT_EQ(c->qp_num, r->p.caps[1].qp_num);
	TEST_ASSERT_EQ(!!(c->flags & CQPOLL_COMPLETION_F_IMM), e->imm);
	TEST_ASSERT_EQ(!!(c->flags & CQPOLL_COMPLETION_F_INV), e->inv);
	if (e->imm || e->inv)
		TEST_ASSERT_EQ(c->imm_data, e->imm_data);
	for (i = 0; e->data && i < e->len; i++)
		TEST_ASSERT(b[i] == gen(e->seq, i), "receive %" PRIu64 " byte %u", r->rdone, i);
	r->rdone++;
	return TEST_PASS;
}

/* Let the device work, read both CQs: completions read, or -1 on a failed check. */
static int
progress(struct run *r)
{
	struct cqpoll_completion c[64];
	int n, i, got = 0;

	cqpoll_mlx5_emu_run(r->p.ctx);
	while ((n = cqpoll_poll_burst(r->p.cq[0], c, 64)) > 0) {
		for (i = 0; i < n; i++)
			if (check_req(r, &c[i]) != TEST_PASS)
				return -1;
		got += n;
	}
	while ((n = cqpoll_poll_burst(r->p.cq[1], c, 64)) > 0) {
		for (i = 0; i < n; i++)
			if (check_recv(r, &c[i]) != TEST_PASS)
				return -1;
		got += n;
	}
	if (n < 0 || refill(r) != TEST_PASS)
		return -1;
	return got;
}

static int expect_stall;

static int
test_mixed(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 128, .max_recv_wr = 256,
					    .max_send_sge = 3, .max_recv_sge = 2,
					    .max_inline_data = 64 };
	struct cqpoll_mlx5_send_wr burst[32];
	struct run *r = calloc(1, sizeof(*r));
	uint64_t t0 = test_now_ns(), k;
	uint32_t i, want;
	int n, got, stalled = 0;

	TEST_ASSERT(r != NULL, "out of memory");
	r->n = TEST_MLX5_QP_REQUESTS;
	r->rnd = 0x9e3779b97f4a7c15ull;
	TEST_ASSERT_EQ(qp_pair_open(&r->p, &conf, 4096, BUF_LEN, 7), 0);
	TEST_ASSERT_EQ(refill(r), TEST_PASS);
	while (r->done < r->n) {
		/* Build the next burst (1 to 32) unless one is waiting. */
		want = 1 + (uint32_t)(test_rnd(&r->rnd) % 32);
		while (r->built < r->n && r->built - r->posted < want)
			build(r);
		for (i = 0; i < r->built - r->posted; i++)
			burst[i] = r->req[(r->posted + i) % NSLOT].wr;
		n = i == 0 ? 0 : cqpoll_mlx5_qp_post_send(r->p.qp[0], burst, i);
		TEST_ASSERT(n >= 0 || n == -ENOMEM, "post: %d", n);
		if (n > 0)
			r->posted += (uint64_t)n;
		got = progress(r);
		TEST_ASSERT(got >= 0, "at request %" PRIu64, r->done);
		/* Nothing posted, nothing completed, the device idle: stuck for good? */
		if (n <= 0 && got == 0) {
			if (++r->stall >= STALL_LOOKS) {
				stalled = 1;
				break;
			}
		} else {
			r->stall = 0;
		}
	}
	if (stalled) {
		struct cqpoll_mlx5_emu_wq_stats st;

		/* Stuck with the device done: the ring holds only finished work. */
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_wq_stats_get(r->p.ctx, &st), 0);
		TEST_ASSERT_EQ(st.wqes, r->posted);
		fprintf(stderr, "stalled: the send ring is full, %" PRIu64 " requests posted, "
			"every one of them completed by the device (%" PRIu64 " completed "
			"by the last signalled one): retirement lost blocks\n",
			r->posted, r->done);
		TEST_ASSERT(expect_stall, "the send ring never came back");
		qp_pair_close(&r->p);
		free(r);
		return TEST_PASS;
	}
	TEST_ASSERT(!expect_stall, "the negative control ran through");
	/* Receives all in, memory as the model has it. */
	for (k = 0; k < 1000 && r->rdone < r->rexp_head; k++)
		TEST_ASSERT(progress(r) >= 0, "draining receives");
	TEST_ASSERT_EQ(r->rdone, r->rexp_head);
	TEST_ASSERT(memcmp(r->p.buf + REMOTE_OFF, r->shadow, REMOTE_LEN) == 0, "remote memory");
	TEST_ASSERT(memcmp(r->p.buf + ATOMIC_OFF, r->ashadow, sizeof(r->ashadow)) == 0,
		    "atomic targets");
	printf("%" PRIu64 " requests, %" PRIu64 " receives, %.2f s\n", r->n, r->rdone,
	       (double)(test_now_ns() - t0) / 1e9);
	qp_pair_close(&r->p);
	free(r);
	return TEST_PASS;
}

int
main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_mixed),
	};

	expect_stall = argc > 1 && strcmp(argv[1], "--expect-stall") == 0;
	return test_run("mlx5-qp-traffic", cases, sizeof(cases) / sizeof(cases[0]));
}
