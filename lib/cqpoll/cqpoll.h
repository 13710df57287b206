/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_H
#define CQPOLL_H

/**
 * @file
 * cqpoll: poll RDMA completion queues from run-to-completion threads, and fall
 * asleep on a completion event when traffic stops, without losing a wake-up.
 *
 * The life of a consumer thread:
 * @code
 * for (;;) {
 *	n = cqpoll_poll_burst(cq, c, 32);        // busy phase
 *	...
 *	n = cqpoll_poll_and_arm(cq, c, 32);      // going to sleep
 *	if (n > 0) { process(c, n); continue; }
 *	if (n == 0) cqpoll_cq_wait(cq, timeout); // armed: safe to sleep
 * }
 * @endcode
 *
 * cqpoll_poll_and_arm() returns 0 only when the CQ is armed and an event is
 * certain once the CQ is non-empty; cqpoll_cq_wait() refuses to sleep on a CQ
 * that is not in that state. See doc/guides/contract.md.
 *
 * Drivers create CQ handles (e.g. cqpoll_sw_cq_create() in cqpoll_sw.h); this
 * header holds what every CQ supports, whatever its driver.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cqpoll_compat.h"
#include "cqpoll_completion.h"
#include "cqpoll_stats.h"
#include "cqpoll_fp.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * What a driver's arm guarantees, which decides how cqpoll_poll_and_arm()
 * closes the race between the last empty poll and the arm.
 */
enum cqpoll_arm_semantics {
	/**
	 * The arm carries the consumer index and fires at once if entries at or
	 * past it already exist (mlx5 hardware). Poll until empty, then arm.
	 */
	CQPOLL_ARM_LEVEL = 0,
	/**
	 * The arm fires only for entries written after it (the portable verbs
	 * contract). Poll until empty, arm, then poll again.
	 */
	CQPOLL_ARM_EDGE,
	/**
	 * The arm reports whether entries may have been missed (kernel verbs'
	 * IB_CQ_REPORT_MISSED_EVENTS); after such a report the CQ is not assumed
	 * armed. Poll until empty, arm, and poll again while it reports.
	 */
	CQPOLL_ARM_REPORT_MISSED,
};

/**
 * Whether a CQ lives, and if not, what killed it. A CQ leaves
 * CQPOLL_CQ_STATE_OK once, for good: from then on every poll, arm and wait
 * of it returns the state's own negative errno (cqpoll_cq_state_errno()) at
 * once, never blocking. Completions written before the failure (flushed work
 * among them, CQPOLL_STATUS_WR_FLUSH_ERR, once each and in order) are delivered
 * first; the errno comes when they are drained. See doc/guides/contract.md,
 * section 11.
 */
enum cqpoll_cq_state {
	CQPOLL_CQ_STATE_OK = 0,      /**< Alive. */
	/** The device overran the CQ: entries were lost (-EOVERFLOW). */
	CQPOLL_CQ_STATE_OVERRUN,
	/** The device is gone or fatally broken (-ENODEV). */
	CQPOLL_CQ_STATE_DEVICE_LOST,
	/** The port of the CQ's work went down; its work was flushed (-ENETDOWN). */
	CQPOLL_CQ_STATE_PORT_DOWN,
	/** The peer closed or lost the connection (-ESHUTDOWN). */
	CQPOLL_CQ_STATE_PEER_CLOSED,
	/** The queue itself went away under the poller, e.g. its fd closed (-EBADF). */
	CQPOLL_CQ_STATE_QUEUE_LOST,
	/** The driver failed with an error no other state names (-EIO). */
	CQPOLL_CQ_STATE_ERROR,
};

/** Static facts about a CQ, and its state. */
struct cqpoll_cq_info {
	const char *driver;                    /**< Driver name, e.g. "sw". */
	enum cqpoll_arm_semantics arm;         /**< What the driver's arm guarantees. */
	uint32_t size;                         /**< Entries the CQ holds. */
	uint32_t event_ack_batch;              /**< Events acknowledged per driver call. */
	/**
	 * The CQ's state when the call read it. On 64-bit targets it sits in
	 * what was the structure's tail padding, so the size is unchanged.
	 */
	enum cqpoll_cq_state state;
};

/** Why a CQ failed: what cqpoll_cq_state_get() and group failure callbacks get. */
struct cqpoll_cq_failure {
	enum cqpoll_cq_state state; /**< The state; CQPOLL_CQ_STATE_OK: alive. */
	/** The state's negative errno (cqpoll_cq_state_errno()); 0 when OK. */
	int error;
	/**
	 * What the driver saw, e.g. "IBV_EVENT_DEVICE_FATAL" or "FI_SHUTDOWN";
	 * a static string valid for the life of the process, NULL when OK.
	 */
	const char *cause;
};

/**
 * Name of a CQ state: "ok", "overrun", "device-lost", "port-down",
 * "peer-closed", "queue-lost" or "error".
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param state
 *   The state.
 * @return
 *   A static string; "unknown" for a value out of range.
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
const char *cqpoll_cq_state_name(enum cqpoll_cq_state state);

/**
 * The negative errno that polls, arms and waits of a CQ in @p state return.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param state
 *   The state.
 * @return
 *   0 for CQPOLL_CQ_STATE_OK, -EOVERFLOW, -ENODEV, -ENETDOWN, -ESHUTDOWN,
 *   -EBADF or -EIO (in the order of enum cqpoll_cq_state); -EINVAL for a
 *   value out of range.
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
int cqpoll_cq_state_errno(enum cqpoll_cq_state state);

/**
 * A CQ's state and the cause of its failure.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   The CQ.
 * @param[out] f
 *   Filled in; NULL if only the state is wanted.
 * @return
 *   The state (>= 0), or -EINVAL if @p cq is NULL.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
__cqpoll_experimental
int cqpoll_cq_state_get(const struct cqpoll_cq *cq, struct cqpoll_cq_failure *f);

/**
 * Name of an arm semantics: "level", "edge" or "report-missed".
 *
 * @param arm
 *   The semantics.
 * @return
 *   A static string; "unknown" for a value out of range.
 *
 * Thread safety: safe from any thread.
 */
const char *cqpoll_arm_semantics_name(enum cqpoll_arm_semantics arm);

/**
 * Parse an arm semantics name as printed by cqpoll_arm_semantics_name().
 *
 * @param name
 *   "level", "edge" or "report-missed".
 * @param[out] arm
 *   Where to store the value.
 * @return
 *   0 on success, -EINVAL for NULL arguments or an unknown name.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_arm_semantics_parse(const char *name, enum cqpoll_arm_semantics *arm);

/**
 * Describe a CQ.
 *
 * @param cq
 *   The CQ.
 * @param[out] info
 *   Filled with the CQ's driver, arm semantics, size, ack batch and state.
 * @return
 *   0 on success, -EINVAL if @p cq or @p info is NULL.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
int cqpoll_cq_info_get(const struct cqpoll_cq *cq, struct cqpoll_cq_info *info);

/**
 * Destroy a CQ: acknowledge every event consumed and not yet acknowledged, then
 * release the driver's resources. Completions still in the CQ are dropped.
 *
 * A CQ in a poll group is refused: remove it first (cqpoll_group_remove()),
 * or destroy the group, on the group's thread. Removing it here instead would
 * race with the group's thread, which may be polling it or sleeping on it.
 * A CQ that a driver object still uses (a QP of cqpoll_mlx5_qp_create() on
 * it) is refused too: destroy the object first.
 *
 * @param cq
 *   The CQ; NULL is ignored.
 * @return
 *   - 0: destroyed (or @p cq was NULL).
 *   - -EBUSY: @p cq is in a poll group, or a driver object (a cqpoll mlx5 QP)
 *     still uses it; nothing was done, the CQ is intact.
 *
 * Thread safety: no other call may use @p cq during or after this one.
 */
int cqpoll_cq_destroy(struct cqpoll_cq *cq);

/**
 * Poll, and arm the CQ when it is empty: the only safe way into sleep.
 *
 * Reads completions like cqpoll_poll_burst(). When it finds none, it arms the
 * CQ as the driver's arm semantics require (for edge and report-missed, it
 * polls again after the arm) and returns 0 only once the CQ is armed and an
 * event is certain when the CQ becomes non-empty. Call it in a loop,
 * processing what it returns, until it returns 0; then cqpoll_cq_wait() may
 * sleep. An arm stays in force until cqpoll_cq_event_get() consumes its event,
 * so repeated calls do not ring the device again.
 *
 * On an edge or report-missed CQ whose last poll was the first after a
 * consumed event and returned fewer than @p n completions (drained at that
 * poll), the call starts at the arm, as a blocking wait's loop arms after
 * its read: the poll after the arm, or the report, returns what landed
 * since. The results are the same.
 *
 * @param cq
 *   The CQ.
 * @param comps
 *   Array of at least @p n records to fill.
 * @param n
 *   Maximum number of completions to return, > 0.
 * @return
 *   - > 0: completions read; the CQ may or may not be armed; call again.
 *   - 0: the CQ is empty and armed; an event will come for any new entry.
 *   - -EINVAL: @p cq or @p comps is NULL, or @p n is 0.
 *   - -EBUSY: the CQ is on a shared software channel a poll group serves
 *     (cqpoll_sw.h), and not in that group: not armed.
 *   - -EAGAIN: a report-missed device said "missed" on 64 arms in a row
 *     while its polls found nothing: the CQ is not armed. Call again (poll
 *     on); do not sleep on it.
 *   - -EOVERFLOW, -ENODEV, -ENETDOWN, -ESHUTDOWN, -EBADF, -EIO: the CQ has
 *     failed (enum cqpoll_cq_state); it will not be armed again.
 *   - other < 0: -errno from the driver's poll or arm; the CQ is then in
 *     CQPOLL_CQ_STATE_ERROR.
 *
 * Thread safety: consumer thread only (see cqpoll_poll_burst()).
 */
int cqpoll_poll_and_arm(struct cqpoll_cq *cq, struct cqpoll_completion *comps,
			unsigned int n);

/**
 * Whether the CQ is armed: cqpoll_poll_and_arm() returned 0 and no event has
 * been consumed since.
 *
 * @param cq
 *   The CQ.
 * @return
 *   true if armed; false if not, or if @p cq is NULL.
 *
 * Thread safety: consumer thread only.
 */
bool cqpoll_cq_is_armed(const struct cqpoll_cq *cq);

/**
 * File descriptor that becomes readable when the CQ has a pending event.
 *
 * Use it to wait on many CQs and other sources with poll(2), epoll(7) or
 * rte_epoll_wait(); never read it directly: consume events with
 * cqpoll_cq_event_get(). CQs sharing a completion channel share the fd.
 *
 * @param cq
 *   The CQ.
 * @return
 *   The fd (owned by the CQ, closed by cqpoll_cq_destroy()), or -EINVAL if
 *   @p cq is NULL.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
int cqpoll_cq_event_fd(const struct cqpoll_cq *cq);

/**
 * Consume pending events without blocking.
 *
 * Each consumed event disarms the CQ (call cqpoll_poll_and_arm() before the
 * next sleep). Events are acknowledged to the driver in batches of
 * cqpoll_cq_info::event_ack_batch.
 *
 * @param cq
 *   The CQ.
 * @return
 *   - > 0: number of events consumed. A failed CQ (enum cqpoll_cq_state),
 *     or one whose driver failed to take its events, returns 1: poll it,
 *     for what it still holds and then its state's errno.
 *   - 0: no event was pending.
 *   - -EINVAL: @p cq is NULL.
 *
 * Thread safety: consumer thread only.
 */
int cqpoll_cq_event_get(struct cqpoll_cq *cq);

/**
 * Acknowledge to the driver every event consumed and not yet acknowledged.
 *
 * Not needed for correctness: cqpoll_cq_event_get() acknowledges in batches and
 * cqpoll_cq_destroy() acknowledges the rest. Useful before handing the driver's
 * objects to other code.
 *
 * @param cq
 *   The CQ.
 * @return
 *   0 on success, -EINVAL if @p cq is NULL, other -errno from the driver.
 *
 * Thread safety: consumer thread only.
 */
int cqpoll_cq_event_ack(struct cqpoll_cq *cq);

/**
 * Sleep until the CQ raises an event or @p timeout_ms passes, then consume
 * the event.
 *
 * The sleep is the driver's own wait where it has one (io_uring: on the
 * ring, one io_uring_enter() as io_uring_wait_cqe(); UCX, libfabric: one
 * poll(2) on the event fd, readable taken as the event), else poll(2) on
 * the event fd and the driver's consumption of the event.
 *
 * Sleeping is refused unless the CQ is armed, so a caller cannot sleep
 * through a completion that already arrived. Every sleep is bounded: the
 * timeout is the safety net that turns a lost wake-up into a delay, and it is
 * counted in cqpoll_cq_stats::wait_timeouts. If the first poll after a
 * timeout finds completions, the arm fired and its event was lost or is late:
 * the CQ is no longer armed (cqpoll_poll_and_arm() arms it again), and the
 * timeout counts in cqpoll_cq_stats::timeout_recoveries when those
 * completions were visible before the sleep (doc/guides/contract.md, 8).
 * No sleep arms a kernel timer of its own: the timeout is an alarm beside
 * the wait, moved at most once per half period, so a sleep that nothing
 * else ends lasts at least half of @p timeout_ms and at most all of it.
 *
 * @param cq
 *   The CQ.
 * @param timeout_ms
 *   Safety-net timeout, 1 .. 3600000 ms.
 * @return
 *   - 1: an event was consumed; poll the CQ.
 *   - 0: no event of this CQ was consumed: the timeout passed, or, on a
 *     completion channel shared with other CQs (verbs, mlx5), another CQ's
 *     event ended the sleep early and was handed to that CQ. Poll the CQ
 *     either way (it stays armed if the poll is empty); only after a whole
 *     timeout does a poll that finds work count as a timeout recovery.
 *   - -EAGAIN: the CQ is not armed; call cqpoll_poll_and_arm() first.
 *   - -EBUSY: the CQ is on a shared software channel a poll group serves
 *     (cqpoll_sw.h): only that group may wait on the channel's CQs.
 *   - -EINVAL: @p cq is NULL or @p timeout_ms out of range.
 *   - -EINTR: a signal interrupted the sleep.
 *   - the state's errno (cqpoll_cq_state_errno()): the CQ has failed and
 *     was drained; a failed CQ never puts the caller to sleep (one that
 *     failed and may still hold completions returns 1 at once: poll it).
 *   - other < 0: -errno from poll(2) or the driver.
 *
 * Thread safety: consumer thread only.
 */
int cqpoll_cq_wait(struct cqpoll_cq *cq, int timeout_ms);

/**
 * Read a CQ's counters.
 *
 * @param cq
 *   The CQ.
 * @param[out] stats
 *   Where to copy the counters.
 * @return
 *   0 on success, -EINVAL if an argument is NULL.
 *
 * Thread safety: safe from any thread while the CQ exists; each counter is
 * read atomically, the set is not a single atomic snapshot.
 */
int cqpoll_cq_stats_get(const struct cqpoll_cq *cq, struct cqpoll_cq_stats *stats);

/**
 * Zero a CQ's counters.
 *
 * @param cq
 *   The CQ.
 * @return
 *   0 on success, -EINVAL if @p cq is NULL.
 *
 * Thread safety: consumer thread only (it writes the counters).
 */
int cqpoll_cq_stats_reset(struct cqpoll_cq *cq);

/**
 * The library's version, "MAJOR.MINOR.PATCH".
 *
 * @return
 *   A static string.
 *
 * Thread safety: safe from any thread.
 */
const char *cqpoll_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_H */
