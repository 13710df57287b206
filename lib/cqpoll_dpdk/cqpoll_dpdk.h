/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_DPDK_H
#define CQPOLL_DPDK_H

/**
 * @file
 * Optional DPDK component (libcqpoll_dpdk): cqpoll counters through DPDK
 * telemetry. Register poll groups and CQs by name; the first registration
 * adds these commands to the telemetry socket:
 *
 *  - /cqpoll/groups: list of registered group names.
 *  - /cqpoll/group_stats,NAME: the counters of cqpoll_group_stats_get().
 *  - /cqpoll/cqs: list of registered CQ names.
 *  - /cqpoll/cq_stats,NAME: the counters of cqpoll_cq_stats_get().
 *
 * @code
 * cqpoll_dpdk_telemetry_register_group("rx", g);
 * ...   // dpdk-telemetry.py: /cqpoll/group_stats,rx
 * cqpoll_dpdk_telemetry_unregister_group("rx");
 * cqpoll_group_destroy(g);
 * @endcode
 *
 * The registry holds pointers, not copies: unregister an object before it
 * is destroyed. Once an unregister call returns, no telemetry command uses
 * the object any more. Telemetry itself must be enabled in the EAL (no
 * --no-telemetry) for the commands to be reachable.
 */

#include "cqpoll.h"
#include "cqpoll_group.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Longest registered name, terminating NUL included. */
#define CQPOLL_DPDK_NAME_MAX 64

/**
 * Expose a poll group's counters under a name.
 *
 * @param name
 *   Name used in /cqpoll/groups and /cqpoll/group_stats,NAME: 1 to
 *   CQPOLL_DPDK_NAME_MAX - 1 characters, no ','. Copied.
 * @param g
 *   The group; it must stay alive until unregistered.
 * @return
 *   - 0: registered.
 *   - -EINVAL: NULL @p g, or NULL, empty, too long or bad @p name.
 *   - -EEXIST: a group of that name is already registered.
 *   - -ENOMEM: out of memory.
 *   - other < 0: the error of rte_telemetry_register_cmd() when the
 *     commands were registered (the first time only; retried on the next
 *     call).
 *
 * Thread safety: safe from any thread (the registry has a mutex).
 */
int cqpoll_dpdk_telemetry_register_group(const char *name,
					 struct cqpoll_group *g);

/**
 * Stop exposing a poll group. On return no telemetry command uses it.
 *
 * @param name
 *   The name it was registered with.
 * @return
 *   0, -EINVAL for a NULL @p name, or -ENOENT if no group has that name.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_dpdk_telemetry_unregister_group(const char *name);

/**
 * Expose a CQ's counters under a name.
 *
 * @param name
 *   Name used in /cqpoll/cqs and /cqpoll/cq_stats,NAME: 1 to
 *   CQPOLL_DPDK_NAME_MAX - 1 characters, no ','. Copied.
 * @param cq
 *   The CQ; it must stay alive until unregistered.
 * @return
 *   - 0: registered.
 *   - -EINVAL: NULL @p cq, or NULL, empty, too long or bad @p name.
 *   - -EEXIST: a CQ of that name is already registered.
 *   - -ENOMEM: out of memory.
 *   - other < 0: the error of rte_telemetry_register_cmd() (first time).
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_dpdk_telemetry_register_cq(const char *name, struct cqpoll_cq *cq);

/**
 * Stop exposing a CQ. On return no telemetry command uses it.
 *
 * @param name
 *   The name it was registered with.
 * @return
 *   0, -EINVAL for a NULL @p name, or -ENOENT if no CQ has that name.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_dpdk_telemetry_unregister_cq(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_DPDK_H */
