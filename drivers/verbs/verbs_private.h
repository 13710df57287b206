/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_VERBS_PRIVATE_H
#define CQPOLL_VERBS_PRIVATE_H

/*
 * Verbs driver internals.
 *
 * Every call is libibverbs' own: polling and arming through its inlines,
 * which reach the provider through the context's function pointers; channel
 * and CQ creation, events and acks through its exported functions. The
 * emulated device (libcqpoll_emu) is reached the same way, with no check for
 * it here: it fills the context's function pointers, and provides the
 * exported functions for its own contexts (see emu/verbs).
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

struct cqpoll_verbs_cq;

struct cqpoll_verbs_channel {
	/* Set at creation, read-only afterwards. */
	struct ibv_comp_channel *ch;
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
			      bool owned);
struct ibv_comp_channel *cqpoll_verbs_channel_leave(struct cqpoll_verbs_cq *q);
/* Whether a verbs handle reads ch (the mlx5 driver needs it alone). */
bool cqpoll_verbs_channel_in_use(const struct ibv_comp_channel *ch);
int cqpoll_verbs_event_fd(void *priv);
int cqpoll_verbs_event_get(void *priv);
int cqpoll_verbs_event_ack(void *priv, unsigned int n);

/* Make a handle over q, whose cq, cq_ex and owns_cq are set. */
struct cqpoll_cq *cqpoll_verbs_handle(struct cqpoll_verbs_cq *q, struct ibv_comp_channel *ch,
				      bool owns_channel, uint64_t wc_flags,
				      const struct cqpoll_verbs_conf *conf);

#endif /* CQPOLL_VERBS_PRIVATE_H */
