/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs burst poll, three variants chosen once per CQ: ibv_poll_cq() into a
 * struct ibv_wc array, and the extended API with or without timestamps. The
 * extended variants read only the fields a cqpoll record holds, one provider
 * call each; ibv_poll_cq() fills a whole ibv_wc and is then converted.
 */

#include <errno.h>
#include <time.h>

#include "verbs_private.h"

/* ibv_wc array on the stack per ibv_poll_cq() call: 32 x 48 bytes. */
#define VERBS_WC_CHUNK 32

/* Explicit, though the values match today: cqpoll must not follow ABI drift. */
static const uint8_t status_map[] = {
	[IBV_WC_SUCCESS] = CQPOLL_STATUS_SUCCESS,
	[IBV_WC_LOC_LEN_ERR] = CQPOLL_STATUS_LOC_LEN_ERR,
	[IBV_WC_LOC_QP_OP_ERR] = CQPOLL_STATUS_LOC_QP_OP_ERR,
	[IBV_WC_LOC_EEC_OP_ERR] = CQPOLL_STATUS_LOC_EEC_OP_ERR,
	[IBV_WC_LOC_PROT_ERR] = CQPOLL_STATUS_LOC_PROT_ERR,
	[IBV_WC_WR_FLUSH_ERR] = CQPOLL_STATUS_WR_FLUSH_ERR,
	[IBV_WC_MW_BIND_ERR] = CQPOLL_STATUS_MW_BIND_ERR,
	[IBV_WC_BAD_RESP_ERR] = CQPOLL_STATUS_BAD_RESP_ERR,
	[IBV_WC_LOC_ACCESS_ERR] = CQPOLL_STATUS_LOC_ACCESS_ERR,
	[IBV_WC_REM_INV_REQ_ERR] = CQPOLL_STATUS_REM_INV_REQ_ERR,
	[IBV_WC_REM_ACCESS_ERR] = CQPOLL_STATUS_REM_ACCESS_ERR,
	[IBV_WC_REM_OP_ERR] = CQPOLL_STATUS_REM_OP_ERR,
	[IBV_WC_RETRY_EXC_ERR] = CQPOLL_STATUS_RETRY_EXC_ERR,
	[IBV_WC_RNR_RETRY_EXC_ERR] = CQPOLL_STATUS_RNR_RETRY_EXC_ERR,
	[IBV_WC_LOC_RDD_VIOL_ERR] = CQPOLL_STATUS_LOC_RDD_VIOL_ERR,
	[IBV_WC_REM_INV_RD_REQ_ERR] = CQPOLL_STATUS_REM_INV_RD_REQ_ERR,
	[IBV_WC_REM_ABORT_ERR] = CQPOLL_STATUS_REM_ABORT_ERR,
	[IBV_WC_INV_EECN_ERR] = CQPOLL_STATUS_INV_EECN_ERR,
	[IBV_WC_INV_EEC_STATE_ERR] = CQPOLL_STATUS_INV_EEC_STATE_ERR,
	[IBV_WC_FATAL_ERR] = CQPOLL_STATUS_FATAL_ERR,
	[IBV_WC_RESP_TIMEOUT_ERR] = CQPOLL_STATUS_RESP_TIMEOUT_ERR,
	[IBV_WC_GENERAL_ERR] = CQPOLL_STATUS_GENERAL_ERR,
};

static inline uint8_t
map_status(enum ibv_wc_status s)
{
	if ((unsigned int)s >= sizeof(status_map))
		return CQPOLL_STATUS_GENERAL_ERR;
	return status_map[s];
}

static inline uint8_t
map_opcode(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return CQPOLL_OP_SEND;
	case IBV_WC_RDMA_WRITE: return CQPOLL_OP_RDMA_WRITE;
	case IBV_WC_RDMA_READ: return CQPOLL_OP_RDMA_READ;
	case IBV_WC_COMP_SWAP: return CQPOLL_OP_COMP_SWAP;
	case IBV_WC_FETCH_ADD: return CQPOLL_OP_FETCH_ADD;
	case IBV_WC_BIND_MW: return CQPOLL_OP_BIND_MW;
	case IBV_WC_LOCAL_INV: return CQPOLL_OP_LOCAL_INV;
	case IBV_WC_TSO: return CQPOLL_OP_TSO;
	case IBV_WC_RECV: return CQPOLL_OP_RECV;
	case IBV_WC_RECV_RDMA_WITH_IMM: return CQPOLL_OP_RECV_RDMA_WITH_IMM;
	default:
		/* No cqpoll name (tag matching, driver-specific): passed through. */
		return (uint8_t)op;
	}
}

static inline uint16_t
map_wc_flags(unsigned int f)
{
	uint16_t r = 0;

	if (f & IBV_WC_WITH_IMM)
		r |= CQPOLL_COMPLETION_F_IMM;
	if (f & IBV_WC_WITH_INV)
		r |= CQPOLL_COMPLETION_F_INV;
	return r;
}

static inline void
from_wc(struct cqpoll_completion *c, const struct ibv_wc *wc)
{
	c->wr_id = wc->wr_id;
	c->timestamp = 0;
	c->inline_data = NULL;
	c->qp_num = wc->qp_num;
	c->status = map_status(wc->status);
	c->wqe_counter = 0;
	c->reserved = 0;
	if (wc->status != IBV_WC_SUCCESS) {
		/* Only wr_id, status, qp_num and vendor_err are valid. */
		c->byte_len = 0;
		c->opcode = 0;
		c->flags = CQPOLL_COMPLETION_F_WR_ID;
		c->imm_data = 0;
		c->vendor_err = wc->vendor_err;
		return;
	}
	c->vendor_err = 0;
	c->byte_len = wc->byte_len;
	c->opcode = map_opcode(wc->opcode);
	c->flags = map_wc_flags(wc->wc_flags) | CQPOLL_COMPLETION_F_WR_ID;
	c->imm_data = (c->flags & (CQPOLL_COMPLETION_F_IMM | CQPOLL_COMPLETION_F_INV)) ?
		wc->imm_data : 0;
}

int
cqpoll_verbs_poll_wc(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	struct cqpoll_verbs_cq *q = priv;
	struct ibv_wc wc[VERBS_WC_CHUNK];
	unsigned int done = 0, chunk;
	int r, i;

	while (done < n) {
		chunk = n - done < VERBS_WC_CHUNK ? n - done : VERBS_WC_CHUNK;
		r = ibv_poll_cq(q->cq, (int)chunk, wc);
		if (r < 0)
			return done > 0 ? (int)done : -EIO;
		for (i = 0; i < r; i++)
			from_wc(&comps[done + (unsigned int)i], &wc[i]);
		done += (unsigned int)r;
		if ((unsigned int)r < chunk)
			break;
	}
	return (int)done;
}

/* Which timestamp a variant reads: a constant per variant. */
enum verbs_ts {
	VERBS_TS_NONE = 0,
	VERBS_TS_RAW,        /* ibv_wc_read_completion_ts(): HCA clock units */
	VERBS_TS_WALLCLOCK,  /* ibv_wc_read_completion_wallclock_ns(): wall-clock ns */
};

static inline uint64_t
clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/*
 * CLOCK_REALTIME - CLOCK_MONOTONIC now, read between two monotonic reads so
 * that the pair is as close as the reads are (tens of ns through the vDSO).
 * Once per burst: a step of the wall clock (settimeofday, an NTP step) moves
 * the offset, and the next burst follows it.
 */
static inline int64_t
wall_to_mono_offset(void)
{
	uint64_t m1 = clock_ns(CLOCK_MONOTONIC);
	uint64_t r = clock_ns(CLOCK_REALTIME);
	uint64_t m2 = clock_ns(CLOCK_MONOTONIC);

	return (int64_t)(r - (m1 + (m2 - m1) / 2));
}

/* The entry the extended CQ points at; ts is a constant per variant. */
static inline __attribute__((always_inline)) void
from_ex(struct cqpoll_completion *c, struct ibv_cq_ex *cq, const enum verbs_ts ts,
	int64_t wall_off)
{
	uint64_t w;

	unsigned int f;

	c->wr_id = cq->wr_id;
	c->inline_data = NULL;
	c->status = map_status(cq->status);
	c->qp_num = ibv_wc_read_qp_num(cq);
	c->wqe_counter = 0;
	c->reserved = 0;
	if (cq->status != IBV_WC_SUCCESS) {
		c->timestamp = 0;
		c->byte_len = 0;
		c->opcode = 0;
		c->flags = CQPOLL_COMPLETION_F_WR_ID;
		c->imm_data = 0;
		c->vendor_err = ibv_wc_read_vendor_err(cq);
		return;
	}
	c->vendor_err = 0;
	c->opcode = map_opcode(ibv_wc_read_opcode(cq));
	c->byte_len = ibv_wc_read_byte_len(cq);
	f = ibv_wc_read_wc_flags(cq);
	c->flags = map_wc_flags(f) | CQPOLL_COMPLETION_F_WR_ID;
	c->imm_data = (f & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) ?
		ibv_wc_read_imm_data(cq) : 0;
	if (ts == VERBS_TS_RAW) {
		/* The device's clock: it orders this device's completions only. */
		c->timestamp = ibv_wc_read_completion_ts(cq);
		c->flags |= CQPOLL_COMPLETION_F_TIMESTAMP_RAW;
	} else if (ts == VERBS_TS_WALLCLOCK) {
		w = ibv_wc_read_completion_wallclock_ns(cq);
		if ((int64_t)(w - (uint64_t)wall_off) > 0) {
			c->timestamp = w - (uint64_t)wall_off;
			c->flags |= CQPOLL_COMPLETION_F_TIMESTAMP;
		} else {
			/* Before boot on the host's clock: not host time, say so. */
			c->timestamp = w;
			c->flags |= CQPOLL_COMPLETION_F_TIMESTAMP_RAW;
		}
	} else {
		c->timestamp = 0;
	}
}

static inline __attribute__((always_inline)) int
poll_ex(struct cqpoll_verbs_cq *q, struct cqpoll_completion *comps, unsigned int n,
	const enum verbs_ts ts)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };
	struct ibv_cq_ex *cq = q->cq_ex;
	int64_t wall_off = 0;
	unsigned int i = 0;
	int r;

	r = ibv_start_poll(cq, &attr);
	if (r == ENOENT)
		return 0;
	/* No session was opened: ibv_end_poll() must not be called. */
	if (r != 0)
		return -r;
	if (ts == VERBS_TS_WALLCLOCK)
		wall_off = wall_to_mono_offset();
	for (;;) {
		from_ex(&comps[i++], cq, ts, wall_off);
		if (i == n)
			break;
		r = ibv_next_poll(cq);
		if (r != 0)
			break;
	}
	/* Publishes the consumer index: once per burst, not per entry. */
	ibv_end_poll(cq);
	/* A next_poll() error other than ENOENT recurs at the next start_poll(). */
	return (int)i;
}

int
cqpoll_verbs_poll_ex(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	return poll_ex(priv, comps, n, VERBS_TS_NONE);
}

int
cqpoll_verbs_poll_ex_ts(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	return poll_ex(priv, comps, n, VERBS_TS_RAW);
}

int
cqpoll_verbs_poll_ex_wallclock(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	return poll_ex(priv, comps, n, VERBS_TS_WALLCLOCK);
}
