/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_VERBS_EMU_FAIL_H
#define CQPOLL_VERBS_EMU_FAIL_H

/*
 * A device failure as a ConnectX reports it, shared by the emulated devices
 * over a verbs context (mlx5-emu, verbs-emu): the outstanding work flushed
 * in order, the device dead (no CQE, no completion event from then on), and
 * the event on the context's async fd, never on the completion channel.
 * Internal to libcqpoll_emu.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

#include "cqpoll_completion.h"

struct cqpoll_verbs_emu_failure {
	/* Post one flushed completion on the failing CQ: 0 or -errno. */
	int (*post)(void *dev, const struct cqpoll_completion *c);
	/* Stop the device with @p err: 0, or -EALREADY if it was stopped. */
	int (*stop)(void *dev, int err);
	void *dev;
	struct ibv_context *ctx; /* whose async fd reports it */
	struct ibv_cq *cq;       /* the CQ the event names */
};

/* The -errno a CQ's state takes for @p event, or 0 if no failure is one. */
int cqpoll_verbs_emu_fail_errno(enum ibv_event_type event);
/*
 * Flush @p flush[0..n_flush) (wr_ids, as IBV_WC_WR_FLUSH_ERR), stop the
 * device, raise @p event. 0, -EINVAL, -EALREADY or a post's -errno.
 */
int cqpoll_verbs_emu_fail_report(const struct cqpoll_verbs_emu_failure *f,
				 enum ibv_event_type event, const uint64_t *flush,
				 unsigned int n_flush);

#endif /* CQPOLL_VERBS_EMU_FAIL_H */
