/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_COMPLETION_H
#define CQPOLL_COMPLETION_H

/**
 * @file
 * The completion record every cqpoll driver fills.
 *
 * One record describes one work completion, whatever the device: the fields
 * are the ones RDMA consumers need on the hot path (which request finished,
 * how, how many bytes, on which QP, and when). Drivers convert their native
 * entries (mlx5 CQEs, struct ibv_wc, software ring slots) into this form.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status of a completion; the values follow enum ibv_wc_status. */
enum cqpoll_status {
	CQPOLL_STATUS_SUCCESS = 0,      /**< The work request completed. */
	CQPOLL_STATUS_LOC_LEN_ERR,      /**< Local length error. */
	CQPOLL_STATUS_LOC_QP_OP_ERR,    /**< Local QP operation error. */
	CQPOLL_STATUS_LOC_EEC_OP_ERR,   /**< Local EE context operation error. */
	CQPOLL_STATUS_LOC_PROT_ERR,     /**< Local protection error. */
	CQPOLL_STATUS_WR_FLUSH_ERR,     /**< Flushed: the QP went to the error state. */
	CQPOLL_STATUS_MW_BIND_ERR,      /**< Memory window bind error. */
	CQPOLL_STATUS_BAD_RESP_ERR,     /**< Bad response error. */
	CQPOLL_STATUS_LOC_ACCESS_ERR,   /**< Local access error. */
	CQPOLL_STATUS_REM_INV_REQ_ERR,  /**< Remote invalid request error. */
	CQPOLL_STATUS_REM_ACCESS_ERR,   /**< Remote access error. */
	CQPOLL_STATUS_REM_OP_ERR,       /**< Remote operation error. */
	CQPOLL_STATUS_RETRY_EXC_ERR,    /**< Transport retry counter exceeded. */
	CQPOLL_STATUS_RNR_RETRY_EXC_ERR, /**< RNR retry counter exceeded. */
	CQPOLL_STATUS_LOC_RDD_VIOL_ERR, /**< Local RDD violation error. */
	CQPOLL_STATUS_REM_INV_RD_REQ_ERR, /**< Remote invalid RD request. */
	CQPOLL_STATUS_REM_ABORT_ERR,    /**< Remote aborted error. */
	CQPOLL_STATUS_INV_EECN_ERR,     /**< Invalid EE context number. */
	CQPOLL_STATUS_INV_EEC_STATE_ERR, /**< Invalid EE context state. */
	CQPOLL_STATUS_FATAL_ERR,        /**< Fatal error. */
	CQPOLL_STATUS_RESP_TIMEOUT_ERR, /**< Response timeout. */
	CQPOLL_STATUS_GENERAL_ERR,      /**< Any other error. */
};

/** What kind of work completed; the values follow enum ibv_wc_opcode. */
enum cqpoll_opcode {
	CQPOLL_OP_SEND = 0,             /**< Send (requester). */
	CQPOLL_OP_RDMA_WRITE,           /**< RDMA write (requester). */
	CQPOLL_OP_RDMA_READ,            /**< RDMA read (requester). */
	CQPOLL_OP_COMP_SWAP,            /**< Atomic compare and swap. */
	CQPOLL_OP_FETCH_ADD,            /**< Atomic fetch and add. */
	CQPOLL_OP_BIND_MW,              /**< Memory window bind. */
	CQPOLL_OP_LOCAL_INV,            /**< Local invalidate. */
	CQPOLL_OP_TSO,                  /**< TCP segmentation offload send. */
	/**
	 * Memory-key work whose kind the completion does not say: mlx5
	 * posts bind-MW, local invalidate and other UMR work requests all as
	 * one WQE opcode (UMR), and only the poster knows which it was (by
	 * wqe_counter; rdma-core keeps a per-WQE record for it). No
	 * ibv_wc_opcode equivalent.
	 */
	CQPOLL_OP_UMR = 64,
	CQPOLL_OP_RECV = 128,           /**< Receive (responder). */
	CQPOLL_OP_RECV_RDMA_WITH_IMM,   /**< RDMA write with immediate received. */
};

/** @name Completion flags (struct cqpoll_completion::flags) */
/**@{*/
#define CQPOLL_COMPLETION_F_IMM       (1u << 0) /**< imm_data holds immediate data (network order). */
#define CQPOLL_COMPLETION_F_INV       (1u << 1) /**< imm_data holds an invalidated rkey (host order). */
/**
 * timestamp is valid and in host CLOCK_MONOTONIC nanoseconds: it may be
 * compared with clock_gettime(CLOCK_MONOTONIC) in nanoseconds and with
 * other CQs' host timestamps.
 */
#define CQPOLL_COMPLETION_F_TIMESTAMP (1u << 2)
#define CQPOLL_COMPLETION_F_SOLICITED (1u << 3) /**< The sender asked for a solicited event. */
/**
 * timestamp is valid but in the device's own clock (e.g. raw mlx5 HCA ticks):
 * it orders completions of one device and nothing more. Never set together
 * with CQPOLL_COMPLETION_F_TIMESTAMP; the library never compares it with host
 * time.
 */
#define CQPOLL_COMPLETION_F_TIMESTAMP_RAW (1u << 4)
/**
 * wr_id holds the work-request id the caller gave when posting. Drivers that
 * read the device's entries directly (mlx5) do not know it and leave it clear;
 * they give the WQE index instead (CQPOLL_COMPLETION_F_WQE_COUNTER).
 */
#define CQPOLL_COMPLETION_F_WR_ID     (1u << 5)
/** wqe_counter holds the index of the completed WQE in its work queue. */
#define CQPOLL_COMPLETION_F_WQE_COUNTER (1u << 6)
/**
 * The payload arrived inside the device's completion entry (mlx5 inline
 * scatter): inline_data points at byte_len bytes of it, valid until the next
 * poll of the same CQ.
 */
#define CQPOLL_COMPLETION_F_INLINE    (1u << 7)
/**
 * A tag-matching receive (UCX): the sender's 64-bit tag is held in qp_num
 * (high 32 bits) and imm_data (low 32 bits), fields such a completion has no
 * other use for; read it with cqpoll_completion_tag(). Never with F_IMM or
 * F_INV.
 */
#define CQPOLL_COMPLETION_F_TAG       (1u << 8)
/**@}*/

/**
 * One work completion, 48 bytes as struct ibv_wc. Which optional fields are
 * valid is said by flags, never by which driver produced the record, so the
 * same program reads the same meaning whatever the driver.
 */
struct cqpoll_completion {
	/** Work-request id given when the work was posted; valid with F_WR_ID, else 0. */
	uint64_t wr_id;
	/**
	 * When the device completed the work: host CLOCK_MONOTONIC ns with
	 * CQPOLL_COMPLETION_F_TIMESTAMP, the device clock with
	 * CQPOLL_COMPLETION_F_TIMESTAMP_RAW, else 0.
	 */
	uint64_t timestamp;
	/** Inline payload, byte_len bytes, with CQPOLL_COMPLETION_F_INLINE; else NULL. */
	const void *inline_data;
	uint32_t byte_len;  /**< Bytes transferred (receives, reads, atomics). */
	uint32_t qp_num;    /**< Local QP number the work belongs to. */
	/** Immediate data or invalidated rkey, as flags say; else 0. */
	uint32_t imm_data;
	/** Vendor error code (mlx5 syndrome) of a failed completion; else 0. */
	uint32_t vendor_err;
	uint8_t status;     /**< enum cqpoll_status. */
	uint8_t opcode;     /**< enum cqpoll_opcode. */
	uint16_t flags;     /**< CQPOLL_COMPLETION_F_* bits. */
	/** WQE index with CQPOLL_COMPLETION_F_WQE_COUNTER, else 0. */
	uint16_t wqe_counter;
	uint16_t reserved;  /**< 0; keeps the record 8-byte aligned. */
};

/**
 * The sender's tag of a tag-matching receive.
 *
 * @param c
 *   A completion.
 * @return
 *   The tag with CQPOLL_COMPLETION_F_TAG, else 0.
 *
 * Thread safety: reads @p c only.
 */
static inline uint64_t
cqpoll_completion_tag(const struct cqpoll_completion *c)
{
	if (!(c->flags & CQPOLL_COMPLETION_F_TAG))
		return 0;
	return (uint64_t)c->qp_num << 32 | c->imm_data;
}

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_COMPLETION_H */
