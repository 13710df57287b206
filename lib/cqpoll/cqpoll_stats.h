/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_STATS_H
#define CQPOLL_STATS_H

/**
 * @file
 * Per-CQ counters.
 *
 * The consumer thread is the only writer; any thread may read a snapshot with
 * cqpoll_cq_stats_get(). Each counter is a 64-bit word written with a relaxed
 * atomic store, so readers never see a torn value and the writer pays no locked
 * instruction on the hot path. A snapshot is not taken atomically as a whole.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Counters of one CQ since it was created or last reset. */
struct cqpoll_cq_stats {
	uint64_t polls;           /**< Burst polls, empty or not. */
	uint64_t empty_polls;     /**< Burst polls that found nothing. */
	uint64_t completions;     /**< Completions returned by polls. */
	uint64_t arms;            /**< Arm requests issued to the device. */
	uint64_t missed_reports;  /**< Report-missed arms that said "poll again". */
	uint64_t events;          /**< Completion events consumed. */
	/** Events after which the first poll found nothing. */
	uint64_t spurious_events;
	uint64_t event_acks;      /**< Acknowledgement calls made to the driver. */
	/**
	 * Sleeps on the event fd (transitions to sleep). For a CQ in a poll
	 * group: the group's sleeps while this CQ was armed off its active
	 * list, added when the CQ is woken, fails or leaves the group (a
	 * sleeping CQ's current sleeps are not in it yet).
	 */
	uint64_t waits;
	uint64_t wait_timeouts;   /**< Sleeps ended by the safety-net timeout. */
	/**
	 * Sleeps begun while a completion was visible and no event was pending or
	 * due for it, as judged by the registered sleep check
	 * (cqpoll_sleep_check.h). Only emulated devices (libcqpoll_emu) can tell;
	 * without a check, and on real hardware, this stays 0 and wait timeouts
	 * that find completions are the detector.
	 */
	uint64_t lost_wakeups;
	/**
	 * Sleeps ended by the safety-net timeout whose poll found completions
	 * that were already visible before the sleep began: a lost wake-up seen
	 * on any device, real hardware included, and turned into a delay. The
	 * CQ had been armed (cqpoll_poll_and_arm() returned 0) and no event was
	 * consumed since; "visible before" is judged by the oldest completion's
	 * host timestamp (CQPOLL_COMPLETION_F_TIMESTAMP) when it has one, and
	 * assumed without one (doc/guides/contract.md, section 8).
	 */
	uint64_t timeout_recoveries;
};

/** @cond INTERNAL */
/**
 * @internal
 * Add to a counter that only the calling thread writes. A relaxed load and
 * store compile to a plain add, yet keep concurrent readers race-free.
 */
static inline void
cqpoll_stat_add(uint64_t *counter, uint64_t v)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + v,
			 __ATOMIC_RELAXED);
}
/** @endcond */

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_STATS_H */
