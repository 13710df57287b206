/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_VERBS_PRIVATE_H
#define CQPOLL_VERBS_PRIVATE_H

/*
 * Verbs driver internals.
 *
 * A backend is the seam between the driver and what needs a kernel device:
 * libibverbs itself for real devices, verbs-emu for emulated ones. Polling
 * and arming never go through it: they call the libibverbs inlines, which
 * reach the provider (or the emulator) through the context's function
 * pointers.
 *
 * A channel object owns the routing of one struct ibv_comp_channel's events:
 * ibv_get_cq_event() returns an event for whichever CQ raised it, so the CQ
 * that reads it keeps its own and hands the others to their CQs.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "cqpoll_driver.h"
#include "cqpoll_verbs.h"

struct cqpoll_verbs_backend {
	const char *name;
	struct ibv_comp_channel *(*create_channel)(struct ibv_context *ctx);
	int (*destroy_channel)(struct ibv_comp_channel *ch);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *ch, int comp_vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*get_cq_event)(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			    void **cq_context);
	void (*ack_cq_events)(struct ibv_cq *cq, unsigned int n);
	/* Ground truth of an emulated device; NULL for real ones. */
	int (*stranded)(struct ibv_cq *cq);
};

extern const struct cqpoll_verbs_backend cqpoll_verbs_backend_ibv;
extern const struct cqpoll_verbs_backend cqpoll_verbs_backend_emu;

const struct cqpoll_verbs_backend *cqpoll_verbs_backend_of(const struct ibv_context *ctx);

struct cqpoll_verbs_cq;

struct cqpoll_verbs_channel {
	/* Set at creation, read-only afterwards. */
	struct ibv_comp_channel *ch;
	const struct cqpoll_verbs_backend *be;
	bool owned; /* destroyed with the last member */
	struct cqpoll_verbs_channel *next; /* registry list, under the registry lock */
	unsigned int refs;                 /* members; under the registry lock */

	/* Under lock: the members, and what was read for them. */
	pthread_mutex_t lock;
	struct cqpoll_verbs_cq **members;
	unsigned int n_members;
	unsigned int cap_members;
	uint64_t foreign_events; /* for CQs not attached: acked and dropped */
};

struct cqpoll_verbs_cq {
	/* Fast path: set at creation. */
	struct ibv_cq *cq;
	struct ibv_cq_ex *cq_ex; /* NULL: polled with ibv_poll_cq() */

	/* Control path. */
	struct cqpoll_verbs_channel *chan;
	int solicited_only;
	bool owns_cq;
	int efd;  /* eventfd: events routed here by another member */
	int epfd; /* epoll over the channel's fd and efd: the CQ's event fd */
	unsigned int routed; /* under chan->lock: routed events not yet consumed */
};

extern const struct cqpoll_driver_ops cqpoll_verbs_ops;

/* Burst poll variants, one chosen per CQ. */
int cqpoll_verbs_poll_wc(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_verbs_poll_ex(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_verbs_poll_ex_ts(void *priv, struct cqpoll_completion *comps, unsigned int n);

int cqpoll_verbs_arm(void *priv);

/*
 * Channel: join (find or make the object for ch) and leave. Leaving returns
 * the ibv channel when the last member left a channel a handle created: the
 * caller destroys it after the CQ, since a channel with CQs cannot go.
 */
int cqpoll_verbs_channel_join(struct cqpoll_verbs_cq *q, struct ibv_comp_channel *ch,
			      const struct cqpoll_verbs_backend *be, bool owned);
struct ibv_comp_channel *cqpoll_verbs_channel_leave(struct cqpoll_verbs_cq *q);
/* Whether a verbs handle reads ch (the mlx5 driver needs it alone). */
bool cqpoll_verbs_channel_in_use(const struct ibv_comp_channel *ch);
int cqpoll_verbs_event_fd(void *priv);
int cqpoll_verbs_event_get(void *priv);
int cqpoll_verbs_event_ack(void *priv, unsigned int n);
int cqpoll_verbs_stranded(void *priv);

/* Make a handle over q, whose cq, cq_ex and owns_cq are set. */
struct cqpoll_cq *cqpoll_verbs_handle(struct cqpoll_verbs_cq *q, struct ibv_comp_channel *ch,
				      bool owns_channel, uint64_t wc_flags,
				      const struct cqpoll_verbs_conf *conf);

#endif /* CQPOLL_VERBS_PRIVATE_H */
