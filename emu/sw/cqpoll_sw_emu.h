/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_SW_EMU_H
#define CQPOLL_SW_EMU_H

/**
 * @file
 * The emulated software device, part of libcqpoll_emu (verification only).
 *
 * The sw driver's own code (drivers/sw), built a second time with its fault
 * points filled in: random delays widen every race window, events can be late,
 * duplicated or spurious, hooks run inside the arm, and a ground-truth oracle
 * (the sleep check libcqpoll_emu registers) tells a stranded completion. The
 * consumer uses the generic API in cqpoll.h.
 */

#include <stdint.h>

#include "cqpoll.h"
#include "cqpoll_sw.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Faults the software device injects. Zero everywhere (the default) means
 * none. Probabilities are in percent.
 */
struct cqpoll_sw_faults {
	/** Longest random delay between writing an entry and making it visible. */
	uint32_t visibility_delay_ns;
	uint32_t visibility_delay_pct;  /**< Chance an entry is delayed so. */
	/** Delivery delay of every event (the raise is decided, then delivered late). */
	uint32_t event_delay_us;
	uint32_t spurious_event_pct;    /**< Chance per post of an event with no cause. */
	uint32_t duplicate_event_pct;   /**< Chance a raised event is delivered twice. */
	/**
	 * Longest random delay the arm spends before and after it takes effect:
	 * it widens the windows between the last poll, the arm and the next poll.
	 */
	uint32_t arm_delay_ns;
	uint32_t arm_delay_pct;         /**< Chance an arm is delayed so. */
	/**
	 * Report-missed arms that report a miss leave the CQ armed (1) or not (0);
	 * the contract allows both, so tests try both.
	 */
	uint32_t report_missed_keeps_armed;
	uint64_t seed;                  /**< Seed of the fault generator; 0: fixed default. */
};

/** Configuration of an emulated software CQ. */
struct cqpoll_sw_emu_conf {
	uint32_t size;                   /**< Entries, rounded up to a power of 2; 0: default. */
	enum cqpoll_arm_semantics arm;   /**< What the arm guarantees. */
	uint32_t event_ack_batch;        /**< 0: the build-time default. */
	uint32_t flags;                  /**< CQPOLL_SW_F_* flags, as for cqpoll_sw_cq_create(). */
	int socket_id;                   /**< As struct cqpoll_sw_conf::socket_id. */
	struct cqpoll_sw_faults faults;  /**< Fault injection. */
};

/**
 * Create an emulated software CQ and its device.
 *
 * @param conf
 *   Configuration; NULL for defaults (edge arm, default size, no faults).
 * @return
 *   The CQ, or NULL with errno set: EINVAL (bad arm semantics, size over
 *   2^24, a percentage over 100, unknown flags or a socket that does not
 *   exist), ENOMEM, or an errno from eventfd(2), timerfd_create(2) or
 *   epoll_create1(2).
 *
 * Thread safety: safe from any thread.
 */
struct cqpoll_cq *cqpoll_sw_emu_cq_create(const struct cqpoll_sw_emu_conf *conf);

/**
 * Post one completion, as cqpoll_sw_post() does, with the device's faults:
 * the entry may become visible late, its event may be late or duplicated, and
 * a post may raise an event with no cause. The oracle sees the entry once this
 * returns.
 *
 * @param cq
 *   A CQ of cqpoll_sw_emu_cq_create().
 * @param comp
 *   The completion; its timestamp and CQPOLL_COMPLETION_F_TIMESTAMP are set by
 *   the device.
 * @return
 *   - 0: posted.
 *   - -ENOSPC: the CQ is full; nothing was written.
 *   - -EINVAL: NULL argument, or @p cq is not an emulated software CQ.
 *   - other < 0: -errno from raising the event.
 *
 * Thread safety: one producer thread per CQ, concurrently with the consumer.
 */
int cqpoll_sw_emu_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp);

/** Points inside the arm, or a post, where a test hook runs. */
enum cqpoll_sw_hook_point {
	CQPOLL_SW_HOOK_BEFORE_ARM = 0, /**< The arm is requested, not yet in effect. */
	CQPOLL_SW_HOOK_AFTER_ARM,      /**< The arm is in effect, not yet returned. */
	/**
	 * In a post, on the posting thread: the entry is visible (its owner
	 * bit is stored), the producer index not yet published.
	 */
	CQPOLL_SW_HOOK_BEFORE_PUBLISH,
	/**
	 * A look at the device's injected failure (a poll that found the CQ
	 * drained, an arm, a post), on the looking thread, before it reads it.
	 */
	CQPOLL_SW_HOOK_ERROR_LOOK,
	CQPOLL_SW_HOOK_COUNT,          /**< Number of hook points. */
};

/**
 * Run @p fn inside the arm (or a post) at @p point, on the arming (posting)
 * thread: lets a test post or poll at an exact place in a race window,
 * deterministically.
 *
 * @param cq
 *   A CQ of cqpoll_sw_emu_cq_create().
 * @param point
 *   Where in the arm the hook runs.
 * @param fn
 *   Hook, or NULL to remove it.
 * @param arg
 *   Passed to @p fn.
 * @return
 *   0, or -EINVAL for a bad argument or a CQ that is not an emulated
 *   software CQ.
 *
 * Thread safety: consumer thread only, while no arm is in progress; for
 * CQPOLL_SW_HOOK_BEFORE_PUBLISH and CQPOLL_SW_HOOK_ERROR_LOOK, while no
 * post is in progress either.
 */
int cqpoll_sw_emu_set_hook(struct cqpoll_cq *cq, enum cqpoll_sw_hook_point point,
			   void (*fn)(void *arg), void *arg);

/** cqpoll_sw_emu_fail(): no report and no wake-up; only polls find it. */
#define CQPOLL_SW_EMU_FAIL_F_SILENT (1u << 0)

/**
 * Make the device fail, as hardware does (doc/guides/contract.md, 11):
 * it first writes the flushed completions of @p flush (status
 * CQPOLL_STATUS_WR_FLUSH_ERR, wr_id from the array, in order), then stops:
 * posts and arms return @p error, and polls return it once the CQ is
 * drained. Unless CQPOLL_SW_EMU_FAIL_F_SILENT, it also reports the failure
 * (cqpoll_cq_fail(), as an async event would) and makes the CQ's event fd
 * readable, so a sleeping consumer wakes at once; silent, only a poll finds
 * it (a group's safety net, for a CQ armed and asleep).
 *
 * @param cq
 *   A CQ of cqpoll_sw_emu_cq_create().
 * @param error
 *   The failure, < 0: -EOVERFLOW (overrun), -ENODEV (device fatal),
 *   -ENETDOWN (port error), -ESHUTDOWN (peer gone), or any other.
 * @param flush
 *   wr_ids of the outstanding work to flush, or NULL when @p n_flush is 0.
 * @param n_flush
 *   How many.
 * @param flags
 *   CQPOLL_SW_EMU_FAIL_F_* flags.
 * @return
 *   0; -EINVAL for a bad argument; -EALREADY if it had failed; -ENOSPC if
 *   the flushed completions do not fit (nothing more is done).
 *
 * Thread safety: on the producer's thread (or whichever thread alone posts
 * to the CQ at that moment, e.g. an arm hook once the producer stopped).
 */
int cqpoll_sw_emu_fail(struct cqpoll_cq *cq, int error, const uint64_t *flush,
		       unsigned int n_flush, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_SW_EMU_H */
