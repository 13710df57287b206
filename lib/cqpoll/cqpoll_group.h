/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_GROUP_H
#define CQPOLL_GROUP_H

/**
 * @file
 * Poll groups: one thread (a DPDK lcore, say) polls any number of CQs from any
 * drivers, hands completions to a per-CQ callback, and sleeps on all of them
 * at once when a policy says traffic stopped, without losing a wake-up.
 *
 * @code
 * struct cqpoll_group *g = cqpoll_group_create(NULL);  // adaptive mode
 * cqpoll_group_add(g, cq0, on_completions, ctx0);
 * cqpoll_group_add(g, cq1, on_completions, ctx1);
 * cqpoll_group_run(g);          // until cqpoll_group_stop(g) from elsewhere
 * cqpoll_group_destroy(g);
 * @endcode
 *
 * Going to sleep, the group calls cqpoll_poll_and_arm() on every CQ, and
 * sleeps only if every one returned 0 (empty and armed); then it waits on one
 * epoll fd over the CQs' event fds (one entry per distinct fd) and an eventfd
 * for cross-thread wake-ups. Every sleep is bounded by a safety-net timeout.
 * On wake it consumes the events of the CQs whose fds were ready and polls
 * those CQs first.
 *
 * The library does not depend on DPDK; run the group on an lcore by calling
 * cqpoll_group_run() from the lcore function.
 */

#include <stddef.h>
#include <stdint.h>

#include "cqpoll.h"
#include "cqpoll_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cqpoll_group;

/** How a group behaves when an iteration finds no completion. */
enum cqpoll_group_mode {
	/**
	 * Never sleep: poll the CQs in a loop (lowest latency, 100 % CPU).
	 * CQs idle for cold_us are armed and left to their events, which the
	 * loop collects without sleeping.
	 */
	CQPOLL_GROUP_MODE_BUSY = 0,
	/** Go to sleep after the first iteration that finds nothing. */
	CQPOLL_GROUP_MODE_INTERRUPT,
	/** Ask the group's policy, after every iteration, whether to sleep. */
	CQPOLL_GROUP_MODE_ADAPTIVE,
};

/**
 * Callback that receives a CQ's completions, on the group's thread.
 *
 * It must not call cqpoll_group_add(), cqpoll_group_remove(),
 * cqpoll_group_run_once() or cqpoll_group_run() on its group (they return
 * -EBUSY), nor poll @p cq itself.
 */
typedef void (*cqpoll_group_cb_t)(struct cqpoll_cq *cq,
				  const struct cqpoll_completion *c,
				  unsigned int n, void *arg);

/**
 * Callback told that a CQ of the group failed (enum cqpoll_cq_state), on the
 * group's thread, once per CQ, as rte_eth_dev_callback_register() tells an
 * application of a port's removal. The group has already removed @p cq
 * (cqpoll_group_remove()) and goes on with its other CQs: @p cq belongs to
 * the application again, which may destroy it right here
 * (cqpoll_cq_destroy()) or later. The completions the CQ held before it
 * failed (flushed work among them) were delivered to its completion
 * callback first.
 *
 * It must not call cqpoll_group_add(), cqpoll_group_remove(),
 * cqpoll_group_run_once() or cqpoll_group_run() on its group (they return
 * -EBUSY). It may destroy the group (cqpoll_group_destroy()): the library
 * call that ran the callback still walks the group, so the group is freed
 * when that call returns, the callback is not called for other CQs that
 * failed with @p cq (they leave the group, unreported), and that call
 * returns -ECANCELED (cqpoll_group_run_once(), cqpoll_group_sleep_prepare(),
 * cqpoll_group_sleep_finish()) or 0 (cqpoll_group_run()); nothing may use
 * the group after it.
 */
typedef void (*cqpoll_group_failure_cb_t)(struct cqpoll_group *g,
					  struct cqpoll_cq *cq,
					  const struct cqpoll_cq_failure *f,
					  void *arg);

/** Configuration of a group; zero fields take defaults. */
struct cqpoll_group_conf {
	enum cqpoll_group_mode mode;     /**< Initial mode. */
	/** Adaptive-mode policy; NULL: cqpoll_policy_adaptive(). */
	const struct cqpoll_policy_ops *policy;
	const char *policy_args;         /**< Parameters of the policy, or NULL. */
	/**
	 * Safety-net timeout of every sleep, 1 .. 3600000 ms; 0: the build's
	 * default (meson option wait_timeout_ms, 100 ms unless the build set
	 * another). A sleep that nothing else ends ends after half of it at
	 * least and all of it at most (the group's alarm, set once per half
	 * period, not a timer per sleep).
	 */
	uint32_t wait_timeout_ms;
	/** Completions read per CQ poll, 1 .. 1024; 0: 32. */
	uint32_t burst;
	/** CQPOLL_GROUP_F_* flags. */
	uint32_t flags;
	/**
	 * NUMA socket of the group's state and completion buffer, with
	 * CQPOLL_GROUP_F_SOCKET_ID (cqpoll_alloc.h); without it, the C
	 * library's allocator (first touch).
	 */
	int socket_id;
	/**
	 * Busy and adaptive modes: a CQ that found nothing for this many µs
	 * goes cold: the group arms it (cqpoll_poll_and_arm()) and stops
	 * polling it until its event fires, so polling costs follow the CQs
	 * with traffic, not the size of the group. 0: the build default
	 * (1000 µs); CQPOLL_GROUP_COLD_NEVER: poll every CQ always.
	 */
	uint32_t cold_us;
};

/** cqpoll_group_conf::socket_id is set. */
#define CQPOLL_GROUP_F_SOCKET_ID (1u << 0)

/** cqpoll_group_conf::cold_us: never stop polling an idle CQ. */
#define CQPOLL_GROUP_COLD_NEVER UINT32_MAX

/**
 * Create a poll group.
 *
 * @param conf
 *   Configuration; NULL for defaults (adaptive mode, adaptive policy).
 * @return
 *   The group, or NULL with errno set: EINVAL (bad mode, timeout, burst,
 *   flags, socket that does not exist, or policy parameters), ENOMEM, or an
 *   errno from epoll_create1(2) or eventfd(2). The reason is logged.
 *
 * Thread safety: safe from any thread.
 */
struct cqpoll_group *cqpoll_group_create(const struct cqpoll_group_conf *conf);

/**
 * Destroy a group. Its CQs are not destroyed; they leave the group (and may
 * then be destroyed or added to a group) and may be left armed.
 *
 * From the group's failure callback (cqpoll_group_failure_cb_t) the group is
 * freed when the library call that ran the callback returns (-ECANCELED, or
 * 0 from cqpoll_group_run()). From a completion callback (cqpoll_group_cb_t)
 * it is refused, with an error in the log, and the group stays as it was:
 * stop it (cqpoll_group_stop()) and destroy it once cqpoll_group_run()
 * returned.
 *
 * @param g
 *   The group; NULL is ignored.
 *
 * Thread safety: no other call may use @p g during or after this one; the
 * group must not be running, but for its own failure callback.
 */
void cqpoll_group_destroy(struct cqpoll_group *g);

/**
 * Add a CQ to a group. CQs sharing an event fd share one epoll entry.
 *
 * @param g
 *   The group.
 * @param cq
 *   The CQ; only the group may poll it until it is removed, and it cannot
 *   be destroyed while in the group (cqpoll_cq_destroy() returns -EBUSY).
 * @param cb
 *   Callback receiving the CQ's completions.
 * @param arg
 *   Passed to @p cb.
 * @return
 *   - 0: added.
 *   - -EINVAL: NULL @p g, @p cq or @p cb.
 *   - -EBUSY: @p cq is already in a group, this one or another; or its
 *     shared event channel (cqpoll_sw_cq_create_on()) is served by another
 *     group: one group per channel; or called from a callback of the
 *     group, or between cqpoll_group_sleep_prepare() and
 *     cqpoll_group_sleep_finish().
 *   - -EPERM: the group is released (cqpoll_group_release()), or another
 *     thread adopted it (cqpoll_group_adopt()).
 *   - -ENOMEM, or -errno from the CQ's event fd or epoll_ctl(2).
 *
 * Thread safety: the group's thread only (or any single thread while the
 * group is not running).
 */
int cqpoll_group_add(struct cqpoll_group *g, struct cqpoll_cq *cq,
		     cqpoll_group_cb_t cb, void *arg);

/**
 * Remove a CQ from a group. The CQ keeps its state (it may be armed).
 *
 * @param g
 *   The group.
 * @param cq
 *   The CQ.
 * @return
 *   0, -EINVAL for NULL arguments, -ENOENT if @p cq is not in the group,
 *   -EBUSY if called from a callback of the group, -EPERM if the group is
 *   released (cqpoll_group_release()) or adopted by another thread.
 *
 * Thread safety: the group's thread only (or any single thread while the
 * group is not running).
 */
int cqpoll_group_remove(struct cqpoll_group *g, struct cqpoll_cq *cq);

/**
 * Number of CQs in a group.
 *
 * @param g
 *   The group.
 * @return
 *   The count, or -EINVAL if @p g is NULL.
 *
 * Thread safety: the group's thread only.
 */
int cqpoll_group_count(const struct cqpoll_group *g);

/**
 * Change the mode of a running group; it takes effect at its next iteration
 * (a sleeping group is woken up).
 *
 * @param g
 *   The group.
 * @param mode
 *   The new mode.
 * @return
 *   0, or -EINVAL for a NULL @p g or a bad @p mode, or -errno from write(2).
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_group_set_mode(struct cqpoll_group *g, enum cqpoll_group_mode mode);

/**
 * The mode last set.
 *
 * @param g
 *   The group.
 * @return
 *   The mode, or -EINVAL if @p g is NULL.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_group_get_mode(const struct cqpoll_group *g);

/**
 * Name of a mode: "busy", "interrupt" or "adaptive".
 *
 * @param mode
 *   The mode.
 * @return
 *   A static string; "unknown" for a value out of range.
 *
 * Thread safety: safe from any thread.
 */
const char *cqpoll_group_mode_name(enum cqpoll_group_mode mode);

/**
 * Run one iteration: poll every CQ once and hand completions to callbacks;
 * if nothing was found and the mode (or the adaptive policy) says so, arm
 * every CQ and sleep until an event, a cross-thread wake-up or the safety-net
 * timeout; on a CQ event, poll the CQs whose events fired before returning.
 *
 * @param g
 *   The group.
 * @return
 *   - > 0: busy: completions processed.
 *   - 0: idle: nothing processed (the call may have slept).
 *   - -EINVAL: @p g is NULL.
 *   - -EBUSY: called from a callback of the group, or between
 *     cqpoll_group_sleep_prepare() and cqpoll_group_sleep_finish().
 *   - -EPERM: the group is released (cqpoll_group_release()), or another
 *     thread adopted it (cqpoll_group_adopt()).
 *   - -ECANCELED: the failure callback destroyed the group, which is freed:
 *     do not call it again.
 *   - other < 0: -errno from epoll_wait(2): a failure of the group itself.
 *     A CQ that fails (its polls, arm or events return an error, enum
 *     cqpoll_cq_state) is not the group's failure: the group removes it,
 *     tells the failure callback (cqpoll_group_failure_cb_register()) and
 *     runs on with the others.
 *
 * Thread safety: one thread per group, the group's thread.
 */
int cqpoll_group_run_once(struct cqpoll_group *g);

/**
 * Register the callback told of each CQ of the group that fails.
 *
 * Without one, a failed CQ is still removed from the group, and logged.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param g
 *   The group.
 * @param cb
 *   The callback.
 * @param arg
 *   Passed to @p cb.
 * @return
 *   0, -EINVAL for a NULL @p g or @p cb, -EEXIST if a callback is already
 *   registered (unregister it first), -EBUSY if called from a callback of
 *   the group.
 *
 * Thread safety: the group's thread only (or any single thread while the
 * group is not running).
 */
__cqpoll_experimental
int cqpoll_group_failure_cb_register(struct cqpoll_group *g,
				     cqpoll_group_failure_cb_t cb, void *arg);

/**
 * Unregister the failure callback.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param g
 *   The group.
 * @param cb
 *   The callback registered.
 * @param arg
 *   The argument it was registered with.
 * @return
 *   0, -EINVAL for a NULL @p g, -ENOENT if @p cb and @p arg are not the
 *   registered pair, -EBUSY if called from a callback of the group.
 *
 * Thread safety: as cqpoll_group_failure_cb_register().
 */
__cqpoll_experimental
int cqpoll_group_failure_cb_unregister(struct cqpoll_group *g,
				       cqpoll_group_failure_cb_t cb, void *arg);

/**
 * The group's event fd, to wait for the group inside another event loop:
 * an epoll fd over the CQs' event fds, the group's cross-thread eventfd and
 * its safety-net alarm (a timerfd due within the group's wait_timeout_ms
 * of a prepared sleep's start, half of it at least), readable while any of
 * them is: a loop's wait with no timeout of its own still ends in time for
 * the safety net. Register it (for input) in the other loop,
 * e.g. DPDK's per-thread rte_epoll (see cqpoll_dpdk_epoll.h), and wait only
 * between cqpoll_group_sleep_prepare() returning 0 and
 * cqpoll_group_sleep_finish(). Never read it or wait on it otherwise.
 *
 * @param g
 *   The group.
 * @return
 *   The fd (owned by the group, valid until cqpoll_group_destroy()), or
 *   -EINVAL if @p g is NULL.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_group_event_fd(const struct cqpoll_group *g);

/**
 * First half of a sleep in an external event loop: run the group's
 * transition (cqpoll_poll_and_arm() on every CQ that is not known to be
 * armed), delivering what it finds.
 *
 * @code
 * for (;;) {
 *     if (cqpoll_group_run_once(g) > 0 || rx_burst(...) > 0)  // busy mode
 *         continue;
 *     if (cqpoll_group_sleep_prepare(g) != 0)  // found work: poll on
 *         continue;
 *     rte_eth_dev_rx_intr_enable(port, queue);
 *     rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, n, timeout_ms);
 *     cqpoll_group_sleep_finish(g);             // whatever woke us
 * }
 * @endcode
 *
 * @param g
 *   The group, in any mode (the external loop decides when to sleep; run it
 *   in busy mode so that cqpoll_group_run_once() never sleeps by itself).
 * @return
 *   - 0: every CQ is armed and empty: the caller may now block on
 *     cqpoll_group_event_fd() (the group's alarm bounds that wait) and must
 *     then call cqpoll_group_sleep_finish().
 *   - > 0: completions delivered: do not sleep.
 *   - -EINVAL: @p g is NULL.
 *   - -EBUSY: called from a callback of the group.
 *   - -EALREADY: a prepared sleep was not finished.
 *   - -EPERM: the group is released (cqpoll_group_release()), or another
 *     thread adopted it (cqpoll_group_adopt()).
 *   - -EAGAIN: a CQ could not be armed (its device kept reporting missed
 *     completions, see cqpoll_poll_and_arm()): do not sleep; poll on.
 *   - -ECANCELED: the failure callback destroyed the group, which is freed.
 *   - other < 0: -errno from a CQ.
 *
 * Thread safety: one thread per group, the group's thread.
 */
int cqpoll_group_sleep_prepare(struct cqpoll_group *g);

/**
 * Second half of a sleep in an external event loop, after the wait returned
 * for any reason (a CQ event, another fd, a timeout): consume the events of
 * the group's ready CQs and poll those CQs, as the group's own wake does. A
 * sleep that no CQ event ended, and that the group's alarm ended or that
 * lasted at least the group's wait_timeout_ms, counts as a timeout and runs
 * the safety net (cqpoll_group_stats::timeout_recoveries).
 *
 * @param g
 *   The group.
 * @return
 *   - >= 0: completions delivered.
 *   - -EINVAL: @p g is NULL, or no sleep was prepared.
 *   - -EBUSY: called from a callback of the group.
 *   - -EPERM: the group is released (cqpoll_group_release()), or another
 *     thread adopted it (cqpoll_group_adopt()).
 *   - -ECANCELED: the failure callback destroyed the group, which is freed.
 *   - other < 0: -errno from a CQ or epoll_wait(2).
 *
 * Thread safety: one thread per group, the group's thread.
 */
int cqpoll_group_sleep_finish(struct cqpoll_group *g);

/** cqpoll_group_run(): the group was released for a move (EXPERIMENTAL). */
#define CQPOLL_GROUP_RUN_RELEASED 1

/**
 * Run iterations until cqpoll_group_stop() is called, or until a move is
 * requested (cqpoll_group_move_request()).
 *
 * @param g
 *   The group.
 * @return
 *   - 0: stopped (the stop request is then cleared; a move requested too
 *     stays pending, cqpoll_group_move_pending()), or the failure callback
 *     destroyed the group (then freed: do not use it again).
 *   - CQPOLL_GROUP_RUN_RELEASED: a move was requested, and the group was
 *     released between two iterations (cqpoll_group_release()): this
 *     thread must not touch it any more; another adopts it
 *     (cqpoll_group_adopt()). Only with the EXPERIMENTAL move API.
 *   - -EPERM: the group is released, not adopted by this thread.
 *   - other < 0: the return of cqpoll_group_run_once() that ended the
 *     loop: a failure of the group itself, never of one of its CQs.
 *
 * Thread safety: one thread per group, the group's thread.
 */
int cqpoll_group_run(struct cqpoll_group *g);

/**
 * Ask the thread that runs a group to let it go at its next safe point, to
 * move it to another thread: cqpoll_group_run() releases it and returns
 * CQPOLL_GROUP_RUN_RELEASED; a thread that runs the group by
 * cqpoll_group_run_once() (several groups on one lcore) sees the request
 * with cqpoll_group_move_pending() and calls cqpoll_group_release(). A
 * sleeping group is woken for it (once: a thread that never looks at the
 * request runs the group on as before).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param g
 *   The group.
 * @return
 *   0, -EINVAL if @p g is NULL, or -errno from write(2).
 *
 * Thread safety: safe from any thread while the group exists.
 */
__cqpoll_experimental
int cqpoll_group_move_request(struct cqpoll_group *g);

/**
 * Whether a move of the group was requested and not yet carried out by a
 * release.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param g
 *   The group.
 * @return
 *   1 if a move is pending, 0 if not, -EINVAL if @p g is NULL.
 *
 * Thread safety: safe from any thread while the group exists.
 */
__cqpoll_experimental
int cqpoll_group_move_pending(const struct cqpoll_group *g);

/**
 * Let a group go, to be run by another thread (cqpoll_group_adopt()). The
 * group keeps all its state: its members, which of them are armed and which
 * still need poll-and-arm, the events pending on its event fd, its policy
 * and counters, and a sleep prepared by cqpoll_group_sleep_prepare() (the
 * adopting thread then waits on cqpoll_group_event_fd() and calls
 * cqpoll_group_sleep_finish()). No completion and no wake-up is lost by the
 * move: a CQ armed before it announces its work with an event after it,
 * and every other CQ is polled and armed by the new thread before its
 * group sleeps. Between release and adoption nobody polls the group: its
 * completions wait in their CQs. Clears a pending move request.
 *
 * Call it between iterations, not from a callback. In DPDK, take the
 * group's event fd out of the thread's rte_epoll set first (and add it to
 * the new thread's after the adoption).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param g
 *   The group.
 * @return
 *   0: released: this thread must not call the group's thread-only
 *   functions any more (they return -EPERM); -EINVAL if @p g is NULL;
 *   -EALREADY if it is released already; -EPERM if another thread
 *   adopted the group (cqpoll_group_adopt()); -EBUSY if called from a
 *   callback of the group.
 *
 * Thread safety: the group's thread only. The release publishes the
 * group's state to the thread that adopts it (release/acquire).
 */
__cqpoll_experimental
int cqpoll_group_release(struct cqpoll_group *g);

/**
 * Take a group released by its thread (cqpoll_group_release()): the calling
 * thread is the group's thread from now on, and runs it as its own: the
 * group's thread-only calls and its release from any other thread return
 * -EPERM until this thread releases it. A thread that ends holding a group
 * leaves it to cqpoll_group_destroy() only.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param g
 *   The group.
 * @return
 *   - 0: adopted.
 *   - 1: adopted in a prepared sleep: every CQ of the group is armed and
 *     empty or has its event pending; wait on cqpoll_group_event_fd() (or
 *     not) and call cqpoll_group_sleep_finish() before anything else.
 *   - -EINVAL: @p g is NULL.
 *   - -EBUSY: the group is not released (another thread runs it, or
 *     another thread adopted it first).
 *
 * Thread safety: any thread; one adopts a released group.
 */
__cqpoll_experimental
int cqpoll_group_adopt(struct cqpoll_group *g);

/**
 * Ask cqpoll_group_run() to return, waking the group if it sleeps. A stop
 * requested before cqpoll_group_run() starts makes it return at once.
 *
 * @param g
 *   The group.
 * @return
 *   0, -EINVAL if @p g is NULL, or -errno from write(2).
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_group_stop(struct cqpoll_group *g);

/**
 * Wake the group if it sleeps, or make its next sleep return at once: for
 * new work the group's thread must see (counted as a cross-thread wake-up).
 * A group of one asleep in its member's own wait (poll-group.md, "The
 * lone-member sleep") is woken through the member's driver (io_uring: a
 * CQE posted from a one-off ring, a few system calls more for the caller;
 * UCX: ucp_worker_signal()); so are cqpoll_group_stop(),
 * cqpoll_group_set_mode() and cqpoll_group_move_request().
 *
 * @param g
 *   The group.
 * @return
 *   0, -EINVAL if @p g is NULL, or -errno from write(2) or from the
 *   member's driver wake-up.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_group_wakeup(struct cqpoll_group *g);

#ifdef __cplusplus
}
#endif

/* Counters and description: the monitoring half of the API. */
#include "cqpoll_group_stats.h"

#endif /* CQPOLL_GROUP_H */
