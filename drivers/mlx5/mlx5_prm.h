/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_PRM_H
#define CQPOLL_MLX5_PRM_H

/*
 * CQ layout facts of mlx5 devices that mlx5dv.h does not spell out, shared by
 * the driver and the emulated device so both read the same encoding.
 * Section numbers refer to doc/guides/mlx5-cq-contract.md.
 */

#include <endian.h>
#include <stdint.h>

#include <infiniband/mlx5dv.h>

#include "cqpoll_completion.h"

/* Counters exchanged with the device are 24 bits wide (§1.3). */
#define CQPOLL_MLX5_CI_MASK 0xffffffu
/* Doorbell record words (rdma-core's MLX5_CQ_SET_CI, MLX5_CQ_ARM_DB, §1.2). */
#define CQPOLL_MLX5_DBREC_SET_CI 0
#define CQPOLL_MLX5_DBREC_ARM 1
/* op_own: owner bit 0, SE bit 1, format bits 3:2, opcode bits 7:4 (§2.3). */
#define CQPOLL_MLX5_OP_OWN_SE 0x02
#define CQPOLL_MLX5_OP_OWN_FORMAT 0x0c
#define CQPOLL_MLX5_OP_OWN_FORMAT_SHIFT 2
/* Format values (kernel MLX5_INLINE_DATA32_SEG, _DATA64_SEG, MLX5_COMPRESSED). */
#define CQPOLL_MLX5_FORMAT_INLINE32 1
#define CQPOLL_MLX5_FORMAT_INLINE64 2
#define CQPOLL_MLX5_FORMAT_COMPRESSED 3
/* Bytes of inline-scattered data each format carries (§2.3). */
#define CQPOLL_MLX5_INLINE32_MAX 32
#define CQPOLL_MLX5_INLINE64_MAX 64
/* Mini CQEs in one array of a basic-layout session (§6). */
#define CQPOLL_MLX5_MINI_PER_ARRAY 8
/* Largest CQ the device supports (§1.2). */
#define CQPOLL_MLX5_CQE_CNT_MAX (1u << 24)

/*
 * A mini CQE (the kernel's struct mlx5_mini_cqe8, §6). Requester sessions
 * carry the WQE counter and opcode (byte 2, as the kernel and UCX read it);
 * responder sessions a hash or checksum there, which RDMA consumers do not
 * use, and take the WQE counter from the title, one more per completion.
 */
struct cqpoll_mlx5_mini_cqe {
	uint16_t wqe_counter; /* big-endian */
	uint8_t s_wqe_opcode;
	uint8_t reserved;
	uint32_t byte_cnt;    /* big-endian */
};

/* Slot of mini array @p k of the basic session whose title is at @p h (§6). */
static inline uint32_t
cqpoll_mlx5_mini_array_idx(uint32_t h, uint32_t k)
{
	return h + (k == 0 ? 1 : k * CQPOLL_MLX5_MINI_PER_ARRAY);
}

/* The 64-byte descriptor of a slot: the second half of a 128-byte slot (§2.1). */
static inline struct mlx5_cqe64 *
cqpoll_mlx5_cqe(void *buf, uint32_t idx, uint32_t cqe_cnt, uint32_t cqe_size)
{
	return (struct mlx5_cqe64 *)(void *)((uint8_t *)buf +
		(size_t)(idx & (cqe_cnt - 1)) * cqe_size + (cqe_size - 64));
}

/* Owner value of a software-owned entry at counter @p idx (§3.1). */
static inline uint8_t
cqpoll_mlx5_sw_owner(uint32_t idx, uint32_t cqe_cnt)
{
	return (idx & cqe_cnt) != 0;
}

/*
 * Enhanced compression layout: the validity byte (signature, offset 62) of
 * a CQE at counter @p idx holds the lap number's low byte (§6; DPDK
 * check_cqe_iteration, the kernel's mlx5_cqwq_get_cqe_enhanced_comp).
 */
static inline uint8_t
cqpoll_mlx5_vic(uint32_t idx, uint32_t cqe_cnt)
{
	return (uint8_t)(idx >> __builtin_ctz(cqe_cnt));
}
/* Software's initial validity byte (DPDK MLX5_CQE_VIC_INIT). */
#define CQPOLL_MLX5_VIC_INIT 0xff
/* Mini CQEs in one enhanced-layout block, whose opcode nibble holds count - 1. */
#define CQPOLL_MLX5_MINI_PER_BLOCK 7

/* The 32-bit arm word, stored in dbrec[1] and in the UAR doorbell (§5.1). */
static inline uint32_t
cqpoll_mlx5_arm_word(uint32_t sn, uint32_t cmd, uint32_t ci)
{
	return (sn & 3u) << 28 | cmd | (ci & CQPOLL_MLX5_CI_MASK);
}

/* The 8 bytes written to UAR + MLX5_CQ_DOORBELL, as a big-endian value (§5.1). */
static inline uint64_t
cqpoll_mlx5_uar_word(uint32_t arm_word, uint32_t cqn)
{
	return htobe64((uint64_t)arm_word << 32 | (cqn & CQPOLL_MLX5_CI_MASK));
}

/* A UAR doorbell decoded as the device reads it (§10 item 2). */
struct cqpoll_mlx5_doorbell {
	uint32_t sn;
	uint32_t cmd; /* 0: any completion, 1: solicited only */
	uint32_t ci;
	uint32_t cqn;
	uint32_t reserved_bits; /* nonzero: bits the format leaves 0 were set */
};

static inline struct cqpoll_mlx5_doorbell
cqpoll_mlx5_doorbell_decode(uint64_t uar_word)
{
	uint64_t v = be64toh(uar_word);
	uint32_t hi = (uint32_t)(v >> 32), lo = (uint32_t)v;
	struct cqpoll_mlx5_doorbell d = {
		.sn = (hi >> 28) & 3,
		.cmd = (hi >> 24) & 0xf,
		.ci = hi & CQPOLL_MLX5_CI_MASK,
		.cqn = lo & CQPOLL_MLX5_CI_MASK,
		.reserved_bits = (hi >> 30) | (lo >> 24),
	};
	return d;
}

/* Error syndrome to status, as rdma-core mlx5_handle_error_cqe (§7). */
static inline enum cqpoll_status
cqpoll_mlx5_syndrome_status(uint8_t syndrome)
{
	switch (syndrome) {
	case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR: return CQPOLL_STATUS_LOC_LEN_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR: return CQPOLL_STATUS_LOC_QP_OP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR: return CQPOLL_STATUS_LOC_PROT_ERR;
	case MLX5_CQE_SYNDROME_WR_FLUSH_ERR: return CQPOLL_STATUS_WR_FLUSH_ERR;
	case MLX5_CQE_SYNDROME_MW_BIND_ERR: return CQPOLL_STATUS_MW_BIND_ERR;
	case MLX5_CQE_SYNDROME_BAD_RESP_ERR: return CQPOLL_STATUS_BAD_RESP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR: return CQPOLL_STATUS_LOC_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR: return CQPOLL_STATUS_REM_INV_REQ_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR: return CQPOLL_STATUS_REM_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_OP_ERR: return CQPOLL_STATUS_REM_OP_ERR;
	case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR: return CQPOLL_STATUS_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR: return CQPOLL_STATUS_RNR_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR: return CQPOLL_STATUS_REM_ABORT_ERR;
	default: return CQPOLL_STATUS_GENERAL_ERR;
	}
}

/*
 * How a successful CQE becomes a completion. One table serves both CQE kinds
 * so that the fast path decodes either with one index computation and no
 * branch on the kind; the index also carries the SE bit of op_own, so an entry
 * holds the finished status, opcode and flags and the poll copies them as is.
 */

/* The last three fields of struct cqpoll_completion, in the same order. */
struct cqpoll_mlx5_op_tail {
	uint8_t status;    /* CQPOLL_STATUS_SUCCESS */
	uint8_t opcode;    /* enum cqpoll_opcode */
	uint16_t flags;    /* CQPOLL_COMPLETION_F_*, F_TIMESTAMP and F_SOLICITED included */
};

struct cqpoll_mlx5_op {
	uint32_t imm_mask;  /* imm_inval_pkey is meaningful: ~0, else 0 */
	uint32_t len_mask;  /* byte_cnt is the length: ~0; atomics: 0 */
	uint32_t len_fixed; /* atomics: 8, as rdma-core reports; else 0 */
	struct cqpoll_mlx5_op_tail tail;
};

/*
 * Entry of a responder CQE (opcode 1 to 4): op_own with the owner bit clear,
 * halved, i.e. opcode * 8 + format * 2 + SE. The fast path only sees format 0.
 */
#define CQPOLL_MLX5_OP_RESP(op_own) ((unsigned int)(op_own) >> 1)
/* Requester entries follow, one pair (SE clear, set) per WQE opcode 0 to 255. */
#define CQPOLL_MLX5_OP_REQ_BASE \
	(CQPOLL_MLX5_OP_RESP(MLX5_CQE_RESP_SEND_INV << 4 | CQPOLL_MLX5_OP_OWN_SE) + 1)
/* Entry of a requester CQE: WQE opcode (sop_drop_qpn 31:24) and SE (0 or 1). */
#define CQPOLL_MLX5_OP_REQ(wqe_op, se) (CQPOLL_MLX5_OP_REQ_BASE + (wqe_op) * 2u + (se))
#define CQPOLL_MLX5_OP_CNT (CQPOLL_MLX5_OP_REQ(255, 1) + 1)

/* Internal to the library: hidden, so the poll reaches it without the GOT. */
extern const struct cqpoll_mlx5_op cqpoll_mlx5_op_table[CQPOLL_MLX5_OP_CNT]
	__attribute__((visibility("hidden")));

#endif /* CQPOLL_MLX5_PRM_H */
