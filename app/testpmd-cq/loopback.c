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

#include "testpmd_cq.h"

#define BUF_SIZE 4096
#define REMOTE_OFFSET (BUF_SIZE / 2)
/* Receives posted again per call: one ibv_post_recv() per batch. */
#define RECV_BATCH 32
/* RC parameters: retry forever on RNR, give up on transport errors late. */
#define QP_TIMEOUT 14
#define QP_RETRY_CNT 7
#define QP_RNR_RETRY 7
#define QP_MIN_RNR_TIMER 12

struct loopback {
	const char *ibdev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	void *buf;
	struct ibv_mr *mr;
	struct ibv_cq *aux_cq;    /* B's receives; the QPs' unused halves */
	struct ibv_qp *qp_a;      /* sender, on the cqpoll CQ */
	struct ibv_qp *qp_b;      /* receiver */
	uint8_t port;
	uint32_t depth;           /* sends unread at most, receives posted ahead */
	uint64_t recvs;           /* receives posted on B since the start */
	uint64_t period;          /* mlx5: requests between QP resets; 0: never */
	uint64_t reset_at;        /* seq of the last reset */
	struct ibv_ah_attr ah;
	enum ibv_mtu mtu;
	struct ibv_recv_wr recv_wr[RECV_BATCH];
};

/* The errno of a verbs call that returns it, -1 with errno, or nothing useful. */
static int
verbs_err(int r)
{
	if (r > 0)
		return r;
	return errno != 0 ? errno : EIO;
}

static int
fail(const struct loopback *lb, const char *what, int err)
{
	fprintf(stderr, TPCQ_PROG ": %s: %s failed: %s\n", lb->ibdev, what,
		strerror(err));
	return -err;
}

static bool
is_mlx5(struct ibv_device *dev)
{
#if defined(TPCQ_HAVE_MLX5) && defined(TPCQ_HAVE_MLX5DV_IS_SUPPORTED)
	return mlx5dv_is_supported(dev);
#else
	/* Kernel names, unless renamed by udev; rdma-core too old to ask. */
	return strncmp(ibv_get_device_name(dev), "mlx5", 4) == 0;
#endif
}

/* Why a device list is empty, for the messages of both callers. */
static void
no_devices(int err, char *why, size_t len)
{
	if (err != 0)
		snprintf(why, len, "ibv_get_device_list: no devices: %s",
			 strerror(err));
	else
		snprintf(why, len, "ibv_get_device_list: no devices");
}

int
tpcq_loopback_first_mlx5(char *name, size_t len, char *why, size_t why_len)
{
	struct ibv_device **list;
	int n = 0, i, err;

	errno = 0;
	list = ibv_get_device_list(&n);
	err = errno;
	if (list == NULL || n == 0) {
		no_devices(err, why, why_len);
		if (list != NULL)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	for (i = 0; i < n; i++) {
		if (is_mlx5(list[i])) {
			snprintf(name, len, "%s", ibv_get_device_name(list[i]));
			ibv_free_device_list(list);
			return 0;
		}
	}
	snprintf(why, why_len, "%d RDMA device(s), none is mlx5", n);
	ibv_free_device_list(list);
	return -ENODEV;
}

static int
open_named(struct loopback *lb)
{
	struct ibv_device **list;
	char why[256];
	int n = 0, i, err;
	size_t w;

	errno = 0;
	list = ibv_get_device_list(&n);
	err = errno;
	if (list == NULL || n == 0) {
		no_devices(err, why, sizeof(why));
		fprintf(stderr, TPCQ_PROG ": no RDMA device named %s (%s)\n",
			lb->ibdev, why);
		if (list != NULL)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	for (i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), lb->ibdev) == 0)
			break;
	if (i == n) {
		w = (size_t)snprintf(why, sizeof(why), "devices:");
		for (i = 0; i < n && w < sizeof(why); i++)
			w += (size_t)snprintf(why + w, sizeof(why) - w, " %s",
					      ibv_get_device_name(list[i]));
		fprintf(stderr, TPCQ_PROG ": no RDMA device named %s (%s)\n",
			lb->ibdev, why);
		ibv_free_device_list(list);
		return -ENODEV;
	}
	errno = 0;
	lb->ctx = ibv_open_device(list[i]);
	err = errno != 0 ? errno : EIO;
	ibv_free_device_list(list);
	if (lb->ctx == NULL)
		return fail(lb, "ibv_open_device", err);
	return 0;
}

/* The first active port: a loopback needs no cable to a peer, only a link. */
static int
find_port(struct loopback *lb, struct ibv_port_attr *pa)
{
	struct ibv_device_attr da;
	unsigned int p;
	int r;

	r = ibv_query_device(lb->ctx, &da);
	if (r != 0)
		return fail(lb, "ibv_query_device", verbs_err(r));
	for (p = 1; p <= da.phys_port_cnt; p++) {
		r = ibv_query_port(lb->ctx, (uint8_t)p, pa);
		if (r != 0)
			return fail(lb, "ibv_query_port", verbs_err(r));
		if (pa->state == IBV_PORT_ACTIVE) {
			lb->port = (uint8_t)p;
			return 0;
		}
	}
	fprintf(stderr, TPCQ_PROG ": %s: none of its %u port(s) is active\n",
		lb->ibdev, da.phys_port_cnt);
	return -ENETDOWN;
}

/*
 * Where B is, seen from A on the same port: the LID on InfiniBand; on RoCE
 * the first non-zero GID from index 0, through the global route header.
 */
static int
address(struct loopback *lb, const struct ibv_port_attr *pa,
	struct ibv_ah_attr *ah)
{
	static const union ibv_gid zero;
	union ibv_gid gid;
	int i, r;

	memset(ah, 0, sizeof(*ah));
	ah->port_num = lb->port;
	if (pa->link_layer != IBV_LINK_LAYER_ETHERNET) {
		if (pa->lid == 0) {
			fprintf(stderr, TPCQ_PROG ": %s port %u has no LID "
				"(is a subnet manager running?)\n",
				lb->ibdev, lb->port);
			return -ENETDOWN;
		}
		ah->dlid = pa->lid;
		return 0;
	}
	for (i = 0; i < pa->gid_tbl_len; i++) {
		r = ibv_query_gid(lb->ctx, lb->port, i, &gid);
		if (r != 0)
			return fail(lb, "ibv_query_gid", verbs_err(r));
		if (memcmp(&gid, &zero, sizeof(gid)) != 0)
			break;
	}
	if (i == pa->gid_tbl_len) {
		fprintf(stderr, TPCQ_PROG ": %s port %u has no GID (no IP address "
			"on its netdev?)\n", lb->ibdev, lb->port);
		return -EADDRNOTAVAIL;
	}
	ah->is_global = 1;
	ah->grh.dgid = gid;
	ah->grh.sgid_index = (uint8_t)i;
	ah->grh.hop_limit = 1;
	return 0;
}

static struct ibv_qp *
create_qp(struct loopback *lb, struct ibv_cq *send_cq, uint32_t max_send,
	  uint32_t max_recv)
{
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.send_cq = send_cq;
	a.recv_cq = lb->aux_cq;
	a.cap.max_send_wr = max_send;
	a.cap.max_recv_wr = max_recv;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.qp_type = IBV_QPT_RC;
	/*
	 * Only signaled requests complete; with sq_sig_all clear, mlx5 also
	 * keeps requester scatter-to-CQE off, which the direct driver refuses.
	 */
	a.sq_sig_all = 0;
	errno = 0;
	qp = ibv_create_qp(lb->pd, &a);
	if (qp == NULL)
		fail(lb, "ibv_create_qp", errno != 0 ? errno : EIO);
	return qp;
}

/* RESET -> INIT -> RTR -> RTS, with the peer as destination. */
static int
connect_qp(struct loopback *lb, struct ibv_qp *qp, uint32_t dest_qpn,
	   const struct ibv_ah_attr *ah, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a;
	int r;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = lb->port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (r != 0)
		return fail(lb, "ibv_modify_qp(INIT)", verbs_err(r));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = QP_MIN_RNR_TIMER;
	a.ah_attr = *ah;
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (r != 0)
		return fail(lb, "ibv_modify_qp(RTR)", verbs_err(r));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = QP_TIMEOUT;
	a.retry_cnt = QP_RETRY_CNT;
	a.rnr_retry = QP_RNR_RETRY;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC);
	if (r != 0)
		return fail(lb, "ibv_modify_qp(RTS)", verbs_err(r));
	return 0;
}

/* Post n receives on B; a write with immediate places no data in them. */
static int
post_recvs(struct loopback *lb, unsigned int n)
{
	struct ibv_recv_wr *bad;
	unsigned int i;
	int r;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		lb->recv_wr[i].wr_id = lb->recvs + i;
		lb->recv_wr[i].sg_list = NULL;
		lb->recv_wr[i].num_sge = 0;
		lb->recv_wr[i].next = i + 1 < n ? &lb->recv_wr[i + 1] : NULL;
	}
	r = ibv_post_recv(lb->qp_b, lb->recv_wr, &bad);
	if (r != 0)
		return fail(lb, "ibv_post_recv", verbs_err(r));
	lb->recvs += n;
	return 0;
}

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
	r = open_named(lb);
	if (r == 0)
		r = find_port(lb, &pa);
	if (r == 0)
		r = address(lb, &pa, &ah);
	if (r != 0)
		goto err;
	r = ibv_query_device(lb->ctx, &da);
	if (r != 0) {
		r = fail(lb, "ibv_query_device", verbs_err(r));
		goto err;
	}

	errno = 0;
	lb->pd = ibv_alloc_pd(lb->ctx);
	if (lb->pd == NULL) {
		r = fail(lb, "ibv_alloc_pd", errno != 0 ? errno : EIO);
		goto err;
	}
	lb->buf = aligned_alloc(BUF_SIZE, BUF_SIZE);
	if (lb->buf == NULL) {
		r = fail(lb, "aligned_alloc", ENOMEM);
		goto err;
	}
	memset(lb->buf, 0, BUF_SIZE);
	errno = 0;
	lb->mr = ibv_reg_mr(lb->pd, lb->buf, BUF_SIZE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (lb->mr == NULL) {
		r = fail(lb, "ibv_reg_mr", errno != 0 ? errno : EIO);
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
		r = fail(lb, mlx5 ? "cqpoll_mlx5_cq_create" : "cqpoll_verbs_cq_create",
			 errno != 0 ? errno : EIO);
		goto err;
	}
	if (vcq == NULL) {
		r = fail(lb, "getting the verbs CQ of the cqpoll CQ", EINVAL);
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
		r = fail(lb, "ibv_create_cq", errno != 0 ? errno : EIO);
		goto err;
	}
	lb->qp_a = create_qp(lb, vcq, depth, 1);
	lb->qp_b = lb->qp_a != NULL ? create_qp(lb, lb->aux_cq, 1, depth) : NULL;
	if (lb->qp_b == NULL) {
		r = -EIO;
		goto err;
	}
	lb->ah = ah;
	lb->mtu = pa.active_mtu;
	r = connect_qp(lb, lb->qp_a, lb->qp_b->qp_num, &ah, pa.active_mtu);
	if (r == 0)
		r = connect_qp(lb, lb->qp_b, lb->qp_a->qp_num, &ah, pa.active_mtu);
	while (r == 0 && lb->recvs < depth)
		r = post_recvs(lb, depth - lb->recvs < RECV_BATCH ?
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
		return fail(lb, "ibv_poll_cq", EIO);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, TPCQ_PROG ": %s: receive on the loopback "
				"QP failed: %s\n", lb->ibdev,
				ibv_wc_status_str(wc[i].status));
			return -EIO;
		}
	}
	return post_recvs(lb, (unsigned int)n);
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
		return fail(lb, "ibv_modify_qp(RESET)", verbs_err(r));
	r = connect_qp(lb, lb->qp_a, lb->qp_b->qp_num, &lb->ah, lb->mtu);
	if (r == 0)
		r = connect_qp(lb, lb->qp_b, lb->qp_a->qp_num, &lb->ah, lb->mtu);
	if (r != 0)
		return r;
	/* The receives B held are gone: as many as the requests so far. */
	lb->recvs = seq;
	while (r == 0 && lb->recvs < seq + lb->depth)
		r = post_recvs(lb, seq + lb->depth - lb->recvs < RECV_BATCH ?
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
		return fail(lb, "ibv_post_send", verbs_err(r));
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
