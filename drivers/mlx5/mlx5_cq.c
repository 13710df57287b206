/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5 CQs on a device: creation or attachment through mlx5dv, and events
 * through the completion channel. Everything the poll and arm code needs is
 * taken from struct mlx5dv_cq, the same structure the emulator fills.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "cqpoll_log_private.h"
#include "mlx5_autoconf.h"
#include "mlx5_prm.h"
#include "mlx5_private.h"

#define MLX5_CQ_SIZE_DEFAULT 4096

int
cqpoll_mlx5_channel_event_get(struct cqpoll_mlx5_cq *q)
{
	/*
	 * Only events that name this CQ, whoever read them off the channel:
	 * the sequence number follows this CQ's arms and nothing else
	 * (rdma-core mlx5_cq_event is called for the CQ ibv_get_cq_event()
	 * returned). Another member's event counted here would leave its sn
	 * behind and ours ahead, and its CQ without a wake-up.
	 */
	int n = cqpoll_ibv_channel_get(&q->ev);

	if (n > 0)
		cqpoll_mlx5_events_consumed(q, (unsigned int)n);
	return n;
}

static int
hw_event_fd(void *priv)
{
	struct cqpoll_mlx5_cq *q = priv;

	return cqpoll_ibv_channel_fd(&q->ev);
}

static int
hw_event_get(void *priv)
{
	return cqpoll_mlx5_channel_event_get(priv);
}

static int
hw_event_ack(void *priv, unsigned int n)
{
	struct cqpoll_mlx5_cq *q = priv;

	cqpoll_ibv_channel_ack(&q->ev, n);
	return 0;
}

static void
hw_destroy(void *priv)
{
	struct cqpoll_mlx5_cq *q = priv;
	struct ibv_comp_channel *ch;

	/* Leave first: events read for this CQ from now on are acked by the reader. */
	ch = cqpoll_ibv_channel_leave(&q->ev);
	if (q->own_verbs)
		q->glue->destroy_cq(q->ibcq);
	if (ch != NULL)
		q->glue->destroy_comp_channel(ch);
	free(q);
}

const struct cqpoll_driver_ops cqpoll_mlx5_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "mlx5",
	.arm = cqpoll_mlx5_arm,
	.event_fd = hw_event_fd,
	.event_get = hw_event_get,
	.event_ack = hw_event_ack,
	.destroy = hw_destroy,
	.get_monitor_addr = cqpoll_mlx5_get_monitor_addr,
};

/* Take over @p q->ibcq: read its mlx5dv description and wrap it in a handle. */
static struct cqpoll_cq *
hw_wrap(struct cqpoll_mlx5_cq *q, struct ibv_comp_channel *ch, bool own_channel,
	uint32_t ci, uint32_t sn, uint32_t flags, uint32_t ack_batch)
{
	struct cqpoll_cq *cq;
	struct cqpoll_cq_params params = { .arm = cqpoll_mlx5_arm_semantics(flags) };
	struct mlx5dv_obj obj;
	struct mlx5dv_cq dv;
	int r;

	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.cq.in = q->ibcq;
	obj.cq.out = &dv;
	/* From here on the provider leaves the consumer index to us (§1.1). */
	r = q->glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ);
	if (r != 0) {
		errno = r > 0 ? r : -r;
		return NULL;
	}
	r = cqpoll_mlx5_cq_setup(q, &dv, ci, sn, flags);
	if (r == 0)
		r = cqpoll_ibv_channel_join(&q->ev, q->ibcq, ch, own_channel, -1);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	params.size = dv.cqe_cnt;
	params.event_ack_batch = ack_batch;
	cq = cqpoll_cq_alloc(&cqpoll_mlx5_ops, cqpoll_mlx5_poll_of(q),
			     q, &params);
	if (cq == NULL) {
		r = errno;
		/* The caller destroys what it created, CQ first. */
		(void)cqpoll_ibv_channel_leave(&q->ev);
		errno = r;
		return NULL;
	}
	/* Async events of the context (CQ error, device fatal) reach it now. */
	cqpoll_ibv_channel_bind(&q->ev, cq);
	return cq;
}

static struct ibv_cq *
hw_create_verbs_cq(const struct cqpoll_ibv_glue *glue, struct ibv_context *ctx, uint32_t n, int vector, uint32_t flags,
		   struct ibv_comp_channel *chan)
{
	/* The provider rounds cqe + 1 up to a power of two (§1.2). */
	int cqe = (int)n - 1;

	struct ibv_cq_init_attr_ex attr = {
		.cqe = (uint32_t)cqe,
		.channel = chan,
		.comp_vector = (uint32_t)vector,
	};
	struct mlx5dv_cq_init_attr dv_attr = { .comp_mask = 0 };
	struct ibv_cq_ex *cqx;

	if (!(flags & (CQPOLL_MLX5_F_CQE128 | CQPOLL_MLX5_F_CQE_COMPRESS)))
		return glue->create_cq(ctx, cqe, NULL, chan, vector);
	if (flags & CQPOLL_MLX5_F_CQE128) {
#if CQPOLL_MLX5_HAVE_CQE_SIZE_ATTR
		dv_attr.comp_mask |= MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
		dv_attr.cqe_size = 128;
#else
		errno = EOPNOTSUPP;
		return NULL;
#endif
	}
	if (flags & CQPOLL_MLX5_F_CQE_COMPRESS) {
		/* The mini CQE's first word is unused by RDMA consumers: any format. */
		dv_attr.comp_mask |= MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE;
		dv_attr.cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_HASH;
	}
	cqx = glue->mlx5dv_create_cq(ctx, &attr, &dv_attr);
	return cqx != NULL ? ibv_cq_ex_to_cq(cqx) : NULL;
}

struct cqpoll_cq *
cqpoll_mlx5_cq_create(struct ibv_context *ctx, const struct cqpoll_mlx5_conf *conf)
{
	static const struct cqpoll_mlx5_conf defaults = { .size = 0 };
	const struct cqpoll_ibv_glue *glue;
	struct ibv_comp_channel *ch;
	struct cqpoll_mlx5_cq *q;
	struct cqpoll_cq *cq;
	uint32_t n = 2;
	int e;

	if (conf == NULL)
		conf = &defaults;
	if (ctx == NULL || conf->size > CQPOLL_MLX5_CQE_CNT_MAX) {
		CQPOLL_LOG(ERR, "mlx5", "cq create: %s", ctx == NULL ?
			   "NULL device context" : "size over the device's CQE limit");
		errno = EINVAL;
		return NULL;
	}
	/* mlx5dv_create_cq() cannot ask for the enhanced layout. */
	if (conf->flags & CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED) {
		CQPOLL_LOG(ERR, "mlx5", "cq create: %s",
			   "the enhanced compression layout needs a DevX CQ");
		errno = EOPNOTSUPP;
		return NULL;
	}
	glue = cqpoll_ibv_glue_of(ctx);
	if (!glue->mlx5dv_is_supported(ctx->device)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	while (n < (conf->size != 0 ? conf->size : MLX5_CQ_SIZE_DEFAULT))
		n <<= 1;
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->own_verbs = 1;
	q->glue = glue;
	ch = conf->channel != NULL ? conf->channel : glue->create_comp_channel(ctx);
	if (ch == NULL)
		goto fail;
	q->ibcq = hw_create_verbs_cq(glue, ctx, n, conf->comp_vector, conf->flags, ch);
	if (q->ibcq == NULL)
		goto fail;
	cq = hw_wrap(q, ch, conf->channel == NULL, 0, 0, conf->flags, conf->event_ack_batch);
	if (cq != NULL)
		return cq;
fail:
	e = errno != 0 ? errno : EIO;
	CQPOLL_LOG(ERR, "mlx5", "cq create: %s: %s", ch == NULL ?
		   "ibv_create_comp_channel" : q->ibcq == NULL ?
		   "creating the verbs CQ" : "direct access setup", strerror(e));
	if (q->ibcq != NULL)
		glue->destroy_cq(q->ibcq);
	if (ch != NULL && conf->channel == NULL)
		glue->destroy_comp_channel(ch);
	free(q);
	errno = e;
	return NULL;
}

struct cqpoll_cq *
cqpoll_mlx5_cq_attach(struct ibv_cq *ibcq, struct ibv_comp_channel *channel,
		      const struct cqpoll_mlx5_attach_conf *conf)
{
	static const struct cqpoll_mlx5_attach_conf defaults = { .ci = 0 };
	const struct cqpoll_ibv_glue *glue;
	struct cqpoll_mlx5_cq *q;
	struct cqpoll_cq *cq;
	int e;

	if (conf == NULL)
		conf = &defaults;
	if (ibcq == NULL || channel == NULL || ibcq->channel != channel) {
		CQPOLL_LOG(ERR, "mlx5", "cq attach: %s", ibcq == NULL ? "NULL CQ" :
			   channel == NULL ? "NULL channel" :
			   "the CQ was not created on that channel");
		errno = EINVAL;
		return NULL;
	}
	glue = cqpoll_ibv_glue_of(ibcq->context);
	if (!glue->mlx5dv_is_supported(ibcq->context->device)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->ibcq = ibcq;
	q->glue = glue;
	cq = hw_wrap(q, channel, false, conf->ci, conf->sn, conf->flags &
		     (CQPOLL_MLX5_F_SOLICITED_ONLY | CQPOLL_MLX5_F_CQE_COMPRESS |
		      CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED),
		     conf->event_ack_batch);
	if (cq == NULL) {
		e = errno;
		free(q);
		errno = e;
	}
	return cq;
}

struct ibv_cq *
cqpoll_mlx5_cq_ibv(const struct cqpoll_cq *cq)
{
	struct cqpoll_mlx5_cq *q = cqpoll_cq_priv_of(cq, &cqpoll_mlx5_ops);

	return q != NULL ? q->ibcq : NULL;
}
