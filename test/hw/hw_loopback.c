/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loopback RC QP pair: both QPs on one port of one device, each the
 * other's destination. Where the peer is (hw_lb_plan) and the attributes of
 * each transition (hw_lb_attr) are pure functions of what the port reports,
 * so the emulated run checks them on the port views of an InfiniBand and a
 * RoCE port; only hw_lb_connect() and hw_lb_plan_device() call the device.
 * The attribute masks are those ibv_modify_qp(3) requires of an RC QP.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hw_check.h"

/* RC parameters: retry RNR forever, give up on transport errors late. */
#define LB_TIMEOUT 14
#define LB_RETRY_CNT 7
#define LB_RNR_RETRY 7
#define LB_MIN_RNR_TIMER 12

/* ::ffff:a.b.c.d, the GID of an IPv4 address (RoCE v2, rxe's usual one). */
static bool
gid_is_ipv4(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

static bool
gid_is_zero(const union ibv_gid *g)
{
	static const union ibv_gid zero;

	return memcmp(g, &zero, sizeof(zero)) == 0;
}

int
hw_lb_plan(const struct hw_port_view *pv, uint8_t port, struct hw_lb_plan *plan,
	   char *why, size_t len)
{
	int i, pick = -1;

	memset(plan, 0, sizeof(*plan));
	plan->port = port;
	plan->gid_index = -1;
	plan->mtu = pv->active_mtu;
	plan->ah.port_num = port;
	if (!pv->active) {
		snprintf(why, len, "port %u is not active", port);
		return -ENETDOWN;
	}
	if (!pv->ethernet) {
		if (pv->lid == 0) {
			snprintf(why, len, "port %u has no LID (is a subnet manager running?)",
				 port);
			return -ENETDOWN;
		}
		plan->ah.dlid = pv->lid;
		return 0;
	}
	/* An IPv4 GID if there is one (what perftest's -x must name too), else the first. */
	for (i = 0; i < pv->gid_count; i++) {
		if (gid_is_zero(&pv->gids[i]))
			continue;
		if (pick < 0 || (gid_is_ipv4(&pv->gids[i]) && !gid_is_ipv4(&pv->gids[pick])))
			pick = i;
	}
	if (pick < 0) {
		snprintf(why, len, "port %u has no GID (no IP address on its netdev?)", port);
		return -EADDRNOTAVAIL;
	}
	plan->gid_index = pick;
	plan->ah.is_global = 1;
	plan->ah.grh.dgid = pv->gids[pick];
	plan->ah.grh.sgid_index = (uint8_t)pick;
	plan->ah.grh.hop_limit = 1;
	return 0;
}

int
hw_lb_attr(const struct hw_lb_plan *plan, enum ibv_qp_state state, uint32_t dest_qpn,
	   struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	switch (state) {
	case IBV_QPS_INIT:
		a->port_num = plan->port;
		a->pkey_index = 0;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	case IBV_QPS_RTR:
		a->path_mtu = plan->mtu;
		a->dest_qp_num = dest_qpn;
		a->rq_psn = 0;
		a->max_dest_rd_atomic = 1;
		a->min_rnr_timer = LB_MIN_RNR_TIMER;
		a->ah_attr = plan->ah;
		return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	case IBV_QPS_RTS:
		a->timeout = LB_TIMEOUT;
		a->retry_cnt = LB_RETRY_CNT;
		a->rnr_retry = LB_RNR_RETRY;
		a->sq_psn = 0;
		a->max_rd_atomic = 1;
		return IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	default:
		return -EINVAL;
	}
}

int
hw_lb_connect(struct ibv_qp *qp, const struct hw_lb_plan *plan, uint32_t dest_qpn,
	      char *why, size_t len)
{
	static const enum ibv_qp_state states[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	static const char *const names[] = { "INIT", "RTR", "RTS" };
	struct ibv_qp_attr a;
	size_t i;
	int mask, r;

	for (i = 0; i < 3; i++) {
		mask = hw_lb_attr(plan, states[i], dest_qpn, &a);
		r = ibv_modify_qp(qp, &a, mask);
		if (r != 0) {
			r = r > 0 ? r : (errno != 0 ? errno : EIO);
			snprintf(why, len, "ibv_modify_qp(%s): %s", names[i], strerror(r));
			return -r;
		}
	}
	return 0;
}

int
hw_lb_plan_device(struct ibv_context *ctx, struct hw_lb_plan *plan, char *why, size_t len)
{
	union ibv_gid gids[64];
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct hw_port_view pv;
	unsigned int p;
	int i, r;

	r = ibv_query_device(ctx, &da);
	if (r != 0) {
		snprintf(why, len, "ibv_query_device: %s", strerror(r > 0 ? r : errno));
		return -EIO;
	}
	for (p = 1; p <= da.phys_port_cnt; p++) {
		r = ibv_query_port(ctx, (uint8_t)p, &pa);
		if (r != 0) {
			snprintf(why, len, "ibv_query_port(%u): %s", p, strerror(r > 0 ? r : errno));
			return -EIO;
		}
		if (pa.state == IBV_PORT_ACTIVE)
			break;
	}
	if (p > da.phys_port_cnt) {
		snprintf(why, len, "none of its %u port(s) is active", da.phys_port_cnt);
		return -ENETDOWN;
	}
	memset(&pv, 0, sizeof(pv));
	pv.active = true;
	pv.ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	pv.lid = pa.lid;
	pv.active_mtu = pa.active_mtu;
	pv.gid_count = pa.gid_tbl_len < 64 ? pa.gid_tbl_len : 64;
	for (i = 0; i < pv.gid_count; i++)
		if (ibv_query_gid(ctx, (uint8_t)p, i, &gids[i]) != 0)
			memset(&gids[i], 0, sizeof(gids[i]));
	pv.gids = gids;
	return hw_lb_plan(&pv, (uint8_t)p, plan, why, len);
}
