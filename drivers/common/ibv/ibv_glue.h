/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_IBV_GLUE_H
#define CQPOLL_IBV_GLUE_H

/*
 * The libibverbs calls of the async-event path, through a table (DPDK's
 * mlx5_glue): libibverbs' own by default; a context registered with a table
 * of its own (an emulated device, in libcqpoll_emu) is served by that one,
 * so that no libibverbs symbol needs overriding for it. INTERNAL: no header
 * installed, not for applications.
 */

#include <infiniband/verbs.h>

struct cqpoll_ibv_glue {
	/* As ibv_get_async_event(3): 0, or -1 with errno (EAGAIN: none). */
	int (*get_async_event)(struct ibv_context *ctx, struct ibv_async_event *ev);
	/* As ibv_ack_async_event(3). */
	void (*ack_async_event)(struct ibv_async_event *ev);
};

/*
 * Serve @p ctx with @p glue (which must outlive the registration) instead
 * of libibverbs. 0, -EINVAL, -EEXIST (already registered) or -ENOMEM.
 */
int cqpoll_ibv_glue_register(struct ibv_context *ctx, const struct cqpoll_ibv_glue *glue);
/* Back to libibverbs for @p ctx (before it is freed). */
void cqpoll_ibv_glue_unregister(struct ibv_context *ctx);
/* The table that serves @p ctx. */
const struct cqpoll_ibv_glue *cqpoll_ibv_glue_of(struct ibv_context *ctx);

#endif /* CQPOLL_IBV_GLUE_H */
