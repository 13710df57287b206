/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_SCHED_H
#define CQPOLL_SCHED_H

/**
 * @file
 * The consolidating scheduler (EXPERIMENTAL): where poll groups should run.
 *
 * Pure logic, no threads and no clock of its own, like a policy: the
 * application measures each group's load once per interval (for instance
 * with cqpoll_sched_load_from_stats() on two cqpoll_group_stats snapshots),
 * gives it to cqpoll_sched_load_set(), and calls cqpoll_sched_step(), which
 * says which groups to move where. The application carries the moves out
 * with the move API (cqpoll_group_move_request(), cqpoll_group_release(),
 * cqpoll_group_adopt()) and runs a parked lcore, one left without groups,
 * in interrupt mode (or lets it sleep).
 *
 * The rule: pack groups onto the fewest lcores whose summed load stays at
 * most pack_pct of an lcore, emptying (parking) the least loaded lcore
 * (loads within 1 % equal, ties to the highest: groups gather on the
 * lowest lcores) once it could be emptied for hold intervals in a row;
 * spread again as soon as an lcore's load rises above spread_pct, moving
 * its largest groups to the least loaded lcores (waking parked ones if
 * needed) until it is back at most at pack_pct. The gap between the two
 * limits and the hold are the hysteresis: without them a load near a limit
 * moves groups back and forth every interval. SPDK's dynamic scheduler
 * parks and moves on the same kind of busy fractions (its limits: 20 %
 * busy for an idle thread, 80 % for a core that takes more, 95 % for one
 * that must shed); doc/guides/poll-group.md compares the two.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 */

#include <stdint.h>

#include "cqpoll_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cqpoll_group_stats;

/** Most lcores one scheduler places groups on. */
#define CQPOLL_SCHED_LCORES_MAX 1024
/** Most groups one scheduler places. */
#define CQPOLL_SCHED_GROUPS_MAX 65536
/** cqpoll_sched_conf::hold: pack as soon as an lcore can be emptied. */
#define CQPOLL_SCHED_HOLD_NONE UINT32_MAX

/** Configuration of a scheduler (cqpoll_sched_create()). */
struct cqpoll_sched_conf {
	uint32_t nb_lcores;  /**< Lcores, numbered 0..nb_lcores-1. */
	uint32_t nb_groups;  /**< Groups, numbered 0..nb_groups-1. */
	/**
	 * Fill limit when packing, percent of one lcore: groups are packed
	 * onto an lcore only while its summed load stays at most this, and
	 * spreading brings an lcore back down to it. The p99 goal: a lower
	 * limit keeps queueing, and with it each group's p99, nearer to an
	 * lcore of its own. 0: 40.
	 */
	uint32_t pack_pct;
	/**
	 * Spread limit, percent: an lcore whose summed load is above it sheds
	 * groups. At least pack_pct. 0: 70.
	 */
	uint32_t spread_pct;
	/**
	 * Intervals in a row an lcore must be emptiable before it is parked.
	 * 0: 3; CQPOLL_SCHED_HOLD_NONE: at once.
	 */
	uint32_t hold;
};

/** One move that cqpoll_sched_step() decided. */
struct cqpoll_sched_move {
	uint32_t group; /**< The group. */
	uint32_t from;  /**< The lcore it runs on. */
	uint32_t to;    /**< The lcore it goes to. */
};

struct cqpoll_sched;

/**
 * Create a scheduler. Every group starts placed round robin over every
 * lcore (group i on lcore i % nb_lcores), no lcore parked, every load 0.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param conf
 *   The configuration.
 * @return
 *   The scheduler, or NULL with errno set: EINVAL if @p conf is NULL, has
 *   no lcore or no group, more than CQPOLL_SCHED_LCORES_MAX lcores or
 *   CQPOLL_SCHED_GROUPS_MAX groups, a limit above 100 or pack_pct above
 *   spread_pct (the reason is logged); ENOMEM.
 *
 * Thread safety: any thread.
 */
__cqpoll_experimental
struct cqpoll_sched *cqpoll_sched_create(const struct cqpoll_sched_conf *conf);

/**
 * Destroy a scheduler. NULL is accepted.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param s
 *   The scheduler.
 *
 * Thread safety: not with any other call on @p s.
 */
__cqpoll_experimental
void cqpoll_sched_destroy(struct cqpoll_sched *s);

/**
 * Give a group's load over the last interval: the fraction of one lcore its
 * work took (1.0: a whole lcore).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param s
 *   The scheduler.
 * @param group
 *   The group's number.
 * @param busy
 *   Its load, 0 to 1.
 * @return
 *   0, or -EINVAL if @p s is NULL, @p group out of range or @p busy not a
 *   number from 0 to 1.
 *
 * Thread safety: one thread per scheduler, as every call but create.
 */
__cqpoll_experimental
int cqpoll_sched_load_set(struct cqpoll_sched *s, uint32_t group, double busy);

/**
 * A group's load from two snapshots of its counters: the awake time that
 * found work, its busy time between the snapshots times the share of its
 * polls that found completions, over the interval between them. A group
 * that polls an empty CQ is awake but not loaded: what a move saves is
 * that polling, so it is not counted as load.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param prev
 *   The earlier snapshot (cqpoll_group_stats_get()).
 * @param cur
 *   The later one.
 * @param interval_ns
 *   Time between them.
 * @param[out] busy
 *   The load, 0 to 1.
 * @return
 *   0, or -EINVAL if a pointer is NULL, @p interval_ns is 0 or @p cur is
 *   older than @p prev (a counter went back: the group's stats were reset).
 *
 * Thread safety: any thread.
 */
__cqpoll_experimental
int cqpoll_sched_load_from_stats(const struct cqpoll_group_stats *prev,
				 const struct cqpoll_group_stats *cur,
				 uint64_t interval_ns, double *busy);

/**
 * Decide the moves of this interval from the loads given since the last
 * step, and take them as done: the placement cqpoll_sched_lcore() returns
 * is the one after them.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param s
 *   The scheduler.
 * @param[out] moves
 *   Room for @p max moves.
 * @param max
 *   Size of @p moves; the step decides no more than that.
 * @return
 *   The number of moves (0: the placement stays), or -EINVAL if @p s is
 *   NULL, or @p moves is NULL with @p max > 0.
 *
 * Thread safety: one thread per scheduler.
 */
__cqpoll_experimental
int cqpoll_sched_step(struct cqpoll_sched *s, struct cqpoll_sched_move *moves,
		      uint32_t max);

/**
 * The lcore a group is placed on.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param s
 *   The scheduler.
 * @param group
 *   The group's number.
 * @return
 *   The lcore, or -EINVAL if @p s is NULL or @p group out of range.
 *
 * Thread safety: one thread per scheduler.
 */
__cqpoll_experimental
int cqpoll_sched_lcore(const struct cqpoll_sched *s, uint32_t group);

/**
 * Whether an lcore is parked: no group placed on it.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param s
 *   The scheduler.
 * @param lcore
 *   The lcore's number.
 * @return
 *   1 if parked, 0 if not, -EINVAL if @p s is NULL or @p lcore out of
 *   range.
 *
 * Thread safety: one thread per scheduler.
 */
__cqpoll_experimental
int cqpoll_sched_parked(const struct cqpoll_sched *s, uint32_t lcore);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_SCHED_H */
