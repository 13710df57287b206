/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs-emu consumer side: ibv_poll_cq() and the extended poll functions, as
 * a provider implements them. An entry is valid when its owner bit carries
 * the current lap's phase; the consumer index reaches the device once per
 * call (poll_cq) or per session (end_poll), as a doorbell record would.
 */

#include <errno.h>

#include "verbs_emu_private.h"

static inline const struct cqpoll_verbs_emu_cqe *
next_valid(struct cqpoll_verbs_emu_cq *q)
{
	const struct cqpoll_verbs_emu_cqe *e = &q->ring[q->ci & q->mask];

	/* Acquire: the entry's fields are read only after its owner. */
	if (__atomic_load_n(&e->owner, __ATOMIC_ACQUIRE) != ((q->ci >> q->log2_size) & 1))
		return NULL;
	return e;
}

static inline void
publish_ci(struct cqpoll_verbs_emu_cq *q)
{
	/* Release: slots go back to the device only after they were read. */
	__atomic_store_n(&q->ci_db, q->ci, __ATOMIC_RELEASE);
}

int
cqpoll_verbs_emu_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct cqpoll_verbs_emu_cq *q = emu_cq(cq);
	const struct cqpoll_verbs_emu_cqe *e;
	int i;

	for (i = 0; i < n; i++) {
		e = next_valid(q);
		if (e == NULL)
			break;
		wc[i].wr_id = e->wr_id;
		wc[i].status = (enum ibv_wc_status)e->status;
		wc[i].opcode = (enum ibv_wc_opcode)e->opcode;
		wc[i].vendor_err = e->vendor_err;
		wc[i].byte_len = e->byte_len;
		wc[i].imm_data = e->imm_data;
		wc[i].qp_num = e->qp_num;
		wc[i].src_qp = 0;
		wc[i].wc_flags = e->wc_flags;
		wc[i].pkey_index = 0;
		wc[i].slid = 0;
		wc[i].sl = 0;
		wc[i].dlid_path_bits = 0;
		q->ci++;
	}
	if (i != 0)
		publish_ci(q);
	return i;
}

/* Parse the next entry into the ibv_cq_ex header; consumes it. */
static inline int
ex_parse(struct cqpoll_verbs_emu_cq *q)
{
	const struct cqpoll_verbs_emu_cqe *e = next_valid(q);

	if (e == NULL)
		return ENOENT;
	q->cur = e;
	q->ex.wr_id = e->wr_id;
	q->ex.status = (enum ibv_wc_status)e->status;
	q->ci++;
	return 0;
}

static int
ex_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	if (attr->comp_mask != 0)
		return EINVAL;
	return ex_parse(emu_cq_ex(cq));
}

static int
ex_next_poll(struct ibv_cq_ex *cq)
{
	return ex_parse(emu_cq_ex(cq));
}

static void
ex_end_poll(struct ibv_cq_ex *cq)
{
	publish_ci(emu_cq_ex(cq));
}

static enum ibv_wc_opcode
ex_read_opcode(struct ibv_cq_ex *cq)
{
	return (enum ibv_wc_opcode)emu_cq_ex(cq)->cur->opcode;
}

static uint32_t
ex_read_vendor_err(struct ibv_cq_ex *cq)
{
	return emu_cq_ex(cq)->cur->vendor_err;
}

static uint32_t
ex_read_byte_len(struct ibv_cq_ex *cq)
{
	return emu_cq_ex(cq)->cur->byte_len;
}

static __be32
ex_read_imm_data(struct ibv_cq_ex *cq)
{
	return (__be32)emu_cq_ex(cq)->cur->imm_data;
}

static uint32_t
ex_read_qp_num(struct ibv_cq_ex *cq)
{
	return emu_cq_ex(cq)->cur->qp_num;
}

static uint32_t
ex_read_src_qp(struct ibv_cq_ex *cq)
{
	(void)cq;
	return 0;
}

static unsigned int
ex_read_wc_flags(struct ibv_cq_ex *cq)
{
	return emu_cq_ex(cq)->cur->wc_flags;
}

static uint32_t
ex_read_slid(struct ibv_cq_ex *cq)
{
	(void)cq;
	return 0;
}

static uint8_t
ex_read_u8_zero(struct ibv_cq_ex *cq)
{
	(void)cq;
	return 0;
}

static uint64_t
ex_read_completion_ts(struct ibv_cq_ex *cq)
{
	return emu_cq_ex(cq)->cur->ts;
}

static uint64_t
ex_read_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	return emu_cq_ex(cq)->cur->wall_ns;
}

void
cqpoll_verbs_emu_fill_ex(struct cqpoll_verbs_emu_cq *q, uint64_t wc_flags)
{
	struct ibv_cq_ex *ex = &q->ex;

	ex->start_poll = ex_start_poll;
	ex->next_poll = ex_next_poll;
	ex->end_poll = ex_end_poll;
	ex->read_opcode = ex_read_opcode;
	ex->read_vendor_err = ex_read_vendor_err;
	/* As mlx5: a reader exists only for the fields asked for at creation. */
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = ex_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = ex_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = ex_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = ex_read_src_qp;
	ex->read_wc_flags = ex_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = ex_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = ex_read_u8_zero;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = ex_read_u8_zero;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		ex->read_completion_ts = ex_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		ex->read_completion_wallclock_ns = ex_read_completion_wallclock_ns;
}
