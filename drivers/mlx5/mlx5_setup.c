/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver's view of a CQ, taken from struct mlx5dv_cq: what the poll and
 * arm code needs, whoever laid the memory out (the provider, or the emulator).
 */

#include <errno.h>

#include <infiniband/mlx5dv.h>

#include "mlx5_prm.h"
#include "mlx5_private.h"

int
cqpoll_mlx5_cq_setup(struct cqpoll_mlx5_cq *q, const struct mlx5dv_cq *dv,
		     uint32_t ci, uint32_t sn, uint32_t flags)
{
	if (dv->buf == NULL || dv->dbrec == NULL || dv->cq_uar == NULL ||
	    dv->cqe_cnt < 2 || dv->cqe_cnt > CQPOLL_MLX5_CQE_CNT_MAX ||
	    (dv->cqe_cnt & (dv->cqe_cnt - 1)) != 0 ||
	    cqpoll_mlx5_poll_select(dv->cqe_size) == NULL)
		return -EINVAL;
	q->buf = dv->buf;
	q->dbrec = (volatile uint32_t *)dv->dbrec;
	q->cqe_cnt = dv->cqe_cnt;
	q->cqe_size = dv->cqe_size;
	q->uar_db = (volatile uint64_t *)(void *)((uint8_t *)dv->cq_uar + MLX5_CQ_DOORBELL);
	q->cqn = dv->cqn;
	q->ci = ci;
	q->sn = sn;
	q->arm_cmd = (flags & CQPOLL_MLX5_F_SOLICITED_ONLY) ?
		MLX5_CQ_DB_REQ_NOT_SOL : MLX5_CQ_DB_REQ_NOT;
	return 0;
}
