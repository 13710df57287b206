/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs-emu CQs: creation (plain and extended), destruction, test hooks. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll_verbs.h"
#include "verbs_emu_private.h"
#include "verbs_private.h"

#define EMU_CQE_MAX (1 << 22)
#define EMU_SEED_DEFAULT 0x9e3779b97f4a7c15ull
/* What the emulated device can report through the extended API. */
#define EMU_WC_FLAGS (IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
		      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static uint64_t busy_destroys;

static struct cqpoll_verbs_emu_cq *
emu_cq_new(struct ibv_context *ctx, int cqe, void *cq_context,
	   struct ibv_comp_channel *ch)
{
	struct cqpoll_verbs_emu_ctx *emu;
	struct cqpoll_verbs_emu_channel *c = (struct cqpoll_verbs_emu_channel *)(void *)ch;
	struct cqpoll_verbs_emu_cq *q;
	uint32_t size, i;

	if (!cqpoll_verbs_emu_is_context(ctx) || cqe < 1 || cqe > EMU_CQE_MAX ||
	    (ch != NULL && ch->context != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	emu = emu_ctx(ctx);
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->log2_size = 1;
	while ((1u << q->log2_size) < (uint32_t)cqe)
		q->log2_size++;
	size = 1u << q->log2_size;
	q->mask = size - 1;
	q->ring = calloc(size, sizeof(*q->ring));
	if (q->ring == NULL) {
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	/* Owner 1 everywhere: the first lap writes phase 0, so nothing is valid yet. */
	for (i = 0; i < size; i++)
		q->ring[i].owner = 1;
	q->emu = emu;
	q->faults = emu->faults;
	q->device_rng = q->faults.seed != 0 ? q->faults.seed : EMU_SEED_DEFAULT;
	q->consumer_rng = q->device_rng ^ 0x5bd1e9955bd1e995ull;
	q->ex.context = ctx;
	q->ex.channel = ch;
	q->ex.cq_context = cq_context;
	q->ex.cqe = (int)size;
	pthread_mutex_init(&q->ex.mutex, NULL);
	pthread_cond_init(&q->ex.cond, NULL);
	cqpoll_verbs_emu_ctx_get(emu);
	if (c != NULL) {
		q->chan = c;
		pthread_mutex_lock(&c->lock);
		q->next = c->cqs;
		c->cqs = q;
		pthread_mutex_unlock(&c->lock);
	}
	return q;
}

struct ibv_cq *
cqpoll_verbs_emu_ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
			       struct ibv_comp_channel *ch, int comp_vector)
{
	struct cqpoll_verbs_emu_cq *q;

	(void)comp_vector;
	q = emu_cq_new(ctx, cqe, cq_context, ch);
	return q != NULL ? ibv_cq_ex_to_cq(&q->ex) : NULL;
}

struct ibv_cq_ex *
cqpoll_verbs_emu_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	struct cqpoll_verbs_emu_ctx *emu = emu_ctx(ctx);
	uint64_t can = EMU_WC_FLAGS;
	struct cqpoll_verbs_emu_cq *q;

	if (emu->flags & CQPOLL_VERBS_EMU_F_NO_TIMESTAMP)
		can &= ~(uint64_t)(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
	/* As mlx5 without its clock page: raw timestamps only. */
	if (emu->flags & CQPOLL_VERBS_EMU_F_NO_WALLCLOCK)
		can &= ~(uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	/* As providers do: refuse what cannot be reported, rather than lie. */
	if ((attr->wc_flags & ~can) != 0 ||
	    (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) != 0 ||
	    attr->cqe > (uint32_t)EMU_CQE_MAX) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	q = emu_cq_new(ctx, (int)attr->cqe, attr->cq_context, attr->channel);
	if (q == NULL)
		return NULL;
	cqpoll_verbs_emu_fill_ex(q, attr->wc_flags);
	return &q->ex;
}

int
cqpoll_verbs_emu_ibv_destroy_cq(struct ibv_cq *cq)
{
	struct cqpoll_verbs_emu_cq *q, **p;
	struct cqpoll_verbs_emu_channel *c;

	if (cq == NULL || !cqpoll_verbs_emu_is_context(cq->context))
		return -EINVAL;
	q = emu_cq(cq);
	c = q->chan;
	if (c != NULL) {
		pthread_mutex_lock(&c->lock);
		/* ibv_destroy_cq() would wait here for the acks, forever. */
		if (q->reported != q->acked) {
			pthread_mutex_unlock(&c->lock);
			__atomic_add_fetch(&busy_destroys, 1, __ATOMIC_RELAXED);
			return -EBUSY;
		}
		/* Unread events go with the CQ, as the kernel drops them. */
		for (p = &c->cqs; *p != NULL; p = &(*p)->next) {
			if (*p == q) {
				*p = q->next;
				break;
			}
		}
		if (c->rr == q)
			c->rr = NULL;
		pthread_mutex_unlock(&c->lock);
	}
	pthread_cond_destroy(&q->ex.cond);
	pthread_mutex_destroy(&q->ex.mutex);
	cqpoll_verbs_emu_ctx_put(q->emu);
	free(q->ring);
	free(q);
	return 0;
}

uint64_t
cqpoll_verbs_emu_busy_destroys(void)
{
	return __atomic_load_n(&busy_destroys, __ATOMIC_RELAXED);
}

int
cqpoll_verbs_emu_set_hook(struct ibv_cq *cq, enum cqpoll_verbs_emu_hook_point point,
			  void (*fn)(void *arg), void *arg)
{
	struct cqpoll_verbs_emu_cq *q;

	if (cq == NULL || !cqpoll_verbs_emu_is_context(cq->context) ||
	    (unsigned int)point >= CQPOLL_VERBS_EMU_HOOK_COUNT)
		return -EINVAL;
	q = emu_cq(cq);
	q->hook[point] = fn;
	q->hook_arg[point] = arg;
	return 0;
}

struct cqpoll_cq *
cqpoll_verbs_emu_cq_create(const struct cqpoll_verbs_emu_conf *conf)
{
	static const struct cqpoll_verbs_emu_conf defaults;
	struct cqpoll_verbs_conf vconf;
	struct ibv_context *ctx;
	struct cqpoll_cq *cq;
	int r;

	if (conf == NULL)
		conf = &defaults;
	ctx = cqpoll_verbs_emu_open(&conf->faults, conf->emu_flags);
	if (ctx == NULL)
		return NULL;
	memset(&vconf, 0, sizeof(vconf));
	vconf.flags = conf->verbs_flags;
	vconf.size = conf->size;
	vconf.event_ack_batch = conf->event_ack_batch;
	/* The production path, exactly as on a real device. */
	cq = cqpoll_verbs_cq_create(ctx, &vconf);
	r = errno;
	/* The channel and the CQ hold the device until cqpoll_cq_destroy(). */
	cqpoll_verbs_emu_close(ctx);
	errno = r;
	return cq;
}

int
cqpoll_verbs_emu_cq_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp)
{
	struct ibv_cq *vcq = cqpoll_verbs_cq_ibv(cq);

	if (vcq == NULL || !cqpoll_verbs_emu_is_context(vcq->context))
		return -EINVAL;
	return cqpoll_verbs_emu_ibv_post(vcq, comp);
}
