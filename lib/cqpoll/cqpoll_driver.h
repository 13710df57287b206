/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_DRIVER_H
#define CQPOLL_DRIVER_H

/**
 * @file
 * Driver SDK: what a cqpoll driver implements and the calls it makes.
 *
 * Applications do not include this header. A driver creates its device-side
 * state, then wraps it in a CQ handle with cqpoll_cq_alloc(), giving a const
 * ops table and the burst poll function it chose for this CQ. The core owns
 * the transition to sleep (cqpoll_poll_and_arm()); drivers only poll, arm and
 * deliver events, and declare what their arm guarantees.
 */

#include <errno.h>
#include <stdint.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cqpoll_monitor_cond;

/**
 * Control operations of a driver, one const table per driver. Optional
 * members may be NULL; cqpoll_cq_alloc() replaces them with defaults so the
 * core never tests for NULL.
 */
struct cqpoll_driver_ops {
	const char *name; /**< Driver name, e.g. "sw". Mandatory. */
	/**
	 * Request one event for the next completion. Mandatory.
	 * @return 0 when armed; for CQPOLL_ARM_REPORT_MISSED drivers, > 0 when
	 *   completions may have been missed (the CQ is then not assumed armed);
	 *   < 0 -errno.
	 */
	int (*arm)(void *priv);
	/** Pollable fd readable while an event is pending. Mandatory. */
	int (*event_fd)(void *priv);
	/**
	 * Consume pending events without blocking. Mandatory.
	 * @return number consumed (> 0), 0 if none, < 0 -errno.
	 */
	int (*event_get)(void *priv);
	/** Acknowledge @p n consumed events. Optional: default does nothing. */
	int (*event_ack)(void *priv, unsigned int n);
	/** Release the driver's state. Mandatory. */
	void (*destroy)(void *priv);
	/**
	 * Where the next completion will appear, for a power-monitor wait
	 * (cqpoll_monitor.h): its address and the test that says it arrived.
	 * Optional: NULL means the driver cannot tell (-ENOTSUP).
	 * @return 0; -EAGAIN if completions are already visible.
	 */
	int (*get_monitor_addr)(void *priv, struct cqpoll_monitor_cond *cond);
};

/** Per-CQ parameters given to cqpoll_cq_alloc(). */
struct cqpoll_cq_params {
	enum cqpoll_arm_semantics arm; /**< What this CQ's arm guarantees. */
	uint32_t size;                 /**< Entries the CQ holds. */
	uint32_t event_ack_batch;      /**< 0: the build-time default. */
	uint32_t flags;                /**< CQPOLL_CQ_PARAMS_F_* flags. */
	/**
	 * NUMA socket of the handle, with CQPOLL_CQ_PARAMS_F_SOCKET_ID
	 * (cqpoll_alloc.h); without it, the C library's allocator.
	 */
	int socket_id;
};

/** cqpoll_cq_params::socket_id is set. */
#define CQPOLL_CQ_PARAMS_F_SOCKET_ID (1u << 0)

/**
 * Wrap a driver's CQ in a handle.
 *
 * @param ops
 *   The driver's ops table; must outlive the CQ.
 * @param poll
 *   The burst poll function chosen for this CQ (resolved once, here).
 * @param priv
 *   Driver state passed to @p poll and every op.
 * @param params
 *   Arm semantics, size and ack batching.
 * @return
 *   The handle, or NULL with errno set (EINVAL: a mandatory op or argument
 *   is missing, or the socket does not exist; ENOMEM). The reason is logged.
 *
 * Thread safety: safe from any thread.
 */
struct cqpoll_cq *cqpoll_cq_alloc(const struct cqpoll_driver_ops *ops,
				  cqpoll_poll_burst_t poll, void *priv,
				  const struct cqpoll_cq_params *params);

/**
 * The driver state given to cqpoll_cq_alloc().
 *
 * @param cq
 *   The CQ.
 * @return
 *   The pointer, or NULL if @p cq is NULL.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
void *cqpoll_cq_priv(const struct cqpoll_cq *cq);

/**
 * The ops table given to cqpoll_cq_alloc(), so a driver can check that a
 * handle is one of its own.
 *
 * @param cq
 *   The CQ.
 * @return
 *   The table, or NULL if @p cq is NULL.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
const struct cqpoll_driver_ops *cqpoll_cq_driver(const struct cqpoll_cq *cq);

/**
 * The driver state of @p cq, if @p ops is its driver: what every driver's
 * accessor (cqpoll_<driver>_cq_...()) checks first, with one rule for the
 * caller's errors.
 *
 * @param cq
 *   A CQ handle, or NULL.
 * @param ops
 *   The calling driver's table.
 * @return
 *   The pointer given to cqpoll_cq_alloc(), or NULL with errno set to
 *   EINVAL if @p cq is NULL or another driver's handle.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
static inline void *
cqpoll_cq_priv_of(const struct cqpoll_cq *cq, const struct cqpoll_driver_ops *ops)
{
	if (cq == NULL || cqpoll_cq_driver(cq) != ops) {
		errno = EINVAL;
		return NULL;
	}
	return cqpoll_cq_priv(cq);
}

/**
 * Report that a CQ failed (doc/guides/contract.md, section 11): the first
 * report fixes the CQ's state for good. The driver must then, from its next
 * poll on, deliver what the CQ still holds and afterwards return the
 * state's errno (or any negative value: the core returns the state's), fail
 * its arm, and make the CQ's event fd readable if a consumer may be asleep
 * on it, so that nobody sleeps on a dead CQ. A driver that only learns of
 * the failure from a failed poll or arm need not call this: the core latches
 * such a return as the state its errno names (cqpoll_cq_state_errno()).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   The CQ.
 * @param error
 *   The failure as a negative errno, mapped to a state as
 *   cqpoll_cq_state_errno() lists; any other value is CQPOLL_CQ_STATE_ERROR.
 * @param cause
 *   What the driver saw (e.g. "IBV_EVENT_CQ_ERR"): a static string, or NULL.
 * @return
 *   - 0: the CQ is now failed.
 *   - -EALREADY: it had failed before; its state is unchanged.
 *   - -EINVAL: @p cq is NULL or @p error is not negative.
 *
 * Thread safety: safe from any thread while the CQ exists (an async event
 * reader may report a CQ that another thread polls). The consumer may learn
 * of the failure, and be told (a group's failure callback), before this
 * call returns (it wakes the consumer, cqpoll_cq_set_wake()): the CQ must
 * not be destroyed until it has returned.
 */
int cqpoll_cq_fail(struct cqpoll_cq *cq, int error, const char *cause);

/**
 * Make the CQ's event fd readable, from any thread, without consuming
 * anything: what cqpoll_cq_fail() calls after a report, so that a thread
 * asleep on the fd (cqpoll_cq_wait(), a poll group) wakes, polls what is
 * left and gets the errno. The driver's event_get must then take the
 * wake-up like an event (return > 0 or 0; the core checks the state).
 * A poll group asleep in its lone member's own wait (cqpoll_cq_set_wait())
 * calls it too, for each cross-thread wake-up of the group (stop, mode
 * change, move request, cqpoll_group_wakeup()): it may be called again and
 * again, and each call must end the wait it finds, or else the next one;
 * a wait takes the wake-ups asked before or during it, so that the wait
 * after sleeps again.
 *
 * @param priv
 *   The driver state given to cqpoll_cq_alloc().
 * @return
 *   0, or -errno (logged by the core, the report stands).
 */
typedef int (*cqpoll_cq_wake_t)(void *priv);

/**
 * Give the core the driver's wake-up (cqpoll_cq_wake_t), so that a failure
 * reported with cqpoll_cq_fail() from any thread wakes a sleeper on the CQ.
 * Drivers whose event fd they can make readable (an eventfd: sw, io_uring;
 * a worker they can signal: UCX) call it right after cqpoll_cq_alloc(),
 * before the CQ is shared; without it a report is seen at the CQ's next
 * poll (doc/guides/contract.md, section 11).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   The CQ, just allocated.
 * @param wake
 *   The driver's wake-up, or NULL for none.
 * @return
 *   0, or -EINVAL if @p cq is NULL.
 *
 * Thread safety: the creating thread, before the CQ is used.
 */
int cqpoll_cq_set_wake(struct cqpoll_cq *cq, cqpoll_cq_wake_t wake);

/**
 * Sleep on the CQ's own wait object, for cqpoll_cq_wait(): what a driver
 * gives when its stack has a blocking wait cheaper than a poll(2) on the
 * event fd and the consumption of the event that follows (io_uring:
 * io_uring_enter() with GETEVENTS, which is one system call where the fd
 * costs a poll and a read). The core calls it only for a CQ that
 * cqpoll_poll_and_arm() left empty and armed, on the consumer thread.
 *
 * It must return once anything the arm covers is visible to the next poll,
 * once the driver's wake-up (cqpoll_cq_set_wake()) was called, or after
 * @p timeout_ms, whichever comes first: a wait that misses a completion the
 * arm covers loses a wake-up. A return > 0 takes the CQ's event, as
 * event_get returning > 0 would: the arm is spent, and the driver leaves
 * its event objects so that a later event_get, poll(2) or epoll on the
 * event fd is at worst woken once for nothing, never kept asleep.
 *
 * @param priv
 *   The driver state given to cqpoll_cq_alloc().
 * @param timeout_ms
 *   The longest sleep, 1 to 3600000 ms.
 * @return
 *   > 0: woken (an event, or the driver's wake-up); 0: the timeout expired;
 *   -EINTR: a signal ended the sleep; other < 0: -errno, the CQ has failed
 *   (the core reports it with cqpoll_cq_fail()).
 */
typedef int (*cqpoll_cq_wait_t)(void *priv, int timeout_ms);

/**
 * Give the core the driver's own wait (cqpoll_cq_wait_t), used by
 * cqpoll_cq_wait() instead of a poll(2) on the event fd followed by
 * event_get, and by a poll group whose only member the CQ is, where the
 * driver gave a wake-up too (cqpoll_cq_set_wake()): the group then sleeps
 * in this wait instead of its epoll. Larger groups wait on the event fd.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   The CQ, just allocated.
 * @param wait
 *   The driver's wait, or NULL for the default (poll(2) on the event fd).
 * @return
 *   0, or -EINVAL if @p cq is NULL.
 *
 * Thread safety: the creating thread, before the CQ is used.
 */
int cqpoll_cq_set_wait(struct cqpoll_cq *cq, cqpoll_cq_wait_t wait);

/**
 * A driver's answer to "which CQs of this shared event fd fired": for CQs
 * that share one event fd (a completion channel), the consumer of the fd
 * asks once per readiness instead of asking each CQ of the fd in turn
 * (verbs: ibv_get_cq_event() names the CQ). The driver consumes the fd's
 * pending events and stores the CQs whose arm fired, each once with its
 * event consumed (the core counts one event per CQ), FIFO. Where it stores
 * @p max CQs and more remain, it leaves the fd readable (or the caller asks
 * again). A CQ whose event was already taken by its own event_get is not
 * stored again.
 *
 * @param priv
 *   The driver state of any CQ on the fd.
 * @param fired
 *   Where to store the CQs that fired.
 * @param max
 *   Room in @p fired (> 0).
 * @return
 *   The number stored (0..@p max), or -errno: the fd failed (the caller
 *   polls each CQ of the fd, as after a wake-up).
 */
typedef int (*cqpoll_cq_fired_t)(void *priv, struct cqpoll_cq **fired,
				 unsigned int max);

/**
 * Give the core the driver's "which CQs fired" (cqpoll_cq_fired_t) for a
 * CQ on a shared event fd, so that a poll group whose fd is readable polls
 * the CQs that fired, O(fired), instead of asking each CQ of the fd
 * (O(CQs on the fd)). Without it the group asks each CQ's event_get. Every
 * CQ of one fd must give the same function (or none).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   The CQ, just allocated, not yet in a group.
 * @param fired
 *   The driver's function, or NULL for none.
 * @return
 *   0, or -EINVAL if @p cq is NULL.
 *
 * Thread safety: the creating thread, before the CQ is used.
 */
int cqpoll_cq_set_fired(struct cqpoll_cq *cq, cqpoll_cq_fired_t fired);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_DRIVER_H */
