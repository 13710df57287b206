/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_SW_PRIVATE_H
#define CQPOLL_SW_PRIVATE_H

/*
 * Software CQ internals. Two threads share this: the consumer (poll, arm,
 * events) and the device (cqpoll_sw_post()). Every field says who writes it;
 * fields both threads touch are accessed with __atomic builtins only.
 *
 * Ring indices are free-running 32-bit counters; the size is a power of two
 * no larger than 2^24, so index & mask is the slot and (index >> log2) & 1 is
 * the phase the owner bit must carry in the current lap.
 */

#include <stdint.h>

#include "cqpoll_clock.h"
#include "cqpoll_driver.h"
#include "cqpoll_sw.h"

struct cqpoll_sw_cq;

/*
 * The device's behaviour beyond the plain ring, for fault injection
 * (rdma-core's verbs_set_ops() over dummy ops): a table the verification kit
 * sets on a CQ it made (cqpoll_sw_set_dev_ops()), to widen race windows,
 * delay, duplicate or invent events and fail the device. In production the
 * pointer is NULL and every point below is one predictable branch on a field
 * set at creation. @p f is the kit's state.
 */
struct cqpoll_sw_dev_ops {
	void (*fini)(void *f);                 /* the CQ is being freed */
	void (*arm_begin)(void *f);            /* before the arm takes effect */
	void (*arm_end)(void *f);              /* after it did */
	int (*keeps_armed)(void *f);           /* report-missed: a miss keeps the arm */
	void (*post_begin)(void *f);           /* entry written, not yet visible */
	void (*post_visible)(void *f);         /* visible, index not yet published */
	/* The post's end (@p claimed: it raised); returns the post's result. */
	int (*post_end)(void *f, int claimed, int r, uint32_t pi);
	uint64_t (*raise_count)(void *f, int consumer); /* events per raise */
	/* 1: write the event now; 0: the kit delivers it (later); < 0: -errno. */
	int (*deliver)(void *f, uint64_t n);
	int (*event_fd)(void *f);              /* the fd to sleep on, or -1: efd */
	int (*event_get)(void *f, uint64_t *n); /* add delivered-late events */
	int (*error)(void *f);                 /* 0, or the -errno of a failure */
};

/*
 * Set @p ops on @p cq, a sw CQ not yet used, with @p f its state (freed
 * by ops->fini with the CQ). INTERNAL: the kit's only way in. 0, -EINVAL
 * (not a sw CQ, incomplete ops), -EBUSY (already set).
 */
int cqpoll_sw_set_dev_ops(struct cqpoll_cq *cq, const struct cqpoll_sw_dev_ops *ops, void *f);
/* The sw CQ behind @p cq, or NULL if it is no sw CQ. INTERNAL. */
struct cqpoll_sw_cq *cqpoll_sw_cq_of(const struct cqpoll_cq *cq);

struct cqpoll_sw_slot {
	struct cqpoll_completion comp;
	uint32_t owner; /* phase of the lap that wrote comp; release-stored last */
};

struct cqpoll_sw_cq {
	/* Set at creation, read-only afterwards. */
	struct cqpoll_sw_slot *ring;
	uint32_t mask;
	uint32_t log2_size;
	enum cqpoll_arm_semantics arm;
	int efd;   /* eventfd: events */

	/* Consumer thread only. */
	uint32_t ci;

	/* Device thread only. */
	uint32_t pi;
	uint32_t ci_cache;

	/* Shared. */
	uint32_t ci_db;     /* consumer index record, written once per burst */
	uint32_t pi_vis;    /* entries made visible: the device's producer index */
	/*
	 * SW_ARMED while an arm waits to fire, and in the low 32 bits the
	 * index below which entries are covered by a raised event. One word,
	 * so that claiming an arm and covering the entries it fires for are
	 * one step: an observer never sees an arm taken whose cover is missing.
	 */
	uint64_t arm_cover;
	/* Fault injection: set by the kit only (NULL: none), and its state. */
	const struct cqpoll_sw_dev_ops *dev;
	void *dev_arg;
	/*
	 * A shared event channel (sw_channel.c), or NULL: the CQ's events go
	 * to the channel's fired list and fd, not to efd. Set at creation.
	 */
	struct cqpoll_sw_channel *ch;
	struct cqpoll_cq *handle;
	/* Its arm fired and the event was not taken yet (atomic). */
	uint32_t ch_fired;
	/* On the channel's fired list, and its links: under the channel's lock. */
	bool ch_queued;
	struct cqpoll_sw_cq *ch_prev, *ch_next;
};

#define SW_ARMED (1ull << 32)

/* The fault points: nothing but the branch without a device table. */
static inline void
sw_dev_arm_begin(struct cqpoll_sw_cq *q)
{
	if (q->dev != NULL)
		q->dev->arm_begin(q->dev_arg);
}

static inline void
sw_dev_arm_end(struct cqpoll_sw_cq *q)
{
	if (q->dev != NULL)
		q->dev->arm_end(q->dev_arg);
}

static inline int
sw_dev_keeps_armed(struct cqpoll_sw_cq *q)
{
	return q->dev != NULL && q->dev->keeps_armed(q->dev_arg);
}

static inline void
sw_dev_post_begin(struct cqpoll_sw_cq *q)
{
	if (q->dev != NULL)
		q->dev->post_begin(q->dev_arg);
}

static inline void
sw_dev_post_visible(struct cqpoll_sw_cq *q)
{
	if (q->dev != NULL)
		q->dev->post_visible(q->dev_arg);
}

static inline int
sw_dev_post_end(struct cqpoll_sw_cq *q, int claimed, int r, uint32_t pi)
{
	return q->dev != NULL ? q->dev->post_end(q->dev_arg, claimed, r, pi) : r;
}

static inline uint64_t
sw_dev_raise_count(struct cqpoll_sw_cq *q, int consumer)
{
	return q->dev != NULL ? q->dev->raise_count(q->dev_arg, consumer) : 1;
}

static inline int
sw_dev_deliver(struct cqpoll_sw_cq *q, uint64_t n)
{
	return q->dev != NULL ? q->dev->deliver(q->dev_arg, n) : 1;
}

static inline int
sw_dev_event_fd(struct cqpoll_sw_cq *q)
{
	return q->dev != NULL ? q->dev->event_fd(q->dev_arg) : -1;
}

static inline int
sw_dev_event_get(struct cqpoll_sw_cq *q, uint64_t *n)
{
	return q->dev != NULL ? q->dev->event_get(q->dev_arg, n) : 0;
}

static inline int
sw_dev_error(struct cqpoll_sw_cq *q)
{
	return q->dev != NULL ? q->dev->error(q->dev_arg) : 0;
}

/*
 * Take the arm if it is held, covering the entries below @p cover (never
 * moving the cover back). Returns 1 if this caller took it and must raise.
 */
static inline int
cqpoll_sw_claim(struct cqpoll_sw_cq *q, uint32_t cover)
{
	uint64_t cur = __atomic_load_n(&q->arm_cover, __ATOMIC_ACQUIRE), next;

	do {
		if ((cur & SW_ARMED) == 0)
			return 0;
		next = (int32_t)(cover - (uint32_t)cur) > 0 ? cover : (uint32_t)cur;
	} while (!__atomic_compare_exchange_n(&q->arm_cover, &cur, next, 0,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return 1;
}

/* The sw driver's table, to recognise its own handles. */
extern const struct cqpoll_driver_ops cqpoll_sw_ops;

int cqpoll_sw_poll(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_sw_arm(void *priv);
int cqpoll_sw_event_fd(void *priv);
int cqpoll_sw_event_get(void *priv);
/* @p consumer: raised by the arm (consumer thread), not by a post. */
int cqpoll_sw_raise(struct cqpoll_sw_cq *q, int consumer);
/* Deliver @p count events (through the device table's delay, if any). INTERNAL. */
int cqpoll_sw_deliver(struct cqpoll_sw_cq *q, uint64_t count);
/*
 * Shared event channel (sw_channel.c). A CQ joins at creation and leaves at
 * destruction; its raise marks it fired and puts it on the channel's fired
 * list once; the consumer takes the list (cqpoll_sw_channel_fired, the
 * driver's cqpoll_cq_fired_t) or one CQ's event (event_get).
 */
int cqpoll_sw_channel_join(struct cqpoll_sw_channel *ch, struct cqpoll_sw_cq *q);
void cqpoll_sw_channel_leave(struct cqpoll_sw_cq *q);
int cqpoll_sw_channel_raise(struct cqpoll_sw_cq *q);
int cqpoll_sw_channel_fd(const struct cqpoll_sw_cq *q);
int cqpoll_sw_channel_event_get(struct cqpoll_sw_cq *q);
int cqpoll_sw_channel_fired(void *priv, struct cqpoll_cq **fired, unsigned int max);

/* Where the next entry will appear (cqpoll_monitor.h). */
int cqpoll_sw_get_monitor_addr(void *priv, struct cqpoll_monitor_cond *cond);

#endif /* CQPOLL_SW_PRIVATE_H */
