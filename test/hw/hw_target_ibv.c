/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A real RDMA device as a target: each lane is a cqpoll CQ (mlx5 direct or
 * verbs, created by the production calls) fed by its own loopback RC QP
 * pair (hw_loopback.c). A is the requester and always completes on the CQ
 * under test; B's receives complete there too with b_on_cq, else on a plain
 * verbs CQ that the lane reaps to post the receives again. Nothing here runs
 * on a machine without a device: it is compiled and linked against
 * rdma-core, and the checks skip before reaching it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HW_HAVE_MLX5
#include <infiniband/mlx5dv.h>
#include "cqpoll_mlx5.h"
#endif
#include "cqpoll_verbs.h"
#include "hw_check.h"

#define SEND_AREA 4096
#define SLOT 256
#define MAX_RECVS 512
#define AUX_DEPTH 1024

struct hw_lane {
	struct hw_target *t;
	struct cqpoll_cq *cq;
	struct ibv_cq *vcq;
	struct ibv_cq *aux;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_qp *qp_a, *qp_b;
	bool b_on_cq;
	uint32_t sends;       /* posted on A */
	uint32_t recvs;       /* posted on B */
	uint32_t recv_used;   /* consumed on B */
	uint32_t nrecv;       /* receive slots */
};

static int
err_of(int r)
{
	return r > 0 ? r : (errno != 0 ? errno : EIO);
}

static int
post_recv(struct hw_lane *l)
{
	uint32_t k = l->recvs;
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(l->buf + SEND_AREA + (size_t)(k % l->nrecv) * SLOT),
		.length = SLOT, .lkey = l->mr->lkey,
	};

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = HW_WRID_B + k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (ibv_post_recv(l->qp_b, &wr, &bad) != 0)
		return -EIO;
	l->recvs++;
	return 0;
}

static struct ibv_qp *
make_qp(struct hw_lane *l, struct ibv_cq *scq, struct ibv_cq *rcq, uint32_t nsend,
	uint32_t nrecv)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.cap.max_send_wr = nsend;
	a.cap.max_recv_wr = nrecv;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = 0;
	return ibv_create_qp(l->pd, &a);
}

static void
ibv_lane_close(struct hw_lane *l)
{
	if (l->qp_a != NULL)
		ibv_destroy_qp(l->qp_a);
	if (l->qp_b != NULL)
		ibv_destroy_qp(l->qp_b);
	if (l->cq != NULL)
		cqpoll_cq_destroy(l->cq);
	if (l->aux != NULL)
		ibv_destroy_cq(l->aux);
	if (l->mr != NULL)
		ibv_dereg_mr(l->mr);
	if (l->pd != NULL)
		ibv_dealloc_pd(l->pd);
	free(l->buf);
	free(l);
}

static struct hw_lane *
ibv_lane_open(struct hw_target *t, const struct hw_lane_conf *c, char *why, size_t len)
{
	struct hw_lane *l = calloc(1, sizeof(*l));
	struct hw_lb_plan plan;
	uint32_t size = c->size != 0 ? c->size : 256, i;
	size_t bytes;

	if (l == NULL) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	l->t = t;
	l->b_on_cq = c->b_on_cq;
	l->nrecv = c->b_on_cq ? c->recvs : 64;
	if (l->nrecv == 0 || l->nrecv > MAX_RECVS) {
		snprintf(why, len, "%u receives: 1..%u", l->nrecv, MAX_RECVS);
		free(l);
		return NULL;
	}
	if (hw_lb_plan_device(t->ctx, &plan, why, len) != 0)
		goto err;
	bytes = SEND_AREA + (size_t)l->nrecv * SLOT;
	l->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	l->pd = ibv_alloc_pd(t->ctx);
	if (l->buf == NULL || l->pd == NULL) {
		snprintf(why, len, "ibv_alloc_pd: %s", strerror(err_of(0)));
		goto err;
	}
	memset(l->buf, 0, bytes);
	l->mr = ibv_reg_mr(l->pd, l->buf, bytes, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (l->mr == NULL) {
		snprintf(why, len, "ibv_reg_mr: %s (memlock limit? ulimit -l)",
			 strerror(err_of(0)));
		goto err;
	}
	errno = 0;
	if (c->driver == HW_DRV_MLX5) {
#ifdef HW_HAVE_MLX5
		struct cqpoll_mlx5_conf mc = { .size = size, .flags = c->mlx5_flags,
					       .channel = c->channel };

		l->cq = cqpoll_mlx5_cq_create(t->ctx, &mc);
		l->vcq = l->cq != NULL ? cqpoll_mlx5_cq_ibv(l->cq) : NULL;
#else
		errno = EOPNOTSUPP;
#endif
	} else {
		struct cqpoll_verbs_conf vc = { .size = size, .channel = c->channel };

		l->cq = cqpoll_verbs_cq_create(t->ctx, &vc);
		l->vcq = l->cq != NULL ? cqpoll_verbs_cq_ibv(l->cq) : NULL;
	}
	if (l->vcq == NULL) {
		snprintf(why, len, "creating the %s CQ: %s", hw_driver_name(c->driver),
			 strerror(err_of(0)));
		goto err;
	}
	l->aux = ibv_create_cq(t->ctx, AUX_DEPTH, NULL, NULL, 0);
	if (l->aux == NULL) {
		snprintf(why, len, "ibv_create_cq: %s", strerror(err_of(0)));
		goto err;
	}
	l->qp_a = make_qp(l, c->a_off_cq && c->b_on_cq ? l->aux : l->vcq, l->aux,
			  size / 2, 1);
	l->qp_b = make_qp(l, l->aux, c->b_on_cq ? l->vcq : l->aux, 1, l->nrecv);
	if (l->qp_a == NULL || l->qp_b == NULL) {
		snprintf(why, len, "ibv_create_qp: %s", strerror(err_of(0)));
		goto err;
	}
	if (hw_lb_connect(l->qp_a, &plan, l->qp_b->qp_num, why, len) != 0 ||
	    hw_lb_connect(l->qp_b, &plan, l->qp_a->qp_num, why, len) != 0)
		goto err;
	for (i = 0; i < l->nrecv; i++) {
		if (post_recv(l) != 0) {
			snprintf(why, len, "ibv_post_recv: %s", strerror(err_of(0)));
			goto err;
		}
	}
	return l;
err:
	ibv_lane_close(l);
	return NULL;
}

static struct cqpoll_cq *
ibv_lane_cq(struct hw_lane *l)
{
	return l->cq;
}

static uint32_t
ibv_lane_qpn(struct hw_lane *l, enum hw_side side)
{
	return side == HW_SIDE_A ? l->qp_a->qp_num : l->qp_b->qp_num;
}

/* Receives that completed on the auxiliary CQ go back on B. */
static int
reap_aux(struct hw_lane *l)
{
	struct ibv_wc wc[32];
	int n, i;

	while ((n = ibv_poll_cq(l->aux, 32, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return -EIO;
			if (wc[i].wr_id >= HW_WRID_B && post_recv(l) != 0)
				return -EIO;
		}
	}
	return n < 0 ? -EIO : 0;
}

static int
ibv_lane_step(struct hw_lane *l, const struct hw_step *s, const struct hw_expect *e, int ne)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint32_t k = l->sends, i;
	int r;

	(void)e;
	(void)ne;
	if (s->kind == HW_STEP_B_TO_ERROR) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		r = ibv_modify_qp(l->qp_b, &a, IBV_QP_STATE);
		return r != 0 ? -err_of(r) : 0;
	}
	r = reap_aux(l);
	if (r != 0)
		return r;
	if (s->len > SLOT || s->len > SEND_AREA)
		return -EINVAL;
	for (i = 0; i < s->len; i++)
		l->buf[i] = hw_payload(k, i);
	sge.addr = (uintptr_t)l->buf;
	sge.length = s->len;
	sge.lkey = l->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = HW_WRID_A + k;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	/* Never IBV_SEND_INLINE: an inline send reads no lkey. */
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = IBV_WR_SEND;
	if (s->kind == HW_STEP_WRITE_IMM) {
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl(s->imm);
		wr.wr.rdma.remote_addr = (uintptr_t)(l->buf + SEND_AREA +
			(size_t)(l->recv_used % l->nrecv) * SLOT);
		wr.wr.rdma.rkey = l->mr->rkey;
	} else if (s->kind == HW_STEP_SEND_BAD_LKEY) {
		sge.lkey = l->mr->lkey ^ 0x00ffff00u;
	}
	r = ibv_post_send(l->qp_a, &wr, &bad);
	if (r != 0)
		return -err_of(r);
	l->sends++;
	if (s->kind == HW_STEP_SEND || s->kind == HW_STEP_WRITE_IMM)
		l->recv_used++;
	return 0;
}

static void
ibv_lane_settle(struct hw_lane *l)
{
	/* A loopback completes in microseconds; a poll that found nothing waits a little. */
	(void)l;
	hw_sleep_us(200);
}

static const uint8_t *
ibv_lane_recv_buf(struct hw_lane *l, uint32_t k)
{
	return l->buf + SEND_AREA + (size_t)(k % l->nrecv) * SLOT;
}

static struct ibv_comp_channel *
ibv_channel_open(struct hw_target *t)
{
	return ibv_create_comp_channel(t->ctx);
}

static int
ibv_channel_close(struct hw_target *t, struct ibv_comp_channel *ch)
{
	(void)t;
	return ibv_destroy_comp_channel(ch);
}

static const struct hw_target_ops ibv_ops = {
	.open = ibv_lane_open,
	.cq = ibv_lane_cq,
	.qpn = ibv_lane_qpn,
	.step = ibv_lane_step,
	.settle = ibv_lane_settle,
	.recv_buf = ibv_lane_recv_buf,
	.close = ibv_lane_close,
	.channel_open = ibv_channel_open,
	.channel_close = ibv_channel_close,
};

int
hw_target_ibv_open(struct hw_target *t, struct ibv_device *dev, char *why, size_t len)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", ibv_get_device_name(dev));
	errno = 0;
	t->ctx = ibv_open_device(dev);
	if (t->ctx == NULL) {
		snprintf(why, len, "ibv_open_device(%s): %s", t->name, strerror(err_of(0)));
		return -1;
	}
	t->ops = &ibv_ops;
#ifdef HW_HAVE_MLX5
	t->has_mlx5 = mlx5dv_is_supported(dev);
#endif
	return 0;
}

void
hw_target_ibv_close(struct hw_target *t)
{
	if (t->ctx != NULL)
		ibv_close_device(t->ctx);
	t->ctx = NULL;
}
