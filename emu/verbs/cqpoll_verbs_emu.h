/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_VERBS_EMU_H
#define CQPOLL_VERBS_EMU_H

/**
 * @file
 * verbs-emu: a software RDMA device behind a real struct ibv_context.
 *
 * The context's ops (poll_cq, req_notify_cq), its extended ops (create_cq_ex,
 * query_device_ex) and the ibv_cq_ex poll functions (start_poll, next_poll,
 * end_poll, read_*) are filled in, so the verbs driver's production code calls
 * the real libibverbs inlines on it. What needs a kernel device (channel and
 * CQ creation and destruction, ibv_get_cq_event(), ibv_ack_cq_events(), async
 * events) reaches the functions below through the libibverbs table of
 * libcqpoll's drivers, with which every emulated context is registered when
 * it opens; the driver never asks whether a context is emulated, and no
 * libibverbs symbol is redefined. Programs that read an emulated channel
 * themselves call cqpoll_verbs_emu_ibv_get_cq_event() and friends directly.
 *
 * The arm is edge-only: an event fires only for a completion made visible
 * after the arm, the weakest contract verbs allows. Faults widen the race
 * windows; an oracle knows whether a completion is stranded.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Faults the emulated device injects; zero means none. Percentages 0..100. */
struct cqpoll_verbs_emu_faults {
	/** Longest random delay between writing an entry and making it visible. */
	uint32_t visibility_delay_ns;
	uint32_t visibility_delay_pct;  /**< Chance an entry is delayed so. */
	/** Longest random delay spent before and after the arm takes effect. */
	uint32_t arm_delay_ns;
	uint32_t arm_delay_pct;         /**< Chance an arm is delayed so. */
	uint32_t spurious_event_pct;    /**< Chance per post of an event with no cause. */
	uint32_t duplicate_event_pct;   /**< Chance a raised event is queued twice. */
	uint64_t seed;                  /**< Seed of the fault generator; 0: fixed default. */
};

/** @name Flags of cqpoll_verbs_emu_open() */
/**@{*/
/** The device has no create_cq_ex: ibv_create_cq_ex() fails with EOPNOTSUPP. */
#define CQPOLL_VERBS_EMU_F_NO_CQ_EX     (1u << 0)
/** The device reports no completion timestamp support. */
#define CQPOLL_VERBS_EMU_F_NO_TIMESTAMP (1u << 1)
/**
 * The device has raw completion timestamps (ibv_wc_read_completion_ts(),
 * HCA ticks) but refuses IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, as
 * mlx5 does without its clock page. Without this flag it offers both.
 */
#define CQPOLL_VERBS_EMU_F_NO_WALLCLOCK (1u << 2)
/**@}*/

/**
 * Open an emulated device.
 *
 * @param faults
 *   Faults of every CQ created on it; NULL for none.
 * @param flags
 *   CQPOLL_VERBS_EMU_F_* bits.
 * @return
 *   The context, or NULL with errno set (EINVAL: a percentage over 100;
 *   ENOMEM).
 *
 * Thread safety: safe from any thread.
 */
struct ibv_context *cqpoll_verbs_emu_open(const struct cqpoll_verbs_emu_faults *faults,
					  uint32_t flags);

/**
 * Drop the opener's reference; the context is freed once its last channel
 * and CQ are destroyed.
 *
 * @param ctx
 *   A context of cqpoll_verbs_emu_open(); not to be used by the caller
 *   afterwards.
 * @return
 *   0, or -EINVAL if @p ctx is not an emulated context.
 *
 * Thread safety: safe from any thread; not with other calls on @p ctx.
 */
int cqpoll_verbs_emu_close(struct ibv_context *ctx);

/**
 * Whether @p ctx is an emulated context.
 *
 * @param ctx
 *   Any device context, or NULL.
 * @return
 *   true for a verbs-emu context, false otherwise (and for NULL).
 *
 * Thread safety: safe from any thread.
 */
bool cqpoll_verbs_emu_is_context(const struct ibv_context *ctx);

/**
 * Raise an async event on an emulated context, as the kernel queues one on
 * a device's async fd: the context's async_fd turns readable, and the
 * drivers read the event through their async path (drivers/common/ibv),
 * as ibv_get_async_event() would give it.
 *
 * @param ctx
 *   An emulated context.
 * @param type
 *   The event, e.g. IBV_EVENT_CQ_ERR, IBV_EVENT_DEVICE_FATAL,
 *   IBV_EVENT_PORT_ERR.
 * @param cq
 *   For IBV_EVENT_CQ_ERR, the CQ it names (of @p ctx); else ignored.
 * @param port_num
 *   For port events, the port; else ignored.
 * @return
 *   0; -EINVAL for a bad argument; -ENOSPC if 16 events wait unread.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_verbs_emu_async_event(struct ibv_context *ctx, enum ibv_event_type type,
				 struct ibv_cq *cq, int port_num);

/**
 * Async events of emulated contexts acknowledged so far (process-wide).
 *
 * @return
 *   The count.
 *
 * Thread safety: safe from any thread.
 */
uint64_t cqpoll_verbs_emu_async_acked(void);

/**
 * ibv_create_comp_channel() for an emulated context. Its fd is non-blocking.
 * The channel holds a reference on @p ctx until it is destroyed.
 *
 * @param ctx
 *   An emulated context.
 * @return
 *   The channel, or NULL with errno set (EINVAL if @p ctx is not an emulated
 *   context, ENOMEM, or an errno from eventfd(2)).
 *
 * Thread safety: safe from any thread.
 */
struct ibv_comp_channel *cqpoll_verbs_emu_ibv_create_comp_channel(struct ibv_context *ctx);

/**
 * ibv_destroy_comp_channel() for an emulated channel.
 *
 * @param ch
 *   A channel of cqpoll_verbs_emu_ibv_create_comp_channel().
 * @return
 *   0, -EBUSY if CQs still use it, -EINVAL if @p ch is NULL or not on an
 *   emulated context.
 *
 * Thread safety: not with other calls on @p ch or its CQs.
 */
int cqpoll_verbs_emu_ibv_destroy_comp_channel(struct ibv_comp_channel *ch);

/**
 * ibv_create_cq() for an emulated context. Extended CQs are created with the
 * real inline ibv_create_cq_ex().
 * The CQ holds a reference on @p ctx until it is destroyed.
 *
 * @param ctx
 *   An emulated context.
 * @param cqe
 *   Minimum entries, 1 .. 2^22; rounded up to a power of two (cq->cqe).
 * @param cq_context
 *   Stored in cq->cq_context, as by ibv_create_cq().
 * @param ch
 *   Channel for events, or NULL; it must belong to @p ctx.
 * @param comp_vector
 *   Ignored: the emulated device has a single completion vector.
 * @return
 *   The CQ, or NULL with errno set (EINVAL: @p ctx not emulated, @p cqe out
 *   of range or @p ch of another context; ENOMEM).
 *
 * Thread safety: safe from any thread.
 */
struct ibv_cq *cqpoll_verbs_emu_ibv_create_cq(struct ibv_context *ctx, int cqe,
					      void *cq_context,
					      struct ibv_comp_channel *ch,
					      int comp_vector);

/**
 * ibv_destroy_cq() for an emulated CQ.
 *
 * The real call blocks until every event read is acknowledged; this one
 * returns -EBUSY instead, and counts it (cqpoll_verbs_emu_busy_destroys()),
 * so that a test can tell that a destroy would have hung.
 *
 * @param cq
 *   An emulated CQ (plain or extended, as returned by ibv_cq_ex_to_cq()).
 * @return
 *   0, -EBUSY (events read but not acknowledged; the CQ is left intact),
 *   -EINVAL (@p cq NULL or not on an emulated context).
 *
 * Thread safety: not with other calls on @p cq.
 */
int cqpoll_verbs_emu_ibv_destroy_cq(struct ibv_cq *cq);

/**
 * ibv_get_cq_event() for an emulated channel: takes the next event, whichever
 * CQ it names, and counts it as reported for that CQ (the per-CQ count that
 * ibv_destroy_cq() waits to see acknowledged, comp_events_completed in
 * libibverbs). Applications never call this on a channel cqpoll reads: a
 * test reads a channel "from outside" with it.
 *
 * @param ch
 *   An emulated channel.
 * @param cq
 *   Set to the CQ the event names.
 * @param cq_context
 *   Set to that CQ's cq_context.
 * @return
 *   0; -1 with errno EAGAIN when no event is queued (the fd is non-blocking),
 *   EINVAL for NULL arguments or a channel not on an emulated context.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_verbs_emu_ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
				      void **cq_context);

/**
 * ibv_ack_cq_events() for an emulated CQ: counts @p n events acknowledged.
 *
 * @param cq
 *   An emulated CQ; anything else is ignored.
 * @param n
 *   Events to acknowledge.
 *
 * Thread safety: safe from any thread.
 */
void cqpoll_verbs_emu_ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n);

/**
 * Destroys refused since the process started because events were not
 * acknowledged: destroys that would have hung on a real device.
 *
 * @return
 *   The count.
 *
 * Thread safety: safe from any thread.
 */
uint64_t cqpoll_verbs_emu_busy_destroys(void);

/**
 * Post one completion to an emulated CQ, as the device would: the entry is
 * written, made visible (after any injected delay) and stamped with the
 * device clock (ibv_wc_read_completion_ts(): ticks of a 100 MHz clock,
 * hca_core_clock 100000 kHz, ibv_query_rt_values_ex() reads it) and the
 * wall clock (ibv_wc_read_completion_wallclock_ns(): CLOCK_REALTIME ns), and
 * an event is queued on
 * the channel if the CQ is armed for it.
 *
 * @param cq
 *   An emulated CQ.
 * @param comp
 *   The completion, in cqpoll form; CQPOLL_COMPLETION_F_SOLICITED marks a
 *   solicited one; vendor_err is the vendor error of a failed one.
 * @return
 *   0; -ENOSPC if the CQ is full (nothing written); -EINVAL.
 *
 * Thread safety: one producer thread per CQ, concurrently with the consumer.
 */
int cqpoll_verbs_emu_ibv_post(struct ibv_cq *cq, const struct cqpoll_completion *comp);

/** Points inside ibv_req_notify_cq() where a test hook runs. */
enum cqpoll_verbs_emu_hook_point {
	CQPOLL_VERBS_EMU_HOOK_BEFORE_ARM = 0, /**< Not yet in effect. */
	CQPOLL_VERBS_EMU_HOOK_AFTER_ARM,      /**< In effect, not yet returned. */
	CQPOLL_VERBS_EMU_HOOK_COUNT,          /**< Number of hook points. */
};

/**
 * Run @p fn inside the arm at @p point, on the arming thread.
 *
 * @param cq
 *   An emulated CQ.
 * @param point
 *   Where in ibv_req_notify_cq() to run it.
 * @param fn
 *   The hook, called with @p arg; NULL removes the hook at @p point.
 * @param arg
 *   Argument of @p fn.
 * @return
 *   0, or -EINVAL if @p cq is NULL or not emulated, or @p point out of range.
 *
 * Thread safety: consumer thread only, while no arm is in progress.
 */
int cqpoll_verbs_emu_set_hook(struct ibv_cq *cq, enum cqpoll_verbs_emu_hook_point point,
			      void (*fn)(void *arg), void *arg);

/**
 * Ground truth: 1 if a completion is visible past the consumer index and no
 * event is queued or being raised for it, else 0. Completions that the
 * current solicited-only arm does not cover are not counted.
 *
 * @param cq
 *   An emulated CQ.
 * @return
 *   1, 0, or -EINVAL if @p cq is NULL or not emulated.
 *
 * Thread safety: consumer thread only.
 */
int cqpoll_verbs_emu_ibv_stranded(struct ibv_cq *cq);

/** Configuration of cqpoll_verbs_emu_cq_create(). */
struct cqpoll_verbs_emu_conf {
	uint32_t size;                          /**< Minimum entries; 0: 4096. */
	uint32_t emu_flags;                     /**< CQPOLL_VERBS_EMU_F_* bits. */
	uint32_t verbs_flags;                   /**< CQPOLL_VERBS_F_* bits. */
	uint32_t event_ack_batch;               /**< 0: the build-time default. */
	struct cqpoll_verbs_emu_faults faults;  /**< Fault injection. */
};

/**
 * One call for the whole stack: open an emulated device, create a channel and
 * a CQ on it with cqpoll_verbs_cq_create() (the production path), and close
 * the device, which lives on until cqpoll_cq_destroy().
 *
 * @param conf
 *   Configuration; NULL for defaults (4096 entries, no faults, no flags).
 * @return
 *   A handle of the verbs driver, or NULL with errno set: as
 *   cqpoll_verbs_emu_open() (EINVAL for a fault percentage over 100, ENOMEM)
 *   or cqpoll_verbs_cq_create().
 *
 * Thread safety: safe from any thread.
 */
struct cqpoll_cq *cqpoll_verbs_emu_cq_create(const struct cqpoll_verbs_emu_conf *conf);

/**
 * cqpoll_verbs_emu_ibv_post() on the CQ under a verbs handle.
 *
 * @param cq
 *   A verbs handle on an emulated device (cqpoll_verbs_emu_cq_create()).
 * @param comp
 *   The completion, as for cqpoll_verbs_emu_ibv_post().
 * @return
 *   As cqpoll_verbs_emu_ibv_post(); -EINVAL also if @p cq is not a verbs
 *   handle on an emulated device.
 *
 * Thread safety: as cqpoll_verbs_emu_ibv_post().
 */
int cqpoll_verbs_emu_cq_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp);

/**
 * Make the emulated device under a verbs handle fail: it writes the flushed
 * completions of @p flush (status CQPOLL_STATUS_WR_FLUSH_ERR, in order),
 * then writes no entry and fires no completion event (arms are taken and do
 * nothing), and raises @p event on the context's async fd
 * (cqpoll_verbs_emu_async_event()). The verbs driver learns of it only
 * through its async path.
 *
 * @param cq
 *   A verbs handle on an emulated device.
 * @param event
 *   IBV_EVENT_CQ_ERR (-EOVERFLOW), IBV_EVENT_DEVICE_FATAL (-ENODEV) or
 *   IBV_EVENT_PORT_ERR (-ENETDOWN).
 * @param flush
 *   wr_ids of the work to flush, or NULL when @p n_flush is 0.
 * @param n_flush
 *   How many.
 * @return
 *   0; -EINVAL for a bad argument; -EALREADY if it failed before; a post's
 *   error if the flushed completions do not fit.
 *
 * Thread safety: on the producer's thread.
 */
int cqpoll_verbs_emu_fail(struct cqpoll_cq *cq, enum ibv_event_type event,
			  const uint64_t *flush, unsigned int n_flush);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_VERBS_EMU_H */
