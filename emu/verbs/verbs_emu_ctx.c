/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs-emu device: the context libibverbs' inlines see, and its completion
 * channels.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "verbs_emu_private.h"
#include "verbs_private.h"

/*
 * Recognised by address: a real provider never hands out this device. Laid
 * out as libibverbs' struct verbs_device (the device, then the provider's
 * ops), with no provider ops: provider checks such as mlx5dv_is_supported()
 * read that pointer, and find that no provider owns this device.
 */
static struct {
	struct ibv_device dev;
	const void *provider_ops;
} emu_device = {
	.dev = {
		.node_type = IBV_NODE_UNKNOWN,
		.transport_type = IBV_TRANSPORT_UNKNOWN,
		.name = "verbs-emu",
		.dev_name = "verbs-emu",
	},
};

/*
 * A 100 MHz device clock (ibv_device_attr_ex::hca_core_clock is in kHz),
 * counting from an epoch unrelated to any host clock: a raw completion
 * timestamp mistaken for host nanoseconds is off by orders of magnitude.
 */
#define EMU_HCA_CORE_CLOCK_KHZ 100000ull
#define EMU_HCA_EPOCH 0x3c0ffee00000ull
#define EMU_MAX_CQE (1 << 22)

static int
emu_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
		    struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct cqpoll_verbs_emu_ctx *emu = emu_ctx(ctx);

	(void)input;
	if (attr_size < sizeof(*attr))
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	strcpy(attr->orig_attr.fw_ver, "cqpoll-emu");
	attr->orig_attr.max_cq = 1 << 16;
	attr->orig_attr.max_cqe = EMU_MAX_CQE;
	attr->orig_attr.phys_port_cnt = 1;
	if (!(emu->flags & CQPOLL_VERBS_EMU_F_NO_TIMESTAMP)) {
		attr->completion_timestamp_mask = UINT64_MAX;
		attr->hca_core_clock = EMU_HCA_CORE_CLOCK_KHZ;
	}
	return 0;
}

uint64_t
cqpoll_verbs_emu_hca_clock(void)
{
	return EMU_HCA_EPOCH + cqpoll_now_ns() / (1000000ull / EMU_HCA_CORE_CLOCK_KHZ);
}

uint64_t
cqpoll_verbs_emu_wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* As mlx5_query_rt_values(): the raw clock in tv_nsec, tv_sec 0. */
static int
emu_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values)
{
	struct cqpoll_verbs_emu_ctx *emu = emu_ctx(ctx);
	uint32_t mask = 0;

	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if ((values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) &&
	    !(emu->flags & CQPOLL_VERBS_EMU_F_NO_TIMESTAMP)) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)cqpoll_verbs_emu_hca_clock();
		mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = mask;
	return 0;
}

static int
faults_valid(const struct cqpoll_verbs_emu_faults *f)
{
	return f->visibility_delay_pct <= 100 && f->arm_delay_pct <= 100 &&
	       f->spurious_event_pct <= 100 && f->duplicate_event_pct <= 100;
}

struct ibv_context *
cqpoll_verbs_emu_open(const struct cqpoll_verbs_emu_faults *faults, uint32_t flags)
{
	struct cqpoll_verbs_emu_ctx *emu;
	struct ibv_context *ctx;

	if (faults != NULL && !faults_valid(faults)) {
		errno = EINVAL;
		return NULL;
	}
	emu = calloc(1, sizeof(*emu));
	if (emu == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (faults != NULL)
		emu->faults = *faults;
	emu->flags = flags;
	emu->refs = 1;
	pthread_mutex_init(&emu->lock, NULL);
	ctx = &emu->vctx.context;
	ctx->device = &emu_device.dev;
	ctx->cmd_fd = -1;
	ctx->async_fd = -1;
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	/* The same inlines as for a provider: ops for poll and arm... */
	ctx->ops.poll_cq = cqpoll_verbs_emu_poll_cq;
	ctx->ops.req_notify_cq = cqpoll_verbs_emu_req_notify_cq;
	/* ...and verbs_get_ctx_op() finds the extended ops through these. */
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	emu->vctx.sz = sizeof(emu->vctx);
	emu->vctx.query_device_ex = emu_query_device_ex;
	emu->vctx.query_rt_values = emu_query_rt_values;
	if (!(flags & CQPOLL_VERBS_EMU_F_NO_CQ_EX))
		emu->vctx.create_cq_ex = cqpoll_verbs_emu_create_cq_ex;
	if (cqpoll_verbs_emu_async_init(emu) != 0) {
		int e = errno;

		pthread_mutex_destroy(&ctx->mutex);
		pthread_mutex_destroy(&emu->lock);
		free(emu);
		errno = e;
		return NULL;
	}
	return ctx;
}

bool
cqpoll_verbs_emu_is_context(const struct ibv_context *ctx)
{
	return ctx != NULL && ctx->device == &emu_device.dev;
}

void
cqpoll_verbs_emu_ctx_get(struct cqpoll_verbs_emu_ctx *emu)
{
	pthread_mutex_lock(&emu->lock);
	emu->refs++;
	pthread_mutex_unlock(&emu->lock);
}

void
cqpoll_verbs_emu_ctx_put(struct cqpoll_verbs_emu_ctx *emu)
{
	unsigned int refs;

	pthread_mutex_lock(&emu->lock);
	refs = --emu->refs;
	pthread_mutex_unlock(&emu->lock);
	if (refs != 0)
		return;
	cqpoll_verbs_emu_async_fini(emu);
	pthread_mutex_destroy(&emu->lock);
	pthread_mutex_destroy(&emu->vctx.context.mutex);
	free(emu);
}

int
cqpoll_verbs_emu_close(struct ibv_context *ctx)
{
	if (!cqpoll_verbs_emu_is_context(ctx))
		return -EINVAL;
	cqpoll_verbs_emu_ctx_put(emu_ctx(ctx));
	return 0;
}

struct ibv_comp_channel *
cqpoll_verbs_emu_ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct cqpoll_verbs_emu_channel *c;

	if (!cqpoll_verbs_emu_is_context(ctx)) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* Semaphore: one read, one event, as a uverbs read returns one. */
	c->ch.fd = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	c->ch.context = ctx;
	c->emu = emu_ctx(ctx);
	pthread_mutex_init(&c->lock, NULL);
	cqpoll_verbs_emu_ctx_get(c->emu);
	return &c->ch;
}

int
cqpoll_verbs_emu_ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	struct cqpoll_verbs_emu_channel *c = (struct cqpoll_verbs_emu_channel *)(void *)ch;

	if (ch == NULL || !cqpoll_verbs_emu_is_context(ch->context))
		return -EINVAL;
	if (c->cqs != NULL)
		return -EBUSY;
	close(c->ch.fd);
	pthread_mutex_destroy(&c->lock);
	cqpoll_verbs_emu_ctx_put(c->emu);
	free(c);
	return 0;
}
