/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5 direct and verbs side by side: the same traffic on a loopback QP pair
 * of each (sends, RDMA writes with immediate, a send with a bad lkey, a send
 * flushed on the QP in error, the responder moved to error), every
 * completion held against the verbs specification (hw_model.c) and against
 * the other driver's, field by field. Requester and responder both complete
 * on the CQ under test.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hw_check.h"

#define NRECV 8
#define MAXC 32

static const struct hw_step script[] = {
	{ HW_STEP_SEND, 8, 0 },
	{ HW_STEP_SEND, 24, 0 },
	{ HW_STEP_SEND, 60, 0 },
	{ HW_STEP_WRITE_IMM, 16, 0x12345678 },
	{ HW_STEP_WRITE_IMM, 200, 0xabcdef01 },
	{ HW_STEP_SEND_BAD_LKEY, 16, 0 },
	{ HW_STEP_SEND_IN_ERROR, 8, 0 },
	{ HW_STEP_B_TO_ERROR, 0, 0 },
};

#define NSTEPS (sizeof(script) / sizeof(script[0]))

struct side_by_side {
	struct cqpoll_completion c[MAXC];       /* in the model's order */
	const struct hw_expect *e[MAXC];
};

/* Run the script on one driver; the completions sorted into the model's order. */
int hw_compare_run(struct hw_target *t, enum hw_driver d, uint32_t mlx5_flags,
		   struct hw_expect *exp, int *nexp, struct cqpoll_completion *sorted,
		   char *why, size_t len);

int
hw_compare_run(struct hw_target *t, enum hw_driver d, uint32_t mlx5_flags,
	       struct hw_expect *exp, int *nexp, struct cqpoll_completion *sorted,
	       char *why, size_t len)
{
	struct hw_lane_conf conf = { .driver = d, .b_on_cq = true, .recvs = NRECV,
				     .mlx5_flags = mlx5_flags };
	struct cqpoll_completion c[MAXC];
	uint32_t seen[2] = { 0, 0 };
	struct hw_run run;
	size_t s;
	int n, i, r;

	*nexp = 0;
	if (hw_run_open(&run, t, &conf, why, len) != 0)
		return -1;
	for (s = 0; s < NSTEPS; s++) {
		r = hw_run_step(&run, &script[s], exp, nexp, MAXC);
		if (r != 0) {
			snprintf(why, len, "%s: step %zu: %s", hw_driver_name(d), s, strerror(-r));
			hw_run_close(&run);
			return -1;
		}
		/* The error must have happened before a flush is asked of it. */
		t->ops->settle(run.lane);
	}
	n = hw_run_collect(&run, c, *nexp, 2000);
	if (n != *nexp) {
		snprintf(why, len, "%s: %d completions of %d expected", hw_driver_name(d), n, *nexp);
		hw_run_close(&run);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct hw_expect *e;

		if (d == HW_DRV_MLX5 && hw_control != NULL && strcmp(hw_control, "swap-imm") == 0 &&
		    (c[i].flags & CQPOLL_COMPLETION_F_IMM))
			c[i].imm_data = __builtin_bswap32(c[i].imm_data);
		if (d == HW_DRV_MLX5 && hw_control != NULL &&
		    strcmp(hw_control, "vendor-err") == 0 && c[i].status != 0)
			c[i].vendor_err ^= 0x80;
		e = hw_pair(&run, &c[i], exp, *nexp, seen, why, len);

		if (e == NULL || hw_match(&run, &c[i], e, why, len) != 0) {
			char tmp[256];

			snprintf(tmp, sizeof(tmp), "%s", why);
			snprintf(why, len, "%s: %s", hw_driver_name(d), tmp);
			hw_run_close(&run);
			return -1;
		}
		/* Payloads a receive holds: in the CQE (mlx5 scatter) or the buffer. */
		if (e->side == HW_SIDE_B && e->status == 0 && e->opcode == CQPOLL_OP_RECV) {
			const uint8_t *p = (c[i].flags & CQPOLL_COMPLETION_F_INLINE) ?
				c[i].inline_data : t->ops->recv_buf(run.lane, e->index);
			uint32_t k;

			for (k = 0; p != NULL && k < e->byte_len; k++) {
				if (p[k] != hw_payload(e->payload_seed, k)) {
					snprintf(why, len, "%s: B[%u]: payload byte %u is 0x%02x, "
						 "expected 0x%02x (%s)", hw_driver_name(d),
						 e->index, k, p[k],
						 hw_payload(e->payload_seed, k),
						 (c[i].flags & CQPOLL_COMPLETION_F_INLINE) ?
						 "in the CQE" : "in the receive buffer");
					hw_run_close(&run);
					return -1;
				}
			}
		}
		sorted[e - exp] = c[i];
		/* The side's own QP number stands for the role in the comparison. */
		sorted[e - exp].qp_num = (uint32_t)e->side;
		sorted[e - exp].inline_data = NULL;
	}
	hw_run_close(&run);
	return 0;
}

/*
 * Fields both drivers must report alike: which request is told differently
 * by design (wr_id, WQE counter), so are the timestamp's clock and where an
 * inline payload is read; everything else must be equal.
 */
#define SAME_FLAGS (CQPOLL_COMPLETION_F_IMM | CQPOLL_COMPLETION_F_INV | \
		    CQPOLL_COMPLETION_F_SOLICITED)

static int
differ(const struct cqpoll_completion *a, const struct cqpoll_completion *b,
       const struct hw_expect *e, char *why, size_t len)
{
	bool ok = e->status != 0;
	const char *side = e->side == HW_SIDE_A ? "A" : "B";

	if (a->status != b->status)
		snprintf(why, len, "%s[%u]: status %u vs %u", side, e->index, a->status, b->status);
	else if (a->vendor_err != b->vendor_err)
		snprintf(why, len, "%s[%u]: vendor_err 0x%x vs 0x%x", side, e->index,
			 a->vendor_err, b->vendor_err);
	else if (a->qp_num != b->qp_num)
		snprintf(why, len, "%s[%u]: different QPs", side, e->index);
	else if (ok)
		return 0; /* a failed completion defines nothing else */
	else if (a->opcode != b->opcode)
		snprintf(why, len, "%s[%u]: opcode %u vs %u", side, e->index, a->opcode, b->opcode);
	else if ((a->flags & SAME_FLAGS) != (b->flags & SAME_FLAGS))
		snprintf(why, len, "%s[%u]: flags 0x%x vs 0x%x", side, e->index,
			 a->flags & SAME_FLAGS, b->flags & SAME_FLAGS);
	else if (a->imm_data != b->imm_data)
		snprintf(why, len, "%s[%u]: imm_data 0x%x vs 0x%x", side, e->index,
			 a->imm_data, b->imm_data);
	else if (e->side == HW_SIDE_B && a->byte_len != b->byte_len)
		snprintf(why, len, "%s[%u]: byte_len %u vs %u", side, e->index, a->byte_len,
			 b->byte_len);
	else
		return 0;
	return 1;
}

static void
compare(struct hw_target *t, struct hw_result *r)
{
	struct hw_expect em[MAXC], ev[MAXC];
	struct cqpoll_completion cm[MAXC], cv[MAXC];
	int nm, nv, i, errors = 0;
	char why[512];

	if (!t->has_mlx5) {
		hw_skip(r, "%s is not an mlx5 device: verbs is its only driver, nothing to "
			"compare it with", t->name);
		return;
	}
	if (hw_compare_run(t, HW_DRV_MLX5, 0, em, &nm, cm, why, sizeof(why)) != 0 ||
	    hw_compare_run(t, HW_DRV_VERBS, 0, ev, &nv, cv, why, sizeof(why)) != 0) {
		hw_fail(r, "%s", why);
		return;
	}
	if (nm != nv) {
		hw_fail(r, "%d completions on mlx5, %d on verbs", nm, nv);
		return;
	}
	for (i = 0; i < nm; i++) {
		if (differ(&cm[i], &cv[i], &em[i], why, sizeof(why))) {
			hw_fail(r, "mlx5 vs verbs: %s", why);
			return;
		}
		errors += em[i].status != 0;
	}
	hw_data_i64(r, "completions", nm);
	hw_data_i64(r, "error_completions", errors);
	hw_pass(r, "%d completions (%d failed: bad lkey, flushes) equal on mlx5 and verbs, "
		"as the verbs specification says", nm, errors);
}

const struct hw_check hw_check_compare = {
	"compare-mlx5-verbs",
	"mlx5 direct vs verbs on the same traffic, errors included", compare };
