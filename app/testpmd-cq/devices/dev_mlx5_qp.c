/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5-emu through cqpoll's own QPs: QP A sends, QP B receives, both on one
 * emulated mlx5 device. Every request is a signalled RDMA WRITE WITH IMM
 * posted with cqpoll_mlx5_qp_post_send(); the device carries it out at
 * once (cqpoll_mlx5_emu_run(), the generator being the device), and its
 * requester completion on the poller's CQ carries the whole wr_id, the
 * sequence number. The poller's polls retire A's send queue as they read:
 * the queue is never taken back to its start, for as long as the run lasts.
 *
 * B's receives complete on a CQ of their own that the generator reads to
 * post them again; A has no receive. A's ring holds no more requests than
 * the poller's CQ has entries; a full queue refuses the post (-ENOSPC) until
 * the poller's reads retire it, and the generator retries.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cqpoll_mlx5.h>
#include <cqpoll_mlx5_emu.h>

#include "mlx5qp.h"
#include "testpmd_cq.h"

#define QP_BUF 4096
#define QP_REMOTE (QP_BUF / 2)
#define QP_DEPTH_MAX 4096
#define RECV_BATCH 32

struct tpcq_mlx5qp {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct cqpoll_cq *aux;       /* B's completions (and A's receive side) */
	struct cqpoll_mlx5_qp *a, *b;
	uint32_t qpn_a;
	uint32_t depth;
	uint32_t ring;               /* A's ring, in requests */
	uint64_t recvs_posted, recvs_done;
	uint64_t events;             /* device events seen, for dc->watch */
};

static int
fail(const char *what, int err)
{
	fprintf(stderr, TPCQ_PROG ": mlx5-emu: %s: %s\n", what, strerror(err));
	return -err;
}

static int
modify(struct cqpoll_mlx5_qp *qp, enum ibv_qp_state st, uint32_t dest)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE;

	memset(&a, 0, sizeof(a));
	a.qp_state = st;
	if (st == IBV_QPS_INIT) {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		a.port_num = 1;
		mask |= IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	} else if (st == IBV_QPS_RTR) {
		a.dest_qp_num = dest;
		a.path_mtu = IBV_MTU_1024;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	} else {
		/* Retry for ever when B is short of receives, as the hardware run does. */
		a.rnr_retry = 7;
		a.retry_cnt = 7;
		a.timeout = 14;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return cqpoll_mlx5_qp_modify(qp, &a, mask);
}

static int
connect_qp(struct cqpoll_mlx5_qp *qp, uint32_t dest)
{
	int r = modify(qp, IBV_QPS_INIT, 0);

	if (r == 0)
		r = modify(qp, IBV_QPS_RTR, dest);
	if (r == 0)
		r = modify(qp, IBV_QPS_RTS, 0);
	return r < 0 ? fail("cqpoll_mlx5_qp_modify", -r) : 0;
}

/* Post B's receives back up to the depth; a write with immediate needs no buffer. */
static int
refill(struct tpcq_mlx5qp *m)
{
	struct cqpoll_mlx5_recv_wr w[RECV_BATCH];
	uint64_t want;
	unsigned int i, n;
	int r;

	while ((want = m->depth - (m->recvs_posted - m->recvs_done)) != 0) {
		n = want < RECV_BATCH ? (unsigned int)want : RECV_BATCH;
		for (i = 0; i < n; i++)
			w[i] = (struct cqpoll_mlx5_recv_wr){ .wr_id = m->recvs_posted + i };
		r = cqpoll_mlx5_qp_post_recv(m->b, w, n);
		if (r < 0)
			return fail("cqpoll_mlx5_qp_post_recv", -r);
		m->recvs_posted += (uint64_t)r;
	}
	return 0;
}

/* Read B's receive completions; a failed one stops the run. */
static int
reap(struct tpcq_mlx5qp *m)
{
	struct cqpoll_completion c[RECV_BATCH];
	int n, i;

	while ((n = cqpoll_poll_burst(m->aux, c, RECV_BATCH)) > 0) {
		for (i = 0; i < n; i++) {
			if (c[i].status != CQPOLL_STATUS_SUCCESS ||
			    !(c[i].flags & CQPOLL_COMPLETION_F_WR_ID) ||
			    c[i].wr_id != m->recvs_done) {
				fprintf(stderr, TPCQ_PROG ": mlx5-emu: receive %" PRIu64
					" on QP B: status %u, wr_id %" PRIu64 "\n",
					m->recvs_done, c[i].status, c[i].wr_id);
				return -EIO;
			}
			m->recvs_done++;
		}
	}
	if (n < 0)
		return fail("polling B's CQ", -n);
	return refill(m);
}

void
tpcq_mlx5qp_close(struct tpcq_mlx5qp *m)
{
	if (m == NULL)
		return;
	/* QPs before their CQs, the MR before its PD, all before the context. */
	cqpoll_mlx5_qp_destroy(m->a);
	cqpoll_mlx5_qp_destroy(m->b);
	cqpoll_cq_destroy(m->aux);
	if (m->mr != NULL)
		cqpoll_mlx5_emu_dereg_mr(m->mr);
	if (m->pd != NULL)
		cqpoll_mlx5_emu_dealloc_pd(m->pd);
	if (m->ctx != NULL)
		cqpoll_mlx5_emu_close(m->ctx);
	free(m->buf);
	free(m);
}

int
tpcq_mlx5qp_open(struct tpcq_devctx *dc, struct tpcq_mlx5qp **out)
{
	struct cqpoll_mlx5_emu_conf aux_conf = { .arm = CQPOLL_ARM_LEVEL,
						 .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };
	struct cqpoll_mlx5_qp_conf qc = { .max_send_sge = 1, .max_recv_sge = 1 };
	struct cqpoll_mlx5_qp_caps caps;
	struct cqpoll_cq_info info;
	struct tpcq_mlx5qp *m;
	int r;

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return fail("allocating the QP pair", ENOMEM);
	cqpoll_cq_info_get(dc->cq, &info);
	/* A's sends unread by the poller never outnumber the CQ's room. */
	m->depth = info.size < QP_DEPTH_MAX ? info.size : QP_DEPTH_MAX;
	errno = 0;
	m->ctx = cqpoll_mlx5_emu_open();
	m->pd = m->ctx != NULL ? cqpoll_mlx5_emu_alloc_pd(m->ctx) : NULL;
	m->buf = aligned_alloc(QP_BUF, QP_BUF);
	m->mr = m->pd != NULL && m->buf != NULL ?
		cqpoll_mlx5_emu_reg_mr(m->pd, m->buf, QP_BUF, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (m->mr == NULL) {
		r = fail("opening the emulated device", errno != 0 ? errno : ENOMEM);
		goto err;
	}
	memset(m->buf, 0, QP_BUF);
	aux_conf.size = 2 * m->depth;
	m->aux = cqpoll_mlx5_emu_cq_create(&aux_conf);
	if (m->aux == NULL) {
		r = fail("creating B's CQ", errno);
		goto err;
	}
	/*
	 * The ring holds at most the CQ's entries: the provider sizes it for
	 * WRs of the largest WQE (4 blocks here), ours take one each.
	 */
	qc.max_send_wr = m->depth / 4 != 0 ? m->depth / 4 : 1;
	qc.max_recv_wr = 1;
	qc.send_cq = dc->cq;
	qc.recv_cq = m->aux;
	m->a = cqpoll_mlx5_qp_create(m->pd, &qc);
	if (m->a == NULL) {
		r = fail("cqpoll_mlx5_qp_create (A)", errno);
		goto err;
	}
	qc.max_send_wr = 1;
	qc.max_recv_wr = m->depth;
	qc.send_cq = m->aux;
	m->b = cqpoll_mlx5_qp_create(m->pd, &qc);
	if (m->b == NULL) {
		r = fail("cqpoll_mlx5_qp_create (B)", errno);
		goto err;
	}
	cqpoll_mlx5_qp_caps(m->a, &caps);
	m->qpn_a = caps.qp_num;
	m->ring = caps.sq_wqebb_cnt;
	cqpoll_mlx5_qp_caps(m->b, &caps);
	/* B first: A's first request finds it ready. */
	r = connect_qp(m->b, m->qpn_a);
	if (r == 0)
		r = connect_qp(m->a, caps.qp_num);
	if (r == 0)
		r = refill(m);
	if (r != 0)
		goto err;
	dc->wr_id_mask = UINT64_MAX;
	dc->monotonic_ts = false;
	dc->max_outstanding = m->ring;
	dc->expect.opcode = CQPOLL_OP_RDMA_WRITE;
	dc->expect.qp_num = m->qpn_a;
	dc->expect.check_byte_len = false;
	dc->expect.inline_len = 0;
	*out = m;
	return 0;
err:
	tpcq_mlx5qp_close(m);
	return r < 0 ? r : -EIO;
}

void
tpcq_mlx5qp_service(struct tpcq_mlx5qp *m)
{
	cqpoll_mlx5_emu_run(m->ctx);
	(void)reap(m);
}

int
tpcq_mlx5qp_post(struct tpcq_devctx *dc, struct tpcq_mlx5qp *m, uint64_t seq)
{
	struct cqpoll_mlx5_sge sge = { (uintptr_t)m->buf, TPCQ_BYTE_LEN, m->mr->lkey };
	struct cqpoll_mlx5_send_wr wr = {
		.wr_id = seq,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = CQPOLL_MLX5_WR_RDMA_WRITE_IMM,
		.flags = CQPOLL_MLX5_SEND_F_SIGNALED,
		.imm_data = htonl((uint32_t)seq),
		.remote_addr = (uintptr_t)m->buf + QP_REMOTE,
		.rkey = m->mr->rkey,
	};
	int r;

	(void)dc;
	r = reap(m);
	if (r != 0)
		return r;
	/* Full until the poller's reads retire requests: the generator retries. */
	r = cqpoll_mlx5_qp_post_send(m->a, &wr, 1);
	if (r == -ENOMEM)
		return -ENOSPC;
	if (r < 0)
		return fail("cqpoll_mlx5_qp_post_send", -r);
	/* The device looks at the doorbell at once. */
	cqpoll_mlx5_emu_run(m->ctx);
	return 0;
}
