/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues of the emulated mlx5 device
 * (doc/guides/mlx5-wqe-contract.md §5.1). The provider's half, as rdma-core
 * v44 does it (providers/mlx5/srq.c mlx5_alloc_srq_buf, verbs.c
 * mlx5_create_srq): WQEs of a 16-byte next-index segment and the data
 * segments, rounded up to a power of two of at least 32 bytes; max_wr + 1
 * WQEs rounded up to a power of two, each linked to the next, head 0 and
 * tail the last (no ODP wait queue); the count of WQEs less one reported as
 * max_wr. The device's half: it takes the receives posted (the doorbell
 * record's count) by following the links from WQE 0, writes their CQEs
 * with the WQE's index, and raises IBV_EVENT_SRQ_LIMIT_REACHED once when
 * the count it holds drops below the armed limit, disarming it
 * (ibv_modify_srq(3), ibv_query_srq(3)). An error of a QP flushes none of
 * its receives: they are not the QP's until it takes one.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mlx5_emu_wq.h"

#define EMU_SRQ_WQE_MAX 32768u
#define EMU_SRQ_SGE_MAX 31u

static struct emu_wq_srq *
srq_of(struct ibv_srq *ibsrq)
{
	return (struct emu_wq_srq *)(void *)ibsrq;
}

static uint32_t
pow2_up(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint8_t *
srq_wqe(const struct emu_wq_srq *srq, uint32_t idx)
{
	return (uint8_t *)srq->dv.buf + (size_t)idx * srq->dv.stride;
}

struct ibv_srq *
cqpoll_mlx5_emu_srq_create(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct emu_wq_ctx *c = pd != NULL ? cqpoll_mlx5_emu_wq_ctx_of(pd->context) : NULL;
	struct emu_wq_srq *srq;
	uint32_t stride, i;
	uint16_t be;

	if (c == NULL || attr == NULL || attr->attr.max_wr == 0 ||
	    attr->attr.max_wr >= EMU_SRQ_WQE_MAX || attr->attr.max_sge > EMU_SRQ_SGE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	stride = pow2_up(16 + 16 * attr->attr.max_sge);
	if (stride < 32)
		stride = 32;
	srq->nwqes = pow2_up(attr->attr.max_wr + 1);
	srq->max_gs = (stride - 16) / 16;
	srq->dv.stride = stride;
	srq->dv.buf = aligned_alloc(4096, ((size_t)srq->nwqes * stride + 4095) / 4096 * 4096);
	srq->dv.dbrec = aligned_alloc(64, 64);
	if (srq->dv.buf == NULL || srq->dv.dbrec == NULL) {
		free(srq->dv.buf);
		free(srq->dv.dbrec);
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	memset(srq->dv.buf, 0, (size_t)srq->nwqes * stride);
	memset(srq->dv.dbrec, 0, 64);
	/* set_srq_buf_ll(): every WQE linked to the next; the last one's link unused. */
	for (i = 0; i + 1 < srq->nwqes; i++) {
		be = htobe16((uint16_t)(i + 1));
		memcpy(srq_wqe(srq, i) + 2, &be, sizeof(be));
	}
	srq->dv.head = 0;
	srq->dv.tail = srq->nwqes - 1;
	attr->attr.max_wr = srq->nwqes - 1;
	attr->attr.max_sge = srq->max_gs;
	srq->ibsrq.context = pd->context;
	srq->ibsrq.pd = pd;
	srq->ibsrq.srq_context = attr->srq_context;
	pthread_mutex_lock(&c->lock);
	srq->ibsrq.handle = ++c->next_srqn;
	srq->dv.srqn = c->next_srqn & 0xffffff;
	srq->link = c->srqs;
	c->srqs = srq;
	pthread_mutex_unlock(&c->lock);
	return &srq->ibsrq;
}

int
cqpoll_mlx5_emu_srq_dv(struct ibv_srq *ibsrq, struct mlx5dv_srq *out)
{
	const struct emu_wq_srq *srq = srq_of(ibsrq);
	uint64_t mask = out->comp_mask & MLX5DV_SRQ_MASK_SRQN;

	/* mlx5dv_get_srq(): the provider's own head and tail, fresh here. */
	*out = srq->dv;
	out->comp_mask = mask;
	if (mask == 0)
		out->srqn = 0;
	return 0;
}

int
cqpoll_mlx5_emu_srq_modify(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct emu_wq_ctx *c = ibsrq != NULL ? cqpoll_mlx5_emu_wq_ctx_of(ibsrq->context) : NULL;
	struct emu_wq_srq *srq;

	if (c == NULL || attr == NULL)
		return EINVAL;
	srq = srq_of(ibsrq);
	/* The kernel's mlx5 driver cannot resize an SRQ, nor take a limit over it. */
	if ((mask & IBV_SRQ_MAX_WR) || !(mask & IBV_SRQ_LIMIT) ||
	    attr->srq_limit >= srq->nwqes)
		return EINVAL;
	pthread_mutex_lock(&c->lock);
	srq->limit = attr->srq_limit;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

int
cqpoll_mlx5_emu_srq_query(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct emu_wq_ctx *c = ibsrq != NULL ? cqpoll_mlx5_emu_wq_ctx_of(ibsrq->context) : NULL;
	struct emu_wq_srq *srq;

	if (c == NULL || attr == NULL)
		return EINVAL;
	srq = srq_of(ibsrq);
	pthread_mutex_lock(&c->lock);
	attr->max_wr = srq->nwqes - 1;
	attr->max_sge = srq->max_gs;
	attr->srq_limit = srq->limit;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

int
cqpoll_mlx5_emu_srq_destroy(struct ibv_srq *ibsrq)
{
	struct emu_wq_ctx *c = ibsrq != NULL ? cqpoll_mlx5_emu_wq_ctx_of(ibsrq->context) : NULL;
	struct emu_wq_srq *srq, **p;
	uint32_t i;

	if (c == NULL)
		return EINVAL;
	srq = srq_of(ibsrq);
	pthread_mutex_lock(&c->lock);
	/* ibv_destroy_srq(3): refused while a QP is associated with it. */
	if (srq->qps != 0) {
		pthread_mutex_unlock(&c->lock);
		return EBUSY;
	}
	for (p = &c->srqs; *p != NULL && *p != srq; p = &(*p)->link)
		;
	if (*p != NULL)
		*p = srq->link;
	/* Events of it not yet taken go with it (libibverbs waits for their acks). */
	for (i = c->async_tail; i != c->async_head; i++)
		if (c->async[i % EMU_WQ_ASYNC_MAX].element.srq == ibsrq)
			c->async[i % EMU_WQ_ASYNC_MAX].element.srq = NULL;
	pthread_mutex_unlock(&c->lock);
	free(srq->dv.buf);
	free(srq->dv.dbrec);
	free(srq);
	return 0;
}

const uint8_t *
cqpoll_mlx5_emu_wq_recv_wqe(const struct emu_wq_qp *qp, uint32_t *nseg, uint16_t *idx)
{
	const struct emu_wq_srq *srq = qp->srq;
	uint32_t posted;

	if (srq == NULL) {
		posted = be32toh(__atomic_load_n(&qp->dv.dbrec[MLX5_RCV_DBR], __ATOMIC_ACQUIRE));
		if ((uint16_t)posted == (uint16_t)qp->rq_ci)
			return NULL;
		*nseg = qp->dv.rq.stride / 16;
		*idx = (uint16_t)qp->rq_ci;
		return (const uint8_t *)qp->dv.rq.buf +
			(size_t)(qp->rq_ci & (qp->dv.rq.wqe_cnt - 1)) * qp->dv.rq.stride;
	}
	posted = be32toh(__atomic_load_n(&srq->dv.dbrec[0], __ATOMIC_ACQUIRE));
	if (posted == srq->consumed)
		return NULL;
	*nseg = srq->max_gs;
	*idx = (uint16_t)srq->next;
	return srq_wqe(srq, srq->next) + 16;
}

static void
async_raise(struct emu_wq_ctx *c, struct emu_wq_srq *srq)
{
	struct ibv_async_event *ev;

	if (c->async_head - c->async_tail == EMU_WQ_ASYNC_MAX)
		return;
	ev = &c->async[c->async_head++ % EMU_WQ_ASYNC_MAX];
	memset(ev, 0, sizeof(*ev));
	ev->event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
	ev->element.srq = &srq->ibsrq;
	c->stats.srq_limit_events++;
}

void
cqpoll_mlx5_emu_wq_recv_take(struct emu_wq_ctx *c, struct emu_wq_qp *qp)
{
	struct emu_wq_srq *srq = qp->srq;
	uint32_t posted;
	uint16_t be;

	if (srq == NULL) {
		qp->rq_ci++;
		return;
	}
	/* The next one is where the taken WQE's link points. */
	memcpy(&be, srq_wqe(srq, srq->next) + 2, sizeof(be));
	srq->next = be16toh(be);
	if (srq->next >= srq->nwqes) {
		/* A link out of the ring: counted, and kept inside it. */
		c->stats.bad_srq_links++;
		srq->next &= srq->nwqes - 1;
	}
	srq->consumed++;
	posted = be32toh(__atomic_load_n(&srq->dv.dbrec[0], __ATOMIC_ACQUIRE));
	if (srq->limit != 0 && posted - srq->consumed < srq->limit) {
		srq->limit = 0;
		async_raise(c, srq);
	}
}

int
cqpoll_mlx5_emu_async_get(struct emu_wq_ctx *c, struct ibv_async_event *ev)
{
	int r = -1;

	pthread_mutex_lock(&c->lock);
	while (c->async_tail != c->async_head) {
		*ev = c->async[c->async_tail++ % EMU_WQ_ASYNC_MAX];
		if (ev->element.srq != NULL) {
			r = 0;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (r < 0)
		errno = EAGAIN;
	return r;
}
