/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Real devices: a loopback RC QP pair on one port of the named device.
 *
 * QP A sends, QP B receives. The cqpoll CQ is A's send CQ: every request is
 * a signaled RDMA WRITE WITH IMM, whose completion arrives on it once B
 * acknowledged the write. The requester side is used because an mlx5
 * requester CQE carries the send queue's WQE counter, which rdma-core itself
 * maps back to the request: each request here fills one 64-byte WQE building
 * block (control, remote address and one data segment) and the queue starts
 * at 0, so the counter is the sequence number modulo 2^16. Verbs returns the
 * whole wr_id.
 *
 * The immediate consumes one receive on B; B's receive completions go to a
 * plain verbs CQ that the generator polls to post the receives again. Both
 * queues are bounded, so the generator posts only while fewer than the send
 * queue's depth are unread by the poller and a receive is waiting on B; a
 * post that must wait returns -ENOSPC, which the generator counts and retries.
 *
 * Completion timestamps are in device clock units, which are not converted:
 * latency is measured from the post time the generator records.
 *
 * On the mlx5 driver the provider never retires A's send WQEs: rdma-core's
 * mlx5 provider moves a work queue's tail only in its own poll of the CQ
 * (mlx5_parse_cqe(); ibv_post_send() refuses once head - tail reaches the
 * queue's size, mlx5_wq_overflow()), and that poll never runs on a CQ the
 * direct driver owns. So every `period` requests (a power of two no larger
 * than the queue), once the poller has read them all, both QPs go through
 * RESET and are connected again: the provider zeroes its indices there
 * (mlx5_init_qp_indices()), the QP numbers stay, and the WQE counter starts
 * again at 0, which the poller reads modulo the period (wr_id_mask). Half
 * the period at most is in flight, so that the counter names one request.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#ifdef TPCQ_HAVE_MLX5
#include <infiniband/mlx5dv.h>
#include <cqpoll_mlx5.h>
#endif
#include <cqpoll_verbs.h>

#include "dev.h"
#include "loopback.h"
#include "params.h"
#include "testpmd_cq.h"

static void
lb_free(struct loopback *lb, struct cqpoll_cq *cq)
{
	/* QPs before the CQs they use, the MR before its PD. */
	if (lb->qp_a != NULL)
		ibv_destroy_qp(lb->qp_a);
	if (lb->qp_b != NULL)
		ibv_destroy_qp(lb->qp_b);
	cqpoll_cq_destroy(cq);
	if (lb->aux_cq != NULL)
		ibv_destroy_cq(lb->aux_cq);
	if (lb->mr != NULL)
		ibv_dereg_mr(lb->mr);
	free(lb->buf);
	if (lb->pd != NULL)
		ibv_dealloc_pd(lb->pd);
	if (lb->ctx != NULL)
		ibv_close_device(lb->ctx);
	free(lb);
}

static int
lb_open(struct tpcq_devctx *dc, const struct tpcq_params *p, bool mlx5)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	struct cqpoll_cq_info info;
	struct ibv_ah_attr ah;
	struct cqpoll_cq *cq = NULL;
	struct ibv_cq *vcq;
	struct loopback *lb;
	uint32_t depth;
	int r;

	lb = calloc(1, sizeof(*lb));
	if (lb == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return -ENOMEM;
	}
	lb->ibdev = p->ibdev;
	r = tpcq_lb_open_named(lb);
	if (r == 0)
		r = tpcq_lb_find_port(lb, &pa);
	if (r == 0)
		r = tpcq_lb_address(lb, &pa, &ah);
	if (r != 0)
		goto err;
	r = ibv_query_device(lb->ctx, &da);
	if (r != 0) {
		r = tpcq_lb_fail(lb, "ibv_query_device", tpcq_lb_verbs_err(r));
		goto err;
	}

	errno = 0;
	lb->pd = ibv_alloc_pd(lb->ctx);
	if (lb->pd == NULL) {
		r = tpcq_lb_fail(lb, "ibv_alloc_pd", errno != 0 ? errno : EIO);
		goto err;
	}
	lb->buf = aligned_alloc(BUF_SIZE, BUF_SIZE);
	if (lb->buf == NULL) {
		r = tpcq_lb_fail(lb, "aligned_alloc", ENOMEM);
		goto err;
	}
	memset(lb->buf, 0, BUF_SIZE);
	errno = 0;
	lb->mr = ibv_reg_mr(lb->pd, lb->buf, BUF_SIZE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (lb->mr == NULL) {
		r = tpcq_lb_fail(lb, "ibv_reg_mr", errno != 0 ? errno : EIO);
		goto err;
	}

	errno = 0;
#ifdef TPCQ_HAVE_MLX5
	if (mlx5) {
		struct cqpoll_mlx5_conf conf = { .size = p->size };

		cq = cqpoll_mlx5_cq_create(lb->ctx, &conf);
		if (cq == NULL && errno == EOPNOTSUPP) {
			fprintf(stderr, TPCQ_PROG ": %s is not an mlx5 device; "
				"try --dev=verbs:%s\n", lb->ibdev, lb->ibdev);
			r = -EOPNOTSUPP;
			goto err;
		}
		vcq = cq != NULL ? cqpoll_mlx5_cq_ibv(cq) : NULL;
	} else
#endif
	{
		struct cqpoll_verbs_conf conf = { .size = p->size };

		cq = cqpoll_verbs_cq_create(lb->ctx, &conf);
		vcq = cq != NULL ? cqpoll_verbs_cq_ibv(cq) : NULL;
	}
	if (cq == NULL) {
		r = tpcq_lb_fail(lb, mlx5 ? "cqpoll_mlx5_cq_create" : "cqpoll_verbs_cq_create",
			 errno != 0 ? errno : EIO);
		goto err;
	}
	if (vcq == NULL) {
		r = tpcq_lb_fail(lb, "getting the verbs CQ of the cqpoll CQ", EINVAL);
		goto err;
	}
	cqpoll_cq_info_get(cq, &info);

	/* The send queue may never hold more than the CQ can report. */
	depth = info.size;
	if (depth > (uint32_t)da.max_qp_wr)
		depth = (uint32_t)da.max_qp_wr;
	if (depth > (uint32_t)da.max_cqe)
		depth = (uint32_t)da.max_cqe;
	lb->depth = depth;

	errno = 0;
	lb->aux_cq = ibv_create_cq(lb->ctx, (int)depth, NULL, NULL, 0);
	if (lb->aux_cq == NULL) {
		r = tpcq_lb_fail(lb, "ibv_create_cq", errno != 0 ? errno : EIO);
		goto err;
	}
	lb->qp_a = tpcq_lb_create_qp(lb, vcq, depth, 1);
	lb->qp_b = lb->qp_a != NULL ? tpcq_lb_create_qp(lb, lb->aux_cq, 1, depth) : NULL;
	if (lb->qp_b == NULL) {
		r = -EIO;
		goto err;
	}
	lb->ah = ah;
	lb->mtu = pa.active_mtu;
	r = tpcq_lb_connect_qp(lb, lb->qp_a, lb->qp_b->qp_num, &ah, pa.active_mtu);
	if (r == 0)
		r = tpcq_lb_connect_qp(lb, lb->qp_b, lb->qp_a->qp_num, &ah, pa.active_mtu);
	while (r == 0 && lb->recvs < depth)
		r = tpcq_lb_post_recvs(lb, depth - lb->recvs < RECV_BATCH ?
			       (unsigned int)(depth - lb->recvs) : RECV_BATCH);
	if (r != 0)
		goto err;

	dc->cq = cq;
	dc->priv = lb;
	dc->wr_id_mask = UINT64_MAX;
	dc->monotonic_ts = false;
	dc->max_outstanding = depth;
	if (mlx5) {
		for (lb->period = 1; lb->period * 2 <= depth && lb->period < 65536; )
			lb->period *= 2;
		dc->wr_id_mask = lb->period - 1;
		dc->max_outstanding = lb->period / 2 != 0 ? (uint32_t)(lb->period / 2) : 1;
	}
	dc->expect.opcode = CQPOLL_OP_RDMA_WRITE;
	dc->expect.qp_num = lb->qp_a->qp_num;
	dc->expect.check_byte_len = false;
	return 0;
err:
	lb_free(lb, cq);
	return r;
}

/* Post again the receives B consumed; a failed one stops the run. */
static int
reap_recvs(struct loopback *lb)
{
	struct ibv_wc wc[RECV_BATCH];
	int n, i;

	n = ibv_poll_cq(lb->aux_cq, RECV_BATCH, wc);
	if (n < 0)
		return tpcq_lb_fail(lb, "ibv_poll_cq", EIO);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, TPCQ_PROG ": %s: receive on the loopback "
				"QP failed: %s\n", lb->ibdev,
				ibv_wc_status_str(wc[i].status));
			return -EIO;
		}
	}
	return tpcq_lb_post_recvs(lb, (unsigned int)n);
}

/*
 * Both QPs through RESET and back to RTS, B's receives posted anew: done
 * with every request read by the poller and every receive reaped, so that
 * nothing in flight is lost with the queues (RESET drops posted work).
 */
static int
reset_pair(struct loopback *lb, uint64_t seq)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int r;

	r = ibv_modify_qp(lb->qp_a, &a, IBV_QP_STATE);
	if (r == 0)
		r = ibv_modify_qp(lb->qp_b, &a, IBV_QP_STATE);
	if (r != 0)
		return tpcq_lb_fail(lb, "ibv_modify_qp(RESET)", tpcq_lb_verbs_err(r));
	r = tpcq_lb_connect_qp(lb, lb->qp_a, lb->qp_b->qp_num, &lb->ah, lb->mtu);
	if (r == 0)
		r = tpcq_lb_connect_qp(lb, lb->qp_b, lb->qp_a->qp_num, &lb->ah, lb->mtu);
	if (r != 0)
		return r;
	/* The receives B held are gone: as many as the requests so far. */
	lb->recvs = seq;
	while (r == 0 && lb->recvs < seq + lb->depth)
		r = tpcq_lb_post_recvs(lb, seq + lb->depth - lb->recvs < RECV_BATCH ?
			       (unsigned int)(seq + lb->depth - lb->recvs) : RECV_BATCH);
	lb->reset_at = seq;
	return r;
}

static int
lb_post(struct tpcq_devctx *dc, uint64_t seq)
{
	struct loopback *lb = dc->priv;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint64_t consumed;
	int r;

	r = reap_recvs(lb);
	if (r != 0)
		return r;
	/* The poller's count: what it read, the send queue no longer holds. */
	consumed = __atomic_load_n(dc->consumed, __ATOMIC_ACQUIRE);
	if (lb->period != 0 && seq != 0 && seq % lb->period == 0 && lb->reset_at != seq) {
		/* Every request read, every receive reaped (B completes before A). */
		if (consumed < seq || lb->recvs - seq < lb->depth)
			return -ENOSPC;
		r = reset_pair(lb, seq);
		if (r != 0)
			return r;
	}
	if (seq - consumed >= dc->max_outstanding || seq >= lb->recvs)
		return -ENOSPC;

	sge.addr = (uintptr_t)lb->buf;
	sge.length = TPCQ_BYTE_LEN;
	sge.lkey = lb->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = seq;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl((uint32_t)seq);
	wr.wr.rdma.remote_addr = (uintptr_t)lb->buf + REMOTE_OFFSET;
	wr.wr.rdma.rkey = lb->mr->rkey;
	r = ibv_post_send(lb->qp_a, &wr, &bad);
	if (r != 0)
		return tpcq_lb_fail(lb, "ibv_post_send", tpcq_lb_verbs_err(r));
	return 0;
}

static void
lb_close(struct tpcq_devctx *dc)
{
	lb_free(dc->priv, dc->cq);
}

#ifdef TPCQ_HAVE_MLX5
static int
mlx5_hw_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	return lb_open(dc, p, true);
}

const struct tpcq_dev tpcq_dev_mlx5_hw = {
	.name = "mlx5",
	.help = "mlx5 direct driver, real device (loopback RC QPs)",
	.takes_ibdev = true,
	.arms = 1u << CQPOLL_ARM_LEVEL,
	.default_arm = CQPOLL_ARM_LEVEL,
	.arm_help = "the hardware's arm",
	.faults = 0,
	.open = mlx5_hw_open,
	.post = lb_post,
	.close = lb_close,
};
#endif

static int
verbs_hw_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	return lb_open(dc, p, false);
}

const struct tpcq_dev tpcq_dev_verbs_hw = {
	.name = "verbs",
	.help = "verbs driver, real device (loopback RC QPs)",
	.takes_ibdev = true,
	.arms = 1u << CQPOLL_ARM_EDGE,
	.default_arm = CQPOLL_ARM_EDGE,
	.arm_help = "ibv_req_notify_cq() promises an event only for completions "
		"added after the arm",
	.faults = 0,
	.open = verbs_hw_open,
	.post = lb_post,
	.close = lb_close,
};
