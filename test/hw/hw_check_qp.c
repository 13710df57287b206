/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll's own QP (cqpoll_mlx5_qp_*) against libibverbs on the same
 * traffic: sends (one inline, one unsignalled), an RDMA write with
 * immediate, an unsignalled RDMA write, a read, fetch-and-add and
 * compare-and-swap, then an unsignalled send with a bad lkey and a send
 * flushed behind it. Every completion's wr_id, status, opcode, length and
 * immediate is held against the verbs specification (the table below),
 * and, on a device, against the completions of the same requests posted
 * with ibv_post_send() on a verbs CQ, field by field. Emulated, cqpoll's QP
 * runs on the emulated mlx5 device (no verbs QP exists there), against the
 * specification only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#include "hw_check.h"

#define QP_BUF 8192
#define QP_RECVS 8
#define QP_MAXC 32
#define QP_WRID 0x5100u

enum { R_SEND, R_SEND_INL, R_WRITE_IMM, R_WRITE, R_READ, R_FAA, R_CAS, R_BAD_LKEY };

struct qp_req {
	int kind;
	uint32_t len;
	int signaled;
};

static const struct qp_req script[] = {
	{ R_SEND, 8, 1 }, { R_WRITE_IMM, 16, 1 }, { R_WRITE, 32, 0 }, { R_READ, 32, 1 },
	{ R_FAA, 8, 1 }, { R_CAS, 8, 1 }, { R_SEND_INL, 24, 0 }, { R_SEND, 8, 1 },
	{ R_BAD_LKEY, 8, 0 }, { R_SEND, 8, 1 },
};
#define NREQ (sizeof(script) / sizeof(script[0]))

/*
 * The verbs specification of the script: A's completions (signalled ones,
 * and every failed or flushed one), then B's receives, in order.
 */
struct qp_exp {
	int side;         /* 0: A, 1: B */
	uint64_t wr_id;
	uint8_t status;
	uint8_t opcode;
	int32_t byte_len; /* -1: not defined by verbs */
	uint32_t imm;     /* network order, with F_IMM */
};

static int
qp_expect(struct qp_exp *e)
{
	int n = 0, err = 0, recv = 0;
	size_t i;

	for (i = 0; i < NREQ; i++) {
		const struct qp_req *q = &script[i];
		struct qp_exp x = { .side = 0, .wr_id = QP_WRID + i, .byte_len = -1 };

		if (err) {
			x.status = CQPOLL_STATUS_WR_FLUSH_ERR;
			e[n++] = x;
			continue;
		}
		if (q->kind == R_BAD_LKEY) {
			x.status = CQPOLL_STATUS_LOC_PROT_ERR;
			e[n++] = x;
			err = 1;
			continue;
		}
		x.opcode = q->kind == R_WRITE || q->kind == R_WRITE_IMM ? CQPOLL_OP_RDMA_WRITE :
			q->kind == R_READ ? CQPOLL_OP_RDMA_READ : q->kind == R_FAA ?
			CQPOLL_OP_FETCH_ADD : q->kind == R_CAS ? CQPOLL_OP_COMP_SWAP : CQPOLL_OP_SEND;
		if (q->kind == R_READ)
			x.byte_len = (int32_t)q->len;
		if (q->kind == R_FAA || q->kind == R_CAS)
			x.byte_len = 8;
		if (q->signaled)
			e[n++] = x;
	}
	for (i = 0; i < NREQ; i++) {
		const struct qp_req *q = &script[i];
		struct qp_exp x = { .side = 1, .byte_len = (int32_t)q->len };

		if (q->kind == R_BAD_LKEY)
			break;
		if (q->kind != R_SEND && q->kind != R_SEND_INL && q->kind != R_WRITE_IMM)
			continue;
		x.wr_id = QP_WRID + 0x100 + (uint64_t)recv++;
		x.opcode = q->kind == R_WRITE_IMM ? CQPOLL_OP_RECV_RDMA_WITH_IMM : CQPOLL_OP_RECV;
		x.imm = q->kind == R_WRITE_IMM ? htonl(0x1234u + (uint32_t)i) : 0;
		e[n++] = x;
	}
	return n;
}

/* One run: A posts the script, B receives; completions in the spec's order. */
struct qp_run {
	struct ibv_context *ctx;
	bool emulated, cqpoll;    /* A is cqpoll's QP (else a verbs QP) */
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct cqpoll_cq *cq_a, *cq_b;       /* cqpoll CQs */
	struct cqpoll_mlx5_qp *cqp_a, *cqp_b;
	struct ibv_cq *vcq_a, *vcq_b;        /* verbs CQs (device) */
	struct ibv_qp *qp_a, *qp_b;          /* verbs QPs (device) */
	struct hw_lb_plan plan;
};

static void
run_close(struct qp_run *r)
{
	cqpoll_mlx5_qp_destroy(r->cqp_a);
	cqpoll_mlx5_qp_destroy(r->cqp_b);
	if (r->qp_a != NULL)
		ibv_destroy_qp(r->qp_a);
	if (r->qp_b != NULL)
		ibv_destroy_qp(r->qp_b);
	cqpoll_cq_destroy(r->cq_a);
	cqpoll_cq_destroy(r->cq_b);
	if (r->vcq_a != NULL)
		ibv_destroy_cq(r->vcq_a);
	if (r->vcq_b != NULL)
		ibv_destroy_cq(r->vcq_b);
	if (r->mr != NULL)
		r->emulated ? (void)cqpoll_mlx5_emu_dereg_mr(r->mr) : (void)ibv_dereg_mr(r->mr);
	if (r->pd != NULL)
		r->emulated ? (void)cqpoll_mlx5_emu_dealloc_pd(r->pd) : (void)ibv_dealloc_pd(r->pd);
	if (r->emulated && r->ctx != NULL)
		cqpoll_mlx5_emu_close(r->ctx);
	free(r->buf);
}

static int
qp_modify_all(struct cqpoll_mlx5_qp *qp, struct qp_run *r, uint32_t dest)
{
	static const enum ibv_qp_state st[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	struct ibv_qp_attr a;
	int i, mask, e;

	for (i = 0; i < 3; i++) {
		mask = hw_lb_attr(&r->plan, st[i], dest, &a);
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC;
		e = cqpoll_mlx5_qp_modify(qp, &a, mask);
		if (e != 0)
			return e;
	}
	return 0;
}

static int
run_open(struct qp_run *r, struct hw_target *t, bool cqpoll, char *why, size_t len)
{
	struct cqpoll_mlx5_qp_conf qc = { .max_send_wr = 32, .max_recv_wr = QP_RECVS,
					  .max_inline_data = 32 };
	struct cqpoll_mlx5_qp_caps ca, cb;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	memset(r, 0, sizeof(*r));
	r->emulated = t->emulated;
	r->cqpoll = cqpoll;
	r->buf = aligned_alloc(4096, QP_BUF);
	if (r->buf == NULL)
		return snprintf(why, len, "out of memory"), -1;
	memset(r->buf, 0, QP_BUF);
	if (t->emulated) {
		struct cqpoll_mlx5_emu_conf cc = { .arm = CQPOLL_ARM_LEVEL,
						   .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };

		/* Plan fields the emulated device ignores. */
		r->plan.port = 1;
		r->plan.mtu = IBV_MTU_1024;
		r->ctx = cqpoll_mlx5_emu_open();
		r->pd = r->ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(r->ctx) : NULL;
		r->mr = r->pd != NULL ? cqpoll_mlx5_emu_reg_mr(r->pd, r->buf, QP_BUF, access) : NULL;
		r->cq_a = cqpoll_mlx5_emu_cq_create(&cc);
		r->cq_b = cqpoll_mlx5_emu_cq_create(&cc);
		if (r->mr == NULL || r->cq_a == NULL || r->cq_b == NULL)
			return snprintf(why, len, "emulated device: %s", strerror(errno)), -1;
		qc.send_cq = qc.recv_cq = r->cq_a;
		r->cqp_a = cqpoll_mlx5_qp_create(r->pd, &qc);
		qc.send_cq = qc.recv_cq = r->cq_b;
		r->cqp_b = r->cqp_a != NULL ? cqpoll_mlx5_qp_create(r->pd, &qc) : NULL;
		if (r->cqp_b == NULL)
			return snprintf(why, len, "cqpoll_mlx5_qp_create: %s", strerror(errno)), -1;
		cqpoll_mlx5_qp_caps(r->cqp_a, &ca);
		cqpoll_mlx5_qp_caps(r->cqp_b, &cb);
		if (qp_modify_all(r->cqp_a, r, cb.qp_num) != 0 ||
		    qp_modify_all(r->cqp_b, r, ca.qp_num) != 0)
			return snprintf(why, len, "cqpoll_mlx5_qp_modify failed"), -1;
		return 0;
	}
	r->ctx = t->ctx;
	if (hw_lb_plan_device(r->ctx, &r->plan, why, len) != 0)
		return -1;
	r->pd = ibv_alloc_pd(r->ctx);
	r->mr = r->pd != NULL ? ibv_reg_mr(r->pd, r->buf, QP_BUF, access) : NULL;
	r->vcq_b = ibv_create_cq(r->ctx, 64, NULL, NULL, 0);
	if (r->mr == NULL || r->vcq_b == NULL)
		return snprintf(why, len, "ibv_reg_mr / ibv_create_cq: %s", strerror(errno)), -1;
	{
		struct ibv_qp_init_attr a = { .send_cq = r->vcq_b, .recv_cq = r->vcq_b,
			.cap = { .max_send_wr = 1, .max_recv_wr = QP_RECVS, .max_send_sge = 1,
				 .max_recv_sge = 1 }, .qp_type = IBV_QPT_RC };

		r->qp_b = ibv_create_qp(r->pd, &a);
		if (r->qp_b == NULL)
			return snprintf(why, len, "ibv_create_qp(B): %s", strerror(errno)), -1;
		if (cqpoll) {
			struct cqpoll_mlx5_conf mc = { .size = 64 };

			r->cq_a = cqpoll_mlx5_cq_create(r->ctx, &mc);
			qc.send_cq = qc.recv_cq = r->cq_a;
			r->cqp_a = r->cq_a != NULL ? cqpoll_mlx5_qp_create(r->pd, &qc) : NULL;
			if (r->cqp_a == NULL)
				return snprintf(why, len, "cqpoll_mlx5_qp_create: %s",
						strerror(errno)), -1;
			cqpoll_mlx5_qp_caps(r->cqp_a, &ca);
			if (qp_modify_all(r->cqp_a, r, r->qp_b->qp_num) != 0)
				return snprintf(why, len, "cqpoll_mlx5_qp_modify failed"), -1;
			return hw_lb_connect(r->qp_b, &r->plan, ca.qp_num, why, len) != 0 ? -1 : 0;
		}
		r->vcq_a = ibv_create_cq(r->ctx, 64, NULL, NULL, 0);
		a.send_cq = a.recv_cq = r->vcq_a;
		a.cap.max_send_wr = 32;
		a.cap.max_recv_wr = 1;
		a.cap.max_inline_data = 32;
		r->qp_a = r->vcq_a != NULL ? ibv_create_qp(r->pd, &a) : NULL;
		if (r->qp_a == NULL)
			return snprintf(why, len, "ibv_create_qp(A): %s", strerror(errno)), -1;
		if (hw_lb_connect(r->qp_a, &r->plan, r->qp_b->qp_num, why, len) != 0 ||
		    hw_lb_connect(r->qp_b, &r->plan, r->qp_a->qp_num, why, len) != 0)
			return -1;
	}
	return 0;
}

static int
post_recvs(struct qp_run *r)
{
	uint32_t k;

	for (k = 0; k < QP_RECVS; k++) {
		uint64_t addr = (uintptr_t)r->buf + 4096 + 64 * k;

		if (r->cqp_b != NULL) {
			struct cqpoll_mlx5_sge s = { addr, 64, r->mr->lkey };
			struct cqpoll_mlx5_recv_wr w = { .wr_id = QP_WRID + 0x100 + k, .sg_list = &s,
							 .num_sge = 1 };

			if (cqpoll_mlx5_qp_post_recv(r->cqp_b, &w, 1) != 1)
				return -1;
		} else {
			struct ibv_sge s = { addr, 64, r->mr->lkey };
			struct ibv_recv_wr w = { .wr_id = QP_WRID + 0x100 + k, .sg_list = &s,
						 .num_sge = 1 }, *bad;

			if (ibv_post_recv(r->qp_b, &w, &bad) != 0)
				return -1;
		}
	}
	return 0;
}

/* Request i of the script on A: cqpoll's QP or ibv_post_send(). */
static int
post_req(struct qp_run *r, size_t i)
{
	const struct qp_req *q = &script[i];
	uint64_t local = (uintptr_t)r->buf + 64 * i, remote = (uintptr_t)r->buf + 2048 + 64 * i;
	uint32_t lkey = q->kind == R_BAD_LKEY ? r->mr->lkey ^ 0x80 : r->mr->lkey;
	uint32_t imm = htonl(0x1234u + (uint32_t)i);
	static const uint32_t cq_op[] = {
		[R_SEND] = CQPOLL_MLX5_WR_SEND, [R_SEND_INL] = CQPOLL_MLX5_WR_SEND,
		[R_WRITE_IMM] = CQPOLL_MLX5_WR_RDMA_WRITE_IMM, [R_WRITE] = CQPOLL_MLX5_WR_RDMA_WRITE,
		[R_READ] = CQPOLL_MLX5_WR_RDMA_READ, [R_FAA] = CQPOLL_MLX5_WR_ATOMIC_FA,
		[R_CAS] = CQPOLL_MLX5_WR_ATOMIC_CS, [R_BAD_LKEY] = CQPOLL_MLX5_WR_SEND,
	};
	static const enum ibv_wr_opcode v_op[] = {
		[R_SEND] = IBV_WR_SEND, [R_SEND_INL] = IBV_WR_SEND,
		[R_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM, [R_WRITE] = IBV_WR_RDMA_WRITE,
		[R_READ] = IBV_WR_RDMA_READ, [R_FAA] = IBV_WR_ATOMIC_FETCH_AND_ADD,
		[R_CAS] = IBV_WR_ATOMIC_CMP_AND_SWP, [R_BAD_LKEY] = IBV_WR_SEND,
	};
	bool atomic = q->kind == R_FAA || q->kind == R_CAS;

	if (atomic)
		remote = (uintptr_t)r->buf + 3072;
	if (r->cqpoll) {
		struct cqpoll_mlx5_sge s = { local, q->len, lkey };
		struct cqpoll_mlx5_send_wr w = {
			.wr_id = QP_WRID + i, .sg_list = &s, .num_sge = 1, .opcode = cq_op[q->kind],
			.flags = (q->signaled ? CQPOLL_MLX5_SEND_F_SIGNALED : 0) |
				(q->kind == R_SEND_INL ? CQPOLL_MLX5_SEND_F_INLINE : 0),
			.imm_data = imm, .remote_addr = remote, .rkey = r->mr->rkey,
			.compare_add = 5, .swap = 7,
		};
		int n = cqpoll_mlx5_qp_post_send(r->cqp_a, &w, 1);

		if (r->emulated)
			cqpoll_mlx5_emu_run(r->ctx);
		return n == 1 ? 0 : -1;
	} else {
		struct ibv_sge s = { local, q->len, lkey };
		struct ibv_send_wr w, *bad;

		memset(&w, 0, sizeof(w));
		w.wr_id = QP_WRID + i;
		w.sg_list = &s;
		w.num_sge = 1;
		w.opcode = v_op[q->kind];
		w.send_flags = (q->signaled ? IBV_SEND_SIGNALED : 0) |
			(q->kind == R_SEND_INL ? IBV_SEND_INLINE : 0);
		w.imm_data = imm;
		if (atomic) {
			w.wr.atomic.remote_addr = remote;
			w.wr.atomic.rkey = r->mr->rkey;
			w.wr.atomic.compare_add = 5;
			w.wr.atomic.swap = 7;
		} else {
			w.wr.rdma.remote_addr = remote;
			w.wr.rdma.rkey = r->mr->rkey;
		}
		return ibv_post_send(r->qp_a, &w, &bad) == 0 ? 0 : -1;
	}
}

/* Read side @p side's completions (at most max) for a while. */
static int
collect(struct qp_run *r, int side, struct cqpoll_completion *c, int max)
{
	int n = 0, k, i, idle = 0;

	while (n < max && idle < 200000) {
		if (r->emulated)
			cqpoll_mlx5_emu_run(r->ctx);
		if (side == 0 && r->cq_a != NULL) {
			k = cqpoll_poll_burst(r->cq_a, c + n, (unsigned int)(max - n));
		} else if (side == 1 && r->cq_b != NULL) {
			k = cqpoll_poll_burst(r->cq_b, c + n, (unsigned int)(max - n));
		} else {
			struct ibv_wc wc[QP_MAXC];

			k = ibv_poll_cq(side == 0 ? r->vcq_a : r->vcq_b, max - n, wc);
			for (i = 0; i < k; i++) {
				memset(&c[n + i], 0, sizeof(c[0]));
				c[n + i].wr_id = wc[i].wr_id;
				c[n + i].flags = CQPOLL_COMPLETION_F_WR_ID |
					((wc[i].wc_flags & IBV_WC_WITH_IMM) ? CQPOLL_COMPLETION_F_IMM : 0);
				c[n + i].status = (uint8_t)wc[i].status;
				c[n + i].opcode = (uint8_t)wc[i].opcode;
				c[n + i].byte_len = wc[i].byte_len;
				c[n + i].imm_data = wc[i].imm_data;
			}
		}
		if (k < 0)
			return -1;
		n += k;
		idle = k == 0 ? idle + 1 : 0;
	}
	return n;
}

/* Run the script on one side; its completions, A's then B's. */
static int
run_script(struct hw_target *t, bool cqpoll, struct cqpoll_completion *c, char *why, size_t len)
{
	struct qp_run r;
	int na, nb;
	size_t i;

	if (run_open(&r, t, cqpoll, why, len) != 0 || post_recvs(&r) != 0) {
		if (why[0] == '\0')
			snprintf(why, len, "posting the receives");
		run_close(&r);
		return -1;
	}
	for (i = 0; i < NREQ; i++) {
		if (post_req(&r, i) != 0) {
			snprintf(why, len, "%s: posting request %zu failed",
				 cqpoll ? "cqpoll QP" : "ibv_post_send", i);
			run_close(&r);
			return -1;
		}
	}
	na = collect(&r, 0, c, QP_MAXC);
	nb = na >= 0 ? collect(&r, 1, c + na, QP_MAXC - na) : -1;
	run_close(&r);
	if (na < 0 || nb < 0) {
		snprintf(why, len, "polling failed");
		return -1;
	}
	return na + nb;
}

static int
check_spec(const struct cqpoll_completion *c, int n, const struct qp_exp *e, int ne,
	   const char *who, char *why, size_t len)
{
	int i;

	if (n != ne)
		return snprintf(why, len, "%s: %d completions, the specification has %d",
				who, n, ne), -1;
	for (i = 0; i < n; i++) {
		const char *bad = !(c[i].flags & CQPOLL_COMPLETION_F_WR_ID) ? "no wr_id" :
			c[i].wr_id != e[i].wr_id ? "wr_id" : c[i].status != e[i].status ?
			"status" : e[i].status != 0 ? NULL : c[i].opcode != e[i].opcode ? "opcode" :
			(e[i].byte_len >= 0 && c[i].byte_len != (uint32_t)e[i].byte_len) ?
			"byte_len" : (e[i].side == 1 && e[i].imm != 0 &&
				      (!(c[i].flags & CQPOLL_COMPLETION_F_IMM) ||
				       c[i].imm_data != e[i].imm)) ? "immediate" : NULL;

		if (bad != NULL)
			return snprintf(why, len, "%s: completion %d (wr_id 0x%llx): %s", who, i,
					(unsigned long long)c[i].wr_id, bad), -1;
	}
	return 0;
}

static void
qp_check(struct hw_target *t, struct hw_result *r)
{
	struct cqpoll_completion cq[QP_MAXC], cv[QP_MAXC];
	struct qp_exp e[QP_MAXC];
	int ne = qp_expect(e), nq, nv, i;
	char why[512] = "";

	if (!t->has_mlx5) {
		hw_skip(r, "%s is not an mlx5 device: cqpoll's QP is mlx5's", t->name);
		return;
	}
	nq = run_script(t, true, cq, why, sizeof(why));
	/* The negative control: one wr_id of cqpoll's QP handed back wrong. */
	if (nq > 0 && hw_control != NULL && strcmp(hw_control, "qp-wr-id") == 0)
		cq[nq - 1].wr_id ^= 1;
	if (nq < 0 || check_spec(cq, nq, e, ne, "cqpoll QP", why, sizeof(why)) != 0) {
		hw_fail(r, "%s", why);
		return;
	}
	if (t->emulated) {
		hw_data_i64(r, "completions", nq);
		hw_pass(r, "%d completions of cqpoll's QP (unsignalled failure and flush "
			"included) as the verbs specification says, each with its wr_id", nq);
		return;
	}
	nv = run_script(t, false, cv, why, sizeof(why));
	if (nv < 0 || check_spec(cv, nv, e, ne, "libibverbs", why, sizeof(why)) != 0) {
		hw_fail(r, "%s", why);
		return;
	}
	for (i = 0; i < nq; i++) {
		if (cq[i].wr_id != cv[i].wr_id || cq[i].status != cv[i].status ||
		    (cq[i].status == 0 && (cq[i].opcode != cv[i].opcode ||
					   cq[i].byte_len != cv[i].byte_len ||
					   cq[i].imm_data != cv[i].imm_data))) {
			hw_fail(r, "completion %d: cqpoll QP and libibverbs differ (wr_id 0x%llx "
				"vs 0x%llx, status %u vs %u)", i,
				(unsigned long long)cq[i].wr_id, (unsigned long long)cv[i].wr_id,
				cq[i].status, cv[i].status);
			return;
		}
	}
	hw_data_i64(r, "completions", nq);
	hw_pass(r, "%d completions equal through cqpoll's QP and through libibverbs", nq);
}

const struct hw_check hw_check_qp = {
	"qp-compare-verbs",
	"cqpoll's own QP vs libibverbs posting on the same traffic, errors included",
	qp_check };
