/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_MIXED_CHANNEL_H
#define TEST_MIXED_CHANNEL_H

/*
 * CQs of both drivers on ONE completion channel: mlx5-emu and verbs-emu CQs
 * made on one emulated channel (one fd, each event naming its CQ, per-CQ
 * reported/acked counts as libibverbs keeps them), for the group, stress and
 * conformance tests.
 *
 * And its negative control, the routing mlx5 had before the demux, kept here
 * in test code only: an mlx5 CQ whose event_get takes every event on the
 * channel as its own (advancing its own arm sn), whichever CQ it names. It
 * wraps a real mlx5-emu CQ: same poll, arm and oracle, the old event side.
 * Unlike the old code it acks each event against the CQ it names, so that a
 * caught run still tears down (the old ack against its own CQ made the
 * destroy of the other CQ hang; the emulator would refuse it with -EBUSY).
 */

#include <errno.h>
#include <stdlib.h>

#include <infiniband/mlx5dv.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#include "cqpoll_test.h"
#include "cqpoll_verbs.h"
#include "cqpoll_verbs_emu.h"
#include "mlx5_private.h"

#define MIX_MAX_CQS 64

struct mix {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	unsigned int n;
	struct cqpoll_cq *cq[MIX_MAX_CQS];   /* what the consumer uses */
	struct cqpoll_cq *real[MIX_MAX_CQS]; /* what the device posts to */
	int is_mlx5[MIX_MAX_CQS];
};

/* The old mlx5 event side: the channel's fd, and every event is ours. */
static inline int
mix_old_event_fd(void *priv)
{
	struct cqpoll_mlx5_cq *q = priv;

	return q->ibcq->channel->fd;
}

static inline int
mix_old_event_get(void *priv)
{
	struct cqpoll_mlx5_cq *q = priv;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int n = 0;

	while (cqpoll_verbs_emu_ibv_get_cq_event(q->ibcq->channel, &ev_cq, &ev_ctx) == 0) {
		cqpoll_verbs_emu_ibv_ack_cq_events(ev_cq, 1);
		n++;
	}
	if (errno != EAGAIN && n == 0)
		return -errno;
	q->sn += (uint32_t)n;
	return n;
}

static inline void
mix_old_destroy(void *priv)
{
	/* The real handle owns the driver state: mix_destroy() frees it. */
	(void)priv;
}

/* Wrap real (an mlx5-emu CQ on the channel) with the old routing. */
static inline struct cqpoll_cq *
mix_old_wrap(struct cqpoll_cq *real)
{
	static struct cqpoll_driver_ops ops;
	const struct cqpoll_driver_ops *d = cqpoll_cq_driver(real);
	struct cqpoll_cq_params params = { .arm = CQPOLL_ARM_LEVEL, .size = 256 };
	struct cqpoll_cq_info info;

	ops = (struct cqpoll_driver_ops){
		.size = CQPOLL_DRIVER_OPS_SIZE,
		.name = "mlx5-emu-old-routing",
		.arm = d->arm,
		.event_fd = mix_old_event_fd,
		.event_get = mix_old_event_get,
		.destroy = mix_old_destroy,
	};
	if (cqpoll_cq_info_get(real, &info) == 0) {
		params.arm = info.arm;
		params.size = info.size;
	}
	/* The fast path of the handle (cqpoll_fp.h): its burst poll. */
	return cqpoll_cq_alloc(&ops, ((const struct cqpoll_cq_fp *)(const void *)real)->poll,
			       cqpoll_cq_priv(real), &params);
}

/*
 * n CQs on one channel, mlx5-emu at even indexes and verbs-emu at odd ones
 * (first_mlx5 = 0 swaps them). old_routing: the mlx5 CQs get the old event
 * side. faults apply to the verbs-emu device; event_delay_us and
 * mlx5_emu_flags (CQPOLL_MLX5_EMU_F_*) to the mlx5-emu ones.
 */
static inline int
mix_create(struct mix *m, unsigned int n, uint32_t size, int first_mlx5, int old_routing,
	   const struct cqpoll_verbs_emu_faults *faults, uint32_t event_delay_us,
	   uint32_t mlx5_emu_flags)
{
	unsigned int i;

	if (n > MIX_MAX_CQS)
		return -EINVAL;
	*m = (struct mix){ .n = 0 };
	m->ctx = cqpoll_verbs_emu_open(faults, 0);
	if (m->ctx == NULL)
		return -errno;
	m->ch = cqpoll_verbs_emu_ibv_create_comp_channel(m->ctx);
	if (m->ch == NULL)
		return -errno;
	for (i = 0; i < n; i++) {
		m->is_mlx5[i] = (i % 2 == 0) == (first_mlx5 != 0);
		if (m->is_mlx5[i]) {
			struct cqpoll_mlx5_emu_conf c = {
				.size = size, .arm = CQPOLL_ARM_LEVEL, .channel = m->ch,
				.event_delay_us = event_delay_us, .emu_flags = mlx5_emu_flags,
			};

			m->real[i] = cqpoll_mlx5_emu_cq_create(&c);
		} else {
			struct cqpoll_verbs_conf c = { .size = size, .channel = m->ch };

			m->real[i] = cqpoll_verbs_cq_create(m->ctx, &c);
		}
		if (m->real[i] == NULL)
			return -errno;
		m->n++;
		m->cq[i] = m->real[i];
		if (m->is_mlx5[i] && old_routing) {
			m->cq[i] = mix_old_wrap(m->real[i]);
			if (m->cq[i] == NULL)
				return -errno;
		}
	}
	return 0;
}

/* Post as the device of cq i. */
static inline int
mix_post(struct mix *m, unsigned int i, const struct cqpoll_completion *c)
{
	return m->is_mlx5[i] ? cqpoll_mlx5_emu_post(m->real[i], c) :
			       cqpoll_verbs_emu_cq_post(m->real[i], c);
}

/* Destroy everything; 0, or -EBUSY if the channel still had CQs (a leak). */
static inline int
mix_destroy(struct mix *m)
{
	unsigned int i;
	int r = 0;

	for (i = 0; i < m->n; i++) {
		if (m->cq[i] != m->real[i])
			cqpoll_cq_destroy(m->cq[i]);
		cqpoll_cq_destroy(m->real[i]);
	}
	if (m->ch != NULL)
		r = cqpoll_verbs_emu_ibv_destroy_comp_channel(m->ch);
	if (m->ctx != NULL)
		cqpoll_verbs_emu_close(m->ctx);
	return r;
}

/*
 * Which request a completion finished, whatever the driver (contract.md,
 * "What a completion means"): the caller's wr_id where the driver knows it,
 * else the WQE counter, which is the request's index modulo 2^16.
 */
static inline int
mix_same_request(const struct cqpoll_completion *c, uint64_t id)
{
	if (c->flags & CQPOLL_COMPLETION_F_WR_ID)
		return c->wr_id == id;
	return c->wqe_counter == (uint16_t)id;
}

#endif /* TEST_MIXED_CHANNEL_H */
