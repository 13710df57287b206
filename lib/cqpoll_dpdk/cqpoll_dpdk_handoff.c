/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completions handed from a poll group to worker lcores through an rte_ring
 * of whole struct cqpoll_completion records, on a chosen NUMA socket, with
 * drop or wait on a full ring.
 */

#include <errno.h>
#include <stdbool.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "cqpoll_dpdk_handoff.h"

#define HANDOFF_SIZE_DEFAULT 1024
#define HANDOFF_SIZE_MAX (1u << 24)

/* rte_ring_*_elem() moves elements in 4-byte units. */
_Static_assert(sizeof(struct cqpoll_completion) % 4 == 0,
	       "rte_ring element size must be a multiple of 4");

struct cqpoll_dpdk_handoff {
	struct rte_ring *ring;
	enum cqpoll_dpdk_handoff_full full;
	struct cqpoll_dpdk_handoff_stats stats; /* Atomic: many producers. */
};

static struct cqpoll_dpdk_handoff *
fail(int err)
{
	rte_errno = err;
	errno = err;
	return NULL;
}

struct cqpoll_dpdk_handoff *
cqpoll_dpdk_handoff_create(const struct cqpoll_dpdk_handoff_conf *conf,
			   int socket_id)
{
	struct cqpoll_dpdk_handoff *h;
	unsigned int flags = RING_F_EXACT_SZ;
	uint32_t size;
	int err;

	if (conf == NULL || conf->name == NULL ||
	    conf->size > HANDOFF_SIZE_MAX ||
	    (conf->full != CQPOLL_DPDK_HANDOFF_DROP &&
	     conf->full != CQPOLL_DPDK_HANDOFF_WAIT) ||
	    socket_id < SOCKET_ID_ANY ||
	    (socket_id != SOCKET_ID_ANY &&
	     (unsigned int)socket_id >= RTE_MAX_NUMA_NODES))
		return fail(EINVAL);
	if (socket_id == SOCKET_ID_ANY)
		socket_id = (int)rte_socket_id();
	size = conf->size != 0 ? conf->size : HANDOFF_SIZE_DEFAULT;
	if (conf->single_producer)
		flags |= RING_F_SP_ENQ;
	if (conf->single_consumer)
		flags |= RING_F_SC_DEQ;
	h = rte_zmalloc_socket("cqpoll_dpdk_handoff", sizeof(*h), 0, socket_id);
	if (h == NULL)
		return fail(ENOMEM);
	h->full = conf->full;
	h->ring = rte_ring_create_elem(conf->name, sizeof(struct cqpoll_completion),
				       size, socket_id, flags);
	if (h->ring == NULL) {
		err = rte_errno;
		rte_free(h);
		return fail(err);
	}
	return h;
}

void
cqpoll_dpdk_handoff_destroy(struct cqpoll_dpdk_handoff *h)
{
	if (h == NULL)
		return;
	rte_ring_free(h->ring);
	rte_free(h);
}

void
cqpoll_dpdk_handoff_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
		       unsigned int n, void *arg)
{
	struct cqpoll_dpdk_handoff *h = arg;
	unsigned int done = 0;
	bool was_full = false;

	(void)cq;
	for (;;) {
		done += rte_ring_enqueue_burst_elem(h->ring, c + done,
						    sizeof(*c), n - done, NULL);
		if (done == n)
			break;
		was_full = true;
		if (h->full == CQPOLL_DPDK_HANDOFF_DROP) {
			__atomic_fetch_add(&h->stats.dropped, n - done,
					   __ATOMIC_RELAXED);
			break;
		}
		rte_pause();
	}
	__atomic_fetch_add(&h->stats.enqueued, done, __ATOMIC_RELAXED);
	if (was_full)
		__atomic_fetch_add(&h->stats.full, 1, __ATOMIC_RELAXED);
}

int
cqpoll_dpdk_handoff_dequeue(struct cqpoll_dpdk_handoff *h,
			    struct cqpoll_completion *c, unsigned int n)
{
	if (h == NULL || c == NULL)
		return -EINVAL;
	return (int)rte_ring_dequeue_burst_elem(h->ring, c, sizeof(*c), n, NULL);
}

struct rte_ring *
cqpoll_dpdk_handoff_ring(const struct cqpoll_dpdk_handoff *h)
{
	return h != NULL ? h->ring : NULL;
}

int
cqpoll_dpdk_handoff_stats_get(const struct cqpoll_dpdk_handoff *h,
			      struct cqpoll_dpdk_handoff_stats *stats)
{
	if (h == NULL || stats == NULL)
		return -EINVAL;
	stats->enqueued = __atomic_load_n(&h->stats.enqueued, __ATOMIC_RELAXED);
	stats->dropped = __atomic_load_n(&h->stats.dropped, __ATOMIC_RELAXED);
	stats->full = __atomic_load_n(&h->stats.full, __ATOMIC_RELAXED);
	return 0;
}
