/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_POLICY_H
#define CQPOLL_POLICY_H

/**
 * @file
 * Sleep policies of a poll group's adaptive mode: the ops table a policy
 * fills in, and the built-in policies. A group asks its policy, after every
 * iteration, whether to keep polling or sleep (cqpoll_group.h, which
 * includes this header). What each built-in policy does and its parameters:
 * doc/guides/policies.md.
 */

#include <stddef.h>
#include <stdint.h>

#include "cqpoll_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a policy tells the group after an iteration. */
enum cqpoll_policy_action {
	CQPOLL_POLICY_KEEP_POLLING = 0, /**< Poll again. */
	CQPOLL_POLICY_SLEEP,            /**< Arm every CQ and sleep. */
	/**
	 * Wait a little in a low-power state on the CQs' next-completion
	 * addresses (cqpoll_monitor.h), bounded, arming nothing; where the
	 * power-monitor tier is off, keep polling. EXPERIMENTAL.
	 */
	CQPOLL_POLICY_MONITOR,
};

/**
 * A sleep policy of the adaptive mode: a small pluggable object. The group
 * allocates @p state_size bytes (aligned for any type, zeroed) per group, calls
 * init once, then the hooks from the group's thread only.
 *
 * The table grows at its end: @p size says which members a policy knows, and
 * the library reads a member only if @p size covers it. A policy sets
 * @p size to sizeof(struct cqpoll_policy_ops), or leaves it 0 for a table
 * of the members up to @p wake_cost only.
 */
struct cqpoll_policy_ops {
	/** sizeof(struct cqpoll_policy_ops) as the policy was built; 0: up to wake_cost. */
	size_t size;
	const char *name;  /**< Name, e.g. "spin". */
	size_t state_size; /**< Bytes of per-group state the hooks receive. */
	/**
	 * Parse parameters and initialise the state. Mandatory.
	 * @return 0, or -EINVAL for bad @p args.
	 */
	int (*init)(void *state, const char *args);
	/**
	 * Called after every iteration of an adaptive group with the number of
	 * completions it processed and the CLOCK_MONOTONIC time in ns.
	 * Mandatory.
	 * @return CQPOLL_POLICY_KEEP_POLLING or CQPOLL_POLICY_SLEEP.
	 */
	enum cqpoll_policy_action (*decide)(void *state, unsigned int completions,
					    uint64_t now_ns);
	/**
	 * Measured cost of a wake-up: from the moment a completion became
	 * visible while the group slept to the moment its callback ran. Called
	 * only when the device timestamps completions. Optional (NULL).
	 */
	void (*wake_cost)(void *state, uint64_t cost_ns);
	/**
	 * The thread CPU one of the policy's sleeps cost, ns, for the sleeps the
	 * group times (cqpoll_group_sleep_cpu_get()), or as
	 * cqpoll_policy_sleep_cpu() tells it. Optional (NULL); read only when
	 * @p size covers it. EXPERIMENTAL.
	 */
	void (*sleep_cpu)(void *state, uint64_t cpu_ns);
};

/**
 * The spin policy: keep polling for a fixed time after the last completion,
 * then sleep. Parameter: the spin time in µs, "spin:US"; default 50 µs
 * (doc/guides/policies.md).
 *
 * @return
 *   The policy's ops table (static).
 *
 * Thread safety: safe from any thread.
 */
const struct cqpoll_policy_ops *cqpoll_policy_spin(void);

/**
 * The adaptive policy (the default): learns online the silences between
 * completions and the cost of a sleep, and polls after a completion for the
 * threshold of least expected cost per unit of time, CPU and added latency
 * weighed together. Parameters, "adaptive[:key=value,...]": mult, wake_us,
 * min_spin_us, max_spin_us, probe_ms, monitor_us, sleep_cpu_us, memory_us,
 * jump, penalty (doc/guides/policies.md).
 *
 * @return
 *   The policy's ops table (static).
 *
 * Thread safety: safe from any thread.
 */
const struct cqpoll_policy_ops *cqpoll_policy_adaptive(void);

/**
 * The hybrid policy, after io_uring's hybrid poll: when completions arrive at
 * predictable times, it naps on a timer (nothing armed) through most of the
 * gap, then polls for the arrival; otherwise the adaptive policy decides. A
 * nap never strands a completion, but is not cut short by
 * cqpoll_group_stop(), cqpoll_group_set_mode() or cqpoll_group_wakeup():
 * max_nap_us bounds how late the group sees them, and nap time counts as
 * busy time. Parameters, "hybrid[:key=value,...]": penalty, sleep_cpu_us,
 * min_nap_us, max_nap_us, and any key of the adaptive policy
 * (doc/guides/policies.md).
 *
 * @return
 *   The policy's ops table (static).
 *
 * Thread safety: safe from any thread.
 */
const struct cqpoll_policy_ops *cqpoll_policy_hybrid(void);

/**
 * The latency-target policy: the user gives a p99 target for the latency of
 * a completion (visible to handled), and the policy spins as little as meets
 * it, measured online. Parameters, "latency-target[:key=value,...]" (p99_us,
 * min_spin_us, max_spin_us, window, wake_us, leap), or "target-p99:US" for
 * the target alone (doc/guides/policies.md).
 *
 * @return
 *   The policy's ops table (static).
 *
 * Thread safety: safe from any thread.
 */
const struct cqpoll_policy_ops *cqpoll_policy_latency_target(void);

/**
 * Tell a policy the thread CPU that one of its sleeps cost, as a group does
 * for the sleeps it times (cqpoll_group_sleep_cpu_get()): from just before
 * the poll-and-arm that began it to the first completion handed to a
 * callback after the wake-up (or the end of the wake-up's handling when it
 * found none). For programs that run a policy themselves (the policy lab).
 *
 * Only policies with a sleep_cpu op take it (of the built-in ones,
 * "adaptive" and "hybrid"); those weigh a sleep with the moving average of
 * these samples (weight 1/8, each counting at most twice the average) unless
 * their sleep_cpu_us parameter was given.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param ops
 *   The policy, as cqpoll_policy_find() or cqpoll_policy_adaptive() gave it.
 * @param state
 *   The policy's state, initialised by @p ops->init.
 * @param cpu_ns
 *   The thread CPU of the sleep, ns.
 * @return
 *   0; -EINVAL for a NULL @p ops or @p state; -ENOTSUP for a policy that
 *   does not weigh a sleep's CPU.
 *
 * Thread safety: the thread that drives @p state only.
 */
__cqpoll_experimental
int cqpoll_policy_sleep_cpu(const struct cqpoll_policy_ops *ops, void *state,
			    uint64_t cpu_ns);

/**
 * Find a built-in policy by name and split its parameters off a spec.
 *
 * @param spec
 *   "name" or "name:args", e.g. "spin:20", "adaptive:mult=4", "hybrid",
 *   "latency-target:p99_us=50" or its short form "target-p99:50".
 * @param[out] args
 *   Set to the text after ':' in @p spec, or NULL if there is none.
 * @return
 *   The policy, or NULL if @p spec or @p args is NULL or names no built-in
 *   policy.
 *
 * Thread safety: safe from any thread.
 */
const struct cqpoll_policy_ops *cqpoll_policy_find(const char *spec,
						   const char **args);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_POLICY_H */
