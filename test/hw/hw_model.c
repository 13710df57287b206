/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What each traffic step completes, as the verbs specification says
 * (ibv_post_send(3), ibv_poll_cq(3), ibv_modify_qp(3)), not as any
 * implementation of ours does:
 *  - a signaled SEND completes on the requester (IBV_WC_SEND) and consumes
 *    the responder's next receive (IBV_WC_RECV, byte_len = the bytes sent);
 *  - an RDMA WRITE WITH IMM completes on the requester (IBV_WC_RDMA_WRITE)
 *    and consumes a receive (IBV_WC_RECV_RDMA_WITH_IMM, the immediate in
 *    network order, byte_len = the bytes written);
 *  - a SEND whose SGE names no registered memory fails locally with
 *    IBV_WC_LOC_PROT_ERR and puts the QP in the error state: nothing goes on
 *    the wire, the responder's receive stays posted;
 *  - work on a QP in the error state, and a QP's outstanding receives when it
 *    is moved to the error state, complete with IBV_WC_WR_FLUSH_ERR.
 * Fields other than status and wr_id are not defined for failed completions.
 */
#include "hw_check.h"

static struct hw_expect *
add(struct hw_expect *out, int *n, int max, enum hw_side side, uint32_t index,
    uint8_t status)
{
	struct hw_expect *e;

	if (*n >= max)
		return NULL;
	e = &out[(*n)++];
	*e = (struct hw_expect){
		.side = side, .index = index, .status = status,
		.wr_id = (side == HW_SIDE_A ? HW_WRID_A : HW_WRID_B) + index,
	};
	return e;
}

int
hw_model_step(struct hw_model *m, const struct hw_step *s, struct hw_expect *out, int max)
{
	struct hw_expect *e;
	uint32_t k = m->sq;
	int n = 0;

	switch (s->kind) {
	case HW_STEP_SEND:
	case HW_STEP_WRITE_IMM:
		/* Receives count only where their completions are watched. */
		if (m->a_error || m->b_error ||
		    (m->b_on_cq && m->rq_used >= m->rq_posted))
			return -1;
		if (!m->a_off_cq) {
			e = add(out, &n, max, HW_SIDE_A, k, CQPOLL_STATUS_SUCCESS);
			if (e == NULL)
				return -1;
			e->opcode = s->kind == HW_STEP_SEND ? CQPOLL_OP_SEND :
				CQPOLL_OP_RDMA_WRITE;
		}
		m->sq++;
		if (m->b_on_cq) {
			e = add(out, &n, max, HW_SIDE_B, m->rq_used, CQPOLL_STATUS_SUCCESS);
			if (e == NULL)
				return -1;
			e->byte_len = s->len;
			e->payload_seed = k;
			if (s->kind == HW_STEP_SEND) {
				e->opcode = CQPOLL_OP_RECV;
			} else {
				e->opcode = CQPOLL_OP_RECV_RDMA_WITH_IMM;
				e->flags = CQPOLL_COMPLETION_F_IMM;
				e->imm = __builtin_bswap32(s->imm);
			}
		}
		m->rq_used++;
		return n;
	case HW_STEP_SEND_BAD_LKEY:
		if (m->a_error)
			return -1;
		if (!m->a_off_cq &&
		    add(out, &n, max, HW_SIDE_A, k, CQPOLL_STATUS_LOC_PROT_ERR) == NULL)
			return -1;
		m->sq++;
		m->a_error = true;
		return n;
	case HW_STEP_SEND_IN_ERROR:
		if (!m->a_error)
			return -1;
		if (!m->a_off_cq &&
		    add(out, &n, max, HW_SIDE_A, k, CQPOLL_STATUS_WR_FLUSH_ERR) == NULL)
			return -1;
		m->sq++;
		return n;
	case HW_STEP_B_TO_ERROR:
		if (m->b_error)
			return -1;
		while (m->rq_used < m->rq_posted) {
			if (m->b_on_cq &&
			    add(out, &n, max, HW_SIDE_B, m->rq_used,
				CQPOLL_STATUS_WR_FLUSH_ERR) == NULL)
				return -1;
			m->rq_used++;
		}
		m->b_error = true;
		return n;
	}
	return -1;
}
