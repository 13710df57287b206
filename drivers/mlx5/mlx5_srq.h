/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_SRQ_PRIV_H
#define CQPOLL_MLX5_SRQ_PRIV_H

/*
 * A shared receive queue the driver posts to itself
 * (doc/guides/mlx5-wqe-contract.md §5.1): its ring as
 * mlx5dv_init_obj(MLX5DV_OBJ_SRQ) describes it, the free list of WQE indexes
 * kept as rdma-core's provider keeps it (providers/mlx5/srq.c, v44: a post
 * takes the head and follows its next-index link; a retired WQE is linked
 * after the tail; head == tail is full), and the wr_id of each WQE.
 */

#include <pthread.h>
#include <stdint.h>

#include "cqpoll_mlx5.h"
#include "ibv_async.h"
#include "ibv_glue.h"

struct ibv_srq;

struct cqpoll_mlx5_srq {
	/* Under lock: the free list, the counters and the per-WQE records. */
	pthread_spinlock_t lock;
	uint8_t *buf;
	uint32_t shift;           /* log2 of the WQE stride */
	uint32_t nwqes;           /* WQEs of the free list's ring */
	uint32_t head;            /* the next WQE a post takes */
	uint32_t tail;            /* the last free WQE: a retired one is linked after it */
	uint32_t counter;         /* receives posted: the doorbell record */
	uint32_t retired;         /* receives whose completion gave their WQE back */
	uint64_t *wrid;
	uint8_t *busy;            /* posted and not yet retired, by WQE index */
	uint32_t max_gs;          /* data segments one WQE holds */
	volatile uint32_t *dbrec;
	/* Set at creation. */
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srqn;
	uint32_t qps;             /* QPs created on it (their create and destroy) */
	struct ibv_srq *ibsrq;
	const struct cqpoll_ibv_glue *glue;
	struct cqpoll_ibv_srq_watch watch;
};

/*
 * A receive completion of a QP on @p srq: its wr_id from the WQE the CQE's
 * counter names, and that WQE back on the free list. 0 if the counter names
 * no posted WQE (then nothing is changed).
 */
int cqpoll_mlx5_srq_complete(struct cqpoll_mlx5_srq *srq, struct cqpoll_completion *c);

#endif /* CQPOLL_MLX5_SRQ_PRIV_H */
