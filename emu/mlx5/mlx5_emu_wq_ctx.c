/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated mlx5 context for work queues: PDs, MRs and QPs, reached by
 * the driver through the libibverbs table it registers (ibv_glue.h), as an
 * emulated verbs context is. QP memory is sized and laid out as rdma-core's
 * provider does it (providers/mlx5/verbs.c, doc/guides/mlx5-wqe-contract.md §1.2).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibv_glue.h"
#include "mlx5_emu_wq.h"

#define EMU_PAGE 4096
/*
 * rdma-core's _sq_overhead for an RC QP without send_ops_flags: the UMR
 * segments it allows by default (§1.2).
 */
#define EMU_SQ_OVERHEAD 192
/*
 * The device's limits, as rdma-core reads them from the device
 * (max_sq_desc_sz, max_rq_desc_sz, max_send_wqebb, max_recv_wr): every
 * requested size is checked against them before it is multiplied or
 * rounded, so that no size wraps in 32 bits (mlx5_calc_send_wqe,
 * mlx5_calc_sq_size, mlx5_get_max_recv_wr and mlx5_calc_rcv_wqe refuse
 * with EINVAL).
 */
#define EMU_SQ_DESC_MAX 1024u
#define EMU_RQ_DESC_MAX 512u
#define EMU_WQ_WR_MAX 32768u

static uint32_t
pow2_up(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint32_t
align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

struct emu_wq_ctx *
cqpoll_mlx5_emu_wq_ctx_of(struct ibv_context *ctx)
{
	struct emu_wq_ctx *c = (struct emu_wq_ctx *)(void *)ctx;

	if (ctx == NULL || ctx->device != &c->dev || c->dev.node_type != IBV_NODE_CA ||
	    strcmp(c->dev.name, "mlx5_emu") != 0)
		return NULL;
	return c;
}

static struct emu_wq_qp *
qp_of(struct ibv_qp *ibqp)
{
	return (struct emu_wq_qp *)(void *)ibqp;
}

/* CQs of this context are made by cqpoll_mlx5_emu_cq_create(): the rest says so. */
static struct ibv_comp_channel *
g_create_comp_channel(struct ibv_context *ctx)
{
	(void)ctx;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
g_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	(void)ch;
	return EOPNOTSUPP;
}

static struct ibv_cq *
g_create_cq(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *ch,
	    int comp_vector)
{
	(void)ctx;
	(void)cqe;
	(void)cq_context;
	(void)ch;
	(void)comp_vector;
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_cq_ex *
g_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	(void)ctx;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
g_destroy_cq(struct ibv_cq *cq)
{
	(void)cq;
	return EOPNOTSUPP;
}

static int
g_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
		  struct ibv_device_attr_ex *attr)
{
	(void)ctx;
	(void)input;
	(void)attr;
	return EOPNOTSUPP;
}

static int
g_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	(void)ch;
	(void)cq;
	(void)cq_context;
	errno = EOPNOTSUPP;
	return -1;
}

static void
g_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
	(void)cq;
	(void)n;
}

/* The device's async events: an SRQ's limit reached (mlx5_emu_srq.c). */
static int
g_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	struct emu_wq_ctx *c = cqpoll_mlx5_emu_wq_ctx_of(ctx);

	if (c == NULL || ev == NULL) {
		errno = EINVAL;
		return -1;
	}
	return cqpoll_mlx5_emu_async_get(c, ev);
}

static void
g_ack_async_event(struct ibv_async_event *ev)
{
	(void)ev;
}

static bool
g_mlx5dv_is_supported(struct ibv_device *dev)
{
	(void)dev;
	return true;
}

static struct ibv_cq_ex *
g_mlx5dv_create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr,
		   struct mlx5dv_cq_init_attr *mlx5_attr)
{
	(void)ctx;
	(void)attr;
	(void)mlx5_attr;
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * mlx5dv_get_qp() (§1.1): the QP's rings; comp_mask is input, nothing extra
 * given. mlx5dv_get_srq(): the SRQ's ring, its number if asked.
 */
static int
g_mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t type)
{
	struct emu_wq_qp *qp;

	if (type == MLX5DV_OBJ_SRQ && obj != NULL && obj->srq.in != NULL &&
	    obj->srq.out != NULL && cqpoll_mlx5_emu_wq_ctx_of(obj->srq.in->context) != NULL)
		return cqpoll_mlx5_emu_srq_dv(obj->srq.in, obj->srq.out);
	if (type != MLX5DV_OBJ_QP || obj == NULL || obj->qp.in == NULL || obj->qp.out == NULL ||
	    cqpoll_mlx5_emu_wq_ctx_of(obj->qp.in->context) == NULL)
		return EOPNOTSUPP;
	qp = qp_of(obj->qp.in);
	*obj->qp.out = qp->dv;
	obj->qp.out->comp_mask = 0;
	return 0;
}

static int
qp_memory(struct emu_wq_qp *qp, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_cap *cap = &attr->cap;
	uint32_t inl, wqe_size, sq_bytes, rq_stride, rq_cnt, rq_bytes;
	size_t len;

	/* mlx5_calc_send_wqe, mlx5_calc_sq_size (§1.2). */
	if (cap->max_send_wr == 0 || cap->max_send_wr > EMU_WQ_WR_MAX ||
	    cap->max_send_sge > (EMU_SQ_DESC_MAX - EMU_SQ_OVERHEAD) / 16 ||
	    cap->max_inline_data > EMU_SQ_DESC_MAX - EMU_SQ_OVERHEAD - 4)
		return EINVAL;
	inl = cap->max_inline_data != 0 ? align_up(4 + cap->max_inline_data, 16) : 0;
	wqe_size = align_up(EMU_SQ_OVERHEAD + (16 * cap->max_send_sge > inl ?
					       16 * cap->max_send_sge : inl), 64);
	if (wqe_size > EMU_SQ_DESC_MAX)
		return EINVAL;
	sq_bytes = pow2_up(cap->max_send_wr * wqe_size);
	/* mlx5_get_max_recv_wr, mlx5_calc_rcv_wqe, mlx5_calc_rq_size. */
	if (cap->max_recv_wr > EMU_WQ_WR_MAX || cap->max_recv_sge > EMU_RQ_DESC_MAX / 16)
		return EINVAL;
	rq_stride = pow2_up(16 * (cap->max_recv_sge != 0 ? cap->max_recv_sge : 1));
	rq_cnt = pow2_up(cap->max_recv_wr != 0 ? cap->max_recv_wr : 1);
	while (rq_cnt * rq_stride < 64)
		rq_cnt <<= 1;
	/* On an SRQ: no receive queue, the send queue at offset 0. */
	if (attr->srq != NULL)
		rq_cnt = rq_stride = 0;
	rq_bytes = rq_cnt * rq_stride;
	len = align_up(rq_bytes + sq_bytes, EMU_PAGE);
	qp->buf = aligned_alloc(EMU_PAGE, len);
	qp->uar = aligned_alloc(EMU_PAGE, EMU_PAGE);
	qp->dv.dbrec = aligned_alloc(64, 64);
	if (qp->buf == NULL || qp->uar == NULL || qp->dv.dbrec == NULL)
		return ENOMEM;
	memset(qp->buf, 0, len);
	memset(qp->uar, 0, EMU_PAGE);
	memset(qp->dv.dbrec, 0, 64);
	qp->dv.rq.buf = qp->buf;
	qp->dv.rq.wqe_cnt = rq_cnt;
	qp->dv.rq.stride = rq_stride;
	qp->dv.sq.buf = qp->buf + rq_bytes;
	qp->dv.sq.wqe_cnt = sq_bytes / MLX5_SEND_WQE_BB;
	qp->dv.sq.stride = MLX5_SEND_WQE_BB;
	qp->dv.bf.reg = qp->uar + EMU_WQ_BF_OFFSET;
	qp->dv.bf.size = EMU_WQ_BF_SIZE;
	/* The provider writes the sizes it made back (max_post, max_gs, inline). */
	cap->max_send_wr = sq_bytes / wqe_size;
	cap->max_inline_data = wqe_size - EMU_SQ_OVERHEAD - 4;
	/* max_send_sge stays as asked (sq.max_gs). */
	cap->max_recv_wr = rq_cnt;
	cap->max_recv_sge = rq_stride / 16;
	if (attr->srq != NULL)
		qp->dv.rq.buf = NULL;
	return 0;
}

static void
qp_free(struct emu_wq_qp *qp)
{
	free(qp->buf);
	free(qp->uar);
	free(qp->dv.dbrec);
	free(qp);
}

static struct ibv_qp *
g_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct emu_wq_ctx *c = pd != NULL ? cqpoll_mlx5_emu_wq_ctx_of(pd->context) : NULL;
	struct emu_wq_qp *qp;
	int r;

	if (c == NULL || attr == NULL || attr->qp_type != IBV_QPT_RC ||
	    (attr->srq != NULL && attr->srq->context != pd->context)) {
		errno = c == NULL || attr == NULL || attr->srq != NULL ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	qp->scq = cqpoll_mlx5_emu_dev_of_ibcq(attr->send_cq);
	qp->rcq = cqpoll_mlx5_emu_dev_of_ibcq(attr->recv_cq);
	r = qp->scq == NULL || qp->rcq == NULL ? EINVAL : qp_memory(qp, attr);
	if (r != 0) {
		qp_free(qp);
		errno = r;
		return NULL;
	}
	qp->ibqp.context = pd->context;
	qp->ibqp.pd = pd;
	qp->ibqp.send_cq = attr->send_cq;
	qp->ibqp.recv_cq = attr->recv_cq;
	qp->ibqp.qp_context = attr->qp_context;
	qp->ibqp.qp_type = IBV_QPT_RC;
	qp->ibqp.state = IBV_QPS_RESET;
	qp->state = IBV_QPS_RESET;
	pthread_mutex_lock(&c->lock);
	qp->ibqp.qp_num = c->next_qpn++ & 0xffffff;
	if (attr->srq != NULL) {
		qp->srq = (struct emu_wq_srq *)(void *)attr->srq;
		qp->srq->qps++;
		qp->ibqp.srq = attr->srq;
	}
	qp->next = c->qps;
	c->qps = qp;
	pthread_mutex_unlock(&c->lock);
	return &qp->ibqp;
}

static int
g_destroy_qp(struct ibv_qp *ibqp)
{
	struct emu_wq_ctx *c = ibqp != NULL ? cqpoll_mlx5_emu_wq_ctx_of(ibqp->context) : NULL;
	struct emu_wq_qp **p;

	if (c == NULL)
		return EINVAL;
	pthread_mutex_lock(&c->lock);
	for (p = &c->qps; *p != NULL && *p != qp_of(ibqp); p = &(*p)->next)
		;
	if (*p != NULL)
		*p = (*p)->next;
	if (qp_of(ibqp)->srq != NULL)
		qp_of(ibqp)->srq->qps--;
	pthread_mutex_unlock(&c->lock);
	qp_free(qp_of(ibqp));
	return 0;
}

/*
 * The RC state machine as far as the device needs it: RESET -> INIT (access
 * flags) -> RTR (the peer) -> RTS (retries); any state -> ERR or RESET.
 */
static int
g_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct emu_wq_ctx *c = ibqp != NULL ? cqpoll_mlx5_emu_wq_ctx_of(ibqp->context) : NULL;
	struct emu_wq_qp *qp;
	int to, r = 0;

	if (c == NULL || attr == NULL)
		return EINVAL;
	qp = qp_of(ibqp);
	pthread_mutex_lock(&c->lock);
	to = (mask & IBV_QP_STATE) ? (int)attr->qp_state : qp->state;
	switch (to) {
	case IBV_QPS_RESET:
		cqpoll_mlx5_emu_wq_reset(qp);
		break;
	case IBV_QPS_INIT:
		if (qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT)
			r = EINVAL;
		break;
	case IBV_QPS_RTR:
		if (qp->state != IBV_QPS_INIT || !(mask & IBV_QP_DEST_QPN))
			r = EINVAL;
		break;
	case IBV_QPS_RTS:
		if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS)
			r = EINVAL;
		break;
	case IBV_QPS_ERR:
		break;
	default:
		r = EINVAL;
	}
	if (r == 0) {
		if (mask & IBV_QP_ACCESS_FLAGS)
			qp->access = (int)attr->qp_access_flags;
		if (mask & IBV_QP_DEST_QPN)
			qp->dest_qpn = attr->dest_qp_num;
		if (mask & IBV_QP_RNR_RETRY)
			qp->rnr_retry = attr->rnr_retry;
		qp->state = to;
		qp->ibqp.state = (enum ibv_qp_state)to;
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

static const struct cqpoll_ibv_glue emu_wq_glue = {
	.name = "mlx5-emu",
	.create_comp_channel = g_create_comp_channel,
	.destroy_comp_channel = g_destroy_comp_channel,
	.create_cq = g_create_cq,
	.create_cq_ex = g_create_cq_ex,
	.destroy_cq = g_destroy_cq,
	.query_device_ex = g_query_device_ex,
	.get_cq_event = g_get_cq_event,
	.ack_cq_events = g_ack_cq_events,
	.get_async_event = g_get_async_event,
	.ack_async_event = g_ack_async_event,
	.create_qp = g_create_qp,
	.modify_qp = g_modify_qp,
	.destroy_qp = g_destroy_qp,
	.create_srq = cqpoll_mlx5_emu_srq_create,
	.modify_srq = cqpoll_mlx5_emu_srq_modify,
	.query_srq = cqpoll_mlx5_emu_srq_query,
	.destroy_srq = cqpoll_mlx5_emu_srq_destroy,
	.mlx5dv_is_supported = g_mlx5dv_is_supported,
	.mlx5dv_init_obj = g_mlx5dv_init_obj,
	.mlx5dv_create_cq = g_mlx5dv_create_cq,
};

struct ibv_context *
cqpoll_mlx5_emu_open(void)
{
	struct emu_wq_ctx *c = calloc(1, sizeof(*c));
	int r;

	if (c == NULL || (c->scratch = malloc(EMU_WQ_MSG_MAX)) == NULL) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	strcpy(c->dev.name, "mlx5_emu");
	strcpy(c->dev.dev_name, "mlx5_emu");
	c->dev.node_type = IBV_NODE_CA;
	c->dev.transport_type = IBV_TRANSPORT_IB;
	c->ctx.device = &c->dev;
	c->ctx.async_fd = -1;
	c->ctx.cmd_fd = -1;
	/* Keys never 0 nor MLX5_INVALID_LKEY; QP numbers never 0. */
	c->next_key = 0x1000;
	c->next_qpn = 0x200;
	r = cqpoll_ibv_glue_register(&c->ctx, &emu_wq_glue);
	if (r < 0) {
		free(c->scratch);
		free(c);
		errno = -r;
		return NULL;
	}
	return &c->ctx;
}

int
cqpoll_mlx5_emu_close(struct ibv_context *ctx)
{
	struct emu_wq_ctx *c = cqpoll_mlx5_emu_wq_ctx_of(ctx);

	if (c == NULL)
		return -EINVAL;
	if (c->qps != NULL || c->srqs != NULL || c->mrs != NULL || c->pds != 0)
		return -EBUSY;
	cqpoll_ibv_glue_unregister(ctx);
	pthread_mutex_destroy(&c->lock);
	free(c->scratch);
	free(c);
	return 0;
}

struct ibv_pd *
cqpoll_mlx5_emu_alloc_pd(struct ibv_context *ctx)
{
	struct emu_wq_ctx *c = cqpoll_mlx5_emu_wq_ctx_of(ctx);
	struct ibv_pd *pd;

	if (c == NULL) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pd->context = ctx;
	pthread_mutex_lock(&c->lock);
	pd->handle = ++c->pds;
	pthread_mutex_unlock(&c->lock);
	return pd;
}

int
cqpoll_mlx5_emu_dealloc_pd(struct ibv_pd *pd)
{
	struct emu_wq_ctx *c = pd != NULL ? cqpoll_mlx5_emu_wq_ctx_of(pd->context) : NULL;
	const struct emu_wq_srq *sq;
	const struct emu_wq_mr *m;
	const struct emu_wq_qp *q;
	int busy = 0;

	if (c == NULL)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	for (m = c->mrs; m != NULL; m = m->next)
		busy |= m->mr.pd == pd;
	for (q = c->qps; q != NULL; q = q->next)
		busy |= q->ibqp.pd == pd;
	for (sq = c->srqs; sq != NULL; sq = sq->link)
		busy |= sq->ibsrq.pd == pd;
	if (!busy)
		c->pds--;
	pthread_mutex_unlock(&c->lock);
	if (busy)
		return -EBUSY;
	free(pd);
	return 0;
}

struct ibv_mr *
cqpoll_mlx5_emu_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct emu_wq_ctx *c = pd != NULL ? cqpoll_mlx5_emu_wq_ctx_of(pd->context) : NULL;
	struct emu_wq_mr *m;

	if (c == NULL || addr == NULL || length == 0) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->access = access;
	pthread_mutex_lock(&c->lock);
	m->mr.lkey = m->mr.rkey = c->next_key;
	c->next_key += 0x100;
	if (c->next_key == MLX5_INVALID_LKEY || c->next_key == 0)
		c->next_key = 0x1000;
	m->next = c->mrs;
	c->mrs = m;
	pthread_mutex_unlock(&c->lock);
	return &m->mr;
}

int
cqpoll_mlx5_emu_dereg_mr(struct ibv_mr *mr)
{
	struct emu_wq_ctx *c = mr != NULL ? cqpoll_mlx5_emu_wq_ctx_of(mr->context) : NULL;
	struct emu_wq_mr **p;
	int r = -EINVAL;

	if (c == NULL)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	for (p = &c->mrs; *p != NULL; p = &(*p)->next) {
		if (&(*p)->mr == mr) {
			*p = (*p)->next;
			r = 0;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (r == 0)
		free((struct emu_wq_mr *)(void *)mr);
	return r;
}

int
cqpoll_mlx5_emu_run(struct ibv_context *ctx)
{
	struct emu_wq_ctx *c = cqpoll_mlx5_emu_wq_ctx_of(ctx);
	struct emu_wq_qp *qp;
	uint32_t n = 0;

	if (c == NULL)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	for (qp = c->qps; qp != NULL; qp = qp->next)
		n += cqpoll_mlx5_emu_wq_service(c, qp);
	pthread_mutex_unlock(&c->lock);
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

int
cqpoll_mlx5_emu_wq_stats_get(struct ibv_context *ctx, struct cqpoll_mlx5_emu_wq_stats *stats)
{
	struct emu_wq_ctx *c = cqpoll_mlx5_emu_wq_ctx_of(ctx);

	if (c == NULL || stats == NULL)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	*stats = c->stats;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

int
cqpoll_mlx5_emu_qp_dv(struct ibv_qp *ibqp, struct mlx5dv_qp *dv)
{
	if (ibqp == NULL || dv == NULL || cqpoll_mlx5_emu_wq_ctx_of(ibqp->context) == NULL)
		return -EINVAL;
	*dv = qp_of(ibqp)->dv;
	return 0;
}
