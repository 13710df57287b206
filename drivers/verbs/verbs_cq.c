/* SPDX-License-Identifier: BSD-3-Clause */
/* Verbs CQ handles: attach, create, destroy, and the driver's ops table. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqpoll_log_private.h"
#include "verbs_private.h"

#define VERBS_CQ_SIZE_DEFAULT 4096
/* Fields every completion record needs from an extended CQ. */
#define VERBS_WC_FLAGS_NEEDED (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM | \
			       IBV_WC_EX_WITH_IMM)

static void
verbs_destroy(void *priv)
{
	struct cqpoll_verbs_cq *q = priv;
	struct ibv_comp_channel *ch;

	/* Leave first: events read for this CQ from now on are acked by the reader. */
	ch = cqpoll_ibv_channel_leave(&q->ev);
	if (q->owns_cq)
		q->glue->destroy_cq(q->cq);
	if (ch != NULL)
		q->glue->destroy_comp_channel(ch);
	free(q);
}

const struct cqpoll_driver_ops cqpoll_verbs_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "verbs",
	.arm = cqpoll_verbs_arm,
	.event_fd = cqpoll_verbs_event_fd,
	.event_get = cqpoll_verbs_event_get,
	.event_ack = cqpoll_verbs_event_ack,
	.destroy = verbs_destroy,
};

struct cqpoll_cq *
cqpoll_verbs_handle(struct cqpoll_verbs_cq *q, struct ibv_comp_channel *ch,
		    bool owns_channel, uint64_t wc_flags,
		    const struct cqpoll_verbs_conf *conf)
{
	struct cqpoll_cq_params params = { .arm = CQPOLL_ARM_LEVEL };
	cqpoll_poll_burst_t poll;
	struct cqpoll_cq *cq;
	int r;

	q->solicited_only = (conf->flags & CQPOLL_VERBS_F_SOLICITED_ONLY) != 0;
	r = cqpoll_ibv_channel_join(&q->ev, q->cq, ch,
				    owns_channel, -1);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	/* Chosen once: the burst never tests which API the CQ speaks. */
	if (q->cq_ex == NULL)
		poll = cqpoll_verbs_poll_wc;
	else if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		poll = cqpoll_verbs_poll_ex_wallclock;
	else if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		poll = cqpoll_verbs_poll_ex_ts;
	else
		poll = cqpoll_verbs_poll_ex;
	params.arm = CQPOLL_ARM_EDGE;
	params.size = q->cq->cqe > 0 ? (uint32_t)q->cq->cqe : 0;
	params.event_ack_batch = conf->event_ack_batch;
	cq = cqpoll_cq_alloc(&cqpoll_verbs_ops, poll, q, &params);
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

static struct cqpoll_cq *
attach(struct ibv_cq *cq, struct ibv_cq_ex *cq_ex, struct ibv_comp_channel *ch,
       uint64_t wc_flags, const struct cqpoll_verbs_conf *conf)
{
	static const struct cqpoll_verbs_conf defaults;
	struct cqpoll_verbs_cq *q;
	struct cqpoll_cq *h;
	int r;

	if (conf == NULL)
		conf = &defaults;
	if (cq == NULL || ch == NULL || cq->channel != ch) {
		CQPOLL_LOG(ERR, "verbs", "cq attach: %s", cq == NULL ? "NULL CQ" :
			   ch == NULL ? "NULL channel" :
			   "the CQ was not created on that channel");
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->glue = cqpoll_ibv_glue_of(cq->context);
	q->cq = cq;
	q->cq_ex = cq_ex;
	h = cqpoll_verbs_handle(q, ch, false, wc_flags, conf);
	if (h == NULL) {
		r = errno;
		free(q);
		errno = r;
	}
	return h;
}

struct cqpoll_cq *
cqpoll_verbs_cq_attach(struct ibv_cq *cq, struct ibv_comp_channel *ch,
		       const struct cqpoll_verbs_conf *conf)
{
	return attach(cq, NULL, ch, 0, conf);
}

struct cqpoll_cq *
cqpoll_verbs_cq_attach_ex(struct ibv_cq_ex *cq, struct ibv_comp_channel *ch,
			  const struct cqpoll_verbs_conf *conf)
{
	if (cq == NULL || conf == NULL ||
	    (conf->wc_flags & VERBS_WC_FLAGS_NEEDED) != VERBS_WC_FLAGS_NEEDED) {
		CQPOLL_LOG(ERR, "verbs", "cq attach_ex: %s", cq == NULL ? "NULL CQ" :
			   conf == NULL ? "NULL conf (wc_flags are required)" :
			   "wc_flags lack the fields the poll reads");
		errno = EINVAL;
		return NULL;
	}
	return attach(ibv_cq_ex_to_cq(cq), cq, ch, conf->wc_flags, conf);
}

/*
 * The extended CQ, with timestamps when the device has a clock: wall-clock
 * ones first (converted to host monotonic time), else the device's raw
 * clock; NULL if refused.
 */
static struct ibv_cq_ex *
create_cq_ex(const struct cqpoll_ibv_glue *glue, struct ibv_context *ctx, int cqe, struct ibv_comp_channel *ch,
	     const struct cqpoll_verbs_conf *conf, uint64_t *wc_flags)
{
	static const uint64_t ts_kinds[] = {
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_cq_init_attr_ex attr = {
		.cqe = (uint32_t)cqe,
		.channel = ch,
		.comp_vector = (uint32_t)conf->comp_vector,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		/* One consumer thread per CQ: the provider's lock is not needed. */
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_device_attr_ex dev;
	struct ibv_cq_ex *cq;
	unsigned int k;

	if (!(conf->flags & CQPOLL_VERBS_F_NO_TIMESTAMP) &&
	    glue->query_device_ex(ctx, NULL, &dev) == 0 &&
	    dev.completion_timestamp_mask != 0) {
		/* Providers refuse what they cannot report (mlx5: no clock page). */
		for (k = 0; k < sizeof(ts_kinds) / sizeof(ts_kinds[0]); k++) {
			attr.wc_flags = IBV_WC_STANDARD_FLAGS | ts_kinds[k];
			cq = glue->create_cq_ex(ctx, &attr);
			if (cq != NULL) {
				*wc_flags = attr.wc_flags;
				return cq;
			}
		}
	}
	/* Providers differ in what they accept: retry with the least we need. */
	attr.wc_flags = IBV_WC_STANDARD_FLAGS;
	attr.comp_mask = 0;
	attr.flags = 0;
	cq = glue->create_cq_ex(ctx, &attr);
	if (cq != NULL)
		*wc_flags = attr.wc_flags;
	return cq;
}

struct cqpoll_cq *
cqpoll_verbs_cq_create(struct ibv_context *ctx, const struct cqpoll_verbs_conf *conf)
{
	static const struct cqpoll_verbs_conf defaults;
	struct ibv_comp_channel *ch;
	struct cqpoll_verbs_cq *q;
	struct cqpoll_cq *h = NULL;
	uint64_t wc_flags = 0;
	int cqe, r;

	if (ctx == NULL) {
		CQPOLL_LOG(ERR, "verbs", "cq create: NULL device context");
		errno = EINVAL;
		return NULL;
	}
	if (conf == NULL)
		conf = &defaults;
	cqe = conf->size != 0 ? (int)conf->size : VERBS_CQ_SIZE_DEFAULT;
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->glue = cqpoll_ibv_glue_of(ctx);
	ch = conf->channel != NULL ? conf->channel : q->glue->create_comp_channel(ctx);
	if (ch == NULL)
		goto fail;
	if (!(conf->flags & CQPOLL_VERBS_F_NO_CQ_EX))
		q->cq_ex = create_cq_ex(q->glue, ctx, cqe, ch, conf, &wc_flags);
	if (q->cq_ex != NULL)
		q->cq = ibv_cq_ex_to_cq(q->cq_ex);
	else
		q->cq = q->glue->create_cq(ctx, cqe, NULL, ch, conf->comp_vector);
	if (q->cq == NULL)
		goto fail;
	q->owns_cq = true;
	h = cqpoll_verbs_handle(q, ch, conf->channel == NULL, wc_flags, conf);
	if (h != NULL)
		return h;
fail:
	r = errno != 0 ? errno : EIO;
	CQPOLL_LOG(ERR, "verbs", "cq create: %s: %s", ch == NULL ?
		   "creating the completion channel" : q->cq == NULL ?
		   "creating the CQ" : "wrapping the CQ", strerror(r));
	if (q->cq != NULL)
		q->glue->destroy_cq(q->cq);
	if (ch != NULL && conf->channel == NULL)
		q->glue->destroy_comp_channel(ch);
	free(q);
	errno = r;
	return NULL;
}

struct ibv_cq *
cqpoll_verbs_cq_ibv(const struct cqpoll_cq *cq)
{
	const struct cqpoll_verbs_cq *q = cqpoll_cq_priv_of(cq, &cqpoll_verbs_ops);

	return q != NULL ? q->cq : NULL;
}

int
cqpoll_verbs_cq_is_ex(const struct cqpoll_cq *cq)
{
	const struct cqpoll_verbs_cq *q = cqpoll_cq_priv_of(cq, &cqpoll_verbs_ops);

	if (q == NULL)
		return -EINVAL;
	return q->cq_ex != NULL;
}
