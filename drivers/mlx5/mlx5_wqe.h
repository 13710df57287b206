/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_MLX5_WQE_H
#define CQPOLL_MLX5_WQE_H

/*
 * Writers of the segments of a send WQE, one per segment, into the ring of
 * a cqpoll mlx5 QP (doc/guides/mlx5-wqe-contract.md §2). Segments are 16 bytes and a WQE
 * starts on a 64-byte WQEBB, so a segment never straddles the ring's end; a
 * WQE may run past it and go on at the start (§1.2), as in rdma-core, UCX
 * and SPDK. Everything the device reads is big-endian.
 */

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "mlx5_barrier.h"
#include "mlx5_qp.h"

/* Bytes of one data unit (DS) of a WQE. */
#define CQPOLL_MLX5_WQE_DS 16u
/* DS holds 6 bits (§2.1: rdma-core and DPDK mask 0x3f). */
#define CQPOLL_MLX5_WQE_DS_MAX 63u

/* The segment after @p seg, wrapping at the ring's end. */
static inline uint8_t *
cqpoll_mlx5_wqe_next(const struct cqpoll_mlx5_qp *qp, uint8_t *seg)
{
	seg += CQPOLL_MLX5_WQE_DS;
	return seg == qp->sq_end ? qp->sq_buf : seg;
}

/*
 * Control segment (§2.1), written last, once DS is known: WQE index = the
 * 16-bit WQEBB counter of its first block; bytes 8-11 cleared with one store
 * (signature, the DC stream id, then fm_ce_se), as rdma-core does.
 */
static inline void
cqpoll_mlx5_wqe_ctrl(uint8_t *seg, uint32_t counter, uint8_t opcode, uint32_t qpn_ds,
		     uint32_t ds, uint8_t fm_ce_se, uint32_t imm)
{
	struct mlx5_wqe_ctrl_seg *c = (struct mlx5_wqe_ctrl_seg *)(void *)seg;
	uint32_t w8 = 0;

	c->opmod_idx_opcode = htobe32((counter & 0xffffu) << 8 | opcode);
	c->qpn_ds = htobe32(qpn_ds | (ds & CQPOLL_MLX5_WQE_DS_MAX));
	memcpy(&c->signature, &w8, sizeof(w8));
	c->fm_ce_se = fm_ce_se;
	c->imm = imm;
}

/* Remote address segment (§2.3). */
static inline void
cqpoll_mlx5_wqe_raddr(uint8_t *seg, uint64_t raddr, uint32_t rkey)
{
	struct mlx5_wqe_raddr_seg *r = (struct mlx5_wqe_raddr_seg *)(void *)seg;

	r->raddr = htobe64(raddr);
	r->rkey = htobe32(rkey);
	r->reserved = 0;
}

/*
 * Atomic segment (§2.3): swap (CAS) or add (FAA) value, and the compare
 * value, written for CAS only, as rdma-core's _set_atomic_seg.
 */
static inline void
cqpoll_mlx5_wqe_atomic(uint8_t *seg, uint64_t swap_add, uint64_t compare, int cas)
{
	struct mlx5_wqe_atomic_seg *a = (struct mlx5_wqe_atomic_seg *)(void *)seg;

	a->swap_add = htobe64(swap_add);
	if (cas)
		a->compare = htobe64(compare);
}

/* Data pointer segment (§2.3). */
static inline void
cqpoll_mlx5_wqe_data(uint8_t *seg, uint32_t len, uint32_t lkey, uint64_t addr)
{
	struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)(void *)seg;

	d->byte_count = htobe32(len);
	d->lkey = htobe32(lkey);
	d->addr = htobe64(addr);
}

/*
 * Inline data (§2.3): a BE32 header len | MLX5_INLINE_SEG, the bytes from
 * byte 4, wrapping at the ring's end, padding left as it was. @p seg is the
 * header's segment; returns the DS count, ceil((4 + len) / 16), 0 when there
 * is no byte (then no header, as rdma-core).
 */
static inline uint32_t
cqpoll_mlx5_wqe_inline(const struct cqpoll_mlx5_qp *qp, uint8_t *seg,
		       const struct cqpoll_mlx5_sge *sg, uint32_t nsge)
{
	uint8_t *dst = seg + sizeof(struct mlx5_wqe_inl_data_seg);
	uint32_t total = 0, i, len, room;
	const uint8_t *src;

	for (i = 0; i < nsge; i++) {
		src = (const uint8_t *)(uintptr_t)sg[i].addr;
		len = sg[i].length;
		total += len;
		while (len != 0) {
			room = (uint32_t)(qp->sq_end - dst);
			if (room > len)
				room = len;
			memcpy(dst, src, room);
			dst += room;
			src += room;
			len -= room;
			if (dst == qp->sq_end)
				dst = qp->sq_buf;
		}
	}
	if (total == 0)
		return 0;
	((struct mlx5_wqe_inl_data_seg *)(void *)seg)->byte_count =
		htobe32(total | MLX5_INLINE_SEG);
	return (sizeof(struct mlx5_wqe_inl_data_seg) + total + CQPOLL_MLX5_WQE_DS - 1) /
		CQPOLL_MLX5_WQE_DS;
}

/*
 * @p v as the last byte in memory of a 32-bit word: a WQE opcode in the
 * control segment's first word, fm_ce_se in its third.
 */
#if __BYTE_ORDER == __LITTLE_ENDIAN
#define CQPOLL_MLX5_BYTE3(v) ((uint32_t)(v) << 24)
#else
#define CQPOLL_MLX5_BYTE3(v) ((uint32_t)(v))
#endif
/*
 * Bytes 8-11 of the control segment (signature and reserved 0, fm_ce_se)
 * as one word, for the SIGNALED, INLINE, FENCE and SOLICITED flags @p f, as
 * cqpoll_mlx5_wqe_ctrl() sets them (§2.2, §3); the QP's table of the 16
 * (fm_ce_se_word) lets a post path store the word at once, as DPDK's
 * mlx5_tx_cseg_init.
 */
#define CQPOLL_MLX5_FM_CE_SE(f) CQPOLL_MLX5_BYTE3( \
	((f) & CQPOLL_MLX5_SEND_F_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0) | \
	((f) & CQPOLL_MLX5_SEND_F_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0) | \
	((f) & CQPOLL_MLX5_SEND_F_FENCE ? MLX5_WQE_CTRL_FENCE : 0))

/*
 * One doorbell for the burst (§4.1): the WQEs before the record, the record
 * (@p head, the send counter past the last WQE) before the register, then
 * the last WQE's first 8 bytes to the BlueFlame register, flushed out of the
 * write-combining buffer; the next doorbell goes to the other half.
 */
static inline __attribute__((always_inline)) void
cqpoll_mlx5_ring_send(struct cqpoll_mlx5_qp *qp, uint32_t head, const uint8_t *last_ctrl)
{
	uint64_t w;

	cqpoll_mlx5_wmb_wqe_before_record();
	__atomic_store_n(&qp->dbrec[MLX5_SND_DBR], htobe32(head & 0xffffu), __ATOMIC_RELEASE);
	cqpoll_mlx5_wmb_record_before_uar();
	memcpy(&w, last_ctrl, sizeof(w));
	__atomic_store_n((uint64_t *)qp->bf_cur, w, __ATOMIC_RELAXED);
	cqpoll_mlx5_uar_flush();
	qp->bf_cur ^= qp->bf_size;
}

#endif /* CQPOLL_MLX5_WQE_H */
