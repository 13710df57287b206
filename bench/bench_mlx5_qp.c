/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost per posted and completed request of cqpoll's own mlx5 QP, against a
 * floor written as DPDK's mlx5 Tx path writes WQEs (mlx5_tx.h: control,
 * then the segments, 16-byte stores; mlx5_doorbell_ring(): compiler
 * barrier, record, sfence, the 8-byte register write, sfence), asks for
 * completions (mlx5_tx_request_completion(): on a burst's last WQE once
 * MLX5_TX_COMP_THRESH = 32 requests went by since the last one asked, so
 * one in 32 at burst 1) and handles them (mlx5_tx_handle_completion(), at
 * the start of every burst: the CQE's check, and on one the WQE counter
 * taken as the consumer index, the elements up to it freed, the CQ's
 * record written). Every side posts RDMA writes of one 8-byte entry in
 * bursts of B on a QP of the same emulated device, signals the same
 * requests (one per N, N settable, 32 by default) and polls its CQ once per
 * burst, before the post: cqpoll through cqpoll_poll_burst() (which retires
 * the queue and hands back the wr_id) and either its general post,
 * cqpoll_mlx5_qp_post_send() ("driver"), or the QP's fixed route,
 * cqpoll_mlx5_qp_post_burst() ("route", RDMA write set at creation); the
 * floor straight from the rings and the CQ.
 *
 * Only bench_measure_*() are timed (rdtsc) and counted (valgrind
 * --tool=callgrind --toggle-collect='bench_measure*'): the emulated device
 * carrying the WQEs out between the post and the poll is not. See
 * bench/run_mlx5_qp.sh.
 *
 * Usage: bench_mlx5_qp [ROUNDS [N]]               all three, bursts 1 and 32
 *        bench_mlx5_qp VARIANT BURST ROUNDS [N]   one (driver, route, floor): callgrind
 * N: one signalled request per N (default 32, DPDK's MLX5_TX_COMP_THRESH).
 */

#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "cqpoll.h"
#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"

#define REQS 1024            /* requests per round */
#define MAX_ROUNDS 101
#define MAX_BURST 32
#define COMP_THRESH 32       /* DPDK's MLX5_TX_COMP_THRESH */

struct side {
	struct cqpoll_cq *cq;
	struct cqpoll_mlx5_qp *qp;
	/* The floor's view: the rings, its counters, its elements. */
	struct mlx5dv_qp dv;
	struct mlx5dv_cq cdv;
	uint32_t qpn;
	uint16_t wqe_ci, wqe_pi;
	uint32_t cq_ci;
	uint64_t elts[4096];
	uint16_t elts_head, elts_tail;
	uint16_t elts_comp;       /* elts_head at the last completion request */
	/* elts_head at each completion request, by CQ index (DPDK's fcqs). */
	uint16_t fcqs[4096];
	uint32_t cq_pi;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t buf[65536] __attribute__((aligned(4096)));
static struct cqpoll_mlx5_send_wr wrs[MAX_BURST];
static struct cqpoll_mlx5_sge sge;
static unsigned int comp_every = COMP_THRESH;

static int
modify(struct cqpoll_mlx5_qp *qp, enum ibv_qp_state st, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = st, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
				 .dest_qp_num = dest, .rnr_retry = 7 };

	return cqpoll_mlx5_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS |
				     (st == IBV_QPS_RTR ? IBV_QP_DEST_QPN : 0) |
				     (st == IBV_QPS_RTS ? IBV_QP_RNR_RETRY : 0));
}

static int
side_open(struct side *s)
{
	struct cqpoll_mlx5_emu_conf cc = { .size = 4096, .arm = CQPOLL_ARM_LEVEL,
					   .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };
	struct cqpoll_mlx5_qp_conf qc = { .max_send_wr = 1024, .max_recv_wr = 1,
					  .burst_opcode = CQPOLL_MLX5_WR_RDMA_WRITE };
	struct cqpoll_mlx5_qp_caps caps;

	s->cq = cqpoll_mlx5_emu_cq_create(&cc);
	qc.send_cq = qc.recv_cq = s->cq;
	s->qp = s->cq != NULL ? cqpoll_mlx5_qp_create(pd, &qc) : NULL;
	if (s->qp == NULL)
		return -1;
	cqpoll_mlx5_qp_caps(s->qp, &caps);
	s->qpn = caps.qp_num;
	/* Writes to itself: no second QP needed for a write. */
	if (modify(s->qp, IBV_QPS_INIT, 0) || modify(s->qp, IBV_QPS_RTR, s->qpn) ||
	    modify(s->qp, IBV_QPS_RTS, 0))
		return -1;
	cqpoll_mlx5_emu_qp_dv(cqpoll_mlx5_qp_ibv(s->qp), &s->dv);
	cqpoll_mlx5_emu_dv(s->cq, &s->cdv);
	return 0;
}

/* cqpoll: the burst in one call, one doorbell. */
__attribute__((noinline)) static int
bench_measure_post_driver(struct side *s, unsigned int burst)
{
	return cqpoll_mlx5_qp_post_send(s->qp, wrs, burst);
}

/* cqpoll's fixed route (RDMA write, one entry, set at creation): one call, one doorbell. */
__attribute__((noinline)) static int
bench_measure_post_route(struct side *s, unsigned int burst)
{
	return cqpoll_mlx5_qp_post_burst(s->qp, wrs, burst);
}

/* The CQ once per burst: the wr_id of its completion, 0 if none. */
__attribute__((noinline)) static uint64_t
bench_measure_poll_driver(struct side *s)
{
	struct cqpoll_completion c[MAX_BURST];
	int n = cqpoll_poll_burst(s->cq, c, MAX_BURST);

	return n == 0 ? 0 : n == 1 ? c[0].wr_id : UINT64_MAX;
}

/*
 * The floor: DPDK's Tx path (mlx5_tx_burst_tmpl, the no-offload single-send
 * route mlx5_tx_burst_single_send) writing an RDMA write's WQE. Per request,
 * as DPDK: the WQE's stores, its element, and the resources counted down and
 * tested (loc.wqe_free, loc.elts_free). Per burst: the free counts once, a
 * completion asked on the last WQE after the loop if comp_every requests
 * went by since the last one, and its elts head kept
 * (mlx5_tx_request_completion, elts_comp, fcqs), mlx5_doorbell_ring().
 */
__attribute__((noinline)) static int
bench_measure_post_floor(struct side *s, unsigned int burst)
{
	const uint16_t mask = (uint16_t)(s->dv.sq.wqe_cnt - 1);
	uint16_t wqe_free = (uint16_t)(s->dv.sq.wqe_cnt - (uint16_t)(s->wqe_ci - s->wqe_pi));
	uint16_t elts_free = (uint16_t)(4096 - (uint16_t)(s->elts_head - s->elts_tail));
	struct mlx5_wqe_ctrl_seg *cs = NULL;
	unsigned int i = 0;

	if (wqe_free == 0 || elts_free == 0)
		return 0;
	for (;;) {
		const struct cqpoll_mlx5_send_wr *w = &wrs[i];
		uint8_t *wqe = (uint8_t *)s->dv.sq.buf + (size_t)(s->wqe_ci & mask) * MLX5_SEND_WQE_BB;
		struct mlx5_wqe_raddr_seg *rs = (struct mlx5_wqe_raddr_seg *)(void *)(wqe + 16);
		struct mlx5_wqe_data_seg *ds = (struct mlx5_wqe_data_seg *)(void *)(wqe + 32);

		cs = (struct mlx5_wqe_ctrl_seg *)(void *)wqe;
		cs->opmod_idx_opcode = htobe32((uint32_t)s->wqe_ci << 8 | MLX5_OPCODE_RDMA_WRITE);
		cs->qpn_ds = htobe32(s->qpn << 8 | 3);
		/* mlx5_tx_cseg_init: the flags word, no completion yet. */
		*(uint32_t *)(void *)&cs->signature = 0;
		cs->imm = 0;
		rs->raddr = htobe64(w->remote_addr);
		rs->rkey = htobe32(w->rkey);
		rs->reserved = 0;
		ds->byte_count = htobe32(w->sg_list[0].length);
		ds->lkey = htobe32(w->sg_list[0].lkey);
		ds->addr = htobe64(w->sg_list[0].addr);
		s->elts[s->elts_head++ & 4095] = w->wr_id;
		s->wqe_ci++;
		--wqe_free;
		--elts_free;
		if (++i == burst || wqe_free == 0 || elts_free == 0)
			break;
	}
	/* mlx5_tx_request_completion: on the burst's last WQE, one per comp_every. */
	if ((uint16_t)(s->elts_head - s->elts_comp) >= comp_every) {
		*(uint32_t *)(void *)&cs->signature = htobe32(MLX5_WQE_CTRL_CQ_UPDATE);
		s->elts_comp = s->elts_head;
		s->fcqs[s->cq_pi++ & 4095] = s->elts_head;
	}
	/* mlx5_doorbell_ring(). */
	__asm__ volatile("" ::: "memory");
	s->dv.dbrec[MLX5_SND_DBR] = htobe32(s->wqe_ci);
	__asm__ volatile("sfence" ::: "memory");
	*(volatile uint64_t *)s->dv.bf.reg = *(const uint64_t *)(const void *)cs;
	__asm__ volatile("sfence" ::: "memory");
	return (int)i;
}

/* check_cqe(): owner and opcode of the CQE at @p ci; 1 software's, 0 not yet, -1 error. */
static inline int
floor_check_cqe(const struct side *s, uint32_t ci, const struct mlx5_cqe64 **cqep)
{
	const uint32_t n = s->cdv.cqe_cnt;
	const struct mlx5_cqe64 *cqe = (const struct mlx5_cqe64 *)(const void *)
		((const uint8_t *)s->cdv.buf + (size_t)(ci & (n - 1)) * 64);
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	*cqep = cqe;
	if ((op_own & MLX5_CQE_OWNER_MASK) != !!(ci & n) || (op_own >> 4) == MLX5_CQE_INVALID)
		return 0;
	__asm__ volatile("" ::: "memory");
	return (op_own >> 4) == MLX5_CQE_REQ_ERR || (op_own >> 4) == MLX5_CQE_RESP_ERR ? -1 : 1;
}

/*
 * mlx5_tx_handle_completion(): CQEs until one the device still owns (at
 * most MLX5_TX_COMP_MAX_CQE), the
 * CQ's record, then mlx5_tx_comp_flush(): the last CQE's WQE counter as the
 * consumer index (the conservative free, §6), the elements up to the head
 * kept at its request freed; the last one's wr_id handed back (0: none).
 */
__attribute__((noinline)) static uint64_t
bench_measure_poll_floor(struct side *s)
{
	const struct mlx5_cqe64 *cqe, *last = NULL;
	unsigned int count = 2; /* MLX5_TX_COMP_MAX_CQE */
	uint16_t tail;
	int r;

	while ((r = floor_check_cqe(s, s->cq_ci, &cqe)) == 1) {
		s->cq_ci++;
		last = cqe;
		if (--count == 0)
			break;
	}
	if (last == NULL)
		return r < 0 ? UINT64_MAX : 0;
	if (r < 0)
		return UINT64_MAX;
	__asm__ volatile("" ::: "memory");
	s->cdv.dbrec[0] = htobe32(s->cq_ci & 0xffffff);
	s->wqe_pi = be16toh(last->wqe_counter);
	tail = s->fcqs[(s->cq_ci - 1) & 4095];
	s->elts_tail = tail;
	return s->elts[(uint16_t)(tail - 1) & 4095];
}

/* Where a side's requests stand: the last id, the last signalled one, the one due. */
struct ids {
	uint64_t id, signalled, due;
};

/* The sides: cqpoll's general post, cqpoll's fixed route, the floor. */
enum { V_DRIVER, V_ROUTE, V_FLOOR, V_CNT };
static const char *const v_name[V_CNT] = { "driver", "route", "floor" };

/*
 * One round: REQS requests in bursts, each burst after a poll of the CQ; the
 * cycles of poll and post only. The driver's requests are signalled as the
 * floor asks completions: a burst's last once comp_every went by since the
 * last signalled one.
 */
static uint64_t
round_of(struct side *s, int v, unsigned int burst, struct ids *ids)
{
	uint64_t cyc = 0, t, got;
	unsigned int done, i;
	int r;

	for (done = 0; done < REQS; done += burst) {
		for (i = 0; i < burst; i++) {
			wrs[i].wr_id = ++ids->id;
			wrs[i].flags = 0;
		}
		t = __rdtsc();
		got = v == V_FLOOR ? bench_measure_poll_floor(s) : bench_measure_poll_driver(s);
		cyc += __rdtsc() - t;
		if (got != 0 && got != ids->due) {
			fprintf(stderr, "%s: completion %" PRIu64 ", expected %" PRIu64 "\n",
				v_name[v], got, ids->due);
			exit(1);
		}
		if (ids->id - ids->signalled >= comp_every) {
			wrs[burst - 1].flags = CQPOLL_MLX5_SEND_F_SIGNALED;
			ids->signalled = ids->due = ids->id;
		}
		t = __rdtsc();
		r = v == V_FLOOR ? bench_measure_post_floor(s, burst) :
			v == V_ROUTE ? bench_measure_post_route(s, burst) :
			bench_measure_post_driver(s, burst);
		cyc += __rdtsc() - t;
		if (r != (int)burst) {
			fprintf(stderr, "post failed\n");
			exit(1);
		}
		cqpoll_mlx5_emu_run(ctx);
	}
	return cyc;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	static uint64_t per[V_CNT][MAX_ROUNDS];
	static struct side sides[V_CNT];
	unsigned int rounds = 21, burst, r, v, bursts[2] = { 1, 32 }, b, only = V_CNT;
	struct ids ids[V_CNT];

	memset(ids, 0, sizeof(ids));
	if (argc == 4 || argc == 5) {
		for (only = 0; only < V_CNT && strcmp(argv[1], v_name[only]) != 0; only++)
			;
		bursts[0] = bursts[1] = (unsigned int)atoi(argv[2]);
		rounds = (unsigned int)atoi(argv[3]);
		if (argc == 5)
			comp_every = (unsigned int)atoi(argv[4]);
	} else if (argc == 2 || argc == 3) {
		rounds = (unsigned int)atoi(argv[1]);
		if (argc == 3)
			comp_every = (unsigned int)atoi(argv[2]);
	}
	if (rounds == 0 || rounds > MAX_ROUNDS || bursts[0] == 0 || bursts[0] > MAX_BURST ||
	    comp_every == 0 || comp_every > 512 || (argc >= 4 && only == V_CNT)) {
		fprintf(stderr, "usage: %s [ROUNDS [N]] | {driver|route|floor} BURST ROUNDS [N]\n",
			argv[0]);
		return 2;
	}
	printf("completion moderation: one signalled request per %u (a burst's last, "
	       "once %u went by; DPDK MLX5_TX_COMP_THRESH is 32), one CQ poll per burst, "
	       "every side\n", comp_every, comp_every);
	printf("per request: an RDMA write of one 8-byte entry, its WQE (control, remote "
	       "address, data), its wr_id kept; per burst: one CQ poll before the post, "
	       "one doorbell after it\n"
	       "  driver: cqpoll_poll_burst() + cqpoll_mlx5_qp_post_send() (any request)\n"
	       "  route:  cqpoll_poll_burst() + cqpoll_mlx5_qp_post_burst() (the QP's one "
	       "opcode, one entry)\n"
	       "  floor:  DPDK's mlx5 Tx (mlx5_tx_burst_single_send, "
	       "mlx5_tx_handle_completion) straight on the rings\n");
	ctx = cqpoll_mlx5_emu_open();
	pd = ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(ctx) : NULL;
	mr = pd != NULL ? cqpoll_mlx5_emu_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
						 IBV_ACCESS_REMOTE_WRITE) : NULL;
	for (v = 0; v < V_CNT && mr != NULL; v++)
		if (side_open(&sides[v]) != 0)
			break;
	if (mr == NULL || v != V_CNT) {
		fprintf(stderr, "cannot set the emulated device up\n");
		return 1;
	}
	sge = (struct cqpoll_mlx5_sge){ (uintptr_t)buf, 8, mr->lkey };
	for (b = 0; b < MAX_BURST; b++)
		wrs[b] = (struct cqpoll_mlx5_send_wr){ .sg_list = &sge, .num_sge = 1,
			.opcode = CQPOLL_MLX5_WR_RDMA_WRITE,
			.remote_addr = (uintptr_t)buf + 32768, .rkey = mr->rkey };
	for (b = 0; b < (only == V_CNT ? 2 : 1); b++) {
		burst = bursts[b];
		/* Interleaved, round after round; the median of each. */
		for (r = 0; r < rounds; r++)
			for (v = 0; v < V_CNT; v++)
				if (only == V_CNT || only == v)
					per[v][r] = round_of(&sides[v], (int)v, burst, &ids[v]);
		if (only != V_CNT)
			break;
		for (v = 0; v < V_CNT; v++)
			qsort(per[v], rounds, sizeof(per[v][0]), cmp_u64);
		printf("burst=%-2u driver %6.2f  route %6.2f  floor %6.2f cyc/req  "
		       "driver/floor %.3f  route/floor %.3f\n", burst,
		       (double)per[V_DRIVER][rounds / 2] / REQS,
		       (double)per[V_ROUTE][rounds / 2] / REQS,
		       (double)per[V_FLOOR][rounds / 2] / REQS,
		       (double)per[V_DRIVER][rounds / 2] / (double)per[V_FLOOR][rounds / 2],
		       (double)per[V_ROUTE][rounds / 2] / (double)per[V_FLOOR][rounds / 2]);
	}
	return 0;
}
