/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_SRQ_H
#define CQPOLL_MLX5_SRQ_H

/**
 * @file
 * Shared receive queues of cqpoll mlx5 QPs. Included by cqpoll_mlx5.h: include
 * that one.
 */

#include <stdint.h>

#include "cqpoll_mlx5.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ibv_pd;

/**
 * @name Shared receive queues (EXPERIMENTAL)
 *
 * A shared receive queue (SRQ) holds receives that the cqpoll mlx5 QPs
 * created on it (cqpoll_mlx5_qp_conf::srq) consume, kept as rdma-core's mlx5
 * provider keeps one (providers/mlx5/srq.c): WQEs of a next-index segment
 * and data segments in a free list, taken at its head by a post and given
 * back at its tail by the completion. A receive completion of such a QP
 * carries the wr_id of the SRQ WQE its CQE names. An error of one QP
 * flushes none of the SRQ's receives: the other QPs take them
 * (doc/guides/mlx5-wqe-contract.md §5.1).
 *
 * Threads: posts from any thread, the QPs' CQs polled from any threads (the
 * SRQ's lock, as rdma-core's); destroy alone.
 */
/**@{*/

/** Configuration of a shared receive queue. */
struct cqpoll_mlx5_srq_conf {
	uint32_t max_wr;   /**< Receives the SRQ holds at least; 0: 256. */
	uint32_t max_sge;  /**< Scatter/gather entries per receive; 0: 1. */
	/** Arm the limit event at creation with this limit (0: not armed). */
	uint32_t limit;
};

/** What an SRQ is and holds (cqpoll_mlx5_srq_query()). */
struct cqpoll_mlx5_srq_attr {
	uint32_t max_wr;       /**< Receives outstanding at most (more: -ENOMEM). */
	uint32_t max_sge;      /**< Entries per receive. */
	/** The armed limit (ibv_query_srq()): 0 when not armed, or no longer. */
	uint32_t limit;
	uint32_t outstanding;  /**< Receives posted and not yet retired by a completion. */
	uint32_t limit_events; /**< IBV_EVENT_SRQ_LIMIT_REACHED events of this SRQ so far. */
	uint32_t srqn;         /**< The SRQ's number, 0 if the device did not say. */
	uint32_t qps;          /**< QPs created on it and not yet destroyed. */
	uint32_t reserved;     /**< 0. */
};

/**
 * Create a shared receive queue (ibv_create_srq() and
 * mlx5dv_init_obj(MLX5DV_OBJ_SRQ), or the emulated device's).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param pd
 *   Protection domain of the QPs that will use it.
 * @param conf
 *   Sizes and the limit; NULL for defaults.
 * @return
 *   The SRQ, or NULL with errno set: EINVAL (NULL @p pd, a limit over
 *   max_wr), EOPNOTSUPP (not an mlx5 device, or a ring this driver cannot
 *   write), ENOMEM, or the errno of ibv_create_srq(), mlx5dv_init_obj() or
 *   ibv_modify_srq().
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
struct cqpoll_mlx5_srq *cqpoll_mlx5_srq_create(struct ibv_pd *pd,
					       const struct cqpoll_mlx5_srq_conf *conf);

/**
 * Destroy an SRQ; receives still posted are dropped without completions.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param srq
 *   The SRQ, or NULL (nothing done).
 * @return
 *   0; -EBUSY while a QP created on it exists (ibv_destroy_srq(3)); or
 *   -errno of ibv_destroy_srq() (the SRQ is then kept).
 *
 * Thread safety: not concurrently with any other call on the SRQ or a poll
 * of its QPs' CQs.
 */
__cqpoll_experimental
int cqpoll_mlx5_srq_destroy(struct cqpoll_mlx5_srq *srq);

/**
 * Post receives to the SRQ in a burst, then one doorbell-record write;
 * entries written as given, empty ones too (rdma-core's mlx5_post_srq_recv()).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param srq
 *   The SRQ.
 * @param wrs
 *   The receives.
 * @param n
 *   How many.
 * @return
 *   - > 0: receives posted, the first ones of @p wrs.
 *   - -ENOMEM: max_wr receives are outstanding (not yet retired by their
 *     completions), as rdma-core refuses them.
 *   - -EINVAL: NULL argument, @p n 0, or the first receive has more
 *     entries than max_sge or a NULL sg_list.
 *
 * Thread safety: safe from any thread, concurrently with other posts and
 * with polls of the QPs' CQs (the SRQ's lock).
 */
__cqpoll_experimental
int cqpoll_mlx5_srq_post_recv(struct cqpoll_mlx5_srq *srq,
			      const struct cqpoll_mlx5_recv_wr *wrs, unsigned int n);

/**
 * Arm the SRQ's limit event (ibv_modify_srq() with IBV_SRQ_LIMIT): once the
 * SRQ holds fewer receives than @p limit, the device raises
 * IBV_EVENT_SRQ_LIMIT_REACHED once and disarms the limit. cqpoll reads it
 * from the context's async events (a cqpoll CQ of the device, or
 * cqpoll_mlx5_srq_query()) and counts it in cqpoll_mlx5_srq_attr.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param srq
 *   The SRQ.
 * @param limit
 *   The limit, up to max_wr.
 * @return
 *   0, -EINVAL (NULL @p srq, @p limit over max_wr), or -errno of
 *   ibv_modify_srq().
 *
 * Thread safety: not concurrently with cqpoll_mlx5_srq_destroy().
 */
__cqpoll_experimental
int cqpoll_mlx5_srq_arm_limit(struct cqpoll_mlx5_srq *srq, uint32_t limit);

/**
 * The SRQ's sizes, limit (ibv_query_srq()), receives outstanding and limit
 * events seen, the context's pending async events read first.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param srq
 *   The SRQ.
 * @param[out] attr
 *   Filled.
 * @return
 *   0, -EINVAL (NULL argument), or -errno of ibv_query_srq().
 *
 * Thread safety: safe from any thread while the SRQ exists.
 */
__cqpoll_experimental
int cqpoll_mlx5_srq_query(struct cqpoll_mlx5_srq *srq, struct cqpoll_mlx5_srq_attr *attr);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_MLX5_SRQ_H */
