/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_DPDK_HANDOFF_H
#define CQPOLL_DPDK_HANDOFF_H

/**
 * @file
 * Hand a poll group's completions to worker lcores through a DPDK rte_ring
 * (libcqpoll_dpdk). A handoff owns a ring of struct cqpoll_completion
 * records; cqpoll_dpdk_handoff_cb() is a ready-made group callback that
 * enqueues what the group polled, and workers dequeue with
 * cqpoll_dpdk_handoff_dequeue().
 *
 * @code
 * struct cqpoll_dpdk_handoff_conf hc = { .name = "rx0", .size = 4096 };
 * struct cqpoll_dpdk_handoff *h = cqpoll_dpdk_handoff_create(&hc, -1);
 * cqpoll_group_add(g, cq, cqpoll_dpdk_handoff_cb, h);  // poller lcore
 * ...
 * n = cqpoll_dpdk_handoff_dequeue(h, c, 32);          // worker lcores
 * @endcode
 *
 * Records are copied whole and in order; which CQ a completion came from is
 * not recorded: give each CQ its own handoff, or let wr_id say (it is the
 * application's own value from when the work was posted).
 *
 * Backpressure: completions read from a CQ cannot be given back to it, so
 * when the ring is full the callback either drops what does not fit and
 * counts it (CQPOLL_DPDK_HANDOFF_DROP, the default: the poller never waits
 * for workers), or spins until workers make room
 * (CQPOLL_DPDK_HANDOFF_WAIT: nothing is lost, but the poller stalls while
 * workers are behind, its CQs fill up, and if no worker ever dequeues it
 * never returns). cqpoll_dpdk_handoff_stats_get() reports both.
 */

#include <stdint.h>

#include "cqpoll.h"
#include "cqpoll_group.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cqpoll_dpdk_handoff;
struct rte_ring;

/** What cqpoll_dpdk_handoff_cb() does with completions that do not fit. */
enum cqpoll_dpdk_handoff_full {
	/** Drop them and count them in cqpoll_dpdk_handoff_stats::dropped. */
	CQPOLL_DPDK_HANDOFF_DROP = 0,
	/** Spin (rte_pause()) until workers make room: lossless, may stall. */
	CQPOLL_DPDK_HANDOFF_WAIT,
};

/** Configuration of a handoff; zero fields take defaults. */
struct cqpoll_dpdk_handoff_conf {
	/** Name of the ring, unique among rings (rte_ring_create()). */
	const char *name;
	/** Records the ring holds, exactly: 1 .. 2^24. 0: 1024. */
	uint32_t size;
	enum cqpoll_dpdk_handoff_full full; /**< When the ring is full. */
	/** Only one group enqueues (single-producer ring: cheaper). */
	int single_producer;
	/** Only one worker dequeues (single-consumer ring: cheaper). */
	int single_consumer;
};

/** Counters of a handoff. */
struct cqpoll_dpdk_handoff_stats {
	uint64_t enqueued; /**< Completions put in the ring. */
	uint64_t dropped;  /**< Completions dropped on a full ring (DROP). */
	uint64_t full;     /**< Callbacks that found the ring full. */
};

/**
 * Create a handoff and its ring on a NUMA socket: the socket of the lcores
 * that touch it most, the poller's or the workers'. It appears in DPDK
 * telemetry under /cqpoll/handoff/ with its name until destroyed.
 *
 * @param conf
 *   The configuration; its name is required.
 * @param socket_id
 *   The socket, or SOCKET_ID_ANY (-1) for the calling lcore's socket
 *   (rte_socket_id()).
 * @return
 *   The handoff, or NULL with rte_errno and errno set: EINVAL (NULL @p conf
 *   or name, bad size, full mode, or a socket the EAL does not know),
 *   ENOMEM, EEXIST (a ring of that name exists), or another
 *   rte_ring_create_elem() error. The reason is logged.
 *
 * Thread safety: EAL threads; not with cqpoll_dpdk_handoff_destroy() of a
 * handoff of the same name.
 */
struct cqpoll_dpdk_handoff *
cqpoll_dpdk_handoff_create(const struct cqpoll_dpdk_handoff_conf *conf,
			   int socket_id);

/**
 * Free a handoff and its ring; records still in the ring are lost.
 *
 * @param h
 *   The handoff; NULL is ignored. No group may still use it as a callback
 *   argument, no worker dequeue from it.
 *
 * Thread safety: no other call may use @p h during or after this one.
 */
void cqpoll_dpdk_handoff_destroy(struct cqpoll_dpdk_handoff *h);

/**
 * Group callback (cqpoll_group_cb_t): enqueue @p n completions into the
 * ring of the handoff @p arg, dropping or waiting on a full ring as
 * configured.
 *
 * @param cq
 *   The CQ they came from (not recorded).
 * @param c
 *   The completions.
 * @param n
 *   How many.
 * @param arg
 *   The handoff (struct cqpoll_dpdk_handoff *).
 *
 * Thread safety: the group's thread; several groups may share a handoff
 * unless it was created single_producer.
 */
void cqpoll_dpdk_handoff_cb(struct cqpoll_cq *cq,
			    const struct cqpoll_completion *c, unsigned int n,
			    void *arg);

/**
 * Take up to @p n completions out of the ring, oldest first.
 *
 * @param h
 *   The handoff.
 * @param[out] c
 *   Room for @p n records.
 * @param n
 *   The most to take.
 * @return
 *   The number taken (0 if the ring is empty), or -EINVAL for a NULL
 *   argument (rte_errno set too).
 *
 * Thread safety: any number of worker threads, unless the handoff was
 * created single_consumer (then one at a time).
 */
int cqpoll_dpdk_handoff_dequeue(struct cqpoll_dpdk_handoff *h,
				struct cqpoll_completion *c, unsigned int n);

/**
 * The handoff's ring, for workers that wait on it with other DPDK code.
 * Its elements are struct cqpoll_completion (rte_ring_dequeue_burst_elem()
 * with esize sizeof(struct cqpoll_completion)).
 *
 * @param h
 *   The handoff.
 * @return
 *   The ring (owned by the handoff), or NULL with rte_errno EINVAL if @p h
 *   is NULL.
 *
 * Thread safety: safe from any thread while the handoff exists.
 */
struct rte_ring *cqpoll_dpdk_handoff_ring(const struct cqpoll_dpdk_handoff *h);

/**
 * Read a handoff's counters.
 *
 * @param h
 *   The handoff.
 * @param[out] stats
 *   Where to copy them.
 * @return
 *   0, or -EINVAL if an argument is NULL (rte_errno set too).
 *
 * Thread safety: safe from any thread; each counter is read atomically.
 */
int cqpoll_dpdk_handoff_stats_get(const struct cqpoll_dpdk_handoff *h,
				  struct cqpoll_dpdk_handoff_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_DPDK_HANDOFF_H */
