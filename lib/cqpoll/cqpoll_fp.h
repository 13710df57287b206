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
 * First member of every struct cqpoll_cq; the library asserts its offset is 0.
 * Only the consumer thread writes it.
 */
struct cqpoll_cq_fp {
	cqpoll_poll_burst_t poll;  /**< Driver burst poll, set at creation. */
	void *priv;                /**< Driver's per-CQ state. */
	/** Set when an event was consumed: the next poll tells if it was spurious. */
	uint32_t event_unchecked;
	/**
	 * Set when a sleep on the armed CQ ended by timeout: the next poll tells
	 * whether its event was lost (cqpoll_cq_stats::timeout_recoveries).
	 */
	uint32_t timeout_unchecked;
	struct cqpoll_cq_stats stats; /**< Counters; see cqpoll_cq_stats_get(). */
};

/**
 * @internal
 * After a timeout (timeout_unchecked set): judge what the first poll found.
 * Completions in a CQ still armed mean its event was lost or late: the arm is
 * spent, and it is counted as a timeout recovery if the completions were
 * visible before the sleep. Called by cqpoll_poll_burst() only.
 *
 * @param cq
 *   The CQ.
 * @param comps
 *   What the poll wrote.
 * @param n
 *   What the poll returned.
 */
void cqpoll_cq_timeout_check(struct cqpoll_cq *cq,
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
 *   - other < 0: -errno from the driver (e.g. -EIO: the device overran the CQ).
 *
 * Thread safety: one consumer thread per CQ; not safe to call concurrently
 * with any other consumer call on the same CQ.
 */
static inline int
cqpoll_poll_burst(struct cqpoll_cq *cq, struct cqpoll_completion *comps,
		  unsigned int n)
{
	struct cqpoll_cq_fp *fp = (struct cqpoll_cq_fp *)(void *)cq;
	int r;

	if (cq == NULL || comps == NULL || n == 0)
		return -EINVAL;
	r = fp->poll(fp->priv, comps, n);
	cqpoll_stat_add(&fp->stats.polls, 1);
	if (r > 0) {
		cqpoll_stat_add(&fp->stats.completions, (uint64_t)r);
	} else if (r == 0) {
		cqpoll_stat_add(&fp->stats.empty_polls, 1);
		if (fp->event_unchecked)
			cqpoll_stat_add(&fp->stats.spurious_events, 1);
	}
	fp->event_unchecked = 0;
	/* Rare: only the first poll after a sleep that timed out. */
	if (fp->timeout_unchecked != 0)
		cqpoll_cq_timeout_check(cq, comps, r);
	return r;
}

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_FP_H */
