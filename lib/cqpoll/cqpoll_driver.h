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
#include <stddef.h>
#include <stdint.h>

#include "cqpoll.h"
#include "cqpoll_log.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cqpoll_monitor_cond;
struct cqpoll_cq;

/**
 * Make the CQ's event fd readable, from any thread, without consuming
 * anything: what cqpoll_cq_fail() calls after a report, so that a thread
 * asleep on the fd (cqpoll_cq_wait(), a poll group) wakes, polls what is
 * left and gets the errno. The driver's event_get must then take the
 * wake-up like an event (return > 0 or 0; the core checks the state).
 * A poll group asleep in its lone member's own wait (cqpoll_driver_ops::wait)
 * calls it too, for each cross-thread wake-up of the group (stop, mode
 * change, move request, cqpoll_group_wakeup()): it may be called again and
 * again, and each call must end the wait it finds, or else the next one;
 * a wait takes the wake-ups asked before or during it, so that the wait
 * after sleeps again. The arm may take one asked before it (libfabric's
 * fi_trywait() resets what fi_cq_signal() set): the core looks at the
 * CQ's state after every arm, so a report's wake-up that an arm took is
 * not needed.
 *
 * @param priv
 *   The driver state given to cqpoll_cq_alloc().
 * @return
 *   0, or -errno (logged by the core, the report stands).
 */
typedef int (*cqpoll_cq_wake_t)(void *priv);

/**
 * Sleep on the CQ's own wait object, for cqpoll_cq_wait(): what a driver
 * gives when its stack has a blocking wait cheaper than a poll(2) on the
 * event fd and the consumption of the event that follows (io_uring:
 * io_uring_enter() with GETEVENTS, which is one system call where the fd
 * costs a poll and a read). The core calls it only for a CQ that
 * cqpoll_poll_and_arm() left empty and armed, on the consumer thread.
 *
 * It must return once anything the arm covers is visible to the next poll,
 * once the driver's wake-up (cqpoll_driver_ops::wake) was called, or after
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
 * Control operations of a driver, one const table per driver. Optional
 * members may be NULL.
 *
 * The table grows at its end and says how large it is, as libfabric's
 * fi_ops tables: a driver sets @p size to CQPOLL_DRIVER_OPS_SIZE, the size
 * its header gives the table. cqpoll_cq_alloc() takes a table of
 * CQPOLL_DRIVER_OPS_SIZE_MIN bytes (the oldest layout it knows) up to its
 * own size, members the table lacks being NULL; and a larger one, from a
 * driver built against a newer header, if every byte past this library's
 * table is zero (the driver gives none of the ops this library does not
 * know). It refuses any other table with EPROTO, logging both sizes.
 */
struct cqpoll_driver_ops {
	/** sizeof(struct cqpoll_driver_ops) for the driver. Mandatory. */
	size_t size;
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
	/**
	 * The driver's cross-thread wake-up (cqpoll_cq_wake_t), so that a
	 * failure reported with cqpoll_cq_fail() from any thread wakes a
	 * sleeper on the CQ. Drivers whose event fd they can make readable (an
	 * eventfd: sw, io_uring; a worker or CQ they can signal: UCX,
	 * libfabric) give it.
	 * Optional: without it a report is seen at the CQ's next poll
	 * (contract.md, section 11).
	 */
	cqpoll_cq_wake_t wake;
	/**
	 * The driver's own sleep (cqpoll_cq_wait_t), used by cqpoll_cq_wait()
	 * instead of a poll(2) on the event fd followed by event_get, and by a
	 * poll group whose only member the CQ is, where the driver gives @p wake
	 * too: the group then sleeps in this wait instead of its epoll. Larger
	 * groups wait on the event fd. Optional; a CQ created with
	 * CQPOLL_CQ_PARAMS_F_NO_WAIT does without it.
	 */
	cqpoll_cq_wait_t wait;
	/**
	 * The driver's "which CQs fired" (cqpoll_cq_fired_t) for CQs on a
	 * shared event fd, so that a poll group whose fd is readable polls the
	 * CQs that fired, O(fired), instead of asking each CQ of the fd. Every
	 * CQ of one fd must have it (or none). Optional; a CQ created with
	 * CQPOLL_CQ_PARAMS_F_NO_FIRED (an event fd of its own) does without it,
	 * and the group asks its event_get.
	 */
	cqpoll_cq_fired_t fired;
};

/** The size of the table this header describes: what a driver sets. */
#define CQPOLL_DRIVER_OPS_SIZE sizeof(struct cqpoll_driver_ops)

/**
 * The smallest table cqpoll_cq_alloc() takes: the first one with a size
 * (through the fired op). Tables of a driver built against an older
 * header are refused.
 */
#define CQPOLL_DRIVER_OPS_SIZE_MIN \
	(offsetof(struct cqpoll_driver_ops, fired) + sizeof(cqpoll_cq_fired_t))

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
 * This CQ does without its table's wait (cqpoll_driver_ops::wait), e.g.
 * where the kernel lacks what that wait needs: it sleeps on its event fd.
 */
#define CQPOLL_CQ_PARAMS_F_NO_WAIT (1u << 1)
/**
 * This CQ has an event fd of its own: its table's fired
 * (cqpoll_driver_ops::fired), for CQs that share one, does not apply.
 */
#define CQPOLL_CQ_PARAMS_F_NO_FIRED (1u << 2)

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
 *   is missing, or the socket does not exist; EPROTO: the table's size is
 *   one this library does not take, see struct cqpoll_driver_ops; ENOMEM).
 *   The reason is logged.
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
 * call returns (it wakes the consumer, cqpoll_driver_ops::wake): the CQ must
 * not be destroyed until it has returned.
 */
__cqpoll_experimental
int cqpoll_cq_fail(struct cqpoll_cq *cq, int error, const char *cause);

/**
 * @name Driver SDK calls (version node CQPOLL_SDK_MAJOR.MINOR)
 *
 * What a driver library calls in libcqpoll beyond the functions above. These
 * symbols are in a version node named after the libcqpoll version they
 * belong to (doc/guides/driver-sdk.md): a driver library built against one
 * libcqpoll version asks for that node, and the dynamic loader refuses to
 * load it with a libcqpoll of another version ("version `CQPOLL_SDK_0.5'
 * not found") instead of letting it call an SDK that changed. Applications
 * do not call them.
 * @{
 */

/**
 * CLOCK_MONOTONIC in ns: the host timestamp of completions
 * (CQPOLL_COMPLETION_F_TIMESTAMP), and what poll groups measure with.
 *
 * @return
 *   The time.
 *
 * Thread safety: safe from any thread.
 */
uint64_t cqpoll_now_ns(void);

/**
 * Replace the burst poll of @p cq, chosen at cqpoll_cq_alloc(), by @p poll:
 * a driver whose CQ's completions need more decoding from now on (the mlx5
 * driver, once it posts a QP's work itself) changes it without costing CQs
 * that do not.
 *
 * @param cq
 *   A CQ of the calling driver.
 * @param poll
 *   The new burst poll.
 * @param[out] old
 *   Where to store the poll it had, or NULL.
 * @return
 *   0; -EINVAL (NULL argument); -EBUSY (the CQ failed: its poll returns the
 *   failure and stays).
 *
 * Thread safety: not concurrently with a poll of @p cq.
 */
int cqpoll_cq_poll_swap(struct cqpoll_cq *cq, cqpoll_poll_burst_t poll,
			cqpoll_poll_burst_t *old);

/**
 * Hold @p cq: a driver object that keeps a pointer to it (the mlx5 driver's
 * QPs, whose CQs' polls hand back their wr_ids) takes it here and lets go
 * with cqpoll_cq_release(); cqpoll_cq_destroy() refuses a CQ still held
 * with -EBUSY, so the object never reads a freed CQ.
 *
 * @param cq
 *   A CQ of the calling driver.
 *
 * Thread safety: control path; not concurrently with cqpoll_cq_destroy()
 * of @p cq.
 */
void cqpoll_cq_hold(struct cqpoll_cq *cq);

/**
 * Let go of a hold taken with cqpoll_cq_hold().
 *
 * @param cq
 *   A CQ the caller holds.
 *
 * Thread safety: as cqpoll_cq_hold().
 */
void cqpoll_cq_release(struct cqpoll_cq *cq);

/**
 * The log hook installed (cqpoll_log_set_hook()), NULL when none: read
 * with an acquire load, as CQPOLL_LOG() does.
 */
extern const struct cqpoll_log_hook *cqpoll_log_hook_cur;

/**
 * Whether hook @p h wants messages of @p level from @p component.
 *
 * @param h
 *   The hook read from cqpoll_log_hook_cur (not NULL).
 * @param level
 *   The message's level.
 * @param component
 *   The driver's name (its logtype under DPDK: pmd.cqpoll. and the name).
 * @return
 *   true if the message should be formatted and given to cqpoll_log_emit().
 *
 * Thread safety: safe from any thread.
 */
bool cqpoll_log_wanted(const struct cqpoll_log_hook *h,
		       enum cqpoll_log_level level, const char *component);

/**
 * Format a message and give it to hook @p h.
 *
 * @param h
 *   The hook read from cqpoll_log_hook_cur (not NULL).
 * @param level
 *   The message's level.
 * @param component
 *   The driver's name.
 * @param fmt
 *   printf format of the message, without a trailing newline.
 *
 * Thread safety: safe from any thread.
 */
__attribute__((format(printf, 4, 5)))
void cqpoll_log_emit(const struct cqpoll_log_hook *h,
		     enum cqpoll_log_level level, const char *component,
		     const char *fmt, ...);

/**
 * Log a driver's message through the installed hook, at CQPOLL_LOG_ERR,
 * _WARNING, _INFO or _DEBUG (@p level is the part after CQPOLL_LOG_):
 * formatted only when a hook wants it, so a log point costs a load and a
 * branch when nobody listens.
 */
#define CQPOLL_LOG(level, component, ...) do { \
	const struct cqpoll_log_hook *cqpoll_log_h_ = \
		__atomic_load_n(&cqpoll_log_hook_cur, __ATOMIC_ACQUIRE); \
	if (cqpoll_log_h_ != NULL && \
	    cqpoll_log_wanted(cqpoll_log_h_, CQPOLL_LOG_##level, (component))) \
		cqpoll_log_emit(cqpoll_log_h_, CQPOLL_LOG_##level, \
				(component), __VA_ARGS__); \
} while (0)

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_DRIVER_H */
