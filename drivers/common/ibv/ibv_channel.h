/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_IBV_CHANNEL_H
#define CQPOLL_IBV_CHANNEL_H

/*
 * The completion-channel demux of every driver over libibverbs (mlx5, verbs).
 *
 * ibv_get_cq_event() returns the next event of a channel, whichever CQ it
 * names, and the channel fd says only that some CQ has one. A CQ that reads
 * an event for another member of the channel counts it in that member's
 * routed count and signals the member's eventfd; the member takes it with its
 * own. So an event always reaches the CQ it names, whichever driver reads it:
 * that CQ counts it (mlx5: its arm sequence number advances), and acks it
 * against its own ibv_cq. Events for CQs that are not members are acked at
 * once: nobody else will, and their ibv_destroy_cq() would wait forever.
 *
 * Each member sleeps on its own epoll fd over the channel fd and its eventfd.
 * The channel lock is taken only on the event path, never on the poll path.
 */

#include <stdbool.h>

#include <infiniband/verbs.h>

struct cqpoll_ibv_channel;
struct cqpoll_ibv_async;
struct cqpoll_ibv_glue;
struct cqpoll_cq;

/* One CQ's place on a channel, embedded in the driver's CQ. */
struct cqpoll_ibv_member {
	struct ibv_cq *cq;               /* the CQ that events name */
	const struct cqpoll_ibv_glue *glue; /* what serves cq->context */
	struct cqpoll_ibv_channel *chan;
	int efd;              /* eventfd: events read for us by another member */
	/* epoll over the channel fd, efd, the context's async fd (and extra fd) */
	int epfd;
	unsigned int routed;  /* under the channel lock: read for us, not taken */
	/* The async events of cq->context (ibv_async.h), and who to report. */
	struct cqpoll_ibv_async *async;
	struct cqpoll_cq *handle;        /* cqpoll_ibv_channel_bind() */
	int async_woken;                 /* efd written by an async event */
};

/*
 * Join @p ch as @p cq's member. @p owned: the channel is destroyed with its
 * last member (leave returns it). @p extra_fd, if >= 0, is added to the
 * member's epoll set (an emulated device's async-error fd). The channel fd is
 * made non-blocking. Events are read and acked through the table that serves
 * the context (ibv_glue.h: libibverbs, or an emulated device's). 0, or -errno:
 * -EBUSY if @p cq already has a member (it is wrapped by another handle).
 */
int cqpoll_ibv_channel_join(struct cqpoll_ibv_member *m, struct ibv_cq *cq,
			    struct ibv_comp_channel *ch, bool owned, int extra_fd);
/*
 * Leave: acks what was read for @p m and never taken. Returns the ibv channel
 * when the last member left a channel joined as owned (the caller destroys
 * it, after the CQ), else NULL.
 */
struct ibv_comp_channel *cqpoll_ibv_channel_leave(struct cqpoll_ibv_member *m);
/*
 * The handle @p m's CQ is wrapped in: async events that concern the CQ
 * (ibv_async.c) report it failed. Call once cqpoll_cq_alloc() returned.
 */
void cqpoll_ibv_channel_bind(struct cqpoll_ibv_member *m, struct cqpoll_cq *handle);
/* The member's pollable fd. */
int cqpoll_ibv_channel_fd(const struct cqpoll_ibv_member *m);
/*
 * Take @p m's events without blocking: count (>= 0) or -errno. Reads the
 * context's async events first, and routes them (ibv_async.h).
 */
int cqpoll_ibv_channel_get(struct cqpoll_ibv_member *m);
/* Ack @p n events that cqpoll_ibv_channel_get() returned, against m->cq. */
void cqpoll_ibv_channel_ack(struct cqpoll_ibv_member *m, unsigned int n);
/* Events read for @p m by another member and not yet taken (oracles). */
unsigned int cqpoll_ibv_channel_routed(struct cqpoll_ibv_member *m);

#endif /* CQPOLL_IBV_CHANNEL_H */
