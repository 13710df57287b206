/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which driver takes an existing verbs CQ. The caller decides what a
 * completion identifies: the direct mlx5 path gives WQE counters and no
 * wr_id, so it is taken only when the caller says it accepts that
 * (CQPOLL_IBV_F_WQE_COUNTER); otherwise the verbs driver, which gives the
 * caller's wr_id. Whether mlx5 is in this build is the build's answer
 * (CQPOLL_VERBS_HAVE_MLX5), not a symbol looked up at run time.
 */

#include <errno.h>

#include "cqpoll_ibv.h"
#include "cqpoll_verbs.h"
#include "verbs_autoconf.h"
#include "verbs_private.h"

#if CQPOLL_VERBS_HAVE_MLX5
#include <infiniband/mlx5dv.h>

#include "cqpoll_mlx5.h"
#endif

#define IBV_FLAGS_KNOWN (CQPOLL_IBV_F_CQ_EX | CQPOLL_IBV_F_SOLICITED_ONLY | \
			 CQPOLL_IBV_F_WQE_COUNTER)

/* NULL with errno EOPNOTSUPP when the direct path cannot take the CQ. */
static struct cqpoll_cq *
try_mlx5(struct ibv_cq *cq, struct ibv_comp_channel *ch, const struct cqpoll_ibv_conf *conf)
{
#if CQPOLL_VERBS_HAVE_MLX5
	struct cqpoll_mlx5_attach_conf mconf = { 0 };

	if ((conf->flags & CQPOLL_IBV_F_CQ_EX) || !mlx5dv_is_supported(cq->context->device)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	mconf.event_ack_batch = conf->event_ack_batch;
	if (conf->flags & CQPOLL_IBV_F_SOLICITED_ONLY)
		mconf.flags |= CQPOLL_MLX5_F_SOLICITED_ONLY;
	return cqpoll_mlx5_cq_attach(cq, ch, &mconf);
#else
	(void)cq;
	(void)ch;
	(void)conf;
	errno = EOPNOTSUPP;
	return NULL;
#endif
}

struct cqpoll_cq *
cqpoll_cq_from_ibv(struct ibv_cq *cq, struct ibv_comp_channel *ch,
		   const struct cqpoll_ibv_conf *conf)
{
	static const struct cqpoll_ibv_conf defaults;
	struct cqpoll_verbs_conf vconf = { 0 };
	struct cqpoll_cq *h;

	if (conf == NULL)
		conf = &defaults;
	if (cq == NULL || ch == NULL || cq->channel != ch ||
	    (conf->flags & ~(uint32_t)IBV_FLAGS_KNOWN) != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (conf->flags & CQPOLL_IBV_F_WQE_COUNTER) {
		h = try_mlx5(cq, ch, conf);
		if (h != NULL || errno != EOPNOTSUPP)
			return h;
	}
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
