/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric consumer: fi_cq_read() in bursts, fi_cq_readerr() when the
 * provider says an error entry is next (-FI_EAVAIL). Reading also drives
 * the progress of providers with manual progress (tcp, shm), so every poll
 * may complete work.
 */

#include <errno.h>
#include <stdio.h>

#include "ofi_private.h"

#define OFI_BURST 32

static uint8_t
opcode_of(uint64_t flags)
{
	if (flags & FI_RECV)
		return (flags & FI_REMOTE_CQ_DATA) && (flags & FI_RMA) ?
			CQPOLL_OP_RECV_RDMA_WITH_IMM : CQPOLL_OP_RECV;
	if (flags & FI_RMA)
		return (flags & FI_READ) ? CQPOLL_OP_RDMA_READ : CQPOLL_OP_RDMA_WRITE;
	if (flags & FI_ATOMIC)
		return CQPOLL_OP_FETCH_ADD;
	return CQPOLL_OP_SEND;
}

static void
entry_to_completion(const struct fi_cq_data_entry *e, struct cqpoll_completion *c)
{
	c->wr_id = (uint64_t)(uintptr_t)e->op_context;
	c->timestamp = 0;
	c->inline_data = NULL;
	c->byte_len = (uint32_t)e->len;
	c->qp_num = 0;
	c->imm_data = 0;
	c->vendor_err = 0;
	c->status = CQPOLL_STATUS_SUCCESS;
	c->opcode = opcode_of(e->flags);
	c->flags = CQPOLL_COMPLETION_F_WR_ID;
	c->wqe_counter = 0;
	c->reserved = 0;
	if (e->flags & FI_REMOTE_CQ_DATA) {
		c->imm_data = (uint32_t)e->data;
		c->flags |= CQPOLL_COMPLETION_F_IMM;
	}
}

static int
read_error(struct cqpoll_ofi_cq *q, struct cqpoll_completion *c)
{
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_data_entry e;
	ssize_t r;

	r = fi_cq_readerr(q->cq, &err, 0);
	if (r == -FI_EAGAIN)
		return 0;
	if (r < 0)
		return (int)r;
	e.op_context = err.op_context;
	e.flags = err.flags;
	e.len = err.len;
	e.buf = err.buf;
	e.data = err.data;
	entry_to_completion(&e, c);
	c->status = err.err == FI_ECANCELED ? CQPOLL_STATUS_WR_FLUSH_ERR :
		err.err == FI_ETRUNC ? CQPOLL_STATUS_LOC_LEN_ERR :
		CQPOLL_STATUS_GENERAL_ERR;
	c->vendor_err = (uint32_t)err.prov_errno;
	/* err_data lives until the next read: take the message now. */
	snprintf(q->errmsg, sizeof(q->errmsg), "%s: %s", fi_strerror(err.err),
		 fi_cq_strerror(q->cq, err.prov_errno, err.err_data, NULL, 0));
	return 1;
}

int
cqpoll_ofi_poll(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	struct cqpoll_ofi_cq *q = priv;
	struct fi_cq_data_entry e[OFI_BURST];
	unsigned int got = 0, want, i;
	ssize_t r;

	while (got < n) {
		want = n - got < OFI_BURST ? n - got : OFI_BURST;
		r = fi_cq_read(q->cq, e, want);
		if (r == -FI_EAGAIN) {
			if (q->n_eqs != 0 && !q->shut &&
			    (q->eq_due || ++q->empty_polls >= OFI_EQ_CHECK_EVERY)) {
				cqpoll_ofi_eq_check(q);
				/* Flushed entries written since the read come first. */
				if (q->shut)
					continue;
			}
			break;
		}
		if (r == -FI_EAVAIL) {
			/* Flushed work may come with its endpoint's FI_SHUTDOWN. */
			q->eq_due = q->n_eqs != 0;
			r = read_error(q, &comps[got]);
			if (r < 0)
				return (int)r;
			got += (unsigned int)r;
			if (r == 0)
				break;
			continue;
		}
		if (r < 0)
			return (int)r;
		for (i = 0; i < (unsigned int)r; i++)
			entry_to_completion(&e[i], &comps[got + i]);
		got += (unsigned int)r;
		if ((unsigned int)r < want)
			break;
	}
	return (int)got;
}
