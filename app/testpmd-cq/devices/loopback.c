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
 * On the mlx5 driver A is cqpoll's own QP (cqpoll_mlx5_qp_create()), posted
 * with cqpoll_mlx5_qp_post_send(): rdma-core's provider would retire A's
 * send queue only in its own poll of the CQ, which never runs on a CQ the
 * direct driver owns (ibv_post_send() then fails with ENOMEM after one
 * queue's worth, mlx5_wq_overflow()); cqpoll's poll retires it as it reads,
 * and its completions carry the whole wr_id. B stays a verbs QP on a verbs
 * CQ that the provider polls.
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
#ifdef TPCQ_HAVE_MLX5
	if (lb->cqp_a != NULL)
		cqpoll_mlx5_qp_destroy(lb->cqp_a);
	else
#endif
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
#ifdef TPCQ_HAVE_MLX5
	if (mlx5) {
		/* A's receive side (it posts none) on the cqpoll CQ too. */
		struct cqpoll_mlx5_qp_conf qc = {
			.send_cq = cq, .recv_cq = cq, .max_send_wr = depth, .max_recv_wr = 1,
			.max_send_sge = 1, .max_recv_sge = 1,
		};

		errno = 0;
		lb->cqp_a = cqpoll_mlx5_qp_create(lb->pd, &qc);
		if (lb->cqp_a == NULL) {
			r = tpcq_lb_fail(lb, "cqpoll_mlx5_qp_create", errno != 0 ? errno : EIO);
			goto err;
		}
		lb->qp_a = cqpoll_mlx5_qp_ibv(lb->cqp_a);
	} else
#endif
		lb->qp_a = tpcq_lb_create_qp(lb, vcq, depth, 1);
	lb->qp_b = lb->qp_a != NULL ? tpcq_lb_create_qp(lb, lb->aux_cq, 1, depth) : NULL;
	if (lb->qp_b == NULL) {
		r = -EIO;
		goto err;
	}
	r = tpcq_lb_connect_qp(lb, lb->qp_a, lb->cqp_a, lb->qp_b->qp_num, &ah, pa.active_mtu);
	if (r == 0)
		r = tpcq_lb_connect_qp(lb, lb->qp_b, NULL, lb->qp_a->qp_num, &ah, pa.active_mtu);
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
	if (seq - consumed >= dc->max_outstanding || seq >= lb->recvs)
		return -ENOSPC;
#ifdef TPCQ_HAVE_MLX5
	if (lb->cqp_a != NULL) {
		struct cqpoll_mlx5_sge s = { (uintptr_t)lb->buf, TPCQ_BYTE_LEN, lb->mr->lkey };
		struct cqpoll_mlx5_send_wr w = {
			.wr_id = seq, .sg_list = &s, .num_sge = 1,
			.opcode = CQPOLL_MLX5_WR_RDMA_WRITE_IMM,
			.flags = CQPOLL_MLX5_SEND_F_SIGNALED,
			.imm_data = htonl((uint32_t)seq),
			.remote_addr = (uintptr_t)lb->buf + REMOTE_OFFSET,
			.rkey = lb->mr->rkey,
		};

		/* -ENOSPC: the poller has yet to retire the ring; the generator retries. */
		r = cqpoll_mlx5_qp_post_send(lb->cqp_a, &w, 1);
		if (r == -ENOSPC)
			return r;
		return r < 0 ? tpcq_lb_fail(lb, "cqpoll_mlx5_qp_post_send", -r) : 0;
	}
#endif

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
