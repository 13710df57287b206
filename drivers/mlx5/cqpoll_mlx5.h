/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_H
#define CQPOLL_MLX5_H

/**
 * @file
 * mlx5 device-direct CQs, on a ConnectX device or on the emulated mlx5 device.
 *
 * The driver reads CQEs straight from the CQ buffer described by
 * struct mlx5dv_cq, writes the consumer index to the doorbell record once per
 * burst, and arms with its own consumer index and arm sequence number through
 * the UAR doorbell. Arms are level (CQPOLL_ARM_LEVEL): an arm fires at once
 * when entries at or past its index exist. Never call ibv_poll_cq() or
 * ibv_req_notify_cq() on a CQ handed to this driver: the provider's consumer
 * index does not follow direct polling, and its arms lose events.
 *
 * The emulated device ("mlx5-emu") lays out the same memory, writes genuine
 * struct mlx5_cqe64 entries and decodes the arm doorbells; the poll and arm
 * code is the same on both. See doc/guides/mlx5-driver.md.
 *
 * Completions: cqpoll_completion::wr_id carries the CQE's 16-bit wqe_counter
 * (the QP owner maps it to its request, as rdma-core does with its wrid
 * array); timestamp is the CQE's raw value (HCA clock units on hardware,
 * CLOCK_MONOTONIC ns on the emulator); for failed completions vendor_err holds
 * the vendor syndrome.
 */

#include <stdint.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ibv_context;
struct ibv_cq;
struct ibv_comp_channel;
struct mlx5dv_cq;

/** @name Flags of struct cqpoll_mlx5_conf and struct cqpoll_mlx5_emu_conf */
/**@{*/
/**
 * Arm for solicited completions only (receives with the SE bit, and errors).
 * A CQ so armed wakes only for those: cqpoll_poll_and_arm() returning 0 then
 * guarantees an event for the next solicited or failed completion only.
 */
#define CQPOLL_MLX5_F_SOLICITED_ONLY (1u << 0)
/** 128-byte CQEs (hardware: through mlx5dv_create_cq()). */
#define CQPOLL_MLX5_F_CQE128         (1u << 1)
/**@}*/

/** Configuration of a CQ on a real mlx5 device. */
struct cqpoll_mlx5_conf {
	uint32_t size;            /**< Minimum entries (rounded up to a power of 2); 0: 4096. */
	int comp_vector;          /**< Completion vector of the event. */
	uint32_t event_ack_batch; /**< 0: the build-time default. */
	uint32_t flags;           /**< CQPOLL_MLX5_F_* */
	/**
	 * The completion channel to create the CQ on, shared with other CQs of
	 * either driver (mlx5, verbs) and destroyed by the caller after them;
	 * NULL: a channel of its own, destroyed with the CQ.
	 */
	struct ibv_comp_channel *channel;
};

/**
 * Create a CQ on an mlx5 device, on its own completion channel or a shared
 * one, and take it over for direct polling.
 *
 * @param ctx
 *   An open device context; it must outlive the CQ.
 * @param conf
 *   Configuration; NULL for defaults.
 * @return
 *   The CQ, or NULL with errno set: EINVAL (bad argument or size over 2^24),
 *   EOPNOTSUPP (not an mlx5 device, or 128-byte CQEs unsupported by this
 *   rdma-core), ENOMEM, or the errno of ibv_create_comp_channel(),
 *   ibv_create_cq() or mlx5dv_init_obj().
 *
 * Thread safety: safe from any thread; the device context must not be closed
 * concurrently.
 */
struct cqpoll_cq *cqpoll_mlx5_cq_create(struct ibv_context *ctx,
					const struct cqpoll_mlx5_conf *conf);

/** Where an attached CQ's consumer stands (see cqpoll_mlx5_cq_attach()). */
struct cqpoll_mlx5_attach_conf {
	uint32_t ci;              /**< Next CQE index to poll (0 for a fresh CQ). */
	uint32_t sn;              /**< Events consumed so far on the CQ (mod 4 is used). */
	uint32_t event_ack_batch; /**< 0: the build-time default. */
	uint32_t flags;           /**< CQPOLL_MLX5_F_SOLICITED_ONLY only. */
};

/**
 * Take over an existing mlx5 verbs CQ for direct polling. The caller keeps
 * ownership of @p cq and @p channel and destroys them after
 * cqpoll_cq_destroy(). The channel may serve other CQs, of this driver or
 * of the verbs driver: every event read from it goes to the CQ it names. No
 * one but cqpoll may read it; its fd is set non-blocking. Attach every CQ of
 * a shared channel (events for CQs that are not attached are acknowledged
 * and dropped).
 *
 * @param cq
 *   The mlx5 verbs CQ, created on @p channel; nobody else may poll or arm it
 *   from now on.
 * @param channel
 *   Its completion channel.
 * @param conf
 *   Where the CQ's consumer stands; NULL for a fresh CQ (index 0, sequence
 *   number 0, default ack batch, no flags).
 * @return
 *   The CQ, or NULL with errno set: EINVAL (NULL @p cq or @p channel, CQ not
 *   bound to @p channel, or a CQ layout the driver cannot poll), EOPNOTSUPP
 *   (not an mlx5 CQ), ENOMEM, or the errno of mlx5dv_init_obj(), fcntl(2),
 *   eventfd(2) or epoll_create1(2).
 *
 * Thread safety: safe from any thread; no one may poll or arm @p cq any more.
 */
struct cqpoll_cq *cqpoll_mlx5_cq_attach(struct ibv_cq *cq,
					struct ibv_comp_channel *channel,
					const struct cqpoll_mlx5_attach_conf *conf);

/**
 * The verbs CQ of an mlx5 CQ, to create QPs on it: the hardware CQ, or the
 * emulated one that names an emulated CQ's events on a shared channel
 * (struct cqpoll_mlx5_emu_conf::channel). Never poll or arm it.
 *
 * @param cq
 *   A CQ of cqpoll_mlx5_cq_create() or cqpoll_mlx5_cq_attach(), or of
 *   cqpoll_mlx5_emu_cq_create() with a channel.
 * @return
 *   The verbs CQ; NULL if @p cq is NULL, not an mlx5 CQ, or an emulated one
 *   without a channel.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
struct ibv_cq *cqpoll_mlx5_cq_ibv(const struct cqpoll_cq *cq);

/** @name Emulated mlx5 device */
/**@{*/

/** Emulator switches (struct cqpoll_mlx5_emu_conf::emu_flags). */
/**
 * A full CQ is an overrun, as on hardware: the CQE is dropped, the CQ goes to
 * the error state, the consumer is woken, and its polls return -EIO once the
 * CQEs before the overrun are read. Without it a full CQ makes
 * cqpoll_mlx5_emu_post() return -ENOSPC (back-pressure for generators).
 */
#define CQPOLL_MLX5_EMU_F_OVERRUN_ERROR (1u << 0)
/** Ignore (not only count) arms whose sequence number did not advance. */
#define CQPOLL_MLX5_EMU_F_STRICT_SN     (1u << 1)
/**
 * No device thread: doorbells are read only by cqpoll_mlx5_emu_post() and
 * cqpoll_mlx5_emu_service(), which makes single-threaded tests deterministic.
 */
#define CQPOLL_MLX5_EMU_F_MANUAL        (1u << 2)

/** Configuration of an emulated mlx5 device with one CQ. */
struct cqpoll_mlx5_emu_conf {
	uint32_t size;            /**< Minimum entries (power of 2 rounding); 0: 4096. */
	/**
	 * CQPOLL_ARM_LEVEL: arms behave as mlx5 hardware (contract §5.3).
	 * CQPOLL_ARM_EDGE: "lazy arm": an arm never fires for CQEs written
	 * before the device saw it (the weaker portable contract); the CQ is
	 * declared edge so that cqpoll_poll_and_arm() polls after arming.
	 */
	enum cqpoll_arm_semantics arm;
	uint32_t event_ack_batch; /**< 0: the build-time default. */
	uint32_t flags;           /**< CQPOLL_MLX5_F_* (the driver's side). */
	uint32_t emu_flags;       /**< CQPOLL_MLX5_EMU_F_* (the device's side). */
	uint32_t event_delay_us;  /**< Delivery delay of every event; 0: none. */
	/** Period at which the device thread reads the doorbell; 0: 20 us. */
	uint32_t doorbell_poll_us;
	/**
	 * Counter value of the first CQE (producer and consumer start here), to
	 * exercise the 24-bit and 32-bit wrap without writing 2^24 entries.
	 */
	uint32_t start_index;
	/**
	 * An emulated completion channel (cqpoll_verbs_emu_ibv_create_comp_channel())
	 * to raise events on, as a ConnectX raises them on the channel of its
	 * ibv_cq: one fd, each event naming its CQ, shared with verbs-emu CQs
	 * and other mlx5-emu CQs. The device makes an emulated ibv_cq on it that
	 * names this CQ's events (cqpoll_mlx5_cq_ibv()); the channel must
	 * outlive the CQ. NULL: an event fd of the CQ's own.
	 */
	struct ibv_comp_channel *channel;
};

/**
 * Create an emulated mlx5 device and a CQ on it, driven by the mlx5 driver.
 *
 * @param conf
 *   Configuration; NULL for defaults (level arm, 64-byte CQEs).
 * @return
 *   The CQ, or NULL with errno set: EINVAL (arm semantics other than level or
 *   edge, size over 2^24, CQE size flags, a channel that is not emulated),
 *   ENOMEM, or the errno of eventfd(2), timerfd_create(2), epoll_create1(2)
 *   or pthread_create(3).
 *
 * Thread safety: safe from any thread.
 */
struct cqpoll_cq *cqpoll_mlx5_emu_cq_create(const struct cqpoll_mlx5_emu_conf *conf);

/**
 * Write one CQE as the device would: a struct mlx5_cqe64 with big-endian
 * fields, op_own last with release order, then evaluate the arm. A requester
 * completion (opcode < CQPOLL_OP_RECV) becomes an MLX5_CQE_REQ CQE with the
 * matching WQE opcode; a receive a responder CQE; a failed one an error CQE
 * with the syndrome of its status. The low 16 bits of wr_id are written as
 * wqe_counter; the timestamp is CLOCK_MONOTONIC ns;
 * CQPOLL_COMPLETION_F_SOLICITED sets the SE bit.
 *
 * @param cq
 *   A CQ of cqpoll_mlx5_emu_cq_create().
 * @param comp
 *   The completion to write: opcode, status, wr_id (low 16 bits), byte_len,
 *   qp_num, flags (CQPOLL_COMPLETION_F_IMM, _INV, _SOLICITED), imm_data
 *   (the immediate or invalidated key) and, for a failed completion,
 *   vendor_err (the vendor syndrome, low 8 bits).
 * @return
 *   - 0: written (a failure to deliver the event it fires is not reported).
 *   - -ENOSPC: CQ full, nothing written (without CQPOLL_MLX5_EMU_F_OVERRUN_ERROR).
 *   - -EIO: overrun (with CQPOLL_MLX5_EMU_F_OVERRUN_ERROR), or the CQ is in error.
 *   - -EINVAL: NULL argument, not an emulated CQ, or a status or opcode
 *     mlx5 cannot report.
 *
 * Thread safety: one producer thread per CQ, concurrently with the consumer.
 */
int cqpoll_mlx5_emu_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp);

/**
 * Let the device read its doorbell now, as its thread does periodically.
 *
 * @param cq
 *   A CQ of cqpoll_mlx5_emu_cq_create().
 * @return
 *   1 if a doorbell was read (acted on, or counted and ignored as bad or
 *   stale), 0 if none was pending, -EINVAL if @p cq is NULL or not an
 *   emulated CQ.
 *
 * Thread safety: any thread.
 */
int cqpoll_mlx5_emu_service(struct cqpoll_cq *cq);

/** What the emulated device saw and did. */
struct cqpoll_mlx5_emu_stats {
	uint64_t cqes;             /**< CQEs written. */
	uint64_t doorbells;        /**< Arm doorbells read from the UAR page. */
	uint64_t arms;             /**< Doorbells that armed the CQ. */
	uint64_t events;           /**< Events fired. */
	uint64_t stale_sn_arms;    /**< Arms whose sn did not follow the events fired. */
	uint64_t bad_doorbells;    /**< Wrong CQN, command or reserved bits: ignored. */
	uint64_t dbrec_mismatches; /**< Arms not first written to the doorbell record. */
	uint64_t overruns;         /**< Overruns raised. */
	uint64_t full;             /**< Posts refused with -ENOSPC. */
};

/**
 * Read the emulated device's counters.
 *
 * @param cq
 *   A CQ of cqpoll_mlx5_emu_cq_create().
 * @param[out] stats
 *   Filled with a consistent snapshot of the counters.
 * @return
 *   0, or -EINVAL if an argument is NULL or @p cq is not an emulated CQ.
 *
 * Thread safety: any thread.
 */
int cqpoll_mlx5_emu_stats_get(struct cqpoll_cq *cq, struct cqpoll_mlx5_emu_stats *stats);

/**
 * The struct mlx5dv_cq of an emulated CQ, as mlx5dv_init_obj() would fill it:
 * lets tests write doorbells the way other software (rdma-core) would.
 *
 * @param cq
 *   A CQ of cqpoll_mlx5_emu_cq_create().
 * @param[out] dv
 *   Filled with the CQ's buffer, doorbell record, UAR page, CQN, CQE count
 *   and CQE size.
 * @return
 *   0, or -EINVAL if an argument is NULL or @p cq is not an emulated CQ.
 *
 * Thread safety: any thread.
 */
int cqpoll_mlx5_emu_dv(struct cqpoll_cq *cq, struct mlx5dv_cq *dv);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_MLX5_H */
