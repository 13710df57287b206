/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A lane and its model together, and how a check reads what came back:
 * which request a completion finished, as any program must tell it (wr_id
 * where the driver knows it, else the WQE counter, contract.md), and
 * whether its fields are those the model expects.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hw_check.h"

uint64_t
hw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
hw_sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int
hw_run_open(struct hw_run *r, struct hw_target *t, const struct hw_lane_conf *c,
	    char *why, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->t = t;
	r->driver = c->driver;
	r->lane = t->ops->open(t, c, why, len);
	if (r->lane == NULL)
		return -1;
	r->cq = t->ops->cq(r->lane);
	r->model.rq_posted = c->recvs;
	r->model.b_on_cq = c->b_on_cq;
	r->model.a_off_cq = c->a_off_cq && c->b_on_cq;
	return 0;
}

void
hw_run_close(struct hw_run *r)
{
	if (r->lane != NULL)
		r->t->ops->close(r->lane);
	r->lane = NULL;
	r->cq = NULL;
}

int
hw_run_step(struct hw_run *r, const struct hw_step *s, struct hw_expect *exp, int *nexp,
	    int max)
{
	int n = hw_model_step(&r->model, s, exp + *nexp, max - *nexp);

	if (n < 0)
		return -EINVAL;
	*nexp += n;
	return r->t->ops->step(r->lane, s, exp + *nexp - n, n);
}

int
hw_run_collect(struct hw_run *r, struct cqpoll_completion *c, int n, int timeout_ms)
{
	uint64_t end = hw_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	int got = 0, k;

	while (got < n) {
		k = cqpoll_poll_burst(r->cq, c + got, (unsigned int)(n - got));
		if (k < 0)
			return got;
		got += k;
		if (k == 0) {
			if (hw_now_ns() > end)
				break;
			r->t->ops->settle(r->lane);
		}
	}
	return got;
}

const struct hw_expect *
hw_pair(const struct hw_run *r, const struct cqpoll_completion *c,
	const struct hw_expect *exp, int nexp, uint32_t *seen, char *why, size_t len)
{
	enum hw_side side;
	uint32_t k = 0;
	int i;

	if (c->qp_num == r->t->ops->qpn(r->lane, HW_SIDE_A))
		side = HW_SIDE_A;
	else if (c->qp_num == r->t->ops->qpn(r->lane, HW_SIDE_B))
		side = HW_SIDE_B;
	else {
		snprintf(why, len, "completion of QP 0x%x, neither A (0x%x) nor B (0x%x)",
			 c->qp_num, r->t->ops->qpn(r->lane, HW_SIDE_A),
			 r->t->ops->qpn(r->lane, HW_SIDE_B));
		return NULL;
	}
	/* Each work queue completes in order (RC): the side's next one. */
	for (i = 0; i < nexp; i++) {
		if (exp[i].side != side)
			continue;
		if (k++ == seen[side]) {
			seen[side]++;
			return &exp[i];
		}
	}
	snprintf(why, len, "one completion more than expected on %s (QP 0x%x)",
		 side == HW_SIDE_A ? "A" : "B", c->qp_num);
	return NULL;
}

int
hw_match(const struct hw_run *r, const struct cqpoll_completion *c,
	 const struct hw_expect *e, char *why, size_t len)
{
	const char *side = e->side == HW_SIDE_A ? "A" : "B";

	if (c->status != e->status) {
		snprintf(why, len, "%s[%u]: status %u (%s), expected %u (%s)", side, e->index,
			 c->status, ibv_wc_status_str((enum ibv_wc_status)c->status),
			 e->status, ibv_wc_status_str((enum ibv_wc_status)e->status));
		return -1;
	}
	if (c->flags & CQPOLL_COMPLETION_F_WR_ID) {
		if (c->wr_id != e->wr_id) {
			snprintf(why, len, "%s[%u]: wr_id 0x%" PRIx64 ", expected 0x%" PRIx64,
				 side, e->index, c->wr_id, e->wr_id);
			return -1;
		}
	} else if (c->flags & CQPOLL_COMPLETION_F_WQE_COUNTER) {
		/*
		 * Requesters name their WQE; a plain receive queue completes
		 * in order and rdma-core reads its own tail there, so only
		 * the order (hw_pair) names a receive.
		 */
		if (e->side == HW_SIDE_A && c->wqe_counter != (uint16_t)e->index) {
			snprintf(why, len, "%s[%u]: WQE counter %u", side, e->index,
				 c->wqe_counter);
			return -1;
		}
	} else {
		snprintf(why, len, "%s[%u]: neither wr_id nor WQE counter flagged (flags 0x%x)",
			 side, e->index, c->flags);
		return -1;
	}
	if (e->status != CQPOLL_STATUS_SUCCESS)
		return 0;
	if (c->opcode != e->opcode) {
		snprintf(why, len, "%s[%u]: opcode %u, expected %u", side, e->index, c->opcode,
			 e->opcode);
		return -1;
	}
	if (e->side == HW_SIDE_B && c->byte_len != e->byte_len) {
		snprintf(why, len, "%s[%u]: byte_len %u, expected %u", side, e->index,
			 c->byte_len, e->byte_len);
		return -1;
	}
	if ((c->flags & CQPOLL_COMPLETION_F_IMM) != (e->flags & CQPOLL_COMPLETION_F_IMM) ||
	    ((e->flags & CQPOLL_COMPLETION_F_IMM) && c->imm_data != e->imm)) {
		snprintf(why, len, "%s[%u]: immediate %s0x%x, expected %s0x%x", side, e->index,
			 c->flags & CQPOLL_COMPLETION_F_IMM ? "" : "(none) ", c->imm_data,
			 e->flags & CQPOLL_COMPLETION_F_IMM ? "" : "(none) ", e->imm);
		return -1;
	}
	(void)r;
	return 0;
}
