/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MONITOR_H
#define CQPOLL_MONITOR_H

/**
 * @file
 * The power-monitor tier, between spinning and sleeping on an interrupt:
 * wait in a low-power state (UMONITOR/UMWAIT, MONITORX/MWAITX) on the
 * address the device writes to announce the next completion, as DPDK's PMD
 * power management does with rte_power_monitor() and ethdev's
 * get_monitor_addr. Waking from a monitor costs well under a microsecond
 * against microseconds for an interrupt, so it suits gaps too short for a
 * sleep.
 *
 * Each driver says where its next completion will appear
 * (cqpoll_cq_get_monitor_addr()); the adaptive policy may choose
 * CQPOLL_POLICY_MONITOR for short expected gaps ("adaptive:monitor_us=US");
 * the group then waits through the monitor hook, which libcqpoll_dpdk fills
 * with rte_power_monitor() where the CPU has the instructions
 * (rte_cpu_get_intrinsics_support()). A monitor wait is bounded
 * (CQPOLL_MONITOR_WAIT_MAX_NS), arms nothing and is not a sleep: sleeping
 * on an event still goes through poll-and-arm. Where the tier is off (no
 * hook, no instruction, a driver without an address) the group keeps
 * polling instead, and cqpoll_monitor_available() says why.
 *
 * Stable API since 0.5.0 (version node CQPOLL_0.5, doc/guides/abi.md).
 */

#include <stdint.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Longest monitor wait of a group, in ns; then the policy decides again. */
#define CQPOLL_MONITOR_WAIT_MAX_NS 100000

/** Most CQs a group monitors at once (rte_power_monitor_multi()'s job). */
#define CQPOLL_MONITOR_MAX 8

/** How the monitored value says that a completion arrived. */
enum cqpoll_monitor_match {
	/** When (value & mask) == val. */
	CQPOLL_MONITOR_EQUAL = 0,
	/** When (value & mask) != val: it changed from what it was. */
	CQPOLL_MONITOR_NOT_EQUAL,
};

/** Where a driver's next completion will be written, and how to see it. */
struct cqpoll_monitor_cond {
	const volatile void *addr; /**< Address to monitor. */
	uint64_t val;              /**< Value compared after masking. */
	uint64_t mask;             /**< Bits of the value that matter. */
	uint8_t size;              /**< Bytes at @p addr: 1, 2, 4 or 8. */
	uint8_t match;             /**< enum cqpoll_monitor_match. */
};

/**
 * Where the next completion of @p cq will appear.
 *
 * @param cq
 *   The CQ.
 * @param[out] cond
 *   The address and the test that says a completion arrived. Valid until
 *   the CQ is polled again.
 * @return
 *   - 0: filled in; nothing is there yet (the test is false now).
 *   - -EAGAIN: completions are already there: poll instead.
 *   - -ENOTSUP: the driver cannot tell (verbs: the provider's buffer is
 *     opaque).
 *   - -EINVAL: NULL argument.
 *
 * Thread safety: the CQ's consumer thread.
 */
int cqpoll_cq_get_monitor_addr(struct cqpoll_cq *cq,
			       struct cqpoll_monitor_cond *cond);

/**
 * Whether the test of @p cond holds now (a completion arrived).
 *
 * @param cond
 *   The condition.
 * @return
 *   1 or 0; -EINVAL for a NULL @p cond or a bad size or match.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
int cqpoll_monitor_cond_met(const struct cqpoll_monitor_cond *cond);

/** How monitor waits are done: libcqpoll_dpdk's rte_power_monitor(). */
struct cqpoll_monitor_hook {
	/**
	 * Whether @p n addresses can be monitored at once here. Mandatory.
	 * @return 1, or 0 with @p *reason set to a static sentence.
	 */
	int (*available)(void *arg, unsigned int n, const char **reason);
	/**
	 * Wait in a low-power state until one of @p n conditions holds, their
	 * addresses are written, or @p timeout_ns passes. Mandatory.
	 * @return 0, or -errno (then the group polls on).
	 */
	int (*wait)(void *arg, const struct cqpoll_monitor_cond *conds,
		    unsigned int n, uint64_t timeout_ns);
	void *arg; /**< Passed to both. */
};

/**
 * Install the monitor hook, replacing the previous one.
 *
 * @param hook
 *   The hook, or NULL for none (the tier is off). Not copied: it must stay
 *   valid until the process ends.
 * @return
 *   0, or -EINVAL if a callback is missing.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_monitor_set_hook(const struct cqpoll_monitor_hook *hook);

/**
 * Whether the tier can monitor @p n CQs here, and why not.
 *
 * @param n
 *   How many addresses at once (1 for a lone CQ).
 * @param[out] reason
 *   Set, when the tier is off, to a static sentence saying why; may be
 *   NULL.
 * @return
 *   1 if available, else 0.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_monitor_available(unsigned int n, const char **reason);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_MONITOR_H */
