/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_EMU_H
#define CQPOLL_MLX5_EMU_H

/**
 * @file
 * The emulated mlx5 device ("mlx5-emu"), part of libcqpoll_emu (verification
 * only; never linked into production code).
 *
 * It lays out the memory a provider would map (CQ buffer, doorbell record, UAR
 * page), writes genuine struct mlx5_cqe64 entries and decodes the arm
 * doorbells; the mlx5 driver of libcqpoll polls and arms it with the code it
 * runs on hardware. See doc/guides/mlx5-driver.md.
 */

#include <stdint.h>

#include "cqpoll.h"
#include "cqpoll_mlx5.h"

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mlx5dv_cq;
struct mlx5dv_qp;


/** Emulator switches (struct cqpoll_mlx5_emu_conf::emu_flags). */
/**
 * A full CQ is an overrun, as on hardware: the CQE is dropped, the CQ goes to
 * the error state, the consumer is woken, and its polls return -EOVERFLOW once the
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
	 * names this CQ's events; the channel must
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
 * matching WQE opcode (bind-MW and local invalidate as UMR, as rdma-core
 * posts them); a receive a responder CQE; a failed one an error CQE with the
 * syndrome of its status. The WQE index written is wqe_counter with
 * CQPOLL_COMPLETION_F_WQE_COUNTER, else the low 16 bits of wr_id. The
 * timestamp is the device clock: ticks at 156.25 MHz from an origin far from
 * host time. CQPOLL_COMPLETION_F_SOLICITED sets the SE bit.
 * CQPOLL_COMPLETION_F_INLINE scatters the payload into the CQE: format 1 up
 * to 32 bytes, format 2 up to 64 bytes in 128-byte CQEs; receives, RDMA
 * reads and atomics (8 bytes) only. On a CQ with CQPOLL_MLX5_F_CQE_COMPRESS,
 * successes without payload or immediate are held and written as compressed
 * sessions (basic layout) when a different one comes, when 32 are held, or
 * at the device's first look at its doorbell (its thread's period, or
 * cqpoll_mlx5_emu_service()) 20 us or more after the first was held: a
 * run of one is written as a plain CQE.
 *
 * @param cq
 *   A CQ of cqpoll_mlx5_emu_cq_create().
 * @param comp
 *   The completion to write: opcode, status, wr_id or wqe_counter, byte_len,
 *   qp_num, flags (CQPOLL_COMPLETION_F_IMM, _INV, _SOLICITED, _INLINE,
 *   _WQE_COUNTER), imm_data (the immediate in network order, or the
 *   invalidated rkey in host order), inline_data and, for a failed
 *   completion, vendor_err (the vendor syndrome, low 8 bits).
 * @return
 *   - 0: written (a failure to deliver the event it fires is not reported).
 *   - -ENOSPC: CQ full, nothing written (without CQPOLL_MLX5_EMU_F_OVERRUN_ERROR).
 *   - -EOVERFLOW: overrun (with CQPOLL_MLX5_EMU_F_OVERRUN_ERROR), or the CQ
 *     overran before; -ENODEV, -ENETDOWN: the device failed
 *     (cqpoll_mlx5_emu_fail()).
 *   - -EINVAL: NULL argument, not an emulated CQ, a status or opcode mlx5
 *     cannot report, or a payload the CQE cannot carry.
 *
 * Thread safety: one producer thread per CQ, concurrently with the consumer.
 */
int cqpoll_mlx5_emu_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp);

/**
 * The latest host CLOCK_MONOTONIC time (ns) an emulated CQE timestamp can
 * stand for: the emulator's own clock-info conversion, for tests that must
 * tell whether a completion predates a host instant. Hardware ticks have no
 * such exact conversion (see cqpoll_mlx5.h).
 *
 * @param ticks
 *   A timestamp of a completion from an emulated CQ.
 * @return
 *   Host nanoseconds, rounded up to the clock's granularity.
 *
 * Thread safety: safe from any thread.
 */
uint64_t cqpoll_mlx5_emu_ticks_to_ns(uint64_t ticks);

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
	uint64_t sessions;         /**< Compressed sessions written. */
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

/**
 * Make the device fail as a ConnectX does: it writes the flushed
 * completions of @p flush (status CQPOLL_STATUS_WR_FLUSH_ERR, WQE counters
 * from the array, in order), then stops (no CQE written, no completion
 * event fired, no doorbell read: posts return the failure's errno) and
 * raises @p event on its context's async fd
 * (cqpoll_verbs_emu_async_event()), never on the completion channel. The
 * driver learns of it only by reading its async events.
 *
 * @param cq
 *   A CQ of cqpoll_mlx5_emu_cq_create() on an emulated channel.
 * @param event
 *   IBV_EVENT_CQ_ERR (overrun: -EOVERFLOW), IBV_EVENT_DEVICE_FATAL
 *   (-ENODEV) or IBV_EVENT_PORT_ERR (-ENETDOWN).
 * @param flush
 *   Outstanding work to flush, or NULL when @p n_flush is 0.
 * @param n_flush
 *   How many.
 * @return
 *   0; -EINVAL for a bad argument; -ENOTSUP for a CQ on no channel (no
 *   context to raise the event on); -EALREADY if it failed before; a
 *   post's error if the flushed completions do not fit.
 *
 * Thread safety: on the producer's thread.
 */
int cqpoll_mlx5_emu_fail(struct cqpoll_cq *cq, enum ibv_event_type event,
			 const uint64_t *flush, unsigned int n_flush);


/**
 * @name The emulated device's work queues
 *
 * An emulated mlx5 device context on which cqpoll_mlx5_qp_create() makes its
 * QPs through the same libibverbs table (ibv_create_qp(), ibv_modify_qp(),
 * mlx5dv_init_obj(MLX5DV_OBJ_QP)) as on hardware. The rings are laid out as
 * rdma-core's provider lays them out (doc/guides/mlx5-wqe-contract.md §1): one buffer,
 * the receive ring first, the send ring of 64-byte blocks after it, a
 * doorbell record of two words, and a BlueFlame register of two 256-byte
 * halves at 0x800 of a UAR page. The device reads the WQEs the QP wrote,
 * in that layout, when cqpoll_mlx5_emu_run() lets it look: a send doorbell
 * is the 8-byte write to the register, carrying the last WQE's first 8
 * bytes, after the record names how far to go; receives are announced by
 * the record alone. It carries the work out between two of its QPs
 * (loopback): sends and writes with immediate consume receives, writes land
 * in registered memory, reads and atomics (host-endian memory,
 * atomic_req_8B_endianness_mode 1) return data, and it writes the CQEs on
 * the QPs' emulated CQs, errors included, the QP then in error and every
 * later WQE flushed with a CQE of its own.
 */
/**@{*/

/**
 * Open an emulated mlx5 device context for work queues. Create its CQs with
 * cqpoll_mlx5_emu_cq_create() (any emulated CQ serves any of its QPs).
 *
 * @return
 *   The context, or NULL with errno set (ENOMEM).
 *
 * Thread safety: safe from any thread.
 */
struct ibv_context *cqpoll_mlx5_emu_open(void);

/**
 * Close a context of cqpoll_mlx5_emu_open().
 *
 * @param ctx
 *   The context.
 * @return
 *   0; -EINVAL (not such a context); -EBUSY (QPs, MRs or PDs still exist).
 *
 * Thread safety: not with other calls on @p ctx.
 */
int cqpoll_mlx5_emu_close(struct ibv_context *ctx);

/**
 * A protection domain of the emulated context (what ibv_alloc_pd() gives).
 *
 * @param ctx
 *   A context of cqpoll_mlx5_emu_open().
 * @return
 *   The PD, or NULL with errno set (EINVAL, ENOMEM).
 *
 * Thread safety: safe from any thread.
 */
struct ibv_pd *cqpoll_mlx5_emu_alloc_pd(struct ibv_context *ctx);

/**
 * Free a PD of cqpoll_mlx5_emu_alloc_pd().
 *
 * @param pd
 *   The PD.
 * @return
 *   0, -EINVAL, or -EBUSY (MRs or QPs use it).
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_mlx5_emu_dealloc_pd(struct ibv_pd *pd);

/**
 * Register memory with the emulated device (what ibv_reg_mr() does): its
 * lkey and rkey are checked by every WQE that names them.
 *
 * @param pd
 *   A PD of cqpoll_mlx5_emu_alloc_pd().
 * @param addr
 *   Start of the memory.
 * @param length
 *   Bytes.
 * @param access
 *   enum ibv_access_flags (IBV_ACCESS_LOCAL_WRITE, _REMOTE_WRITE,
 *   _REMOTE_READ, _REMOTE_ATOMIC).
 * @return
 *   The MR, or NULL with errno set (EINVAL, ENOMEM).
 *
 * Thread safety: safe from any thread.
 */
struct ibv_mr *cqpoll_mlx5_emu_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				      int access);

/**
 * Deregister an MR of cqpoll_mlx5_emu_reg_mr().
 *
 * @param mr
 *   The MR.
 * @return
 *   0 or -EINVAL.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_mlx5_emu_dereg_mr(struct ibv_mr *mr);

/**
 * Let the device look at its QPs' doorbells and carry out the work they
 * announced, as far as it can: a send waits while its receiver has no
 * receive posted and the QP retries for ever (rnr_retry 7), and any WQE
 * waits while a CQ it completes on is full.
 *
 * @param ctx
 *   A context of cqpoll_mlx5_emu_open().
 * @return
 *   Send WQEs carried out (flushed ones included), or -EINVAL.
 *
 * Thread safety: one thread at a time per context (the device); posts and
 * polls may run concurrently.
 */
int cqpoll_mlx5_emu_run(struct ibv_context *ctx);

/**
 * The struct mlx5dv_qp of an emulated QP, as mlx5dv_init_obj() fills it:
 * lets tests read the rings, the doorbell record and the register.
 *
 * @param qp
 *   The verbs QP of a cqpoll mlx5 QP on an emulated context
 *   (cqpoll_mlx5_qp_ibv()).
 * @param[out] dv
 *   Filled.
 * @return
 *   0, or -EINVAL if an argument is NULL or @p qp is not emulated.
 *
 * Thread safety: safe from any thread while the QP exists.
 */
int cqpoll_mlx5_emu_qp_dv(struct ibv_qp *qp, struct mlx5dv_qp *dv);

/** What the emulated device's work queues saw. */
struct cqpoll_mlx5_emu_wq_stats {
	uint64_t doorbells;        /**< Send doorbells (register writes) read. */
	uint64_t bad_doorbells;    /**< Register writes naming another QP or no posted WQE. */
	uint64_t record_only;      /**< Looks that found the record ahead with no register write. */
	uint64_t wqes;             /**< Send WQEs carried out successfully. */
	uint64_t recvs;            /**< Receive WQEs consumed successfully. */
	uint64_t errors;           /**< Error completions other than flushes. */
	uint64_t flushed;          /**< Flushed WQEs, send and receive. */
	uint64_t rnr_waits;        /**< Looks that found a send waiting for a receive. */
	uint64_t cq_waits;         /**< Looks that found a WQE waiting for room in a CQ. */
	uint64_t srq_limit_events; /**< IBV_EVENT_SRQ_LIMIT_REACHED raised. */
	uint64_t bad_srq_links;    /**< SRQ next-index links pointing out of the ring. */
};

/**
 * Read the work-queue counters of an emulated context.
 *
 * @param ctx
 *   A context of cqpoll_mlx5_emu_open().
 * @param[out] stats
 *   Filled.
 * @return
 *   0 or -EINVAL.
 *
 * Thread safety: safe from any thread.
 */
int cqpoll_mlx5_emu_wq_stats_get(struct ibv_context *ctx, struct cqpoll_mlx5_emu_wq_stats *stats);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_MLX5_EMU_H */
