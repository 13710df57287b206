/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_ALLOC_H
#define CQPOLL_ALLOC_H

/**
 * @file
 * NUMA placement: where the memory of an object created on a given socket
 * comes from.
 *
 * Groups (cqpoll_group_conf::socket_id), software CQs
 * (cqpoll_sw_conf::socket_id) and CQ handles (cqpoll_cq_params::socket_id)
 * may be placed on a NUMA socket (node). Without a hook the library uses
 * libnuma (numa_alloc_onnode(): pages bound to the node) and refuses a
 * node that does not exist. libcqpoll_dpdk installs a hook at start-up
 * that allocates with rte_zmalloc_socket() once the EAL runs, and refuses a
 * socket the EAL does not know. Objects created without a socket keep the
 * C library's allocator (first touch).
 *
 * Stable API since 0.5.0 (version node CQPOLL_0.5, doc/guides/abi.md).
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Any socket: the C library's allocator, pages placed at first touch. */
#define CQPOLL_SOCKET_ANY (-1)

/** An allocator for memory on a NUMA socket. */
struct cqpoll_alloc_hook {
	/**
	 * Allocate @p size zeroed bytes, aligned to 64, on @p socket_id (never
	 * CQPOLL_SOCKET_ANY). Mandatory.
	 * @return The memory, or NULL (the object's creation fails with ENOMEM).
	 */
	void *(*alloc)(void *arg, size_t size, int socket_id);
	/** Free what alloc() returned (@p size as allocated). Mandatory. */
	void (*free)(void *arg, void *p, size_t size);
	/**
	 * Whether @p socket_id exists. Optional (NULL: any socket >= 0).
	 * @return 1 or 0.
	 */
	int (*socket_valid)(void *arg, int socket_id);
	/**
	 * Whether the hook can allocate now (e.g. DPDK's heap exists only
	 * between rte_eal_init() and rte_eal_cleanup()); when it cannot, the
	 * library's own libnuma allocator is used. Optional (NULL: always).
	 * @return 1 or 0.
	 */
	int (*ready)(void *arg);
	void *arg; /**< Passed to every callback. */
};

/**
 * Install the allocator hook, replacing the previous one. Memory is freed
 * by the allocator that gave it, whatever is installed by then.
 *
 * @param hook
 *   The hook, or NULL for the library's libnuma allocator. Not copied: it
 *   must stay valid until the process ends.
 * @return
 *   0, or -EINVAL if @p hook lacks alloc or free.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_alloc_set_hook(const struct cqpoll_alloc_hook *hook);

/**
 * The allocator hook installed.
 *
 * @return
 *   The hook, or NULL for the library's own.
 *
 * Thread safety: safe from any thread.
 */
const struct cqpoll_alloc_hook *cqpoll_alloc_get_hook(void);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_ALLOC_H */
