/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_FP_H
#define CQPOLL_FP_H

/**
 * @file
 * Fast-path layout of a CQ handle and the inline burst poll.
 *
 * Not for direct inclusion: include cqpoll.h. This header is installed only
 * because the inline cqpoll_poll_burst() must see the first part of the handle.
 * The driver's poll function is resolved once when the CQ is created and copied
 * here, so a burst costs one indirect call and no lookup, as rte_eth_rx_burst().
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "cqpoll_completion.h"
#include "cqpoll_stats.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cqpoll_cq;

/**
 * Driver burst poll: copy up to @p n visible completions into @p comps and
 * consume them.
 *
 * @return
 *   - >= 0: the number of completions written.
 *   - < 0: -errno; the CQ is unusable (e.g. -EIO on overrun).
 */
typedef int (*cqpoll_poll_burst_t)(void *priv, struct cqpoll_completion *comps,
				   unsigned int n);

/** @cond INTERNAL */
/**
 * @internal
 * The counters that the inline burst poll writes. They sit on a cache line
 * of their own in the CQ handle, away from struct cqpoll_cq_fp, so that a
 * telemetry reader on another core never takes the line holding the poll
 * function away from the consumer. cqpoll_cq_stats_get() derives
 * cqpoll_cq_stats::empty_polls from them.
 */
struct cqpoll_cq_fp_counters {
	uint64_t polls;       /**< Burst polls, empty or not. */
	uint64_t hits;        /**< Burst polls that returned completions. */
	uint64_t completions; /**< Completions returned. */
};

/** @internal cqpoll_cq_fp::pending: an event was consumed since the last poll. */
#define CQPOLL_CQ_FP_PENDING_EVENT   (1u << 0)
/** @internal cqpoll_cq_fp::pending: a sleep on the armed CQ ended by timeout. */
#define CQPOLL_CQ_FP_PENDING_TIMEOUT (1u << 1)
/**
 * @internal cqpoll_cq_fp::pending: the CQ was reported failed (from any
 * thread, cqpoll_cq_fail()); the first empty poll latches the state.
 */
#define CQPOLL_CQ_FP_PENDING_FAILED  (1u << 2)
/**
 * @internal cqpoll_cq_fp::pending, with PENDING_TIMEOUT: the look is a poll
 * group's health check, not a timed-out sleep (cqpoll_cq_health_mark()).
 */
#define CQPOLL_CQ_FP_PENDING_HEALTH  (1u << 3)

/**
 * @internal
 * What the inline cqpoll_poll_burst() reads: the first cache line of every
 * CQ handle (the library asserts its offset is 0 and its size is 64 bytes),
 * written when the CQ is created and, by the consumer thread, when it sleeps
 * or consumes an event. Like DPDK's struct rte_eth_fp_ops it is part of the
 * ABI of the symbol version that declares cqpoll_cq_poll_judge() (which takes
 * it, so that ABI tools see its layout), and it has room to grow.
 */
struct cqpoll_cq_fp {
	cqpoll_poll_burst_t poll;  /**< Driver burst poll, set at creation. */
	void *priv;                /**< Driver's per-CQ state. */
	/** Counters of the inline poll, on the CQ's next cache line. */
	struct cqpoll_cq_fp_counters *counters;
	/**
	 * CQPOLL_CQ_FP_PENDING_* bits: the next poll's result must be judged
	 * (spurious event, timeout recovery) by cqpoll_cq_poll_judge(). Zero on
	 * almost every poll, so the fast path tests one word.
	 */
	uint32_t pending;
	uint32_t reserved0;        /**< Zero. */
	uintptr_t reserved[4];     /**< Zero: room for fast-path growth. */
} __attribute__((aligned(64)));

/**
 * @internal
 * Judge the poll after an event or a timed-out sleep (cqpoll_cq_fp::pending
 * set): an event after which the poll found nothing was spurious; completions
 * in a CQ still armed after a timeout mean its event was lost or late, so the
 * arm is spent, and it is a timeout recovery if they were visible before the
 * sleep. A poll that failed (@p n < 0), or an empty one of a CQ reported
 * failed, fixes the CQ's state (enum cqpoll_cq_state): later polls return
 * its errno. Clears cqpoll_cq_fp::pending. Called by cqpoll_poll_burst() only.
 *
 * @param fp
 *   The CQ handle's fast-path part.
 * @param comps
 *   What the poll wrote.
 * @param n
 *   What the poll returned.
 *
 * Thread safety: the CQ's consumer thread only.
 */
void cqpoll_cq_poll_judge(struct cqpoll_cq_fp *fp,
			  const struct cqpoll_completion *comps, int n);
/** @endcond */

/**
 * Poll a CQ for up to @p n completions, without arming it.
 *
 * Busy-polling loops call this. It never sleeps and never arms; to go to sleep,
 * call cqpoll_poll_and_arm() until it returns 0, then cqpoll_cq_wait().
 *
 * @param cq
 *   The CQ.
 * @param comps
 *   Array of at least @p n records to fill.
 * @param n
 *   Maximum number of completions to return, > 0.
 * @return
 *   - > 0: number of completions written to @p comps, oldest first.
 *   - 0: the CQ had no visible completion.
 *   - -EINVAL: @p cq or @p comps is NULL, or @p n is 0.
 *   - other < 0: the CQ has failed: the errno of its state
 *     (cqpoll_cq_state_errno(), e.g. -EOVERFLOW: the device overran the
 *     CQ), from now on at every poll. The poll that meets the failure may
 *     return the driver's own errno.
 *
 * Thread safety: one consumer thread per CQ; not safe to call concurrently
 * with any other consumer call on the same CQ.
 */
static inline int
cqpoll_poll_burst(struct cqpoll_cq *cq, struct cqpoll_completion *comps,
		  unsigned int n)
{
	struct cqpoll_cq_fp *fp = (struct cqpoll_cq_fp *)(void *)cq;
	struct cqpoll_cq_fp_counters *c;
	int r;

	if (cq == NULL || comps == NULL || n == 0)
		return -EINVAL;
	r = fp->poll(fp->priv, comps, n);
	c = fp->counters;
	/* An empty poll writes one counter; the rest only when it found some. */
	cqpoll_stat_add(&c->polls, 1);
	if (r > 0) {
		cqpoll_stat_add(&c->hits, 1);
		cqpoll_stat_add(&c->completions, (uint64_t)r);
	}
	/*
	 * Rare: only the first poll after an event or a timed-out sleep, and
	 * a failure. Another thread may set a bit (cqpoll_cq_fail()). No
	 * __builtin_expect: bench/run_mlx5.sh measured the same instructions
	 * and cycles with and without it.
	 */
	if ((__atomic_load_n(&fp->pending, __ATOMIC_RELAXED) != 0) | (r < 0))
		cqpoll_cq_poll_judge(fp, comps, r);
	return r;
}

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_FP_H */
