/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loopback's verbs (loopback.c): the device and port found, the two RC
 * QPs created and connected to each other, the receives posted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#ifdef TPCQ_HAVE_MLX5
#include <infiniband/mlx5dv.h>
#endif

#include "dev.h"
#ifdef TPCQ_HAVE_MLX5
#include <cqpoll_mlx5.h>
#endif
#include "loopback.h"
#include "testpmd_cq.h"

/* The errno of a verbs call that returns it, -1 with errno, or nothing useful. */
int
tpcq_lb_verbs_err(int r)
{
	if (r > 0)
		return r;
	return errno != 0 ? errno : EIO;
}

int
tpcq_lb_fail(const struct loopback *lb, const char *what, int err)
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

int
tpcq_lb_open_named(struct loopback *lb)
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
		return tpcq_lb_fail(lb, "ibv_open_device", err);
	return 0;
}

/* The first active port: a loopback needs no cable to a peer, only a link. */
int
tpcq_lb_find_port(struct loopback *lb, struct ibv_port_attr *pa)
{
	struct ibv_device_attr da;
	unsigned int p;
	int r;

	r = ibv_query_device(lb->ctx, &da);
	if (r != 0)
		return tpcq_lb_fail(lb, "ibv_query_device", tpcq_lb_verbs_err(r));
	for (p = 1; p <= da.phys_port_cnt; p++) {
		r = ibv_query_port(lb->ctx, (uint8_t)p, pa);
		if (r != 0)
			return tpcq_lb_fail(lb, "ibv_query_port", tpcq_lb_verbs_err(r));
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
int
tpcq_lb_address(struct loopback *lb, const struct ibv_port_attr *pa,
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
			return tpcq_lb_fail(lb, "ibv_query_gid", tpcq_lb_verbs_err(r));
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

struct ibv_qp *
tpcq_lb_create_qp(struct loopback *lb, struct ibv_cq *send_cq,
		  uint32_t max_send, uint32_t max_recv)
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
		tpcq_lb_fail(lb, "ibv_create_qp", errno != 0 ? errno : EIO);
	return qp;
}

/* ibv_modify_qp(), or cqpoll_mlx5_qp_modify() for cqpoll's own QP: an errno value. */
static int
modify(struct ibv_qp *qp, struct cqpoll_mlx5_qp *cqp, struct ibv_qp_attr *a, int mask)
{
#ifdef TPCQ_HAVE_MLX5
	if (cqp != NULL)
		return -cqpoll_mlx5_qp_modify(cqp, a, mask);
#else
	(void)cqp;
#endif
	return ibv_modify_qp(qp, a, mask);
}

/* From creation through INIT and RTR to RTS, with the peer as destination. */
int
tpcq_lb_connect_qp(struct loopback *lb, struct ibv_qp *qp, struct cqpoll_mlx5_qp *cqp,
		   uint32_t dest_qpn, const struct ibv_ah_attr *ah, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a;
	int r;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = lb->port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	r = modify(qp, cqp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (r != 0)
		return tpcq_lb_fail(lb, "ibv_modify_qp(INIT)", tpcq_lb_verbs_err(r));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = QP_MIN_RNR_TIMER;
	a.ah_attr = *ah;
	r = modify(qp, cqp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (r != 0)
		return tpcq_lb_fail(lb, "ibv_modify_qp(RTR)", tpcq_lb_verbs_err(r));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = QP_TIMEOUT;
	a.retry_cnt = QP_RETRY_CNT;
	a.rnr_retry = QP_RNR_RETRY;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	r = modify(qp, cqp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC);
	if (r != 0)
		return tpcq_lb_fail(lb, "ibv_modify_qp(RTS)", tpcq_lb_verbs_err(r));
	return 0;
}

/* Post n receives on B; a write with immediate places no data in them. */
int
tpcq_lb_post_recvs(struct loopback *lb, unsigned int n)
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
		return tpcq_lb_fail(lb, "ibv_post_recv", tpcq_lb_verbs_err(r));
	lb->recvs += n;
	return 0;
}

