/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_EMU_WQ_H
#define CQPOLL_MLX5_EMU_WQ_H

/*
 * The emulated device's context for work queues: its PDs, MRs and QPs, the
 * memory of each QP as rdma-core's provider lays it out
 * (doc/guides/mlx5-wqe-contract.md §1), and the device's own state of each queue. The
 * device side reads the rings with its own parser (mlx5_emu_wq.c), never the
 * driver's writers.
 */

#include <pthread.h>
#include <stdint.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "cqpoll_mlx5_emu.h"
#include "mlx5_emu_private.h"

/* rdma-core's UAR layout: BlueFlame registers from 0x800, halves of 256 (§1.4). */
#define EMU_WQ_BF_OFFSET 0x800
#define EMU_WQ_BF_SIZE 256

struct emu_wq_mr {
	struct ibv_mr mr;
	int access;
	struct emu_wq_mr *next;
};

/*
 * A shared receive queue (doc/guides/mlx5-wqe-contract.md §5.1): its memory
 * as rdma-core's provider lays it out and links it (mlx5_alloc_srq_buf), and
 * the device's own place in it: it consumes the posted WQEs by following
 * the next-index links the driver wrote.
 */
struct emu_wq_srq {
	struct ibv_srq ibsrq;        /* first: what the glue hands out */
	struct mlx5dv_srq dv;        /* what mlx5dv_init_obj() fills */
	uint32_t nwqes;              /* WQEs of the free list (max_wr + 1, a power of two) */
	uint32_t max_gs;             /* data segments one WQE holds */
	/* Device state, under the context's lock. */
	uint32_t consumed;           /* receives taken from it */
	uint32_t next;               /* the WQE it takes next */
	uint32_t limit;              /* armed limit, 0: not armed */
	uint32_t qps;                /* QPs on it */
	struct emu_wq_srq *link;
};

struct emu_wq_qp {
	struct ibv_qp ibqp;          /* first: what the glue hands out */
	struct mlx5dv_qp dv;         /* what mlx5dv_init_obj() fills */
	uint8_t *buf;                /* RQ at 0, SQ after (§1.2) */
	uint8_t *uar;                /* page; the register is at EMU_WQ_BF_OFFSET */
	struct cqpoll_mlx5_emu_dev *scq, *rcq;
	/* Device state, under the context's lock. */
	int state;                   /* enum ibv_qp_state */
	int access;                  /* IBV_QP_ACCESS_FLAGS: what peers may do here */
	uint32_t dest_qpn;
	uint8_t rnr_retry;
	uint32_t sq_ci;              /* next WQEBB the device reads, free-running */
	uint16_t sq_target;          /* send counter of the last doorbell read */
	uint32_t rq_ci;              /* receives consumed */
	struct emu_wq_srq *srq;      /* its receives' queue, or NULL: its own */
	struct emu_wq_qp *next;
};

/* Async events raised and not yet taken (ibv_get_async_event()). */
#define EMU_WQ_ASYNC_MAX 64

struct emu_wq_ctx {
	struct ibv_context ctx;      /* first: the handle */
	struct ibv_device dev;
	pthread_mutex_t lock;
	uint32_t next_key;
	uint32_t next_qpn;
	uint32_t pds;
	struct emu_wq_mr *mrs;
	struct emu_wq_qp *qps;
	struct emu_wq_srq *srqs;
	uint32_t next_srqn;
	struct ibv_async_event async[EMU_WQ_ASYNC_MAX];
	uint32_t async_head, async_tail;
	uint8_t *scratch;            /* a message on its way */
	struct cqpoll_mlx5_emu_wq_stats stats;
};

/* Largest message the emulated device carries. */
#define EMU_WQ_MSG_MAX (1u << 20)

/* The emulated context of @p ctx, or NULL. */
struct emu_wq_ctx *cqpoll_mlx5_emu_wq_ctx_of(struct ibv_context *ctx);
/* Carry out what @p qp's doorbells announced; under the lock. Send WQEs done. */
uint32_t cqpoll_mlx5_emu_wq_service(struct emu_wq_ctx *c, struct emu_wq_qp *qp);
/*
 * A receive of @p qp: the data segments of its next receive WQE (of its own
 * queue or its SRQ), their count and the WQE's index for the CQE; NULL if
 * none is posted. Under the lock.
 */
const uint8_t *cqpoll_mlx5_emu_wq_recv_wqe(const struct emu_wq_qp *qp, uint32_t *nseg,
					   uint16_t *idx);
/* That receive taken; under the lock. */
void cqpoll_mlx5_emu_wq_recv_take(struct emu_wq_ctx *c, struct emu_wq_qp *qp);
/* SRQ verbs of the context's table (mlx5_emu_srq.c). */
struct ibv_srq *cqpoll_mlx5_emu_srq_create(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int cqpoll_mlx5_emu_srq_modify(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int cqpoll_mlx5_emu_srq_query(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int cqpoll_mlx5_emu_srq_destroy(struct ibv_srq *srq);
/* mlx5dv_get_srq(); 0 or an errno value. */
int cqpoll_mlx5_emu_srq_dv(struct ibv_srq *srq, struct mlx5dv_srq *out);
/* Take the oldest async event raised; 0, or -1 with errno EAGAIN. */
int cqpoll_mlx5_emu_async_get(struct emu_wq_ctx *c, struct ibv_async_event *ev);

/* The device's state of @p qp back to its start (RESET); under the lock. */
void cqpoll_mlx5_emu_wq_reset(struct emu_wq_qp *qp);

#endif /* CQPOLL_MLX5_EMU_WQ_H */
