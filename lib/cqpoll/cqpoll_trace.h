/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_TRACE_H
#define CQPOLL_TRACE_H

/**
 * @file
 * Trace hook: what a poll group or a CQ does around its sleeps, as typed
 * events, for a tracer to record (libcqpoll_dpdk connects it to DPDK trace
 * points, cqpoll.*, at start-up).
 *
 * The core calls the hook at each arm that takes effect, each group
 * transition, sleep and wake-up (by a CQ event, by the safety-net timeout,
 * by another thread, or a timeout that recovered completions), each mode
 * change, each policy decision to sleep and each CQ that fails. Without a hook each of these
 * costs one load and a branch. Every policy decision, sleep or not, is
 * reported only in a build configured with `-Ddebug_fastpath=true`: the
 * adaptive mode decides once per poll.
 *
 * The callbacks run on the thread that does the work (the group's or the
 * CQ's consumer thread), inline: they must be short and must not call
 * back into the group or CQ.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 */

#include <stdint.h>

#include "cqpoll.h"
#include "cqpoll_group.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What ended a sleep. */
enum cqpoll_trace_wake {
	CQPOLL_TRACE_WAKE_EVENT = 0, /**< A CQ's completion event. */
	CQPOLL_TRACE_WAKE_TIMEOUT,   /**< The safety-net timeout, nothing found. */
	CQPOLL_TRACE_WAKE_XTHREAD,   /**< Another thread (stop, mode, wake-up). */
	/**
	 * The safety-net timeout found completions no event announced
	 * (timeout_recoveries): a group reports it instead of TIMEOUT; each CQ
	 * that held them reports it too (g NULL, asleep_ns 0) at the poll that
	 * finds them. A group's health check reports (g NULL) work it finds in
	 * an armed member without a host timestamp, which it does not count:
	 * nothing tells its lost event from one on its way.
	 */
	CQPOLL_TRACE_WAKE_RECOVERY,
};

/**
 * The trace hook: one callback per kind of event, each optional (NULL: not
 * traced). @p g is NULL for events of a CQ used without a group.
 */
struct cqpoll_trace_hook {
	/** An arm took effect on @p cq; @p missed: the device reported misses. */
	void (*arm)(void *arg, const struct cqpoll_cq *cq, int missed);
	/**
	 * The group's transition into sleep: poll-and-arm over @p active of
	 * its @p n CQs, which found @p found completions (0: it may sleep).
	 */
	void (*transition)(void *arg, const struct cqpoll_group *g,
			   uint32_t active, uint32_t n, uint32_t found);
	/** Going to sleep for up to @p timeout_ms: group @p g, or @p cq alone. */
	void (*sleep)(void *arg, const struct cqpoll_group *g,
		      const struct cqpoll_cq *cq, int timeout_ms);
	/**
	 * Woken by @p why after @p asleep_ns, with @p completions delivered
	 * by the wake-up.
	 */
	void (*wake)(void *arg, const struct cqpoll_group *g,
		     const struct cqpoll_cq *cq, enum cqpoll_trace_wake why,
		     uint64_t asleep_ns, uint32_t completions);
	/** The group's thread applied a mode change. */
	void (*mode_change)(void *arg, const struct cqpoll_group *g,
			    enum cqpoll_group_mode from, enum cqpoll_group_mode to);
	/**
	 * The adaptive policy decided @p action after an iteration that found
	 * @p completions.
	 */
	void (*policy_decision)(void *arg, const struct cqpoll_group *g,
				uint32_t completions,
				enum cqpoll_policy_action action);
	void *arg; /**< Passed to every callback. */
	/**
	 * @p cq failed (enum cqpoll_cq_state): reported once, on the CQ's
	 * consumer thread, when it latches the failure; @p g is its group
	 * or NULL; @p error is the state's errno.
	 */
	void (*cq_state)(void *arg, const struct cqpoll_group *g,
			 const struct cqpoll_cq *cq, enum cqpoll_cq_state state,
			 int error);
};

/**
 * Install the trace hook, replacing the previous one.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param hook
 *   The hook, or NULL for none. Not copied: it must stay valid, unchanged,
 *   until the process ends (a static object is the normal case).
 * @return
 *   0.
 *
 * Thread safety: safe from any thread; an event being reported through the
 * previous hook may still complete after this returns.
 */
__cqpoll_experimental
int cqpoll_trace_set_hook(const struct cqpoll_trace_hook *hook);

/**
 * The trace hook installed.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @return
 *   The hook, or NULL if none.
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
const struct cqpoll_trace_hook *cqpoll_trace_get_hook(void);

/**
 * Name of a wake-up reason: "event", "timeout", "xthread" or "recovery".
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param why
 *   The reason.
 * @return
 *   A static string; "unknown" for a value out of range.
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
const char *cqpoll_trace_wake_name(enum cqpoll_trace_wake why);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_TRACE_H */
