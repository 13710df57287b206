/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_GROUP_STATS_H
#define CQPOLL_GROUP_STATS_H

/**
 * @file
 * What a poll group counts and is, for monitoring (telemetry, logs): its
 * counters, the CPU of its sampled sleeps, its failed CQs, and its
 * description. cqpoll_group.h includes this header.
 */

#include <stdint.h>

#include "cqpoll_group.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Buckets of the wake-up latency histogram. */
#define CQPOLL_GROUP_WAKE_HIST_BUCKETS 32

/** Counters of a group since it was created or last reset. */
struct cqpoll_group_stats {
	uint64_t iterations;      /**< Calls to cqpoll_group_run_once(), run or not. */
	uint64_t polls;           /**< CQ polls issued by the group. */
	/**
	 * CQ polls that found nothing: the polls less those that found work,
	 * counted apart and read first, so that a snapshot's empty polls
	 * never exceed its polls. Between two snapshots they may step back
	 * by one iteration's polls (an iteration counted in the first
	 * snapshot's polls but not yet in its work); the difference
	 * polls - empty_polls between snapshots is exact
	 * (cqpoll_sched_load_from_stats()).
	 */
	uint64_t empty_polls;
	uint64_t completions;     /**< Completions handed to callbacks. */
	uint64_t transitions;     /**< Passes of poll-and-arm over every CQ. */
	uint64_t sleeps;          /**< Transitions that ended asleep (every CQ armed). */
	uint64_t wakeups_event;   /**< Sleeps ended by a CQ event. */
	uint64_t wakeups_timeout; /**< Sleeps ended by the safety-net timeout. */
	uint64_t wakeups_xthread; /**< Sleeps ended by a cross-thread wake-up. */
	/**
	 * Sleeps begun while some CQ held a completion with no event pending or
	 * due, by the registered sleep check (cqpoll_sleep_check.h): emulated
	 * devices only; 0 without one.
	 * Each sleep asks up to 64 members, taking turns in larger groups.
	 */
	uint64_t lost_wakeups;
	/**
	 * Sleeps ended by the safety-net timeout in which some CQ held
	 * completions visible before the sleep began (see
	 * cqpoll_cq_stats::timeout_recoveries): the detector that works on
	 * hardware. After such a timeout the group polls its members for lost
	 * work: all of them up to 256, else 256 per timeout, taking turns (a
	 * full round takes ceil(n / 256) timeouts).
	 */
	uint64_t timeout_recoveries;
	/** Time awake, from the first iteration on: what is not asleep. */
	uint64_t busy_ns;
	uint64_t asleep_ns;       /**< Time asleep in epoll_wait(). */
	uint64_t mode_changes;    /**< Mode changes seen by the group's thread. */
	/** Busy and adaptive modes: CQs armed after cold_us without work. */
	uint64_t cold_arms;
	/** Non-blocking looks at the events of cold CQs while polling. */
	uint64_t event_checks;
	/**
	 * Wake-up latency, from a completion becoming visible while the group
	 * slept to its callback (first completion after an event, timestamped
	 * devices only): bucket i counts latencies in [2^i, 2^(i+1)) ns.
	 */
	uint64_t wake_latency_hist[CQPOLL_GROUP_WAKE_HIST_BUCKETS];
};

/**
 * Read a group's counters.
 *
 * @param g
 *   The group.
 * @param[out] stats
 *   Where to copy the counters.
 * @return
 *   0, or -EINVAL if an argument is NULL.
 *
 * Thread safety: safe from any thread while the group exists; each counter
 * is read atomically, the set is not a single snapshot.
 */
int cqpoll_group_stats_get(const struct cqpoll_group *g,
			   struct cqpoll_group_stats *stats);

/**
 * Zero a group's counters.
 *
 * @param g
 *   The group.
 * @return
 *   0, or -EINVAL if @p g is NULL.
 *
 * Thread safety: the group's thread only (it writes the counters).
 */
int cqpoll_group_stats_reset(struct cqpoll_group *g);

/**
 * The thread CPU a group's sleeps cost, measured on a sample of them: a
 * sleep is timed from just before the poll-and-arm that begins it to the
 * first completion handed to a callback after its wake-up (or the end of
 * the wake-up's handling when it found none), with
 * CLOCK_THREAD_CPUTIME_ID: arming, the epoll_wait(), the scheduler's
 * switch back in, reading the events, the drivers' calls. The callbacks'
 * work is not in it. That clock is a system call, not the vDSO, and a
 * sleep makes a few, so the group times its first 8 sleeps and then one
 * in 16. Only sleeps of cqpoll_group_run_once() and cqpoll_group_run()
 * count, not those of an external loop (cqpoll_group_sleep_prepare()),
 * whose wait the group does not see. The adaptive and hybrid policies
 * are told each sample (cqpoll_policy_sleep_cpu()).
 * Not in struct cqpoll_group_stats, whose size is ABI;
 * cqpoll_group_stats_reset() zeroes these too.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param g
 *   The group.
 * @param[out] cpu_ns
 *   The sum of the timed sleeps' thread CPU, ns; NULL: not wanted.
 * @param[out] sleeps_timed
 *   How many sleeps were timed; NULL: not wanted.
 * @return
 *   0, or -EINVAL if @p g is NULL.
 *
 * Thread safety: safe from any thread while the group exists; each value
 * is read atomically, the pair is not a single snapshot.
 */
__cqpoll_experimental
int cqpoll_group_sleep_cpu_get(const struct cqpoll_group *g, uint64_t *cpu_ns,
			       uint64_t *sleeps_timed);

/** What a group is, for monitoring (telemetry, logs). */
struct cqpoll_group_info {
	enum cqpoll_group_mode mode; /**< Mode last set (cqpoll_group_get_mode()). */
	const char *policy;          /**< Name of the adaptive mode's policy. */
	uint32_t burst;              /**< Completions read per CQ poll. */
	uint32_t wait_timeout_ms;    /**< Safety-net timeout of every sleep. */
};

/**
 * Describe a group.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param g
 *   The group.
 * @param[out] info
 *   Filled in; its strings are static or owned by the group's policy.
 * @return
 *   0, or -EINVAL if an argument is NULL.
 *
 * Thread safety: safe from any thread while the group exists.
 */
__cqpoll_experimental
int cqpoll_group_info_get(const struct cqpoll_group *g,
			  struct cqpoll_group_info *info);

/**
 * CQs the group removed because they failed, since it was created.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param g
 *   The group.
 * @return
 *   The count; 0 if @p g is NULL.
 *
 * Thread safety: safe from any thread while the group exists.
 */
__cqpoll_experimental
uint64_t cqpoll_group_failed_count(const struct cqpoll_group *g);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_GROUP_STATS_H */
