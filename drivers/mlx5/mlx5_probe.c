/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mlx5 driver's probe for an existing ibv_cq (drivers/common/ibv,
 * ibv_probe.h). The direct path gives WQE counters and no wr_id, so it
 * takes a CQ only when the caller says it accepts that
 * (CQPOLL_IBV_F_WQE_COUNTER), and only a plain CQ of an mlx5 device.
 */

#include <errno.h>

#include "ibv_glue.h"
#include "ibv_probe.h"
#include "mlx5_private.h"

static struct cqpoll_cq *
mlx5_ibv_attach(struct ibv_cq *cq, struct ibv_comp_channel *ch,
		const struct cqpoll_ibv_conf *conf)
{
	struct cqpoll_mlx5_attach_conf mconf = { 0 };

	if (!(conf->flags & CQPOLL_IBV_F_WQE_COUNTER) || (conf->flags & CQPOLL_IBV_F_CQ_EX) ||
	    !cqpoll_ibv_glue_of(cq->context)->mlx5dv_is_supported(cq->context->device)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	mconf.event_ack_batch = conf->event_ack_batch;
	if (conf->flags & CQPOLL_IBV_F_SOLICITED_ONLY)
		mconf.flags |= CQPOLL_MLX5_F_SOLICITED_ONLY;
	return cqpoll_mlx5_cq_attach(cq, ch, &mconf);
}

const struct cqpoll_ibv_probe cqpoll_mlx5_ibv_probe = {
	.name = "mlx5",
	.priority = 10,
	.attach = mlx5_ibv_attach,
};
