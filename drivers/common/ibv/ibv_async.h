/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_IBV_ASYNC_H
#define CQPOLL_IBV_ASYNC_H

/*
 * Async events of the verbs contexts under mlx5 and verbs CQs, private to
 * drivers/common/ibv. One object per context, shared by its members: the
 * context's async fd sits in every member's epoll set (so a thread asleep on
 * any of them wakes on an async event), and whichever member takes events
 * next reads the async fd, acknowledges each event and routes it to the CQs
 * it concerns (ibv_async.c says which), reporting them failed
 * (cqpoll_cq_fail()) and waking their own sleepers. The mlx5 driver's shared
 * receive queues watch the same stream for their limit events.
 */

#include "ibv_channel.h"

/* Join @p m's context (m->cq->context); adds its async fd to m->epfd. */
int cqpoll_ibv_async_join(struct cqpoll_ibv_member *m);
void cqpoll_ibv_async_leave(struct cqpoll_ibv_member *m);
/* Read, route and acknowledge the pending async events of @p m's context. */
void cqpoll_ibv_async_process(struct cqpoll_ibv_member *m);

/*
 * An SRQ whose IBV_EVENT_SRQ_LIMIT_REACHED events are counted, by whoever
 * reads its context's async events (a member, or cqpoll_ibv_async_srq_poll()).
 */
struct cqpoll_ibv_srq_watch {
	struct ibv_srq *srq;
	uint32_t limit_events;               /* atomic: events routed so far */
	struct cqpoll_ibv_async *async;
	struct cqpoll_ibv_srq_watch *next;   /* the context's watches, under its lock */
};

/* Watch @p w->srq's context; 0 or -errno. */
int cqpoll_ibv_async_srq_join(struct cqpoll_ibv_srq_watch *w);
void cqpoll_ibv_async_srq_leave(struct cqpoll_ibv_srq_watch *w);
/* Read, route and acknowledge the pending async events of @p w's context now. */
void cqpoll_ibv_async_srq_poll(struct cqpoll_ibv_srq_watch *w);

#endif /* CQPOLL_IBV_ASYNC_H */
