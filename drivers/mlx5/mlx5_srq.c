/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues of cqpoll mlx5 QPs (doc/guides/mlx5-wqe-contract.md
 * §5.1): created with ibv_create_srq(), their ring taken through
 * mlx5dv_init_obj(MLX5DV_OBJ_SRQ), both through the context's libibverbs
 * table (ibv_glue.h), so an emulated device serves the same code.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "cqpoll_log_private.h"
#include "cqpoll_mutant.h"
#include "mlx5_barrier.h"
#include "mlx5_srq.h"
#include "mlx5_wqe.h"

#define SRQ_WR_DEFAULT 256
/* The next-index link holds 16 bits (struct mlx5_wqe_srq_next_seg). */
#define SRQ_WQE_MAX 65536u

static struct mlx5_wqe_srq_next_seg *
srq_wqe(const struct cqpoll_mlx5_srq *srq, uint32_t idx)
{
	return (struct mlx5_wqe_srq_next_seg *)(void *)(srq->buf + ((size_t)idx << srq->shift));
}

/*
 * Give WQE @p idx back: linked after the tail, which it becomes
 * (mlx5_free_srq_wqe(), v44). Under the lock.
 */
static void
srq_put(struct cqpoll_mlx5_srq *srq, uint32_t idx)
{
	srq_wqe(srq, srq->tail)->next_wqe_index = htobe16((uint16_t)idx);
	srq->tail = idx;
	srq->busy[idx] = 0;
	srq->retired++;
}

/*
 * Take the head WQE for a receive of @p wr_id: the head follows its
 * next-index link (mlx5_post_srq_recv()). Its data segments, to be written.
 * Under the lock.
 */
#if CQPOLL_MUTANT(SRQ_FREE_AT_POST)
/*
 * Negative control only (test build): the WQE goes back on the free list as
 * soon as it is posted, not when its completion is retired.
 */
static uint8_t *
srq_take(struct cqpoll_mlx5_srq *srq, uint64_t wr_id)
{
	uint32_t idx = srq->head;
	struct mlx5_wqe_srq_next_seg *next = srq_wqe(srq, idx);

	srq->wrid[idx] = wr_id;
	srq->head = be16toh(next->next_wqe_index);
	srq_put(srq, idx);
	srq->retired--;
	return (uint8_t *)(next + 1);
}
#else
static uint8_t *
srq_take(struct cqpoll_mlx5_srq *srq, uint64_t wr_id)
{
	uint32_t idx = srq->head;
	struct mlx5_wqe_srq_next_seg *next = srq_wqe(srq, idx);

	srq->wrid[idx] = wr_id;
	srq->busy[idx] = 1;
	srq->head = be16toh(next->next_wqe_index);
	return (uint8_t *)(next + 1);
}
#endif

int
cqpoll_mlx5_srq_complete(struct cqpoll_mlx5_srq *srq, struct cqpoll_completion *c)
{
	uint32_t idx = c->wqe_counter;

	pthread_spin_lock(&srq->lock);
	/* A stale CQE (a QP's life before a RESET) names no posted WQE. */
	if (idx >= srq->nwqes || !srq->busy[idx]) {
		pthread_spin_unlock(&srq->lock);
		return 0;
	}
	c->wr_id = srq->wrid[idx];
	srq_put(srq, idx);
	pthread_spin_unlock(&srq->lock);
	return 1;
}

int
cqpoll_mlx5_srq_post_recv(struct cqpoll_mlx5_srq *srq, const struct cqpoll_mlx5_recv_wr *wrs,
			  unsigned int n)
{
	uint8_t *seg;
	uint32_t j;
	unsigned int i;

	if (srq == NULL || wrs == NULL || n == 0)
		return -EINVAL;
	pthread_spin_lock(&srq->lock);
	for (i = 0; i < n; i++) {
		if (wrs[i].num_sge > srq->max_sge ||
		    (wrs[i].num_sge != 0 && wrs[i].sg_list == NULL)) {
			CQPOLL_LOG(ERR, "mlx5", "srq 0x%x: post recv: receive %u: %s", srq->srqn,
				   i, wrs[i].sg_list == NULL ? "NULL sg_list" :
				   "more scatter/gather entries than max_sge");
			if (i == 0) {
				pthread_spin_unlock(&srq->lock);
				return -EINVAL;
			}
			break;
		}
		/* The tail stays as the list's anchor: head == tail is full (v44). */
		if (srq->head == srq->tail)
			break;
		seg = srq_take(srq, wrs[i].wr_id);
		for (j = 0; j < wrs[i].num_sge; j++)
			cqpoll_mlx5_wqe_data(seg + j * sizeof(struct mlx5_wqe_data_seg),
					     wrs[i].sg_list[j].length, wrs[i].sg_list[j].lkey,
					     wrs[i].sg_list[j].addr);
		/* Fewer than the WQE holds: the terminator (§5). */
		if (j < srq->max_gs)
			cqpoll_mlx5_wqe_data(seg + j * sizeof(struct mlx5_wqe_data_seg), 0,
					     MLX5_INVALID_LKEY, 0);
	}
	if (i != 0) {
		srq->counter += i;
		/* No register: the record of receives posted is the doorbell (§5.1). */
		cqpoll_mlx5_wmb_wqe_before_record();
		__atomic_store_n(srq->dbrec, htobe32(srq->counter), __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(&srq->lock);
	return i != 0 ? (int)i : -ENOMEM;
}

static struct cqpoll_mlx5_srq *
srq_fail(struct cqpoll_mlx5_srq *srq, const char *what, int err)
{
	CQPOLL_LOG(ERR, "mlx5", "srq create: %s: %s", what, strerror(err));
	if (srq != NULL) {
		cqpoll_ibv_async_srq_leave(&srq->watch);
		if (srq->ibsrq != NULL)
			(void)srq->glue->destroy_srq(srq->ibsrq);
		pthread_spin_destroy(&srq->lock);
		free(srq->wrid);
		free(srq->busy);
		free(srq);
	}
	errno = err;
	return NULL;
}

/* The ring as mlx5dv describes it, or why this driver cannot write it. */
static const char *
ring_invalid(const struct mlx5dv_srq *dv, uint32_t max_sge)
{
	if (dv->buf == NULL || dv->dbrec == NULL)
		return "no ring or doorbell record";
	if (dv->stride < 32 || (dv->stride & (dv->stride - 1)) != 0 ||
	    sizeof(struct mlx5_wqe_srq_next_seg) + (uint64_t)max_sge * 16 > dv->stride)
		return "a WQE stride other than a power of two holding the entries";
	/* A fresh SRQ: all of it free, from WQE 0 to the tail (mlx5_alloc_srq_buf). */
	if (dv->head != 0 || dv->tail == 0 || dv->tail >= SRQ_WQE_MAX)
		return "a free list other than a fresh one";
	return NULL;
}

struct cqpoll_mlx5_srq *
cqpoll_mlx5_srq_create(struct ibv_pd *pd, const struct cqpoll_mlx5_srq_conf *conf)
{
	struct ibv_srq_init_attr attr;
	struct cqpoll_mlx5_srq *srq;
	struct mlx5dv_obj obj;
	struct mlx5dv_srq dv;
	const char *why;
	int r;

	if (pd == NULL)
		return srq_fail(NULL, "NULL protection domain", EINVAL);
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return srq_fail(NULL, "allocating the SRQ", ENOMEM);
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->glue = cqpoll_ibv_glue_of(pd->context);
	if (!srq->glue->mlx5dv_is_supported(pd->context->device))
		return srq_fail(srq, "the protection domain's device", EOPNOTSUPP);
	memset(&attr, 0, sizeof(attr));
	attr.attr.max_wr = conf != NULL && conf->max_wr != 0 ? conf->max_wr : SRQ_WR_DEFAULT;
	attr.attr.max_sge = conf != NULL && conf->max_sge != 0 ? conf->max_sge : 1;
	errno = 0;
	srq->ibsrq = srq->glue->create_srq(pd, &attr);
	if (srq->ibsrq == NULL)
		return srq_fail(srq, "ibv_create_srq", errno != 0 ? errno : EIO);
	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	dv.comp_mask = MLX5DV_SRQ_MASK_SRQN;
	obj.srq.in = srq->ibsrq;
	obj.srq.out = &dv;
	r = srq->glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ);
	if (r != 0)
		return srq_fail(srq, "mlx5dv_init_obj(MLX5DV_OBJ_SRQ)", r > 0 ? r : -r);
	why = ring_invalid(&dv, attr.attr.max_sge);
	if (why != NULL) {
		CQPOLL_LOG(ERR, "mlx5", "srq create: %s", why);
		return srq_fail(srq, "the ring", EOPNOTSUPP);
	}
	srq->buf = dv.buf;
	for (srq->shift = 0; (1u << srq->shift) < dv.stride;)
		srq->shift++;
	srq->max_gs = (dv.stride - (uint32_t)sizeof(struct mlx5_wqe_srq_next_seg)) /
		(uint32_t)sizeof(struct mlx5_wqe_data_seg);
	srq->head = dv.head;
	srq->tail = dv.tail;
	srq->nwqes = dv.tail + 1;
	srq->dbrec = (volatile uint32_t *)dv.dbrec;
	srq->srqn = (dv.comp_mask & MLX5DV_SRQ_MASK_SRQN) ? dv.srqn : 0;
	/* One WQE always anchors the list: the provider's max_wr is the rest. */
	srq->max_wr = attr.attr.max_wr < srq->nwqes - 1 ? attr.attr.max_wr : srq->nwqes - 1;
	srq->max_sge = attr.attr.max_sge < srq->max_gs ? attr.attr.max_sge : srq->max_gs;
	srq->wrid = calloc(srq->nwqes, sizeof(*srq->wrid));
	srq->busy = calloc(srq->nwqes, 1);
	if (srq->wrid == NULL || srq->busy == NULL)
		return srq_fail(srq, "allocating the per-WQE records", ENOMEM);
	srq->watch.srq = srq->ibsrq;
	r = cqpoll_ibv_async_srq_join(&srq->watch);
	if (r < 0)
		return srq_fail(srq, "watching the context's async events", -r);
	if (conf != NULL && conf->limit != 0) {
		r = cqpoll_mlx5_srq_arm_limit(srq, conf->limit);
		if (r < 0)
			return srq_fail(srq, "arming the limit", -r);
	}
	return srq;
}

int
cqpoll_mlx5_srq_destroy(struct cqpoll_mlx5_srq *srq)
{
	int r;

	if (srq == NULL)
		return 0;
	if (__atomic_load_n(&srq->qps, __ATOMIC_ACQUIRE) != 0) {
		CQPOLL_LOG(ERR, "mlx5", "srq 0x%x destroy: %u QPs use it", srq->srqn, srq->qps);
		return -EBUSY;
	}
	/*
	 * libibverbs' destroy waits for the acknowledgement of every async
	 * event of the SRQ (ibv_get_async_event(3)): take those pending first.
	 */
	cqpoll_ibv_async_srq_poll(&srq->watch);
	r = srq->glue->destroy_srq(srq->ibsrq);
	if (r != 0) {
		CQPOLL_LOG(ERR, "mlx5", "srq 0x%x destroy: %s", srq->srqn, strerror(r));
		return -r;
	}
	cqpoll_ibv_async_srq_leave(&srq->watch);
	pthread_spin_destroy(&srq->lock);
	free(srq->wrid);
	free(srq->busy);
	free(srq);
	return 0;
}

int
cqpoll_mlx5_srq_arm_limit(struct cqpoll_mlx5_srq *srq, uint32_t limit)
{
	struct ibv_srq_attr a;
	int r;

	if (srq == NULL || limit > srq->max_wr)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.srq_limit = limit;
	r = srq->glue->modify_srq(srq->ibsrq, &a, IBV_SRQ_LIMIT);
	return r != 0 ? -r : 0;
}

int
cqpoll_mlx5_srq_query(struct cqpoll_mlx5_srq *srq, struct cqpoll_mlx5_srq_attr *attr)
{
	struct ibv_srq_attr a;
	int r;

	if (srq == NULL || attr == NULL)
		return -EINVAL;
	/* Events raised by now, counted before the limit is read. */
	cqpoll_ibv_async_srq_poll(&srq->watch);
	memset(&a, 0, sizeof(a));
	r = srq->glue->query_srq(srq->ibsrq, &a);
	if (r != 0)
		return -r;
	memset(attr, 0, sizeof(*attr));
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->limit = a.srq_limit;
	pthread_spin_lock(&srq->lock);
	attr->outstanding = srq->counter - srq->retired;
	pthread_spin_unlock(&srq->lock);
	attr->limit_events = __atomic_load_n(&srq->watch.limit_events, __ATOMIC_ACQUIRE);
	attr->srqn = srq->srqn;
	attr->qps = __atomic_load_n(&srq->qps, __ATOMIC_ACQUIRE);
	return 0;
}
