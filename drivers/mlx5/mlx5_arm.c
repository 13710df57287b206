/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The arm doorbell and the sequence number that goes with it.
 *
 * Level semantics carry the race: the arm names the consumer index the driver
 * really reached, and the device fires at once if it wrote entries at or
 * past it (contract §5.3), so "poll until empty, arm, sleep" loses nothing.
 * The index must therefore be ours: the provider's (ibv_req_notify_cq) is
 * stale after direct polling and loses events (§5.4).
 */

#include "mlx5_barrier.h"
#include "mlx5_prm.h"
#include "mlx5_private.h"

int
cqpoll_mlx5_arm(void *priv)
{
	struct cqpoll_mlx5_cq *q = priv;
	uint32_t word = cqpoll_mlx5_arm_word(q->sn, q->arm_cmd, q->ci);

	/* The record first, then the UAR: the order of rdma-core, kernel and DPDK (§5.1). */
	/*
	 * Device memory is written with single-copy atomic stores: a plain mov,
	 * which an emulating thread (and ThreadSanitizer) may read concurrently.
	 */
	__atomic_store_n(&q->dbrec[CQPOLL_MLX5_DBREC_ARM], htobe32(word), __ATOMIC_RELAXED);
	cqpoll_mlx5_wmb_record_before_uar();
	/* One 8-byte store: the device takes the doorbell whole. */
	__atomic_store_n(q->uar_db, cqpoll_mlx5_uar_word(word, q->cqn), __ATOMIC_RELAXED);
	/*
	 * Flush the doorbell out, and keep the loads of any poll that follows
	 * behind it. Hardware arms are level and need only the flush; an arm
	 * that covers only later entries (the emulator's lazy mode, declared
	 * edge) needs the store -> load order for the core's re-poll to see
	 * every entry the arm may miss. The arm is the slow path: one fence.
	 */
	cqpoll_mlx5_uar_flush_before_repoll();
	return 0;
}

void
cqpoll_mlx5_events_consumed(struct cqpoll_mlx5_cq *q, unsigned int n)
{
	/* rdma-core mlx5_cq_event: once per event read, never per re-arm (§5.2). */
	q->sn += n;
}
