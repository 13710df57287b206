/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_EMU_PRIVATE_H
#define CQPOLL_MLX5_EMU_PRIVATE_H

/*
 * The emulated mlx5 device: the memory a provider would map (CQ buffer,
 * doorbell record, UAR page), the device's CQ context, and its event sink.
 *
 * Who runs the device: cqpoll_mlx5_emu_post() (the producer thread writes
 * CQEs) and a device thread that reads the UAR doorbell periodically; both
 * under dev->lock, which serialises the device as the hardware's CQ context
 * is. The driver never calls into the emulator: it stores to the UAR page as
 * it would to a device, and the device finds the store (see mlx5_emu_dev.c).
 */

#include <pthread.h>
#include <stdint.h>

#include <infiniband/mlx5dv.h>

#include "cqpoll_mlx5_emu.h"
#include "mlx5_private.h"

enum cqpoll_mlx5_emu_state {
	EMU_DISARMED = 0, /* fired, or never armed */
	EMU_ARMED,
	EMU_ARMED_SOL,
};

/* Completions one compressed session holds at most (the device's choice). */
#define CQPOLL_MLX5_EMU_ZIP_MAX 32
/*
 * How long the device holds a completion for a compressed session: the
 * first look at the doorbell after this writes the session.
 */
#define CQPOLL_MLX5_EMU_ZIP_WINDOW_NS 20000u
/* Origin of the device clock: far from any CLOCK_MONOTONIC value. */
#define CQPOLL_MLX5_EMU_CLOCK_ORIGIN 0x3c00000000000000ull

struct cqpoll_mlx5_emu_dev {
	pthread_mutex_t lock;
	/* Memory, set at creation. */
	struct mlx5dv_cq dv;
	uint32_t log2_n;
	int lazy;            /* lazy arm: only CQEs after the doorbell fire */
	int strict_sn;
	/* 1 from arming the delay timer until the consumer takes its expiry. */
	uint32_t timer_due;
	int overrun_error;
	uint32_t event_delay_us;
	uint32_t poll_ns;    /* device thread period */
	int efd;             /* eventfd: events; -1 on a channel */
	int tfd;             /* timerfd: delayed events, -1 without delay or on a channel */
	int errfd;           /* eventfd: async errors (overrun), not events */
	int epfd;            /* epoll over the three: the CQ's event fd; -1 on a channel */
	/*
	 * On a shared emulated channel: the emulated ibv_cq whose events are
	 * this CQ's (what the provider's ibv_cq is on hardware), else NULL.
	 */
	struct ibv_cq *ev_cq;
	uint64_t due_ns;     /* on a channel: when the delayed event is queued */
	int32_t *drv_err;    /* where device errors reach the driver */

	/* CQ context, under lock. */
	uint32_t pi;         /* CQEs written, free-running */
	uint32_t checked_pi; /* pi at the last doorbell check */
	uint32_t arm_from;   /* lazy: first CQE the current arm may fire for */
	uint32_t last_sol;   /* index of the last solicited or error CQE */
	int have_sol;
	enum cqpoll_mlx5_emu_state state;
	uint32_t arm_ci;
	uint32_t fired;      /* events delivered: what the driver's sn must follow */
	int broken;          /* overrun or failure: the CQ is in error */
	int broken_err;      /* what posts return then (-errno) */
	/* Compression: completions held for the next session, in post order. */
	int compress;
	int enhanced;        /* enhanced layout: blocks after a plain title */
	uint32_t nzip;
	uint64_t zip_since;  /* when the first held completion was posted */
	struct cqpoll_completion zip[CQPOLL_MLX5_EMU_ZIP_MAX];
	struct cqpoll_mlx5_emu_stats stats;

	/* The CQ's verbs identity without a channel: what a QP names it by. */
	struct ibv_cq id_cq;
	/* Device thread. */
	pthread_t thread;
	int thread_started;
	int stop;
};

/* The driver's per-CQ state, and the device under it. */
struct cqpoll_mlx5_emu_cq {
	struct cqpoll_mlx5_cq q; /* first: the driver's priv is this */
	struct cqpoll_mlx5_emu_dev *emu;
	struct cqpoll_mlx5_emu_cq *next; /* live list (the oracle's) */
};

static inline struct cqpoll_mlx5_emu_dev *
cqpoll_mlx5_emu_dev_of(void *priv)
{
	return ((struct cqpoll_mlx5_emu_cq *)priv)->emu;
}

extern const struct cqpoll_driver_ops cqpoll_mlx5_emu_ops;

/*
 * The oracle of the CQ whose driver state is @p priv: 1 if stranded, 0 if not,
 * -ENOTSUP if @p priv is no live emulated CQ.
 */
int cqpoll_mlx5_emu_stranded(void *priv);

int cqpoll_mlx5_emu_dev_check(struct cqpoll_mlx5_emu_dev *dev);
void cqpoll_mlx5_emu_dev_evaluate(struct cqpoll_mlx5_emu_dev *dev);
int cqpoll_mlx5_emu_dev_stranded(struct cqpoll_mlx5_emu_dev *dev);
int cqpoll_mlx5_emu_dev_start(struct cqpoll_mlx5_emu_dev *dev);
void cqpoll_mlx5_emu_dev_stop(struct cqpoll_mlx5_emu_dev *dev);
int cqpoll_mlx5_emu_dev_raise_error(struct cqpoll_mlx5_emu_dev *dev, int32_t err);
/* Write the completions held for a compressed session; under dev->lock. */
int cqpoll_mlx5_emu_zip_flush(struct cqpoll_mlx5_emu_dev *dev);
/*
 * Work queues (mlx5_emu_qp.c) write CQEs through these. Room: 1 if @p k
 * more CQEs fit now, 0 if not, -errno of a broken CQ. Write: one CQE built
 * by the caller (op: op_own without the owner bit), body first, op_own last;
 * 0, -ENOSPC or the broken CQ's -errno.
 */
int cqpoll_mlx5_emu_cq_room(struct cqpoll_mlx5_emu_dev *dev, uint32_t k);
int cqpoll_mlx5_emu_cq_write(struct cqpoll_mlx5_emu_dev *dev, const struct mlx5_cqe64 *cqe,
			     uint8_t op, int solicited);
/* The emulated CQ whose verbs identity is @p ibcq, or NULL. */
struct cqpoll_mlx5_emu_dev *cqpoll_mlx5_emu_dev_of_ibcq(const struct ibv_cq *ibcq);
/* The device clock, in ticks (mlx5_emu_post.c). */
uint64_t cqpoll_mlx5_emu_clock_ticks(void);

#endif /* CQPOLL_MLX5_EMU_PRIVATE_H */
