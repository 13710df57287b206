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

/*
 * libcqpoll_emu builds these sources a second time with CQPOLL_SW_EMU: the
 * emulated software device, whose fault points (sw_emu.h, in emu/sw) widen
 * the race windows and whose oracle tells a stranded completion. Here, in
 * libcqpoll, every fault point is empty and compiles to nothing.
 */
#if CQPOLL_SW_EMU
#include "sw_emu.h"
#else
struct cqpoll_sw_cq;
#define SW_EMU_STATE
static inline int sw_emu_init(struct cqpoll_sw_cq *q, const struct cqpoll_sw_conf *c) { (void)q; (void)c; return 0; }
static inline void sw_emu_fini(struct cqpoll_sw_cq *q) { (void)q; }
static inline void sw_emu_arm_begin(struct cqpoll_sw_cq *q) { (void)q; }
static inline void sw_emu_arm_end(struct cqpoll_sw_cq *q) { (void)q; }
static inline int sw_emu_keeps_armed(struct cqpoll_sw_cq *q) { (void)q; return 0; }
static inline void sw_emu_post_begin(struct cqpoll_sw_cq *q) { (void)q; }
static inline void sw_emu_post_visible(struct cqpoll_sw_cq *q) { (void)q; }
static inline int sw_emu_post_end(struct cqpoll_sw_cq *q, int claimed, int r, uint32_t pi) { (void)q; (void)claimed; (void)pi; return r; }
static inline uint64_t sw_emu_raise_count(struct cqpoll_sw_cq *q, int consumer) { (void)q; (void)consumer; return 1; }
static inline int sw_emu_deliver(struct cqpoll_sw_cq *q, uint64_t n) { (void)q; (void)n; return 1; }
static inline int sw_emu_event_fd(struct cqpoll_sw_cq *q) { (void)q; return -1; }
static inline int sw_emu_event_get(struct cqpoll_sw_cq *q, uint64_t *n) { (void)q; (void)n; return 0; }
static inline int sw_emu_error(struct cqpoll_sw_cq *q) { (void)q; return 0; }
#endif

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
	/* The emulated device's faults and oracle (libcqpoll_emu only). */
	SW_EMU_STATE
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
/* @p consumer: raised by the arm (consumer thread), not by a post. */
int cqpoll_sw_raise(struct cqpoll_sw_cq *q, int consumer);
int cqpoll_sw_deliver(struct cqpoll_sw_cq *q, uint64_t count);
/* Where the next entry will appear (cqpoll_monitor.h). */
int cqpoll_sw_get_monitor_addr(void *priv, struct cqpoll_monitor_cond *cond);

#endif /* CQPOLL_SW_PRIVATE_H */
