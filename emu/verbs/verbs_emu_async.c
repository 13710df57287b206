/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Async events of an emulated context: raised by tests and the emulated
 * devices (cqpoll_verbs_emu_async_event()), read through the table of
 * drivers/common/ibv (ibv_glue.h, verbs_emu_glue.c) that the context is
 * registered with here, so the drivers' async path runs unchanged. The context's async_fd is a semaphore eventfd: readable while
 * an event waits, as the kernel's async file is.
 */

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ibv_glue.h"
#include "verbs_emu_fail.h"
#include "verbs_emu_private.h"

int
cqpoll_verbs_emu_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	struct cqpoll_verbs_emu_ctx *emu = emu_ctx(ctx);
	uint64_t v;

	pthread_mutex_lock(&emu->lock);
	if (emu->async_n == 0) {
		pthread_mutex_unlock(&emu->lock);
		errno = EAGAIN;
		return -1;
	}
	*ev = emu->async_q[emu->async_head];
	emu->async_head = (emu->async_head + 1) % EMU_ASYNC_MAX;
	emu->async_n--;
	/* One token per event: taken with it. */
	if (read(ctx->async_fd, &v, sizeof(v)) != sizeof(v)) {
		/* Cannot fail while async_n counted a token. */
	}
	pthread_mutex_unlock(&emu->lock);
	return 0;
}

/* Acknowledgements of every emulated context: tests compare them with raises. */
static uint64_t async_acks;

void
cqpoll_verbs_emu_ack_async_event(struct ibv_async_event *ev)
{
	(void)ev;
	__atomic_fetch_add(&async_acks, 1, __ATOMIC_RELAXED);
}

int
cqpoll_verbs_emu_async_init(struct cqpoll_verbs_emu_ctx *emu)
{
	struct ibv_context *ctx = &emu->vctx.context;
	int r;

	ctx->async_fd = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
	if (ctx->async_fd < 0)
		return -1;
	r = cqpoll_ibv_glue_register(ctx, &cqpoll_verbs_emu_glue);
	if (r < 0) {
		close(ctx->async_fd);
		errno = -r;
		return -1;
	}
	return 0;
}

void
cqpoll_verbs_emu_async_fini(struct cqpoll_verbs_emu_ctx *emu)
{
	struct ibv_context *ctx = &emu->vctx.context;

	cqpoll_ibv_glue_unregister(ctx);
	close(ctx->async_fd);
	ctx->async_fd = -1;
}

int
cqpoll_verbs_emu_async_event(struct ibv_context *ctx, enum ibv_event_type type,
			     struct ibv_cq *cq, int port_num)
{
	struct cqpoll_verbs_emu_ctx *emu;
	struct ibv_async_event *ev;
	const uint64_t one = 1;
	int r = 0;

	if (!cqpoll_verbs_emu_is_context(ctx) ||
	    (type == IBV_EVENT_CQ_ERR && (cq == NULL || cq->context != ctx)))
		return -EINVAL;
	emu = emu_ctx(ctx);
	pthread_mutex_lock(&emu->lock);
	if (emu->async_n == EMU_ASYNC_MAX) {
		r = -ENOSPC;
		goto out;
	}
	ev = &emu->async_q[(emu->async_head + emu->async_n) % EMU_ASYNC_MAX];
	ev->event_type = type;
	if (type == IBV_EVENT_CQ_ERR)
		ev->element.cq = cq;
	else
		ev->element.port_num = port_num;
	emu->async_n++;
	if (write(ctx->async_fd, &one, sizeof(one)) != sizeof(one))
		r = -errno;
out:
	pthread_mutex_unlock(&emu->lock);
	return r;
}

uint64_t
cqpoll_verbs_emu_async_acked(void)
{
	return __atomic_load_n(&async_acks, __ATOMIC_RELAXED);
}

int
cqpoll_verbs_emu_fail_errno(enum ibv_event_type event)
{
	switch (event) {
	case IBV_EVENT_CQ_ERR:
		return -EOVERFLOW;
	case IBV_EVENT_DEVICE_FATAL:
		return -ENODEV;
	case IBV_EVENT_PORT_ERR:
		return -ENETDOWN;
	default:
		return 0;
	}
}

int
cqpoll_verbs_emu_fail_report(const struct cqpoll_verbs_emu_failure *f,
			     enum ibv_event_type event, const uint64_t *flush,
			     unsigned int n_flush)
{
	struct cqpoll_completion c = { .status = CQPOLL_STATUS_WR_FLUSH_ERR };
	int err = cqpoll_verbs_emu_fail_errno(event);
	unsigned int i;
	int r;

	if (err == 0 || (n_flush != 0 && flush == NULL))
		return -EINVAL;
	/* The QPs' outstanding work first, flushed in order (a QP in error). */
	for (i = 0; i < n_flush; i++) {
		c.wr_id = flush[i];
		r = f->post(f->dev, &c);
		if (r < 0)
			return r;
	}
	r = f->stop(f->dev, err);
	if (r < 0)
		return r;
	return cqpoll_verbs_emu_async_event(f->ctx, event, f->cq, 1);
}
