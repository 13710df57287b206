/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_MLX5_QP_TEST_H
#define TEST_MLX5_QP_TEST_H

/*
 * Two cqpoll mlx5 QPs connected to each other on an emulated mlx5 device,
 * each on a CQ of its own, and one registered buffer: what the QP tests
 * share. The device runs only when a test lets it (cqpoll_mlx5_emu_run()).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "cqpoll.h"
#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"

struct qp_pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct cqpoll_cq *cq[2];
	struct cqpoll_mlx5_qp *qp[2];
	struct cqpoll_mlx5_qp_caps caps[2];
	uint8_t *buf;
	size_t len;
	struct ibv_mr *mr;
};

#define QP_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static inline int
qp_pair_modify(struct cqpoll_mlx5_qp *qp, enum ibv_qp_state st, uint32_t dest, uint8_t rnr)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE;

	memset(&a, 0, sizeof(a));
	a.qp_state = st;
	if (st == IBV_QPS_INIT) {
		a.qp_access_flags = QP_ACCESS;
		a.port_num = 1;
		mask |= IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	} else if (st == IBV_QPS_RTR) {
		a.dest_qp_num = dest;
		a.path_mtu = IBV_MTU_1024;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 12;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	} else if (st == IBV_QPS_RTS) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = rnr;
		a.max_rd_atomic = 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return cqpoll_mlx5_qp_modify(qp, &a, mask);
}

static inline void
qp_pair_close(struct qp_pair *p)
{
	int i;

	for (i = 0; i < 2; i++)
		if (p->qp[i] != NULL)
			cqpoll_mlx5_qp_destroy(p->qp[i]);
	for (i = 0; i < 2; i++)
		if (p->cq[i] != NULL)
			cqpoll_cq_destroy(p->cq[i]);
	if (p->mr != NULL)
		cqpoll_mlx5_emu_dereg_mr(p->mr);
	if (p->pd != NULL)
		cqpoll_mlx5_emu_dealloc_pd(p->pd);
	if (p->ctx != NULL)
		cqpoll_mlx5_emu_close(p->ctx);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/* Open the pair in RTS with @p conf's sizes (the CQs are set here); 0 or -errno. */
static inline int
qp_pair_open(struct qp_pair *p, const struct cqpoll_mlx5_qp_conf *conf, uint32_t cq_size,
	     size_t len, uint8_t rnr_retry)
{
	struct cqpoll_mlx5_emu_conf cc = {
		.size = cq_size, .arm = CQPOLL_ARM_LEVEL, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	struct cqpoll_mlx5_qp_conf qc = *conf;
	int i, r = 0;

	memset(p, 0, sizeof(*p));
	p->ctx = cqpoll_mlx5_emu_open();
	p->pd = p->ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(p->ctx) : NULL;
	p->len = len;
	p->buf = aligned_alloc(4096, len);
	p->mr = p->pd != NULL && p->buf != NULL ?
		cqpoll_mlx5_emu_reg_mr(p->pd, p->buf, len, QP_ACCESS) : NULL;
	if (p->mr == NULL) {
		qp_pair_close(p);
		return -ENOMEM;
	}
	memset(p->buf, 0, len);
	for (i = 0; i < 2 && r == 0; i++) {
		p->cq[i] = cqpoll_mlx5_emu_cq_create(&cc);
		qc.send_cq = qc.recv_cq = p->cq[i];
		p->qp[i] = p->cq[i] != NULL ? cqpoll_mlx5_qp_create(p->pd, &qc) : NULL;
		r = p->qp[i] != NULL ? cqpoll_mlx5_qp_caps(p->qp[i], &p->caps[i]) : -errno;
	}
	for (i = 0; i < 2 && r == 0; i++) {
		r = qp_pair_modify(p->qp[i], IBV_QPS_INIT, 0, 0);
		if (r == 0)
			r = qp_pair_modify(p->qp[i], IBV_QPS_RTR, p->caps[1 - i].qp_num, 0);
		if (r == 0)
			r = qp_pair_modify(p->qp[i], IBV_QPS_RTS, 0, rnr_retry);
	}
	if (r != 0)
		qp_pair_close(p);
	return r;
}

/* The ring bytes of the WQE at @p counter of @p qp, across the ring's end. */
static inline void
qp_ring_read(struct cqpoll_mlx5_qp *qp, uint32_t counter, uint8_t *dst, uint32_t len)
{
	struct mlx5dv_qp dv;
	size_t ring, off;
	uint32_t i;

	cqpoll_mlx5_emu_qp_dv(cqpoll_mlx5_qp_ibv(qp), &dv);
	ring = (size_t)dv.sq.wqe_cnt * 64;
	off = (size_t)(counter & (dv.sq.wqe_cnt - 1)) * 64;
	for (i = 0; i < len; i++)
		dst[i] = ((const uint8_t *)dv.sq.buf)[(off + i) % ring];
}

#endif /* TEST_MLX5_QP_TEST_H */
