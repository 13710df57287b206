/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_DPDK_H
#define CQPOLL_DPDK_H

/**
 * @file
 * Optional DPDK component (libcqpoll_dpdk): cqpoll in DPDK telemetry, by
 * DPDK's conventions. Loading the library registers these commands (before
 * rte_eal_init(), so "/" lists them as soon as the EAL runs), for KIND
 * group, cq and handoff:
 *
 *  - /cqpoll/KIND/list: the ids of the registered objects, ascending.
 *  - /cqpoll/KIND/info,ID: its id and name, and for a group its mode,
 *    policy, lcore, burst and timeout; for a CQ its driver, arm semantics,
 *    size, ack batch and lcore; for a handoff its size, full mode, socket
 *    and ring flags.
 *  - /cqpoll/KIND/stats,ID: the counters of cqpoll_group_stats_get(),
 *    cqpoll_cq_stats_get() or cqpoll_dpdk_handoff_stats_get().
 *
 * Groups and CQs are registered by the application under a name; the
 * registration gives them the next id of their kind (ids are never reused)
 * and records the registering lcore. Handoffs register themselves when
 * created, under their ring's name.
 *
 * @code
 * cqpoll_dpdk_telemetry_register_group("rx", g);  // from g's lcore
 * ...   // dpdk-telemetry.py: /cqpoll/group/list, /cqpoll/group/stats,0
 * cqpoll_dpdk_telemetry_unregister_group("rx");
 * cqpoll_group_destroy(g);
 * @endcode
 *
 * The registry holds pointers, not copies: unregister an object before it
 * is destroyed. Once an unregister call returns, no telemetry command uses
 * the object any more. Telemetry itself must be enabled in the EAL (no
 * --no-telemetry) for the commands to be reachable.
 *
 * The library also installs, at start-up, a cqpoll log hook
 * (cqpoll_log.h) that writes to DPDK's log: logtype lib.cqpoll for the core
 * and this library, pmd.cqpoll.DRIVER for a driver (sw, mlx5, verbs, ...).
 *
 * Every call of libcqpoll_dpdk that fails sets rte_errno.
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
 *   Name shown by /cqpoll/group/info: 1 to CQPOLL_DPDK_NAME_MAX - 1
 *   characters, unique among groups. Copied.
 * @param g
 *   The group; it must stay alive until unregistered.
 * @return
 *   - 0: registered, under the next group id.
 *   - -EINVAL: NULL @p g, or NULL, empty or too long @p name.
 *   - -EEXIST: a group of that name is already registered.
 *   - -ENOMEM: out of memory.
 *   On failure rte_errno is set too, and the reason logged.
 *
 * Thread safety: safe from any thread (the registry has a mutex). Call it
 * from the group's lcore: /cqpoll/group/info reports the registering lcore.
 */
int cqpoll_dpdk_telemetry_register_group(const char *name,
					 struct cqpoll_group *g);

/**
 * Stop exposing a poll group. On return no telemetry command uses it.
 *
 * @param name
 *   The name it was registered with.
 * @return
 *   0, -EINVAL for a NULL @p name, or -ENOENT if no group has that name
 *   (rte_errno set too).
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_dpdk_telemetry_unregister_group(const char *name);

/**
 * Expose a CQ's counters under a name.
 *
 * @param name
 *   Name shown by /cqpoll/cq/info: 1 to CQPOLL_DPDK_NAME_MAX - 1
 *   characters, unique among CQs. Copied.
 * @param cq
 *   The CQ; it must stay alive until unregistered.
 * @return
 *   - 0: registered, under the next CQ id.
 *   - -EINVAL: NULL @p cq, or NULL, empty or too long @p name.
 *   - -EEXIST: a CQ of that name is already registered.
 *   - -ENOMEM: out of memory.
 *   On failure rte_errno is set too, and the reason logged.
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
 *   0, -EINVAL for a NULL @p name, or -ENOENT if no CQ has that name
 *   (rte_errno set too).
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_dpdk_telemetry_unregister_cq(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_DPDK_H */
