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
	struct emu_wq_qp *next;
};

struct emu_wq_ctx {
	struct ibv_context ctx;      /* first: the handle */
	struct ibv_device dev;
	pthread_mutex_t lock;
	uint32_t next_key;
	uint32_t next_qpn;
	uint32_t pds;
	struct emu_wq_mr *mrs;
	struct emu_wq_qp *qps;
	uint8_t *scratch;            /* a message on its way */
	struct cqpoll_mlx5_emu_wq_stats stats;
};

/* Largest message the emulated device carries. */
#define EMU_WQ_MSG_MAX (1u << 20)

/* The emulated context of @p ctx, or NULL. */
struct emu_wq_ctx *cqpoll_mlx5_emu_wq_ctx_of(struct ibv_context *ctx);
/* Carry out what @p qp's doorbells announced; under the lock. Send WQEs done. */
uint32_t cqpoll_mlx5_emu_wq_service(struct emu_wq_ctx *c, struct emu_wq_qp *qp);
/* The device's state of @p qp back to its start (RESET); under the lock. */
void cqpoll_mlx5_emu_wq_reset(struct emu_wq_qp *qp);

#endif /* CQPOLL_MLX5_EMU_WQ_H */
