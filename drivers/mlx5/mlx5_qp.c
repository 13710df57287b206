/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll mlx5 QPs: created with ibv_create_qp() on the verbs CQs of cqpoll
 * mlx5 CQs, their rings taken through mlx5dv_init_obj(MLX5DV_OBJ_QP)
 * (doc/guides/mlx5-wqe-contract.md §1), both through the context's libibverbs table
 * (ibv_glue.h), so an emulated device serves the same code. The CQs they
 * use poll through mlx5_qp_retire.c from then on.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "cqpoll_log_private.h"
#include "mlx5_qp.h"
#include "mlx5_srq.h"
#include "mlx5_wqe.h"

#define QP_WR_DEFAULT 256
/* 16-bit WQE counters tell at most 2^15 outstanding blocks apart (§1.3). */
#define QP_SQ_WQEBB_MAX 32768u

/*
 * The mlx5 state of a handle of this driver or of the emulated device (both
 * arm through cqpoll_mlx5_arm(), whose priv is a struct cqpoll_mlx5_cq).
 * By name too: a program that links a second copy of the driver (the
 * negative controls' test builds) sees the emulated device's table point
 * at the other copy.
 */
static struct cqpoll_mlx5_cq *
mlx5_cq_of(struct cqpoll_cq *cq)
{
	const struct cqpoll_driver_ops *ops = cqpoll_cq_driver(cq);

	if (ops == NULL || (ops->arm != cqpoll_mlx5_arm && strcmp(ops->name, "mlx5") != 0 &&
			    strcmp(ops->name, "mlx5-emu") != 0))
		return NULL;
	return cqpoll_cq_priv(cq);
}

static int
is_pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* The rings as mlx5dv describes them, or why this driver cannot write them. */
static const char *
rings_invalid(const struct mlx5dv_qp *dv)
{
	if (dv->dbrec == NULL || dv->sq.buf == NULL || dv->bf.reg == NULL)
		return "no ring, doorbell record or BlueFlame register";
	if (dv->sq.stride != MLX5_SEND_WQE_BB || !is_pow2(dv->sq.wqe_cnt) ||
	    dv->sq.wqe_cnt > QP_SQ_WQEBB_MAX)
		return "a send ring of other than 64-byte blocks, a power of two up to 2^15";
	if (dv->rq.wqe_cnt != 0 && (dv->rq.buf == NULL || !is_pow2(dv->rq.wqe_cnt) ||
				    !is_pow2(dv->rq.stride) || dv->rq.stride < 16))
		return "a receive ring of other than a power of two of WQEs";
	return NULL;
}

/* Add @p qp to the QPs of @p cq; the first one swaps its poll. */
static int
set_add(struct cqpoll_cq *cq, struct cqpoll_mlx5_qp *qp)
{
	struct cqpoll_mlx5_cq *q = mlx5_cq_of(cq);
	struct cqpoll_mlx5_qp_set *s = q->qps;
	int r;

	if (s == NULL) {
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			return -ENOMEM;
		q->qps = s;
		r = cqpoll_cq_poll_swap(cq, cqpoll_mlx5_qp_poll_of(q), &s->inner);
		if (r < 0) {
			q->qps = NULL;
			free(s);
			return r == -EBUSY ? -EINVAL : r;
		}
	}
	if (s->n == CQPOLL_MLX5_QP_PER_CQ)
		return -ENOSPC;
	s->qp[s->n++] = qp;
	/* The QP reads the CQ until its destroy: the CQ's destroy waits for it. */
	cqpoll_cq_hold(cq);
	return 0;
}

/* Remove @p qp from @p cq's QPs; the last one gives the CQ its bare poll back. */
static void
set_del(struct cqpoll_cq *cq, struct cqpoll_mlx5_qp *qp)
{
	struct cqpoll_mlx5_cq *q = mlx5_cq_of(cq);
	struct cqpoll_mlx5_qp_set *s = q->qps;
	uint32_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		if (s->qp[i] == qp) {
			s->qp[i] = s->qp[--s->n];
			cqpoll_cq_release(cq);
			break;
		}
	}
	if (s->n != 0)
		return;
	/* A failed CQ keeps its failure's poll, which reads no set. */
	(void)cqpoll_cq_poll_swap(cq, s->inner, NULL);
	q->qps = NULL;
	free(s);
}

static void
qp_free(struct cqpoll_mlx5_qp *qp)
{
	free(qp->sq_rec);
	free(qp->rq_wrid);
	free(qp);
}

/* The driver's view of the rings, from mlx5dv and the provider's caps. */
static int
qp_setup(struct cqpoll_mlx5_qp *qp, const struct mlx5dv_qp *dv,
	 const struct ibv_qp_init_attr *attr)
{
	uint64_t max_ds;

	qp->sq_buf = dv->sq.buf;
	qp->sq_cnt = dv->sq.wqe_cnt;
	qp->sq_end = qp->sq_buf + (size_t)qp->sq_cnt * MLX5_SEND_WQE_BB;
	qp->dbrec = (volatile uint32_t *)dv->dbrec;
	qp->bf_reg = dv->bf.reg;
	qp->bf_size = dv->bf.size;
	qp->rq_buf = dv->rq.buf;
	qp->rq_cnt = dv->rq.wqe_cnt;
	qp->rq_stride = dv->rq.stride;
	qp->rq_max_gs = dv->rq.stride / sizeof(struct mlx5_wqe_data_seg);
	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_recv_sge = attr->cap.max_recv_sge < qp->rq_max_gs ?
		attr->cap.max_recv_sge : qp->rq_max_gs;
	qp->max_inline = attr->cap.max_inline_data;
	/*
	 * The post's common path: control, remote address and the entries in
	 * at most 63 DS (what the control segment can say); its largest WQE
	 * rounded up to a power of two of blocks.
	 */
	qp->fast_max_sge = qp->max_send_sge < CQPOLL_MLX5_FAST_SGE_MAX ?
		qp->max_send_sge : CQPOLL_MLX5_FAST_SGE_MAX;
	for (qp->fast_shift = 0; (1u << qp->fast_shift) < (2 + qp->fast_max_sge + 3) / 4;)
		qp->fast_shift++;
	/*
	 * Requests outstanding at most: the provider's max_post (caps'
	 * max_send_wr), fewer if the largest WQE this QP takes times that
	 * would not fit the ring (never with rdma-core's sizes).
	 */
	max_ds = 2 + (uint64_t)qp->max_send_sge;
	if (qp->max_inline != 0 && 2 + (4 + (uint64_t)qp->max_inline + 15) / 16 > max_ds)
		max_ds = 2 + (4 + (uint64_t)qp->max_inline + 15) / 16;
	if (max_ds > CQPOLL_MLX5_WQE_DS_MAX)
		max_ds = CQPOLL_MLX5_WQE_DS_MAX;
	qp->sq_wr_max = qp->sq_cnt / (uint32_t)((max_ds + 3) / 4);
	if (attr->cap.max_send_wr < qp->sq_wr_max)
		qp->sq_wr_max = attr->cap.max_send_wr;
	qp->rq_wr_max = attr->cap.max_recv_wr < qp->rq_cnt ? attr->cap.max_recv_wr : qp->rq_cnt;
	qp->qpn_ds = qp->ibqp->qp_num << 8;
	qp->qpn_ds_be = htobe32(qp->qpn_ds);
	qp->state = IBV_QPS_RESET;
	qp->caps = (struct cqpoll_mlx5_qp_caps){
		.qp_num = qp->ibqp->qp_num,
		.max_send_wr = qp->sq_wr_max,
		.max_recv_wr = qp->rq_wr_max,
		.max_send_sge = qp->max_send_sge,
		.max_recv_sge = qp->max_recv_sge,
		.max_inline_data = qp->max_inline,
		.sq_wqebb_cnt = qp->sq_cnt,
		.rq_wqe_cnt = qp->rq_cnt,
	};
	qp->sq_rec = calloc(qp->sq_cnt, sizeof(*qp->sq_rec));
	qp->rq_wrid = calloc(qp->rq_cnt != 0 ? qp->rq_cnt : 1, sizeof(*qp->rq_wrid));
	return qp->sq_rec != NULL && qp->rq_wrid != NULL ? 0 : -ENOMEM;
}

static struct cqpoll_mlx5_qp *
qp_fail(struct cqpoll_mlx5_qp *qp, const char *what, int err)
{
	CQPOLL_LOG(ERR, "mlx5", "qp create: %s: %s", what, strerror(err));
	if (qp != NULL) {
		if (qp->scq != NULL)
			set_del(qp->scq, qp);
		if (qp->rcq != NULL && qp->rcq != qp->scq)
			set_del(qp->rcq, qp);
		if (qp->ibqp != NULL)
			(void)qp->glue->destroy_qp(qp->ibqp);
		qp_free(qp);
	}
	errno = err;
	return NULL;
}

struct cqpoll_mlx5_qp *
cqpoll_mlx5_qp_create(struct ibv_pd *pd, const struct cqpoll_mlx5_qp_conf *conf)
{
	struct cqpoll_mlx5_cq *sq, *rq;
	struct ibv_qp_init_attr attr;
	struct cqpoll_mlx5_qp *qp;
	struct mlx5dv_obj obj;
	struct mlx5dv_qp dv;
	const char *why;
	int r;

	if (pd == NULL || conf == NULL || conf->send_cq == NULL || conf->recv_cq == NULL)
		return qp_fail(NULL, "NULL protection domain, conf or CQ", EINVAL);
	sq = mlx5_cq_of(conf->send_cq);
	rq = mlx5_cq_of(conf->recv_cq);
	if (sq == NULL || rq == NULL || sq->ibcq == NULL || rq->ibcq == NULL)
		return qp_fail(NULL, "a CQ that is no mlx5 CQ of cqpoll", EINVAL);
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return qp_fail(NULL, "allocating the QP", ENOMEM);
	qp->glue = cqpoll_ibv_glue_of(pd->context);
	if (!qp->glue->mlx5dv_is_supported(pd->context->device))
		return qp_fail(qp, "the protection domain's device", EOPNOTSUPP);
	memset(&attr, 0, sizeof(attr));
	attr.send_cq = sq->ibcq;
	attr.recv_cq = rq->ibcq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = conf->max_send_wr != 0 ? conf->max_send_wr : QP_WR_DEFAULT;
	attr.cap.max_recv_wr = conf->max_recv_wr != 0 ? conf->max_recv_wr : QP_WR_DEFAULT;
	attr.cap.max_send_sge = conf->max_send_sge != 0 ? conf->max_send_sge : 1;
	attr.cap.max_recv_sge = conf->max_recv_sge != 0 ? conf->max_recv_sge : 1;
	attr.cap.max_inline_data = conf->max_inline_data;
	/* On an SRQ the QP has no receive queue (rdma-core: 0 WQEs, §1.2). */
	if (conf->srq != NULL) {
		attr.srq = conf->srq->ibsrq;
		attr.cap.max_recv_wr = 0;
		attr.cap.max_recv_sge = 0;
	}
	errno = 0;
	qp->ibqp = qp->glue->create_qp(pd, &attr);
	if (qp->ibqp == NULL)
		return qp_fail(qp, "ibv_create_qp", errno != 0 ? errno : EIO);
	memset(&obj, 0, sizeof(obj));
	/* comp_mask is read too: nothing extra asked (§1.1). */
	memset(&dv, 0, sizeof(dv));
	obj.qp.in = qp->ibqp;
	obj.qp.out = &dv;
	r = qp->glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP);
	if (r != 0)
		return qp_fail(qp, "mlx5dv_init_obj(MLX5DV_OBJ_QP)", r > 0 ? r : -r);
	why = rings_invalid(&dv);
	if (why != NULL) {
		CQPOLL_LOG(ERR, "mlx5", "qp create: %s", why);
		return qp_fail(qp, "the rings", EOPNOTSUPP);
	}
	if (qp_setup(qp, &dv, &attr) != 0)
		return qp_fail(qp, "allocating the per-WQE records", ENOMEM);
	/* Before the CQs read the QP's completions. */
	qp->srq = conf->srq;
	r = set_add(conf->send_cq, qp);
	if (r == 0)
		qp->scq = conf->send_cq;
	if (r == 0 && conf->recv_cq != conf->send_cq) {
		r = set_add(conf->recv_cq, qp);
		if (r == 0)
			qp->rcq = conf->recv_cq;
	}
	if (r < 0)
		return qp_fail(qp, r == -ENOSPC ? "the CQ serves as many QPs as it can" :
			       "a failed CQ", -r);
	if (qp->rcq == NULL)
		qp->rcq = qp->scq;
	if (qp->srq != NULL)
		__atomic_fetch_add(&qp->srq->qps, 1, __ATOMIC_RELEASE);
	return qp;
}

int
cqpoll_mlx5_qp_destroy(struct cqpoll_mlx5_qp *qp)
{
	int r;

	if (qp == NULL)
		return 0;
	r = qp->glue->destroy_qp(qp->ibqp);
	if (r != 0) {
		CQPOLL_LOG(ERR, "mlx5", "qp 0x%x destroy: %s", qp->caps.qp_num, strerror(r));
		return -r;
	}
	set_del(qp->scq, qp);
	if (qp->rcq != qp->scq)
		set_del(qp->rcq, qp);
	if (qp->srq != NULL)
		__atomic_fetch_sub(&qp->srq->qps, 1, __ATOMIC_RELEASE);
	qp_free(qp);
	return 0;
}

int
cqpoll_mlx5_qp_modify(struct cqpoll_mlx5_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	int r;

	if (qp == NULL || attr == NULL)
		return -EINVAL;
	r = qp->glue->modify_qp(qp->ibqp, attr, attr_mask);
	if (r != 0)
		return -r;
	if (!(attr_mask & IBV_QP_STATE))
		return 0;
	qp->state = attr->qp_state;
	qp->sq_fast_max = (qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD ||
			   qp->state == IBV_QPS_SQE || qp->state == IBV_QPS_ERR) &&
		qp->max_send_sge != 0 ? qp->sq_wr_max : 0;
	/*
	 * The provider zeroes the doorbell record and its indices on RESET
	 * (mlx5_modify_qp, §1.3); ours start again at 0 with it. Completions
	 * of the old life then name no outstanding WQE.
	 */
	if (attr->qp_state == IBV_QPS_RESET) {
		qp->sq_head = 0;
		qp->sq_tail = 0;
		qp->sq_wr_head = 0;
		__atomic_store_n(&qp->sq_wr_tail, 0, __ATOMIC_RELEASE);
		qp->rq_head = 0;
		__atomic_store_n(&qp->rq_tail, 0, __ATOMIC_RELEASE);
	}
	return 0;
}

int
cqpoll_mlx5_qp_caps(const struct cqpoll_mlx5_qp *qp, struct cqpoll_mlx5_qp_caps *caps)
{
	if (qp == NULL || caps == NULL)
		return -EINVAL;
	*caps = qp->caps;
	return 0;
}

struct ibv_qp *
cqpoll_mlx5_qp_ibv(const struct cqpoll_mlx5_qp *qp)
{
	if (qp == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return qp->ibqp;
}
