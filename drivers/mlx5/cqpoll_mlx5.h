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
 *   (not an mlx5 CQ), EBUSY (@p cq is already wrapped by a live handle),
 *   ENOMEM, or the errno of mlx5dv_init_obj(), fcntl(2), eventfd(2) or
 *   epoll_create1(2).
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


/**
 * @name Work queues posted by cqpoll (EXPERIMENTAL)
 *
 * A cqpoll mlx5 QP is an RC QP on cqpoll mlx5 CQs whose work cqpoll posts
 * itself, writing WQEs into the rings mlx5dv_init_obj(MLX5DV_OBJ_QP) maps
 * (as DPDK's PMD, UCX rc_mlx5 and SPDK lib/mlx5 do), and retires from the
 * completions its CQs read: every completion of such a QP, success or error,
 * requester or responder, carries the caller's wr_id (CQPOLL_COMPLETION_F_WR_ID,
 * wqe_counter and its flag kept), and one requester completion frees its WQE
 * and every unsignalled WQE posted before it. As in rdma-core
 * (mlx5_wq_overflow()), at most max_send_wr send requests and max_recv_wr
 * receives (cqpoll_mlx5_qp_caps()) may be outstanding, not yet retired by a
 * completion: one more is refused with -ENOMEM, so that a CQ sized from the
 * caps cannot overrun; the ring is never overwritten. rdma-core's ibv_post_send() cannot be used on a
 * CQ cqpoll polls: its queue tail moves only in its own poll (mlx5_wq_overflow(),
 * doc/guides/mlx5-driver.md).
 *
 * Threads: post sends from one thread, receives from one thread, and poll the
 * CQs from one thread (any of them the same or not): the queue tails are
 * handed from the poller to the posters with release/acquire order.
 */
/**@{*/

struct ibv_pd;
struct ibv_qp;
struct ibv_qp_attr;

/** Opaque QP handle. */
struct cqpoll_mlx5_qp;
/** Opaque shared receive queue handle. */
struct cqpoll_mlx5_srq;

/** Configuration of a cqpoll mlx5 QP. */
struct cqpoll_mlx5_qp_conf {
	/** Send CQ: a cqpoll mlx5 CQ (hardware or emulated) of the PD's device. */
	struct cqpoll_cq *send_cq;
	/** Receive CQ: the same CQ or another one. */
	struct cqpoll_cq *recv_cq;
	uint32_t max_send_wr;     /**< Send requests the queue holds; 0: 256. */
	uint32_t max_recv_wr;     /**< Receives the queue holds; 0: 256. */
	uint32_t max_send_sge;    /**< Scatter/gather entries per send; 0: 1. */
	uint32_t max_recv_sge;    /**< Scatter/gather entries per receive; 0: 1. */
	/** Inline bytes per send at least; the device may give more (cqpoll_mlx5_qp_caps()). */
	uint32_t max_inline_data;
	/**
	 * The shared receive queue of the QP's receives (cqpoll_mlx5_srq_create()),
	 * or NULL: a receive queue of its own (else max_recv_* are ignored, caps'
	 * max_recv_wr is 0 and cqpoll_mlx5_qp_post_recv() refuses the QP).
	 */
	struct cqpoll_mlx5_srq *srq;
};

/** What a created QP accepts (the device's rounding of the conf). */
struct cqpoll_mlx5_qp_caps {
	uint32_t qp_num;          /**< QP number. */
	uint32_t max_send_wr;     /**< Send requests outstanding at most (more: -ENOMEM). */
	uint32_t max_recv_wr;     /**< Receives outstanding at most (more: -ENOMEM). */
	uint32_t max_send_sge;    /**< Entries per send. */
	uint32_t max_recv_sge;    /**< Entries per receive. */
	uint32_t max_inline_data; /**< Inline bytes per send. */
	uint32_t sq_wqebb_cnt;    /**< Send ring size in 64-byte building blocks. */
	uint32_t rq_wqe_cnt;      /**< Receive ring size in WQEs. */
};

/** Work request opcodes of cqpoll_mlx5_qp_post_send(). */
enum cqpoll_mlx5_wr_opcode {
	CQPOLL_MLX5_WR_SEND = 0,       /**< Send. */
	CQPOLL_MLX5_WR_SEND_IMM,       /**< Send with immediate data. */
	CQPOLL_MLX5_WR_RDMA_WRITE,     /**< RDMA write. */
	CQPOLL_MLX5_WR_RDMA_WRITE_IMM, /**< RDMA write with immediate (consumes a receive). */
	CQPOLL_MLX5_WR_RDMA_READ,      /**< RDMA read into the local scatter list. */
	CQPOLL_MLX5_WR_ATOMIC_CS,      /**< 8-byte compare and swap; old value to sg_list[0]. */
	CQPOLL_MLX5_WR_ATOMIC_FA,      /**< 8-byte fetch and add; old value to sg_list[0]. */
};

/** @name Flags of struct cqpoll_mlx5_send_wr */
/**@{*/
/** Ask for a completion (else one comes only if the request fails). */
#define CQPOLL_MLX5_SEND_F_SIGNALED  (1u << 0)
/** Copy the data into the WQE (send and write opcodes, up to max_inline_data). */
#define CQPOLL_MLX5_SEND_F_INLINE    (1u << 1)
/** Start only after earlier RDMA reads and atomics of the QP completed. */
#define CQPOLL_MLX5_SEND_F_FENCE     (1u << 2)
/** Solicited event at the receiver (sends, write with immediate). */
#define CQPOLL_MLX5_SEND_F_SOLICITED (1u << 3)
/**@}*/

/** One scatter/gather entry. */
struct cqpoll_mlx5_sge {
	uint64_t addr;   /**< Local address. */
	uint32_t length; /**< Bytes; entries of 0 bytes are skipped (as rdma-core). */
	uint32_t lkey;   /**< Local key of the memory region. */
};

/** A send-queue request. */
struct cqpoll_mlx5_send_wr {
	uint64_t wr_id;                       /**< Given back in its completion. */
	const struct cqpoll_mlx5_sge *sg_list; /**< Entries (atomics: one, 8 bytes). */
	uint32_t num_sge;                     /**< How many. */
	uint32_t opcode;                      /**< enum cqpoll_mlx5_wr_opcode. */
	uint32_t flags;                       /**< CQPOLL_MLX5_SEND_F_*. */
	uint32_t imm_data;                    /**< *_IMM: immediate data, network order. */
	uint64_t remote_addr;                 /**< RDMA and atomics: remote address. */
	uint32_t rkey;                        /**< RDMA and atomics: remote key. */
	uint32_t reserved;                    /**< 0. */
	uint64_t compare_add;                 /**< CAS: compare value; FAA: value to add. */
	uint64_t swap;                        /**< CAS: value to swap in. */
};

/** A receive-queue request. */
struct cqpoll_mlx5_recv_wr {
	uint64_t wr_id;                       /**< Given back in its completion. */
	const struct cqpoll_mlx5_sge *sg_list; /**< Where the data lands. */
	uint32_t num_sge;                     /**< How many, up to max_recv_sge. */
	uint32_t reserved;                    /**< 0. */
};

/**
 * Create an RC QP on cqpoll mlx5 CQs whose work cqpoll posts and retires.
 * The QP starts in RESET: take it to INIT, RTR and RTS with
 * cqpoll_mlx5_qp_modify() (the attributes of ibv_modify_qp()).
 *
 * From now on, completions of this QP read from @p conf->send_cq and
 * @p conf->recv_cq carry their wr_id (CQPOLL_COMPLETION_F_WR_ID). CQs without
 * such a QP keep their poll as it was. The QP uses both CQs until
 * cqpoll_mlx5_qp_destroy(): cqpoll_cq_destroy() refuses them with -EBUSY
 * until then.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param pd
 *   Protection domain of the CQs' device (through ibv_create_qp() and
 *   mlx5dv_init_obj(MLX5DV_OBJ_QP), or the emulated device's).
 * @param conf
 *   Configuration; send_cq and recv_cq are mandatory.
 * @return
 *   The QP, or NULL with errno set: EINVAL (NULL argument, a CQ that is no
 *   mlx5 CQ of this library, or a failed one), EOPNOTSUPP (not an mlx5
 *   device, or rings this driver cannot write: a stride other than 64 bytes,
 *   a QP without BlueFlame register), ENOSPC (a CQ already serves 16 such
 *   QPs), ENOMEM, or the errno of ibv_create_qp() or mlx5dv_init_obj().
 *
 * Thread safety: not concurrently with a poll of either CQ (the CQ's poll
 * changes to the one that hands back wr_ids).
 */
__cqpoll_experimental
struct cqpoll_mlx5_qp *cqpoll_mlx5_qp_create(struct ibv_pd *pd,
					     const struct cqpoll_mlx5_qp_conf *conf);

/**
 * Destroy a QP of cqpoll_mlx5_qp_create(). Completions of it still in its
 * CQs are returned with wr_id 0 and CQPOLL_COMPLETION_F_WR_ID clear.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param qp
 *   The QP, or NULL (nothing done).
 * @return
 *   0, or -errno of ibv_destroy_qp() (the QP is then kept).
 *
 * Thread safety: not concurrently with a poll of its CQs or a post on it.
 */
__cqpoll_experimental
int cqpoll_mlx5_qp_destroy(struct cqpoll_mlx5_qp *qp);

/**
 * Change the QP's state and attributes, as ibv_modify_qp(). Going to RESET
 * also resets the QP's counters and doorbell record (as rdma-core's provider
 * does): work still posted is dropped without completions.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param qp
 *   The QP.
 * @param attr
 *   Attributes, as ibv_modify_qp().
 * @param attr_mask
 *   enum ibv_qp_attr_mask bits, as ibv_modify_qp().
 * @return
 *   0, -EINVAL (NULL argument), or -errno of ibv_modify_qp().
 *
 * Thread safety: not concurrently with a post on the QP or a poll of its CQs.
 */
__cqpoll_experimental
int cqpoll_mlx5_qp_modify(struct cqpoll_mlx5_qp *qp, struct ibv_qp_attr *attr,
			  int attr_mask);

/**
 * The QP's sizes and number.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param qp
 *   The QP.
 * @param[out] caps
 *   Filled.
 * @return
 *   0, or -EINVAL if an argument is NULL.
 *
 * Thread safety: safe from any thread while the QP exists.
 */
__cqpoll_experimental
int cqpoll_mlx5_qp_caps(const struct cqpoll_mlx5_qp *qp, struct cqpoll_mlx5_qp_caps *caps);

/**
 * The verbs QP, for ibv_query_qp() and addressing. Never post on it with
 * ibv_post_send() or ibv_post_recv(), and change its state only through
 * cqpoll_mlx5_qp_modify().
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param qp
 *   The QP.
 * @return
 *   The verbs QP; NULL (errno EINVAL) if @p qp is NULL.
 *
 * Thread safety: safe from any thread while the QP exists.
 */
__cqpoll_experimental
struct ibv_qp *cqpoll_mlx5_qp_ibv(const struct cqpoll_mlx5_qp *qp);

/**
 * Post send requests in a burst: WQEs written in order, then one doorbell
 * (doorbell record, then the 8-byte write of the last WQE's control segment
 * to the BlueFlame register, with rdma-core's barriers). A request that does
 * not fit the ring or is invalid ends the burst; the ones before it are
 * posted.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param qp
 *   A QP in RTS (or in error: the requests are flushed with their wr_ids).
 * @param wrs
 *   The requests.
 * @param n
 *   How many.
 * @return
 *   - > 0: requests posted, the first ones of @p wrs.
 *   - -ENOMEM: max_send_wr requests (cqpoll_mlx5_qp_caps()) are outstanding,
 *     not yet retired by a completion (poll the send CQ), as rdma-core's
 *     ibv_post_send() refuses them.
 *   - -EINVAL: NULL argument, @p n 0, the QP not yet in RTS, or the first
 *     request is invalid (opcode, more entries than max_send_sge, inline
 *     over max_inline_data or on a read or atomic, an atomic whose entry is
 *     not 8 bytes, a WQE of more than 63 16-byte units); the reason is
 *     logged.
 *
 * Thread safety: one thread posts sends on a QP at a time.
 */
__cqpoll_experimental
int cqpoll_mlx5_qp_post_send(struct cqpoll_mlx5_qp *qp,
			     const struct cqpoll_mlx5_send_wr *wrs, unsigned int n);

/**
 * Post receives in a burst, then one doorbell-record write.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param qp
 *   A QP in INIT or later.
 * @param wrs
 *   The receives.
 * @param n
 *   How many.
 * @return
 *   - > 0: receives posted, the first ones of @p wrs.
 *   - -ENOMEM: max_recv_wr receives are outstanding (not yet completed).
 *   - -EINVAL: NULL argument, @p n 0, the QP in RESET, the QP's receives
 *     go to a shared receive queue (post them with cqpoll_mlx5_srq_post_recv()),
 *     or the first receive has more entries than max_recv_sge.
 *
 * Thread safety: one thread posts receives on a QP at a time.
 */
__cqpoll_experimental
int cqpoll_mlx5_qp_post_recv(struct cqpoll_mlx5_qp *qp,
			     const struct cqpoll_mlx5_recv_wr *wrs, unsigned int n);
/**@}*/

#ifdef __cplusplus
}
#endif

/* Shared receive queues of these QPs (EXPERIMENTAL). */
#include "cqpoll_mlx5_srq.h"

#endif /* CQPOLL_MLX5_H */
