/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A send with invalidate through cqpoll's own QP (CQPOLL_MLX5_WR_SEND_INV),
 * held against the verbs specification as rdma-core reports it: the
 * sender's completion is IBV_WC_SEND (cq.c handle_good_req), the
 * receiver's IBV_WC_RECV with IBV_WC_WITH_INV and the invalidated rkey in
 * host order (handle_responder, MLX5_CQE_RESP_SEND_INV). On a device the
 * receiver is a verbs QP whose type 2 memory window, bound to a region of
 * it, is the key invalidated (a region's own key cannot be); emulated, both
 * QPs are cqpoll's on the emulated mlx5 device, which reports the key
 * without invalidating anything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#include "hw_check.h"

#define SI_BUF 8192
#define SI_LEN 24
#define SI_WRID 0x5200u

struct si_run {
	struct ibv_context *ctx;
	bool emulated;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	uint8_t *buf;
	struct cqpoll_cq *cq_a, *cq_b;
	struct cqpoll_mlx5_qp *qp_a, *qp_b;   /* qp_b: emulated only */
	struct ibv_cq *vcq_b;
	struct ibv_qp *vqp_b;
	struct hw_lb_plan plan;
	uint32_t rkey;                       /* the key to invalidate */
};

static void
si_close(struct si_run *r)
{
	cqpoll_mlx5_qp_destroy(r->qp_a);
	cqpoll_mlx5_qp_destroy(r->qp_b);
	if (r->vqp_b != NULL)
		ibv_destroy_qp(r->vqp_b);
	if (r->mw != NULL)
		ibv_dealloc_mw(r->mw);
	cqpoll_cq_destroy(r->cq_a);
	cqpoll_cq_destroy(r->cq_b);
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
si_connect(struct si_run *r, struct cqpoll_mlx5_qp *qp, uint32_t dest)
{
	static const enum ibv_qp_state st[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	struct ibv_qp_attr a;
	int i, mask;

	for (i = 0; i < 3; i++) {
		mask = hw_lb_attr(&r->plan, st[i], dest, &a);
		if (cqpoll_mlx5_qp_modify(qp, &a, mask) != 0)
			return -1;
	}
	return 0;
}

/* Bind the window over the receive region on B; its new rkey, or 0 with why. */
static uint32_t
si_bind(struct si_run *r, char *why, size_t len)
{
	struct ibv_send_wr w, *bad;
	struct ibv_wc wc;
	int n, spins = 0;

	memset(&w, 0, sizeof(w));
	w.wr_id = SI_WRID + 0x10;
	w.opcode = IBV_WR_BIND_MW;
	w.send_flags = IBV_SEND_SIGNALED;
	w.bind_mw.mw = r->mw;
	w.bind_mw.rkey = ibv_inc_rkey(r->mw->rkey);
	w.bind_mw.bind_info.mr = r->mr;
	w.bind_mw.bind_info.addr = (uintptr_t)r->buf + 4096;
	w.bind_mw.bind_info.length = 1024;
	w.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(r->vqp_b, &w, &bad) != 0) {
		snprintf(why, len, "ibv_post_send(BIND_MW): %s", strerror(errno));
		return 0;
	}
	while ((n = ibv_poll_cq(r->vcq_b, 1, &wc)) == 0 && spins++ < 10000000)
		;
	if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_BIND_MW) {
		snprintf(why, len, "binding the memory window: %s",
			 n == 1 ? ibv_wc_status_str(wc.status) : "no completion");
		return 0;
	}
	return w.bind_mw.rkey;
}

/* 0; 1 with why: the check does not apply here (skip); -1 with why: failed. */
static int
si_open(struct si_run *r, struct hw_target *t, char *why, size_t len)
{
	struct cqpoll_mlx5_qp_conf qc = { .max_send_wr = 8, .max_recv_wr = 4 };
	struct cqpoll_mlx5_qp_caps ca, cb;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND;

	memset(r, 0, sizeof(*r));
	r->emulated = t->emulated;
	r->buf = aligned_alloc(4096, SI_BUF);
	if (r->buf == NULL)
		return snprintf(why, len, "out of memory"), -1;
	memset(r->buf, 0x5a, SI_BUF);
	if (t->emulated) {
		struct cqpoll_mlx5_emu_conf cc = { .arm = CQPOLL_ARM_LEVEL,
						   .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };

		r->plan.port = 1;
		r->plan.mtu = IBV_MTU_1024;
		r->ctx = cqpoll_mlx5_emu_open();
		r->pd = r->ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(r->ctx) : NULL;
		r->mr = r->pd != NULL ? cqpoll_mlx5_emu_reg_mr(r->pd, r->buf, SI_BUF,
							    access & ~IBV_ACCESS_MW_BIND) : NULL;
		r->cq_a = cqpoll_mlx5_emu_cq_create(&cc);
		r->cq_b = cqpoll_mlx5_emu_cq_create(&cc);
		if (r->mr == NULL || r->cq_a == NULL || r->cq_b == NULL)
			return snprintf(why, len, "emulated device: %s", strerror(errno)), -1;
		qc.send_cq = qc.recv_cq = r->cq_a;
		r->qp_a = cqpoll_mlx5_qp_create(r->pd, &qc);
		qc.send_cq = qc.recv_cq = r->cq_b;
		r->qp_b = r->qp_a != NULL ? cqpoll_mlx5_qp_create(r->pd, &qc) : NULL;
		if (r->qp_b == NULL)
			return snprintf(why, len, "cqpoll_mlx5_qp_create: %s", strerror(errno)), -1;
		cqpoll_mlx5_qp_caps(r->qp_a, &ca);
		cqpoll_mlx5_qp_caps(r->qp_b, &cb);
		if (si_connect(r, r->qp_a, cb.qp_num) != 0 ||
		    si_connect(r, r->qp_b, ca.qp_num) != 0)
			return snprintf(why, len, "cqpoll_mlx5_qp_modify failed"), -1;
		/* The emulated device checks no key of a send with invalidate. */
		r->rkey = r->mr->rkey;
		return 0;
	}
	r->ctx = t->ctx;
	if (hw_lb_plan_device(r->ctx, &r->plan, why, len) != 0)
		return -1;
	r->pd = ibv_alloc_pd(r->ctx);
	r->mr = r->pd != NULL ? ibv_reg_mr(r->pd, r->buf, SI_BUF, access) : NULL;
	r->vcq_b = ibv_create_cq(r->ctx, 16, NULL, NULL, 0);
	if (r->mr == NULL || r->vcq_b == NULL)
		return snprintf(why, len, "ibv_reg_mr / ibv_create_cq: %s", strerror(errno)), -1;
	r->mw = ibv_alloc_mw(r->pd, IBV_MW_TYPE_2);
	if (r->mw == NULL)
		return snprintf(why, len, "no type 2 memory window (ibv_alloc_mw: %s): no key "
				"a send with invalidate may name", strerror(errno)), 1;
	{
		struct ibv_qp_init_attr a = { .send_cq = r->vcq_b, .recv_cq = r->vcq_b,
			.cap = { .max_send_wr = 2, .max_recv_wr = 4, .max_send_sge = 1,
				 .max_recv_sge = 1 }, .qp_type = IBV_QPT_RC };
		struct cqpoll_mlx5_conf mc = { .size = 16 };

		r->vqp_b = ibv_create_qp(r->pd, &a);
		r->cq_a = r->vqp_b != NULL ? cqpoll_mlx5_cq_create(r->ctx, &mc) : NULL;
		qc.send_cq = qc.recv_cq = r->cq_a;
		r->qp_a = r->cq_a != NULL ? cqpoll_mlx5_qp_create(r->pd, &qc) : NULL;
		if (r->qp_a == NULL)
			return snprintf(why, len, "creating the QPs: %s", strerror(errno)), -1;
		cqpoll_mlx5_qp_caps(r->qp_a, &ca);
		if (si_connect(r, r->qp_a, r->vqp_b->qp_num) != 0 ||
		    hw_lb_connect(r->vqp_b, &r->plan, ca.qp_num, why, len) != 0)
			return why[0] == '\0' ? snprintf(why, len, "connecting"), -1 : -1;
	}
	r->rkey = si_bind(r, why, len);
	return r->rkey != 0 ? 0 : 1;
}

/* B's one receive. */
static int
si_recv(struct si_run *r)
{
	struct ibv_recv_wr vw, *bad;
	struct ibv_sge vs = { (uintptr_t)r->buf + 4096, 64, r->mr->lkey };
	struct cqpoll_mlx5_sge s = { vs.addr, vs.length, vs.lkey };
	struct cqpoll_mlx5_recv_wr w = { .wr_id = SI_WRID + 1, .sg_list = &s, .num_sge = 1 };

	if (r->qp_b != NULL)
		return cqpoll_mlx5_qp_post_recv(r->qp_b, &w, 1) == 1 ? 0 : -1;
	memset(&vw, 0, sizeof(vw));
	vw.wr_id = SI_WRID + 1;
	vw.sg_list = &vs;
	vw.num_sge = 1;
	return ibv_post_recv(r->vqp_b, &vw, &bad);
}

/* Poll A (and B) until both completions came or a while passed. */
static int
si_collect(struct si_run *r, struct cqpoll_completion *ca, struct cqpoll_completion *cb)
{
	int na = 0, nb = 0, spins = 0, k;
	struct ibv_wc wc;

	while ((na == 0 || nb == 0) && spins++ < 2000000) {
		if (r->emulated)
			cqpoll_mlx5_emu_run(r->ctx);
		if (na == 0 && (k = cqpoll_poll_burst(r->cq_a, ca, 1)) != 0)
			na = k;
		if (nb == 0 && r->cq_b != NULL && (k = cqpoll_poll_burst(r->cq_b, cb, 1)) != 0)
			nb = k;
		if (nb == 0 && r->vcq_b != NULL && (k = ibv_poll_cq(r->vcq_b, 1, &wc)) != 0) {
			nb = k;
			memset(cb, 0, sizeof(*cb));
			cb->wr_id = wc.wr_id;
			cb->flags = CQPOLL_COMPLETION_F_WR_ID |
				((wc.wc_flags & IBV_WC_WITH_INV) ? CQPOLL_COMPLETION_F_INV : 0) |
				((wc.wc_flags & IBV_WC_WITH_IMM) ? CQPOLL_COMPLETION_F_IMM : 0);
			cb->status = (uint8_t)wc.status;
			cb->opcode = (uint8_t)wc.opcode;
			cb->byte_len = wc.byte_len;
			cb->imm_data = (wc.wc_flags & IBV_WC_WITH_INV) ? wc.invalidated_rkey : 0;
		}
		if (na < 0 || nb < 0)
			return -1;
	}
	return na == 1 && nb == 1 ? 0 : -1;
}

static void
send_inv_check(struct hw_target *t, struct hw_result *res)
{
	struct cqpoll_completion ca, cb;
	struct cqpoll_mlx5_sge s;
	struct cqpoll_mlx5_send_wr w;
	char why[512] = "";
	const char *bad;
	struct si_run r;
	int o;

	if (!t->has_mlx5) {
		hw_skip(res, "%s is not an mlx5 device: cqpoll's QP is mlx5's", t->name);
		return;
	}
	o = si_open(&r, t, why, sizeof(why));
	if (o != 0 || si_recv(&r) != 0) {
		si_close(&r);
		if (o > 0)
			hw_skip(res, "%s", why);
		else
			hw_fail(res, "%s", o != 0 ? why : "posting the receive");
		return;
	}
	s = (struct cqpoll_mlx5_sge){ (uintptr_t)r.buf, SI_LEN, r.mr->lkey };
	memset(&w, 0, sizeof(w));
	w.wr_id = SI_WRID;
	w.sg_list = &s;
	w.num_sge = 1;
	w.opcode = CQPOLL_MLX5_WR_SEND_INV;
	w.flags = CQPOLL_MLX5_SEND_F_SIGNALED;
	w.invalidate_rkey = r.rkey;
	if (cqpoll_mlx5_qp_post_send(r.qp_a, &w, 1) != 1 || si_collect(&r, &ca, &cb) != 0) {
		si_close(&r);
		hw_fail(res, "the send with invalidate or its completions did not come");
		return;
	}
	/* The negative control: the receiver's key handed back byte-swapped. */
	if (hw_control != NULL && strcmp(hw_control, "send-inv-rkey") == 0)
		cb.imm_data = __builtin_bswap32(cb.imm_data);
	bad = ca.status != CQPOLL_STATUS_SUCCESS ? "sender: status" :
		!(ca.flags & CQPOLL_COMPLETION_F_WR_ID) || ca.wr_id != SI_WRID ? "sender: wr_id" :
		ca.opcode != CQPOLL_OP_SEND ? "sender: opcode (IBV_WC_SEND)" :
		cb.status != CQPOLL_STATUS_SUCCESS ? "receiver: status" :
		cb.wr_id != SI_WRID + 1 ? "receiver: wr_id" :
		cb.opcode != CQPOLL_OP_RECV ? "receiver: opcode (IBV_WC_RECV)" :
		!(cb.flags & CQPOLL_COMPLETION_F_INV) ? "receiver: no IBV_WC_WITH_INV" :
		cb.imm_data != r.rkey ? "receiver: invalidated rkey" :
		cb.byte_len != SI_LEN ? "receiver: byte_len" : NULL;
	si_close(&r);
	if (bad != NULL) {
		hw_fail(res, "%s (status %u/%u, opcode %u/%u, rkey 0x%x, expected 0x%x)", bad,
			ca.status, cb.status, ca.opcode, cb.opcode, cb.imm_data, r.rkey);
		return;
	}
	hw_pass(res, "a send with invalidate of rkey 0x%x: IBV_WC_SEND at the sender, "
		"IBV_WC_RECV with IBV_WC_WITH_INV and the rkey at the receiver%s", r.rkey,
		t->emulated ? " (emulated: no key invalidated)" : " (a type 2 memory window)");
}

const struct hw_check hw_check_send_inv = {
	"qp-send-inv",
	"a send with invalidate through cqpoll's own QP: both completions as verbs reports them",
	send_inv_check };
