/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll's shared receive queue (cqpoll_mlx5_srq_*): two cqpoll QPs on one
 * SRQ, each the responder of a sender (verbs QPs on a device, cqpoll QPs on
 * the emulated one). Six receives posted, the limit armed at 3, five sends
 * one at a time, alternating receivers: receive k must carry the SRQ's k-th
 * wr_id (the SRQ's order, whichever QP takes it), its length and its QP;
 * the limit event must come (the SRQ then holds 1) and disarm the limit.
 * Then one receiver is put in error: no receive of the SRQ may complete
 * flushed, and the other receiver must take the last one. The SRQ's
 * destroy must be refused while its QPs exist.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#include "hw_check.h"

#define SRQ_BUF 8192
#define SRQ_RECVS 6
#define SRQ_LIMIT 3
#define SRQ_WRID 0x5300u
#define SRQ_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

struct srq_run {
	struct ibv_context *ctx;
	bool emulated;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct cqpoll_mlx5_srq *srq;
	struct cqpoll_cq *rcq[2];             /* the receivers' CQs */
	struct cqpoll_mlx5_qp *rqp[2];        /* the receivers, on the SRQ */
	struct cqpoll_cq *scq;                /* emulated senders' CQ */
	struct cqpoll_mlx5_qp *sqp[2];        /* emulated senders */
	struct ibv_cq *vcq;                   /* device senders' CQ */
	struct ibv_qp *vqp[2];                /* device senders */
	struct hw_lb_plan plan;
};

static void
srq_run_close(struct srq_run *r)
{
	int i;

	for (i = 0; i < 2; i++) {
		cqpoll_mlx5_qp_destroy(r->rqp[i]);
		cqpoll_mlx5_qp_destroy(r->sqp[i]);
		if (r->vqp[i] != NULL)
			ibv_destroy_qp(r->vqp[i]);
	}
	cqpoll_mlx5_srq_destroy(r->srq);
	for (i = 0; i < 2; i++)
		cqpoll_cq_destroy(r->rcq[i]);
	cqpoll_cq_destroy(r->scq);
	if (r->vcq != NULL)
		ibv_destroy_cq(r->vcq);
	if (r->mr != NULL)
		r->emulated ? (void)cqpoll_mlx5_emu_dereg_mr(r->mr) : (void)ibv_dereg_mr(r->mr);
	if (r->pd != NULL)
		r->emulated ? (void)cqpoll_mlx5_emu_dealloc_pd(r->pd) : (void)ibv_dealloc_pd(r->pd);
	if (r->emulated && r->ctx != NULL)
		cqpoll_mlx5_emu_close(r->ctx);
	free(r->buf);
}

static int
modify_all(struct cqpoll_mlx5_qp *qp, const struct hw_lb_plan *plan, uint32_t dest)
{
	static const enum ibv_qp_state st[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	struct ibv_qp_attr a;
	int i, mask, e;

	for (i = 0; i < 3; i++) {
		mask = hw_lb_attr(plan, st[i], dest, &a);
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		a.rnr_retry = 7;
		e = cqpoll_mlx5_qp_modify(qp, &a, mask);
		if (e != 0)
			return e;
	}
	return 0;
}

static int
srq_run_open(struct srq_run *r, struct hw_target *t, char *why, size_t len)
{
	struct cqpoll_mlx5_srq_conf sc = { .max_wr = 8, .max_sge = 1 };
	struct cqpoll_mlx5_qp_conf qc = { .max_send_wr = 8, .max_recv_wr = 8 };
	struct cqpoll_mlx5_qp_caps rc[2], s;
	int i;

	memset(r, 0, sizeof(*r));
	r->emulated = t->emulated;
	r->buf = aligned_alloc(4096, SRQ_BUF);
	if (r->buf == NULL)
		return snprintf(why, len, "out of memory"), -1;
	memset(r->buf, 0, SRQ_BUF);
	if (t->emulated) {
		r->plan.port = 1;
		r->plan.mtu = IBV_MTU_1024;
		r->ctx = cqpoll_mlx5_emu_open();
		r->pd = r->ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(r->ctx) : NULL;
		r->mr = r->pd != NULL ?
			cqpoll_mlx5_emu_reg_mr(r->pd, r->buf, SRQ_BUF, SRQ_ACCESS) : NULL;
	} else {
		r->ctx = t->ctx;
		if (hw_lb_plan_device(r->ctx, &r->plan, why, len) != 0)
			return -1;
		r->pd = ibv_alloc_pd(r->ctx);
		r->mr = r->pd != NULL ? ibv_reg_mr(r->pd, r->buf, SRQ_BUF, SRQ_ACCESS) : NULL;
	}
	if (r->mr == NULL)
		return snprintf(why, len, "protection domain, memory: %s", strerror(errno)), -1;
	r->srq = cqpoll_mlx5_srq_create(r->pd, &sc);
	if (r->srq == NULL)
		return snprintf(why, len, "cqpoll_mlx5_srq_create: %s", strerror(errno)), -1;
	qc.srq = r->srq;
	for (i = 0; i < 2; i++) {
		if (t->emulated) {
			struct cqpoll_mlx5_emu_conf cc = { .arm = CQPOLL_ARM_LEVEL,
							   .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };

			r->rcq[i] = cqpoll_mlx5_emu_cq_create(&cc);
		} else {
			struct cqpoll_mlx5_conf mc = { .size = 64 };

			r->rcq[i] = cqpoll_mlx5_cq_create(r->ctx, &mc);
		}
		qc.send_cq = qc.recv_cq = r->rcq[i];
		r->rqp[i] = r->rcq[i] != NULL ? cqpoll_mlx5_qp_create(r->pd, &qc) : NULL;
		if (r->rqp[i] == NULL)
			return snprintf(why, len, "cqpoll_mlx5_qp_create on the SRQ: %s",
					strerror(errno)), -1;
		cqpoll_mlx5_qp_caps(r->rqp[i], &rc[i]);
	}
	qc.srq = NULL;
	if (t->emulated) {
		struct cqpoll_mlx5_emu_conf cc = { .size = 64, .arm = CQPOLL_ARM_LEVEL,
						   .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };

		r->scq = cqpoll_mlx5_emu_cq_create(&cc);
		qc.send_cq = qc.recv_cq = r->scq;
		for (i = 0; i < 2; i++) {
			r->sqp[i] = r->scq != NULL ? cqpoll_mlx5_qp_create(r->pd, &qc) : NULL;
			if (r->sqp[i] == NULL)
				return snprintf(why, len, "sender: %s", strerror(errno)), -1;
			cqpoll_mlx5_qp_caps(r->sqp[i], &s);
			if (modify_all(r->sqp[i], &r->plan, rc[i].qp_num) != 0 ||
			    modify_all(r->rqp[i], &r->plan, s.qp_num) != 0)
				return snprintf(why, len, "cqpoll_mlx5_qp_modify failed"), -1;
		}
		return 0;
	}
	r->vcq = ibv_create_cq(r->ctx, 64, NULL, NULL, 0);
	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr a = { .send_cq = r->vcq, .recv_cq = r->vcq,
			.cap = { .max_send_wr = 8, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 }, .qp_type = IBV_QPT_RC };

		r->vqp[i] = r->vcq != NULL ? ibv_create_qp(r->pd, &a) : NULL;
		if (r->vqp[i] == NULL)
			return snprintf(why, len, "ibv_create_qp: %s", strerror(errno)), -1;
		if (modify_all(r->rqp[i], &r->plan, r->vqp[i]->qp_num) != 0 ||
		    hw_lb_connect(r->vqp[i], &r->plan, rc[i].qp_num, why, len) != 0)
			return why[0] == '\0' ?
				snprintf(why, len, "cqpoll_mlx5_qp_modify failed"), -1 : -1;
	}
	return 0;
}

/* Sender @p i sends @p len bytes; 0 or -1. */
static int
srq_send(struct srq_run *r, int i, uint32_t len)
{
	uint64_t local = (uintptr_t)r->buf + 64 * (uint64_t)i;

	if (r->emulated) {
		struct cqpoll_mlx5_sge s = { local, len, r->mr->lkey };
		struct cqpoll_mlx5_send_wr w = { .wr_id = len, .sg_list = &s, .num_sge = 1,
						 .opcode = CQPOLL_MLX5_WR_SEND };

		return cqpoll_mlx5_qp_post_send(r->sqp[i], &w, 1) == 1 ? 0 : -1;
	} else {
		struct ibv_sge s = { local, len, r->mr->lkey };
		struct ibv_send_wr w = { .wr_id = len, .sg_list = &s, .num_sge = 1,
					 .opcode = IBV_WR_SEND }, *bad;

		return ibv_post_send(r->vqp[i], &w, &bad) == 0 ? 0 : -1;
	}
}

/* Receiver @p i's next completion within a second: 1, 0 (none) or -1. */
static int
srq_collect(struct srq_run *r, int i, struct cqpoll_completion *c, int idle_max)
{
	int idle, k;

	for (idle = 0; idle < idle_max; idle++) {
		if (r->emulated)
			cqpoll_mlx5_emu_run(r->ctx);
		k = cqpoll_poll_burst(r->rcq[i], c, 1);
		if (k != 0)
			return k;
		if (!r->emulated) {
			struct timespec ts = { 0, 10000 };

			nanosleep(&ts, NULL);
		}
	}
	return 0;
}

static int
srq_script(struct srq_run *r, char *why, size_t len)
{
	struct cqpoll_mlx5_recv_wr w[SRQ_RECVS];
	struct cqpoll_mlx5_sge s[SRQ_RECVS];
	struct cqpoll_mlx5_srq_attr a;
	struct cqpoll_completion c;
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct timespec ts = { 0, 10000 };
	int k, i, n;

	for (k = 0; k < SRQ_RECVS; k++) {
		s[k] = (struct cqpoll_mlx5_sge){ (uintptr_t)r->buf + 4096 + 64 * k, 64,
						 r->mr->lkey };
		w[k] = (struct cqpoll_mlx5_recv_wr){ .wr_id = SRQ_WRID + (uint64_t)k,
						     .sg_list = &s[k], .num_sge = 1 };
	}
	if (cqpoll_mlx5_srq_post_recv(r->srq, w, SRQ_RECVS) != SRQ_RECVS ||
	    cqpoll_mlx5_srq_arm_limit(r->srq, SRQ_LIMIT) != 0)
		return snprintf(why, len, "posting the receives, arming the limit"), -1;
	for (k = 0; k < SRQ_RECVS - 1; k++) {
		i = k % 2;
		if (srq_send(r, i, 8 + 8 * (uint32_t)k) != 0)
			return snprintf(why, len, "send %d: post failed", k), -1;
		n = srq_collect(r, i, &c, r->emulated ? 1000 : 100000);
		if (n > 0 && hw_control != NULL && strcmp(hw_control, "srq-wr-id") == 0)
			c.wr_id ^= 1;
		if (n <= 0 || c.status != CQPOLL_STATUS_SUCCESS ||
		    !(c.flags & CQPOLL_COMPLETION_F_WR_ID) || c.wr_id != SRQ_WRID + (uint64_t)k ||
		    c.byte_len != 8 + 8 * (uint32_t)k || c.opcode != CQPOLL_OP_RECV)
			return snprintf(why, len, "send %d: receive %s (wr_id 0x%llx, status %u, "
					"byte_len %u), the SRQ's receive 0x%x expected", k,
					n <= 0 ? "missing" : "wrong", (unsigned long long)c.wr_id,
					c.status, c.byte_len, SRQ_WRID + k), -1;
	}
	/* The SRQ holds 1 < 3: the event, then the limit disarmed. */
	for (k = 0; k < 100000; k++) {
		if (cqpoll_mlx5_srq_query(r->srq, &a) != 0)
			return snprintf(why, len, "cqpoll_mlx5_srq_query failed"), -1;
		if (a.limit_events != 0 || r->emulated)
			break;
		nanosleep(&ts, NULL);
	}
	if (a.limit_events != 1 || a.limit != 0 || a.outstanding != 1)
		return snprintf(why, len, "%u limit events, limit %u, %u outstanding: one event, "
				"the limit disarmed and 1 receive held expected", a.limit_events,
				a.limit, a.outstanding), -1;
	/* Receiver 0 in error: the SRQ's receive is not its own, nothing flushed. */
	if (cqpoll_mlx5_qp_modify(r->rqp[0], &err, IBV_QP_STATE) != 0)
		return snprintf(why, len, "receiver to error failed"), -1;
	n = srq_collect(r, 0, &c, r->emulated ? 100 : 10000);
	if (n != 0 && c.opcode == CQPOLL_OP_RECV)
		return snprintf(why, len, "a receive of the SRQ completed on the errored QP "
				"(status %u)", c.status), -1;
	if (srq_send(r, 1, 64) != 0 || srq_collect(r, 1, &c, r->emulated ? 1000 : 100000) <= 0 ||
	    c.status != CQPOLL_STATUS_SUCCESS || c.wr_id != SRQ_WRID + SRQ_RECVS - 1)
		return snprintf(why, len, "the other receiver did not take the SRQ's last "
				"receive"), -1;
	if (cqpoll_mlx5_srq_destroy(r->srq) != -EBUSY)
		return snprintf(why, len, "the SRQ's destroy was not refused under its QPs"), -1;
	return 0;
}

static void
srq_check(struct hw_target *t, struct hw_result *r)
{
	struct srq_run run;
	char why[512] = "";

	if (!t->has_mlx5) {
		hw_skip(r, "%s is not an mlx5 device: cqpoll's SRQ is mlx5's", t->name);
		return;
	}
	if (srq_run_open(&run, t, why, sizeof(why)) != 0 ||
	    srq_script(&run, why, sizeof(why)) != 0) {
		srq_run_close(&run);
		hw_fail(r, "%s", why);
		return;
	}
	srq_run_close(&run);
	hw_data_i64(r, "receives", SRQ_RECVS);
	hw_pass(r, "%d receives of one SRQ taken in its order by two QPs, the limit event "
		"once, nothing flushed by a QP's error", SRQ_RECVS);
}

const struct hw_check hw_check_srq = {
	"srq",
	"cqpoll's shared receive queue: two QPs on it, its order, limit event, no flush",
	srq_check };
