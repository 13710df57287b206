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

#include "cqpoll_driver.h"
#include "cqpoll_emu.h"
#include "cqpoll_sw.h"

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
	struct cqpoll_sw_faults faults;
	int efd;   /* eventfd: immediate events */
	int tfd;   /* timerfd: delayed events, -1 without event_delay_us */
	int epfd;  /* epoll over efd and tfd, -1 without event_delay_us */

	/* Consumer thread only. */
	uint32_t ci;
	uint64_t consumer_rng;
	void (*hook[CQPOLL_SW_HOOK_COUNT])(void *arg);
	void *hook_arg[CQPOLL_SW_HOOK_COUNT];

	/* Device thread only. */
	uint32_t pi;
	uint32_t ci_cache;
	uint64_t device_rng;

	/* Shared. */
	uint32_t ci_db;     /* consumer index record, written once per burst */
	uint32_t pi_vis;    /* entries made visible: the device's producer index */
	/*
	 * SW_ARMED while an arm waits to fire, and in the low 32 bits the
	 * index below which entries are covered by a raised event. One word,
	 * so that claiming an arm and covering the entries it fires for are
	 * one step: the oracle never sees an arm taken whose cover is missing.
	 */
	uint64_t arm_cover;
	uint32_t posted;    /* entries whose post finished (the oracle's frontier) */
	/* 1 from arming the delay timer until the consumer takes its expiry. */
	uint32_t timer_due;
};

#define SW_ARMED (1ull << 32)

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
int cqpoll_sw_stranded(void *priv);
/* Where the next entry will appear (cqpoll_monitor.h). */
int cqpoll_sw_get_monitor_addr(void *priv, struct cqpoll_monitor_cond *cond);
int cqpoll_sw_raise(struct cqpoll_sw_cq *q, uint64_t *rng);
int cqpoll_sw_signal(struct cqpoll_sw_cq *q, uint64_t *rng);

#endif /* CQPOLL_SW_PRIVATE_H */
