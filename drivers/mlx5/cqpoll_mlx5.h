/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_H
#define CQPOLL_MLX5_H

/**
 * @file
 * mlx5 device-direct CQs, on a ConnectX device.
 *
 * The driver reads CQEs straight from the CQ buffer described by
 * struct mlx5dv_cq, writes the consumer index to the doorbell record once per
 * burst, and arms with its own consumer index and arm sequence number through
 * the UAR doorbell. Arms are level (CQPOLL_ARM_LEVEL): an arm fires at once
 * when entries at or past its index exist. Never call ibv_poll_cq() or
 * ibv_req_notify_cq() on a CQ handed to this driver: the provider's consumer
 * index does not follow direct polling, and its arms lose events.
 *
 * The emulated device ("mlx5-emu", libcqpoll_emu, cqpoll_mlx5_emu.h) lays out
 * the same memory, writes genuine struct mlx5_cqe64 entries and decodes the
 * arm doorbells; the poll and arm code is the same on both. See
 * doc/guides/mlx5-driver.md.
 *
 * Completions: the CQE does not carry the caller's wr_id, so wr_id is 0 and
 * CQPOLL_COMPLETION_F_WR_ID clear; wqe_counter holds the CQE's 16-bit WQE
 * index with CQPOLL_COMPLETION_F_WQE_COUNTER (the QP owner maps it to its
 * request, as rdma-core does with its wrid array). timestamp is the CQE's
 * raw value in HCA clock ticks, CQPOLL_COMPLETION_F_TIMESTAMP_RAW: it is not
 * converted, because mlx5dv_ts_to_ns() gives the device's wall-clock time
 * (the kernel starts the clock-info page from CLOCK_REALTIME and PTP steers
 * it), not CLOCK_MONOTONIC. The emulated device's clock is not host time
 * either. Failed completions: vendor_err holds the vendor syndrome. Payloads
 * the device scattered into the CQE (small receives, RDMA read and atomic
 * responses) come with CQPOLL_COMPLETION_F_INLINE, valid until the next poll
 * of the CQ. Compressed sessions (CQPOLL_MLX5_F_CQE_COMPRESS) are expanded,
 * one completion per compressed CQE. A CQE the driver cannot decode becomes
 * a completion with status CQPOLL_STATUS_GENERAL_ERR and vendor_err
 * CQPOLL_MLX5_VENDOR_ERR_BAD_CQE | its op_own byte; the CQ goes on past it.
 * UMR completions (bind-MW, local invalidate) are CQPOLL_OP_UMR.
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

/** @name Flags of struct cqpoll_mlx5_conf (and of the emulator's conf) */
/**@{*/
/**
 * Arm for solicited completions only (receives with the SE bit, and errors).
 * A CQ so armed wakes only for those: cqpoll_poll_and_arm() returning 0 then
 * guarantees an event for the next solicited or failed completion only.
 */
#define CQPOLL_MLX5_F_SOLICITED_ONLY (1u << 0)
/** 128-byte CQEs (hardware: through mlx5dv_create_cq()). */
#define CQPOLL_MLX5_F_CQE128         (1u << 1)
/**
 * The device may compress CQEs into sessions of mini CQEs (basic layout);
 * the driver expands them. Hardware: mlx5dv_create_cq() with
 * MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE and the hash mini format. For
 * cqpoll_mlx5_cq_attach(): the CQ was created so.
 */
#define CQPOLL_MLX5_F_CQE_COMPRESS   (1u << 2)
/**
 * With CQPOLL_MLX5_F_CQE_COMPRESS: the enhanced layout (cqe_comp_layout 1):
 * every CQE's validity is its iteration-count byte, not the owner bit, and
 * blocks of up to 7 mini CQEs follow the last plain CQE, their title. rdma-core
 * has no way to ask for it (DevX CQs only): cqpoll_mlx5_cq_create() refuses
 * it with EOPNOTSUPP; cqpoll_mlx5_cq_attach() takes it for a CQ made so.
 */
#define CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED (1u << 3)
/**@}*/

/**
 * vendor_err of a completion made from a CQE the driver cannot decode
 * (resize, tag matching, signature error, unknown opcode or format), or'ed
 * with the CQE's op_own byte. Real vendor syndromes are 8 bits: no clash.
 */
#define CQPOLL_MLX5_VENDOR_ERR_BAD_CQE (1u << 8)

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
	/** CQPOLL_MLX5_F_SOLICITED_ONLY, CQPOLL_MLX5_F_CQE_COMPRESS (_ENHANCED). */
	uint32_t flags;
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
 * The verbs CQ of a hardware mlx5 CQ, to create QPs on it. Never poll or arm it.
 *
 * @param cq
 *   A CQ of cqpoll_mlx5_cq_create() or cqpoll_mlx5_cq_attach().
 * @return
 *   The verbs CQ; NULL (errno EINVAL) if @p cq is NULL or not a hardware
 *   mlx5 CQ.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
struct ibv_cq *cqpoll_mlx5_cq_ibv(const struct cqpoll_cq *cq);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_MLX5_H */
