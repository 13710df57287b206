/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_DPDK_LCORE_H
#define CQPOLL_DPDK_LCORE_H

/**
 * @file
 * Poll groups on DPDK lcores (libcqpoll_dpdk): create a group from the lcore
 * that will run it, so that its memory lands on that lcore's NUMA socket.
 *
 * A conf without CQPOLL_GROUP_F_SOCKET_ID allocates with the C library.
 * (With it, the group's state and completion buffer come from DPDK's heap
 * on that socket: see cqpoll_alloc.h; the member arrays still come from
 * the C library.) Under Linux's default memory policy a page is placed on the NUMA node of
 * the thread that first touches it, and glibc gives threads their own
 * malloc arenas, so a group created on its own lcore has its state, member
 * arrays and completion buffer on that lcore's socket. This is best effort:
 * an arena's pages touched earlier by another thread, or a process-wide
 * memory policy (numactl), place them elsewhere.
 */

#include "cqpoll_group.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Create a poll group on an lcore: cqpoll_group_create() run by that lcore,
 * directly if it is the calling one, else launched on it and waited for.
 *
 * @param conf
 *   As for cqpoll_group_create().
 * @param lcore_id
 *   The lcore that will run the group: the calling lcore, or an idle worker
 *   lcore when called from the main lcore.
 * @return
 *   The group, or NULL with rte_errno and errno set: EINVAL (@p lcore_id is not an enabled
 *   lcore, or another lcore than the caller's asked from a worker lcore),
 *   EBUSY (the worker lcore is running a function), or an errno of
 *   cqpoll_group_create().
 *
 * Thread safety: an EAL thread; the main lcore to create on another lcore.
 */
struct cqpoll_group *
cqpoll_dpdk_group_create_on_lcore(const struct cqpoll_group_conf *conf,
				  unsigned int lcore_id);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_DPDK_LCORE_H */
