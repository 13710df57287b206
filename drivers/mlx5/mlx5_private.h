/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_PRIVATE_H
#define CQPOLL_MLX5_PRIVATE_H

/*
 * The driver's per-CQ state. The poll and arm code sees only the fields that
 * struct mlx5dv_cq provides and its own counters, so it runs unchanged on a
 * device and on the emulator; only the event source differs (the seam).
 */

#include <stdint.h>

#include "cqpoll_driver.h"
#include "cqpoll_mlx5.h"

struct ibv_cq;
struct ibv_comp_channel;
struct mlx5dv_cq;

struct cqpoll_mlx5_cq {
	/* Consumer fast path. */
	uint8_t *buf;             /* mlx5dv_cq::buf */
	volatile uint32_t *dbrec; /* mlx5dv_cq::dbrec, big-endian words */
	uint32_t ci;              /* next CQE to poll, free-running */
	uint32_t cqe_cnt;         /* N, a power of two */
	/*
	 * 0, or -errno the device side raised (-EIO: overrun). Written by the
	 * event side with a relaxed atomic; read by polls that find nothing,
	 * so CQEs written before the error are still delivered.
	 */
	int32_t dev_err;
	uint32_t cqe_size;
	/* Arm, consumer thread. */
	uint32_t sn;              /* events consumed: arm sequence number, mod 4 */
	uint32_t arm_cmd;         /* MLX5_CQ_DB_REQ_NOT or MLX5_CQ_DB_REQ_NOT_SOL */
	volatile uint64_t *uar_db; /* mlx5dv_cq::cq_uar + MLX5_CQ_DOORBELL */
	uint32_t cqn;
	/* Where the fields above and the events come from. */
	struct ibv_cq *ibcq;      /* hardware */
	struct ibv_comp_channel *chan;
	int own_verbs;            /* created here: destroyed here */
};

extern const struct cqpoll_driver_ops cqpoll_mlx5_ops;

/* Fill @p q from an mlx5dv_cq; -EINVAL if it describes no usable CQ. */
int cqpoll_mlx5_cq_setup(struct cqpoll_mlx5_cq *q, const struct mlx5dv_cq *dv,
			 uint32_t ci, uint32_t sn, uint32_t flags);
/* The burst poll for a CQE size, or NULL if unsupported. */
cqpoll_poll_burst_t cqpoll_mlx5_poll_select(uint32_t cqe_size);
int cqpoll_mlx5_poll_64(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_mlx5_poll_128(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_mlx5_arm(void *priv);
/* Account @p n consumed events: each advances the arm sequence number. */
void cqpoll_mlx5_events_consumed(struct cqpoll_mlx5_cq *q, unsigned int n);
/* Decode a CQE that is not a plain success; -EPROTO if unsupported. */
int cqpoll_mlx5_decode_slow(const struct mlx5_cqe64 *cqe, uint8_t op_own,
			    struct cqpoll_completion *c);

#endif /* CQPOLL_MLX5_PRIVATE_H */
