/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libcqpoll's allocator hook, filled at start-up with DPDK's heap: objects
 * created on a socket (cqpoll_alloc.h) come from rte_zmalloc_socket() once
 * the EAL runs, and a socket the EAL does not know is refused. Before
 * rte_eal_init() the library's libnuma allocator is used.
 */

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "cqpoll_alloc.h"
#include "cqpoll_dpdk_private.h"

bool
cqpoll_dpdk_socket_exists(int socket_id)
{
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (rte_socket_id_by_idx(i) == socket_id)
			return true;
	return false;
}

static void *
dpdk_alloc(void *arg, size_t size, int socket_id)
{
	(void)arg;
	return rte_zmalloc_socket("cqpoll", size, RTE_CACHE_LINE_SIZE, socket_id);
}

static void
dpdk_free(void *arg, void *p, size_t size)
{
	(void)arg;
	(void)size;
	rte_free(p);
}

static int
dpdk_socket_valid(void *arg, int socket_id)
{
	(void)arg;
	return cqpoll_dpdk_socket_exists(socket_id);
}

/* The EAL counts its lcores during rte_eal_init(): none before. */
static int
dpdk_ready(void *arg)
{
	(void)arg;
	return rte_lcore_count() > 0;
}

static const struct cqpoll_alloc_hook dpdk_alloc_hook = {
	.alloc = dpdk_alloc,
	.free = dpdk_free,
	.socket_valid = dpdk_socket_valid,
	.ready = dpdk_ready,
};

RTE_INIT(cqpoll_dpdk_alloc_init)
{
	/* An application's own hook, installed earlier, is left in place. */
	if (cqpoll_alloc_get_hook() == NULL)
		cqpoll_alloc_set_hook(&dpdk_alloc_hook);
}
