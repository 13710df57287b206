/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_PRIVATE_H
#define CQPOLL_MLX5_PRIVATE_H

/*
 * The driver's per-CQ state. The poll and arm code sees only the fields that
 * struct mlx5dv_cq provides and its own counters, so it runs unchanged on a
 * device and on the emulator (libcqpoll_emu calls it through the INTERNAL
 * symbols of version.map); only the event source differs.
 */

#include <stdint.h>

#include "cqpoll_driver.h"
#include "cqpoll_mlx5.h"
#include "ibv_channel.h"
#include "ibv_glue.h"
#include "mlx5_prm.h"

struct ibv_cq;
struct ibv_comp_channel;
struct mlx5dv_cq;
struct cqpoll_mlx5_qp_set;


/* Inline payloads one burst can return; a burst with more stops early. */
#define CQPOLL_MLX5_SCRATCH_CNT 64

/*
 * A compressed session being delivered (§6). The title and the current mini
 * array are copies: the slots go back to the device as the consumer index
 * passes them, and a burst may end in the middle of a session.
 */
struct cqpoll_mlx5_zip {
	struct mlx5_cqe64 title;
	struct cqpoll_mlx5_mini_cqe mini[CQPOLL_MLX5_MINI_PER_ARRAY];
	uint32_t title_idx;   /* counter of the title: the session's first index */
	uint32_t cnt;         /* completions in the session */
	uint32_t next;        /* the next one to deliver; == cnt: no session */
	/*
	 * Enhanced layout: the title is the last plain CQE before a block
	 * (kept across bursts), or the previous block's when blocks follow
	 * each other; end is the index after the last block's completions.
	 */
	uint32_t end;
	uint32_t title_valid;
};

/* How the device may compress this CQ's CQEs (§6). */
enum cqpoll_mlx5_comp_layout {
	CQPOLL_MLX5_COMP_NONE = 0,
	CQPOLL_MLX5_COMP_BASIC,
	CQPOLL_MLX5_COMP_ENHANCED,  /* validity by iteration count, not owner */
};

/* What only CQEs the fast path refuses need; never touched by it. */
struct cqpoll_mlx5_slow {
	struct cqpoll_mlx5_zip zip;
	/* Inline payloads of the last burst, by position in it (§2.3). */
	uint8_t scratch[CQPOLL_MLX5_SCRATCH_CNT][CQPOLL_MLX5_INLINE64_MAX];
	uint32_t layout;      /* enum cqpoll_mlx5_comp_layout */
};

struct cqpoll_mlx5_cq {
	/* Consumer fast path. */
	uint8_t *buf;             /* mlx5dv_cq::buf */
	volatile uint32_t *dbrec; /* mlx5dv_cq::dbrec, big-endian words */
	uint32_t ci;              /* next CQE to poll, free-running */
	uint32_t cqe_cnt;         /* N, a power of two */
	/*
	 * 0, or -errno the device side raised (-EOVERFLOW: overrun). Written by the
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
	struct ibv_cq *ibcq;      /* hardware; the emulator's event identity */
	const struct cqpoll_ibv_glue *glue; /* what serves ibcq's context */
	struct cqpoll_ibv_member ev; /* this CQ on its channel (the demux) */
	int own_verbs;            /* created here: destroyed here */
	/* QPs cqpoll posts for on this CQ (mlx5_qp.h), or NULL: then the bare poll. */
	struct cqpoll_mlx5_qp_set *qps;
	struct cqpoll_mlx5_slow slow;
};

extern const struct cqpoll_driver_ops cqpoll_mlx5_ops;

/* Fill @p q from an mlx5dv_cq; -EINVAL if it describes no usable CQ. */
int cqpoll_mlx5_cq_setup(struct cqpoll_mlx5_cq *q, const struct mlx5dv_cq *dv,
			 uint32_t ci, uint32_t sn, uint32_t flags);
/* How the CQ's arm must be treated, from its CQPOLL_MLX5_F_* flags. */
enum cqpoll_arm_semantics cqpoll_mlx5_arm_semantics(uint32_t flags);
/*
 * The burst poll for a CQE size and validity rule (owner bit, or the
 * enhanced layout's iteration count), or NULL if unsupported.
 */
cqpoll_poll_burst_t cqpoll_mlx5_poll_select(uint32_t cqe_size, int enhanced);
/* The burst poll of a CQ set up by cqpoll_mlx5_cq_setup(). */
cqpoll_poll_burst_t cqpoll_mlx5_poll_of(const struct cqpoll_mlx5_cq *q);
int cqpoll_mlx5_arm(void *priv);
/* The next CQE's op_own, for a power-monitor wait (cqpoll_monitor.h). */
int cqpoll_mlx5_get_monitor_addr(void *priv, struct cqpoll_monitor_cond *cond);
/* Account @p n consumed events: each advances the arm sequence number. */
void cqpoll_mlx5_events_consumed(struct cqpoll_mlx5_cq *q, unsigned int n);
/*
 * Take this CQ's events from its channel through the demux, advancing the
 * arm sequence number by each: count, or -errno.
 */
int cqpoll_mlx5_channel_event_get(struct cqpoll_mlx5_cq *q);
/*
 * Decode a CQE the fast path refused, owned by software, at counter @p idx,
 * into @p c, the @p pos-th completion of the burst. 1: decoded (an undecodable
 * CQE becomes a failed completion); 0: stop the burst before it (no room for
 * its inline payload in this burst).
 */
int cqpoll_mlx5_decode_slow(struct cqpoll_mlx5_cq *q, const struct mlx5_cqe64 *cqe,
			    uint8_t op_own, uint32_t idx, struct cqpoll_completion *c,
			    unsigned int pos);
/* The next completion of the compressed session in progress, at counter @p idx. */
void cqpoll_mlx5_zip_next(struct cqpoll_mlx5_cq *q, uint32_t idx,
			  struct cqpoll_completion *c);
/* A burst ends at @p ci inside a session: divert the fast path there. */
void cqpoll_mlx5_zip_mark(struct cqpoll_mlx5_cq *q, uint32_t ci);
/* Enhanced layout, a burst ended at @p ci on a plain CQE: keep it as the title. */
void cqpoll_mlx5_zip_keep_title(struct cqpoll_mlx5_cq *q, uint32_t ci);

#endif /* CQPOLL_MLX5_PRIVATE_H */
