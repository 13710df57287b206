/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_VERBS_EMU_PRIVATE_H
#define CQPOLL_VERBS_EMU_PRIVATE_H

/*
 * verbs-emu internals. As in the sw driver, two threads share a CQ: the
 * consumer (the verbs calls) and the device (cqpoll_verbs_emu_ibv_post()).
 * Every field says who writes it; shared fields use __atomic builtins only.
 * Ring indices are free-running 32-bit counters over a power-of-two ring;
 * (index >> log2) & 1 is the owner bit of the current lap.
 *
 * Events: the channel fd is a semaphore eventfd holding one token per queued
 * event; which CQ an event is for is kept as a per-CQ queued count under the
 * channel lock, counted before the token is written, so a reader holding a
 * token always finds a CQ (or a stale token of a destroyed CQ, skipped).
 */

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "emu_util.h"
#include "cqpoll_verbs_emu.h"
#include "ibv_channel.h"

/* Arm states: what the next completion must be to fire. */
#define EMU_ARM_NONE      0u
#define EMU_ARM_NEXT      1u
#define EMU_ARM_SOLICITED 2u

/* Async events an emulated context holds until they are read. */
#define EMU_ASYNC_MAX 16

struct cqpoll_verbs_emu_ctx {
	struct cqpoll_verbs_emu_faults faults;
	uint32_t flags;
	unsigned int refs; /* opener, channels, CQs */
	pthread_mutex_t lock;
	/*
	 * Under lock: async events raised and not yet read; the context's
	 * async_fd is a semaphore eventfd with one token per event.
	 */
	struct ibv_async_event async_q[EMU_ASYNC_MAX];
	unsigned int async_head, async_n;
	/* Must be last: libibverbs finds the verbs_context before the context. */
	struct verbs_context vctx;
};

struct cqpoll_verbs_emu_cq;

struct cqpoll_verbs_emu_channel {
	struct ibv_comp_channel ch; /* first: the public pointer is this */
	struct cqpoll_verbs_emu_ctx *emu;
	pthread_mutex_t lock;
	struct cqpoll_verbs_emu_cq *cqs; /* list of CQs on the channel */
	struct cqpoll_verbs_emu_cq *rr;  /* where the next event search starts */
};

struct cqpoll_verbs_emu_cqe {
	uint64_t wr_id;
	uint64_t ts;         /* the device clock, HCA ticks */
	uint64_t wall_ns;    /* CLOCK_REALTIME ns: the wall-clock timestamp */
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t imm_data;   /* network order */
	uint32_t vendor_err;
	uint32_t wc_flags;   /* enum ibv_wc_flags */
	uint8_t status;      /* enum ibv_wc_status */
	uint8_t opcode;      /* enum ibv_wc_opcode */
	uint8_t solicited;
	uint8_t pad;
	uint32_t owner;      /* lap phase of the writer; release-stored last */
};

struct cqpoll_verbs_emu_cq {
	struct ibv_cq_ex ex; /* first: struct ibv_cq * and ibv_cq_ex * are this */

	/* Set at creation, read-only afterwards. */
	struct cqpoll_verbs_emu_ctx *emu;
	struct cqpoll_verbs_emu_channel *chan; /* NULL: no events */
	struct cqpoll_verbs_emu_cqe *ring;
	uint32_t mask;
	uint32_t log2_size;
	struct cqpoll_verbs_emu_faults faults;

	/* Consumer thread only. */
	uint32_t ci;
	const struct cqpoll_verbs_emu_cqe *cur; /* entry of the extended poll */
	uint64_t consumer_rng;
	void (*hook[CQPOLL_VERBS_EMU_HOOK_COUNT])(void *arg);
	void *hook_arg[CQPOLL_VERBS_EMU_HOOK_COUNT];
	uint64_t acked;     /* ibv_ack_cq_events() total */

	/* Device thread only. */
	uint32_t pi;
	uint32_t ci_cache;
	uint64_t device_rng;

	/* Shared, atomics. */
	uint32_t ci_db;     /* consumer index published by the consumer */
	uint32_t pi_vis;    /* entries made visible */
	uint32_t armed;     /* EMU_ARM_*; a raise clears it */
	uint32_t sol_mode;  /* last arm was solicited-only */
	uint32_t covered;   /* entries below this are covered by a raised event */
	uint32_t posted;    /* past the last entry owed a wake-up whose post finished */
	int32_t dead;       /* 0, or -errno: the device failed (cqpoll_verbs_emu_fail()) */

	/* Under chan->lock. */
	uint32_t queued;    /* events in the channel for this CQ */
	uint64_t reported;  /* events ibv_get_cq_event() returned */
	struct cqpoll_verbs_emu_cq *next;
};

static inline struct cqpoll_verbs_emu_cq *
emu_cq(struct ibv_cq *cq)
{
	return (struct cqpoll_verbs_emu_cq *)(void *)cq;
}

static inline struct cqpoll_verbs_emu_cq *
emu_cq_ex(struct ibv_cq_ex *cq)
{
	return (struct cqpoll_verbs_emu_cq *)(void *)cq;
}

static inline struct cqpoll_verbs_emu_ctx *
emu_ctx(struct ibv_context *ctx)
{
	return (struct cqpoll_verbs_emu_ctx *)(void *)((char *)ctx -
		offsetof(struct cqpoll_verbs_emu_ctx, vctx.context));
}

/* The table the drivers reach emulated contexts through (verbs_emu_glue.c). */
struct cqpoll_ibv_glue;
extern const struct cqpoll_ibv_glue cqpoll_verbs_emu_glue;
int cqpoll_verbs_emu_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev);
void cqpoll_verbs_emu_ack_async_event(struct ibv_async_event *ev);

/* The async side of a context being opened or freed (verbs_emu_async.c). */
int cqpoll_verbs_emu_async_init(struct cqpoll_verbs_emu_ctx *emu);
void cqpoll_verbs_emu_async_fini(struct cqpoll_verbs_emu_ctx *emu);
void cqpoll_verbs_emu_ctx_get(struct cqpoll_verbs_emu_ctx *emu);
void cqpoll_verbs_emu_ctx_put(struct cqpoll_verbs_emu_ctx *emu);

struct ibv_cq_ex *cqpoll_verbs_emu_create_cq_ex(struct ibv_context *ctx,
						struct ibv_cq_init_attr_ex *attr);
int cqpoll_verbs_emu_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int cqpoll_verbs_emu_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void cqpoll_verbs_emu_fill_ex(struct cqpoll_verbs_emu_cq *q, uint64_t wc_flags);

/* Queue k events for q on its channel (device thread or arm). */
void cqpoll_verbs_emu_deliver(struct cqpoll_verbs_emu_cq *q, uint32_t k);
/*
 * The device's free-running clock, as ibv_wc_read_completion_ts() and
 * ibv_query_rt_values_ex() give it: HCA ticks at hca_core_clock kHz from an
 * epoch of its own, not host time in any unit.
 */
uint64_t cqpoll_verbs_emu_hca_clock(void);
/*
 * The wall-clock completion time, as a provider's
 * ibv_wc_read_completion_wallclock_ns() gives it (a device clock kept on
 * CLOCK_REALTIME: exact here, within the PTP sync error on hardware).
 */
uint64_t cqpoll_verbs_emu_wall_ns(void);
/* Events queued on the channel for cq, not yet read (oracles). */
uint32_t cqpoll_verbs_emu_queued(struct ibv_cq *cq);

#endif /* CQPOLL_VERBS_EMU_PRIVATE_H */
