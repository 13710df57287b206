/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_VERBS_PRIVATE_H
#define CQPOLL_VERBS_PRIVATE_H

/*
 * Verbs driver internals.
 *
 * Polling and arming go through libibverbs' inlines, which reach the
 * provider through the context's function pointers; channel and CQ creation
 * and destruction through the table that serves the context
 * (drivers/common/ibv/ibv_glue.h: libibverbs, or an emulated device's).
 * Nothing here asks whether a device is emulated (see
 * doc/guides/architecture.md).
 *
 * Events go through the demux every driver over libibverbs shares
 * (drivers/common/ibv): a channel may hold CQs of this driver and of mlx5.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "cqpoll_driver.h"
#include "cqpoll_verbs.h"
#include "ibv_channel.h"
#include "ibv_glue.h"

struct cqpoll_verbs_cq {
	/* Fast path: set at creation. */
	struct ibv_cq *cq;
	struct ibv_cq_ex *cq_ex; /* NULL: polled with ibv_poll_cq() */

	/* Control path. */
	const struct cqpoll_ibv_glue *glue; /* what serves the CQ's context */
	struct cqpoll_ibv_member ev; /* this CQ on its channel */
	int solicited_only;
	bool owns_cq;
};

extern const struct cqpoll_driver_ops cqpoll_verbs_ops;

/* Burst poll variants, one chosen per CQ. */
int cqpoll_verbs_poll_wc(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_verbs_poll_ex(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_verbs_poll_ex_ts(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_verbs_poll_ex_wallclock(void *priv, struct cqpoll_completion *comps,
				   unsigned int n);

int cqpoll_verbs_arm(void *priv);

int cqpoll_verbs_event_fd(void *priv);
int cqpoll_verbs_event_get(void *priv);
int cqpoll_verbs_event_ack(void *priv, unsigned int n);

/* Make a handle over q, whose cq, cq_ex and owns_cq are set. */
struct cqpoll_cq *cqpoll_verbs_handle(struct cqpoll_verbs_cq *q, struct ibv_comp_channel *ch,
				      bool owns_channel, uint64_t wc_flags,
				      const struct cqpoll_verbs_conf *conf);

#endif /* CQPOLL_VERBS_PRIVATE_H */
