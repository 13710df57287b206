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
#include <rte_telemetry.h>

#include "cqpoll_dpdk_handoff.h"
#include "cqpoll_dpdk_private.h"

#define HANDOFF_SIZE_DEFAULT 1024
#define HANDOFF_SIZE_MAX (1u << 24)

/* rte_ring_*_elem() moves elements in 4-byte units. */
_Static_assert(sizeof(struct cqpoll_completion) % 4 == 0,
	       "rte_ring element size must be a multiple of 4");

struct cqpoll_dpdk_handoff {
	struct rte_ring *ring;
	enum cqpoll_dpdk_handoff_full full;
	int socket_id;
	struct cqpoll_dpdk_handoff_stats stats; /* Atomic: many producers. */
};

static struct cqpoll_dpdk_handoff *
fail(int err)
{
	cqpoll_dpdk_err(err);
	return NULL;
}

static const char *
bad_conf(const struct cqpoll_dpdk_handoff_conf *conf, int socket_id)
{
	if (conf == NULL)
		return "NULL conf";
	if (conf->name == NULL)
		return "no name";
	if (conf->size > HANDOFF_SIZE_MAX)
		return "size over 2^24 records";
	if (conf->full != CQPOLL_DPDK_HANDOFF_DROP &&
	    conf->full != CQPOLL_DPDK_HANDOFF_WAIT)
		return "bad full mode";
	if (socket_id < SOCKET_ID_ANY ||
	    (socket_id != SOCKET_ID_ANY &&
	     (unsigned int)socket_id >= RTE_MAX_NUMA_NODES))
		return "socket id out of range";
	if (socket_id != SOCKET_ID_ANY && !cqpoll_dpdk_socket_exists(socket_id))
		return "no such socket in the EAL";
	return NULL;
}

struct cqpoll_dpdk_handoff *
cqpoll_dpdk_handoff_create(const struct cqpoll_dpdk_handoff_conf *conf,
			   int socket_id)
{
	struct cqpoll_dpdk_handoff *h;
	unsigned int flags = RING_F_EXACT_SZ;
	const char *why;
	uint32_t size;
	int err;

	why = bad_conf(conf, socket_id);
	if (why != NULL) {
		CQPOLL_DPDK_LOG(ERR, "handoff create: %s (socket %d)", why, socket_id);
		return fail(EINVAL);
	}
	if (socket_id == SOCKET_ID_ANY)
		socket_id = (int)rte_socket_id();
	size = conf->size != 0 ? conf->size : HANDOFF_SIZE_DEFAULT;
	if (conf->single_producer)
		flags |= RING_F_SP_ENQ;
	if (conf->single_consumer)
		flags |= RING_F_SC_DEQ;
	h = rte_zmalloc_socket("cqpoll_dpdk_handoff", sizeof(*h), 0, socket_id);
	if (h == NULL) {
		CQPOLL_DPDK_LOG(ERR, "handoff create %s: no memory on socket %d",
				conf->name, socket_id);
		return fail(ENOMEM);
	}
	h->full = conf->full;
	h->socket_id = socket_id;
	h->ring = rte_ring_create_elem(conf->name, sizeof(struct cqpoll_completion),
				       size, socket_id, flags);
	if (h->ring == NULL) {
		err = rte_errno;
		CQPOLL_DPDK_LOG(ERR, "handoff create %s: rte_ring_create_elem: %s",
				conf->name, rte_strerror(err));
		rte_free(h);
		return fail(err);
	}
	/* The ring's name is unique, so is the registry's: this cannot clash. */
	err = cqpoll_dpdk_telemetry_add_handoff(conf->name, h);
	if (err < 0) {
		rte_ring_free(h->ring);
		rte_free(h);
		return fail(-err);
	}
	return h;
}

void
cqpoll_dpdk_handoff_destroy(struct cqpoll_dpdk_handoff *h)
{
	if (h == NULL)
		return;
	cqpoll_dpdk_telemetry_remove_handoff(h);
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
		return cqpoll_dpdk_err(EINVAL);
	return (int)rte_ring_dequeue_burst_elem(h->ring, c, sizeof(*c), n, NULL);
}

struct rte_ring *
cqpoll_dpdk_handoff_ring(const struct cqpoll_dpdk_handoff *h)
{
	if (h == NULL) {
		cqpoll_dpdk_err(EINVAL);
		return NULL;
	}
	return h->ring;
}

int
cqpoll_dpdk_handoff_stats_get(const struct cqpoll_dpdk_handoff *h,
			      struct cqpoll_dpdk_handoff_stats *stats)
{
	if (h == NULL || stats == NULL)
		return cqpoll_dpdk_err(EINVAL);
	stats->enqueued = __atomic_load_n(&h->stats.enqueued, __ATOMIC_RELAXED);
	stats->dropped = __atomic_load_n(&h->stats.dropped, __ATOMIC_RELAXED);
	stats->full = __atomic_load_n(&h->stats.full, __ATOMIC_RELAXED);
	return 0;
}

void
cqpoll_dpdk_handoff_tel_info(const struct cqpoll_dpdk_handoff *h,
			     struct rte_tel_data *d)
{
	unsigned int flags = h->ring->flags;

	TEL_DICT_UINT(d, "size", rte_ring_get_capacity(h->ring));
	rte_tel_data_add_dict_string(d, "full", h->full == CQPOLL_DPDK_HANDOFF_WAIT ?
				     "wait" : "drop");
	rte_tel_data_add_dict_int(d, "socket_id", h->socket_id);
	rte_tel_data_add_dict_int(d, "single_producer", (flags & RING_F_SP_ENQ) != 0);
	rte_tel_data_add_dict_int(d, "single_consumer", (flags & RING_F_SC_DEQ) != 0);
}

void
cqpoll_dpdk_handoff_tel_stats(const struct cqpoll_dpdk_handoff *h,
			      struct rte_tel_data *d)
{
	struct cqpoll_dpdk_handoff_stats s;

	cqpoll_dpdk_handoff_stats_get(h, &s);
	TEL_DICT_UINT(d, "enqueued", s.enqueued);
	TEL_DICT_UINT(d, "dropped", s.dropped);
	TEL_DICT_UINT(d, "full", s.full);
	TEL_DICT_UINT(d, "in_ring", rte_ring_count(h->ring));
}
