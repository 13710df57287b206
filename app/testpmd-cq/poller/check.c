/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The delivery check of one CQ: every completion exactly once and in order
 * (by its own sequence), well formed, and its latency. Shared by the
 * single-CQ loops and the poll group's callbacks. The stamp, the order check
 * and the count are tpcq-peer's too (harness.h); with --harness=count only
 * the count is left, in both programs.
 */
#include <stdbool.h>
#include <time.h>

#include "dev.h"
#include "hist.h"
#include "poller.h"
#include "run.h"
#include "testpmd_cq.h"

/*
 * The sequence number of a completion. Some devices return only its low bits
 * (mlx5: the 16-bit WQE counter, F_WQE_COUNTER), so it is the number nearest
 * to the expected one with those low bits: the difference is sign-extended
 * from the width.
 */
static inline uint64_t
seq_of(const struct tpcq_check *ck, uint64_t wr_id)
{
	uint64_t d = (wr_id - ck->h.expected) & ck->wr_id_mask;

	if (d & ((ck->wr_id_mask >> 1) + 1))
		d |= ~ck->wr_id_mask;
	return ck->h.expected + d;
}

/* The payload the device scattered is the one posted for @p seq. */
static bool
payload_ok(const struct cqpoll_completion *c, uint64_t seq, uint32_t len)
{
	const uint8_t *p = c->inline_data;
	unsigned int i;

	if (!(c->flags & CQPOLL_COMPLETION_F_INLINE) || p == NULL || c->byte_len != len)
		return false;
	for (i = 0; i < len; i++)
		if (p[i] != tpcq_payload_byte(seq, i))
			return false;
	return true;
}

void
tpcq_check_bind(struct tpcq_check *ck, struct tpcq_result *res)
{
	ck->h.latency = res->latency;
	ck->h.completions = &res->completions;
	ck->h.order_errors = &res->order_errors;
}

void
tpcq_check_init(struct tpcq_check *ck, const struct tpcq_run *run,
		struct tpcq_result *res, unsigned int index)
{
	*ck = (struct tpcq_check){ .h.work = run->params->harness,
				   .wr_id_mask = run->dcs[index].wr_id_mask,
				   .index = index };
	tpcq_check_bind(ck, res);
}

/* Counting only, the CQ's sequence is its count: each CQ's starts at 0. */
uint64_t
tpcq_check_expected(const struct tpcq_check *ck)
{
	return tpcq_harness_counting(&ck->h) ? ck->received : ck->h.expected;
}

/* Device plumbing, whatever --harness: not harness work. */
static void
consumed(const struct tpcq_run *run, struct tpcq_check *ck,
	 const struct cqpoll_completion *comps, unsigned int n)
{
	ck->received += n;
	if (run->params->dev->consumed != NULL)
		run->params->dev->consumed(&run->dcs[ck->index], comps, n);
}

void
tpcq_check_burst(const struct tpcq_run *run, struct tpcq_result *res,
		 struct tpcq_check *ck, const struct cqpoll_completion *comps,
		 unsigned int n)
{
	const struct tpcq_expect *e = &run->dc->expect;
	const struct cqpoll_completion *c;
	uint64_t now, seq, slot;
	unsigned int i;

	if (tpcq_harness_counting(&ck->h)) {
		tpcq_harness_count(&ck->h, n);
		consumed(run, ck, comps, n);
		return;
	}
	/* One clock read per burst: the whole burst was read at this time. */
	now = tpcq_harness_now(&ck->h);
	for (i = 0; i < n; i++) {
		c = &comps[i];
		/* The request's id as the flags say the driver knows it. */
		seq = seq_of(ck, e->seq_of != NULL ? e->seq_of(c) :
			     (c->flags & CQPOLL_COMPLETION_F_WR_ID) ? c->wr_id :
			     c->wqe_counter);
		if (c->status != CQPOLL_STATUS_SUCCESS || c->opcode != e->opcode ||
		    (e->check_byte_len && c->byte_len != e->byte_len) ||
		    c->qp_num != e->qp_num ||
		    (e->inline_len != 0 && !payload_ok(c, seq, e->inline_len)))
			res->bad_completions++;
		if (run->post_ns != NULL) {
			/* Post times are kept by the schedule's index. */
			slot = (seq * run->traffic_cqs + ck->index) & run->post_ns_mask;
			tpcq_harness_got(&ck->h, seq, now, &run->post_ns[slot]);
		} else if (c->flags & CQPOLL_COMPLETION_F_TIMESTAMP) {
			tpcq_harness_got(&ck->h, seq, now, &c->timestamp);
		} else {
			tpcq_harness_got(&ck->h, seq, now, NULL);
			res->no_timestamp++;
		}
	}
	consumed(run, ck, comps, n);
}
