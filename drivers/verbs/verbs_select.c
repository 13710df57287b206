/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which driver takes an existing verbs CQ. The mlx5 driver is optional in a
 * build: its attach is referenced weakly, so this file links whether or not
 * it is there, and falls back to verbs when it is not.
 */

#include <errno.h>

#include "cqpoll_ibv.h"
#include "cqpoll_verbs.h"
#include "verbs_autoconf.h"
#include "verbs_private.h"

#if CQPOLL_VERBS_HAVE_MLX5
#include <infiniband/mlx5dv.h>

#include "cqpoll_mlx5.h"
#pragma weak cqpoll_mlx5_cq_attach
#endif

#if CQPOLL_VERBS_HAVE_MLX5
/* NULL with errno EOPNOTSUPP when the mlx5 driver cannot take the CQ. */
static struct cqpoll_cq *
try_mlx5(struct ibv_cq *cq, struct ibv_comp_channel *ch, const struct cqpoll_ibv_conf *conf)
{
	struct cqpoll_mlx5_attach_conf mconf = { 0 };

	if (cqpoll_mlx5_cq_attach == NULL || (conf->flags & CQPOLL_IBV_F_CQ_EX) ||
	    !mlx5dv_is_supported(cq->context->device) || cqpoll_verbs_channel_in_use(ch)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	mconf.event_ack_batch = conf->event_ack_batch;
	if (conf->flags & CQPOLL_IBV_F_SOLICITED_ONLY)
		mconf.flags |= CQPOLL_MLX5_F_SOLICITED_ONLY;
	return cqpoll_mlx5_cq_attach(cq, ch, &mconf);
}
#endif

struct cqpoll_cq *
cqpoll_cq_from_ibv(struct ibv_cq *cq, struct ibv_comp_channel *ch,
		   const struct cqpoll_ibv_conf *conf)
{
	static const struct cqpoll_ibv_conf defaults;
	struct cqpoll_verbs_conf vconf = { 0 };

	if (conf == NULL)
		conf = &defaults;
	if (cq == NULL || ch == NULL || cq->channel != ch) {
		errno = EINVAL;
		return NULL;
	}
#if CQPOLL_VERBS_HAVE_MLX5
	if (!(conf->flags & CQPOLL_IBV_F_FORCE_VERBS)) {
		struct cqpoll_cq *h = try_mlx5(cq, ch, conf);

		if (h != NULL || errno != EOPNOTSUPP)
			return h;
	}
#endif
	vconf.event_ack_batch = conf->event_ack_batch;
	if (conf->flags & CQPOLL_IBV_F_SOLICITED_ONLY)
		vconf.flags |= CQPOLL_VERBS_F_SOLICITED_ONLY;
	if (conf->flags & CQPOLL_IBV_F_CQ_EX) {
		/* The ibv_cq is the head of the ibv_cq_ex it was made as. */
		vconf.wc_flags = conf->wc_flags;
		return cqpoll_verbs_cq_attach_ex((struct ibv_cq_ex *)(void *)cq, ch, &vconf);
	}
	return cqpoll_verbs_cq_attach(cq, ch, &vconf);
}
