/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_QP_H
#define CQPOLL_MLX5_QP_H

/*
 * A QP whose work the driver posts itself (doc/guides/mlx5-wqe-contract.md): its rings
 * as mlx5dv_init_obj(MLX5DV_OBJ_QP) describes them, the per-WQE records that
 * turn a completion's WQE counter back into the caller's wr_id, and the CQs'
 * lists of such QPs. Counters are free-running 32-bit; the device sees their
 * low 16 bits (§1.3, §2.1).
 */

#include <stdint.h>

#include "cqpoll_mlx5.h"
#include "mlx5_private.h"

struct ibv_qp;

/* QPs one CQ can serve; a CQ's completions are matched against them by number. */
#define CQPOLL_MLX5_QP_PER_CQ 16
/* Entries of a WQE of the post's common path: with control and remote address, DS <= 63. */
#define CQPOLL_MLX5_FAST_SGE_MAX 61u

/*
 * What the poller needs of a posted WQE, by the WQEBB index of its first
 * block: the caller's wr_id, and the send request counter after it (the
 * requests a completion of it retires, rdma-core's wqe_head).
 */
struct cqpoll_mlx5_sq_rec {
	uint64_t wr_id;
	uint32_t wr_end;
	uint32_t reserved;
};

struct cqpoll_mlx5_qp {
	/* Send queue, poster's thread; the tails are the poller's. */
	uint8_t *sq_buf;
	uint8_t *sq_end;          /* sq_buf + sq_cnt WQEBBs: segments wrap here */
	uint32_t sq_cnt;          /* WQEBBs in the ring, a power of two */
	uint32_t sq_head;         /* WQEBB counter after the last posted WQE */
	uint32_t sq_tail;         /* first WQEBB not yet retired; the poller's own */
	/*
	 * Send requests posted and retired (poller writes, release): at most
	 * sq_wr_max outstanding, as rdma-core's mlx5_wq_overflow() (caps'
	 * max_send_wr, so that a CQ sized from it cannot overrun). sq_wr_max
	 * times the largest WQE the QP takes fits in the ring: the request
	 * count alone keeps the poster off work the device may still read.
	 */
	uint32_t sq_wr_head;
	uint32_t sq_wr_tail;
	uint32_t sq_wr_max;
	/*
	 * sq_wr_max in the states that take sends (RTS, SQD, SQE, ERR) if one
	 * entry is allowed, else 0: the one test of the post's common path,
	 * whose refusal the general path then explains.
	 */
	uint32_t sq_fast_max;
	uint32_t qpn_ds;          /* QPN << 8: the control segment's word, DS or-ed in */
	uint32_t qpn_ds_be;       /* the same, big-endian: DS (< 64) is its last byte */
	volatile uint32_t *dbrec; /* [0] receive counter, [1] send counter (BE) */
	uint8_t *bf_reg;          /* BlueFlame register, the doorbell's target */
	uint32_t bf_size;         /* 0: one half only; else the offset toggles */
	uint32_t bf_offset;
	struct cqpoll_mlx5_sq_rec *sq_rec;
	uint32_t max_send_sge;
	uint32_t fast_max_sge;    /* entries of the post's common path (DS < 64) */
	uint32_t fast_shift;      /* its largest WQE fits in 2^fast_shift WQEBBs */
	uint32_t max_inline;
	/* Receive queue. */
	uint8_t *rq_buf;
	uint32_t rq_cnt;          /* WQEs, a power of two */
	uint32_t rq_stride;
	uint32_t rq_max_gs;       /* data segments one receive WQE holds */
	uint32_t rq_head;
	uint32_t rq_tail;         /* poller writes, release */
	uint32_t rq_wr_max;       /* receives outstanding at most: caps' max_recv_wr */
	uint64_t *rq_wrid;
	uint32_t max_recv_sge;
	struct cqpoll_mlx5_srq *srq; /* receives from it instead (mlx5_srq.h), or NULL */
	int state;                /* enum ibv_qp_state, after the last modify */
	/* Control path. */
	struct cqpoll_mlx5_qp_caps caps;
	struct ibv_qp *ibqp;
	const struct cqpoll_ibv_glue *glue;
	struct cqpoll_cq *scq, *rcq;
};

/* The QPs of one CQ and the poll they wrap (mlx5_qp_retire.c). */
struct cqpoll_mlx5_qp_set {
	cqpoll_poll_burst_t inner;  /* the CQ's own poll, given back with the last QP */
	uint32_t n;
	struct cqpoll_mlx5_qp *qp[CQPOLL_MLX5_QP_PER_CQ];
};

/* The poll of a CQ that serves QPs: its own, then wr_ids and retirement. */
cqpoll_poll_burst_t cqpoll_mlx5_qp_poll_of(const struct cqpoll_mlx5_cq *q);

#endif /* CQPOLL_MLX5_QP_H */
