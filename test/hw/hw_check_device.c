/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the report says about the device: its clock (the raw completion
 * timestamps mlx5 hands out, and how fast they tick against CLOCK_MONOTONIC),
 * NUMA node, firmware, and the CQ counters and log of a short run; and the
 * loopback plan (hw_loopback.c) checked on the port views of an InfiniBand
 * and a RoCE port, then made for the device's own port.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_check.h"

/* Ticks per microsecond of the device clock, from the raw stamps of two completions. */
static int
clock_rate(struct hw_target *t, enum hw_driver d, double *mhz, char *why, size_t len)
{
	static const struct hw_step s = { .kind = HW_STEP_SEND, .len = 8 };
	struct hw_lane_conf conf = { .driver = d };
	struct cqpoll_completion c[2];
	struct hw_expect e[4];
	struct hw_run run;
	uint64_t t0, t1;
	int ne = 0, k;

	if (hw_run_open(&run, t, &conf, why, len) != 0)
		return -1;
	for (k = 0; k < 2; k++) {
		if (k == 1)
			hw_sleep_us(20000);
		if (hw_run_step(&run, &s, e, &ne, 4) != 0 ||
		    hw_run_collect(&run, &c[k], 1, 1000) != 1) {
			snprintf(why, len, "no completion");
			hw_run_close(&run);
			return -1;
		}
		if (k == 0)
			t0 = hw_now_ns();
		else
			t1 = hw_now_ns();
	}
	hw_run_close(&run);
	if (!(c[0].flags & c[1].flags & CQPOLL_COMPLETION_F_TIMESTAMP_RAW)) {
		snprintf(why, len, "completions carry no raw timestamp");
		return -1;
	}
	if (c[1].timestamp <= c[0].timestamp) {
		snprintf(why, len, "raw timestamps do not advance (%llu, %llu)",
			 (unsigned long long)c[0].timestamp, (unsigned long long)c[1].timestamp);
		return -1;
	}
	*mhz = (double)(c[1].timestamp - c[0].timestamp) / ((double)(t1 - t0) / 1000.0);
	return 0;
}

static void
device_info(struct hw_target *t, struct hw_result *r)
{
	static const struct hw_step s = { .kind = HW_STEP_SEND, .len = 8 };
	struct hw_lane_conf conf = { .driver = t->has_mlx5 ? HW_DRV_MLX5 : HW_DRV_VERBS };
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	struct hw_expect e[4];
	struct hw_run run;
	char why[256], path[256];
	double mhz;
	int ne = 0, k;

	hw_data_str(r, "driver", hw_driver_name(conf.driver));
	if (!t->emulated) {
		struct ibv_device_attr da;
		FILE *f;
		int node = -1;

		if (ibv_query_device(t->ctx, &da) == 0) {
			hw_data_str(r, "fw_ver", da.fw_ver);
			hw_data_u64(r, "vendor_id", da.vendor_id);
			hw_data_u64(r, "vendor_part_id", da.vendor_part_id);
			hw_data_u64(r, "hw_ver", da.hw_ver);
		}
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/numa_node", t->name);
		f = fopen(path, "r");
		if (f != NULL) {
			if (fscanf(f, "%d", &node) != 1)
				node = -1;
			fclose(f);
		}
		hw_data_i64(r, "numa_node", node);
	} else {
		hw_data_str(r, "fw_ver", "none (emulated)");
		hw_data_i64(r, "numa_node", -1);
	}
	if (t->has_mlx5) {
		/* A device that stamps no CQE is told, not failed: nothing relies on it. */
		if (clock_rate(t, HW_DRV_MLX5, &mhz, why, sizeof(why)) != 0)
			hw_data_str(r, "clock", why);
		else
			hw_data_dbl(r, "clock_mhz", mhz);
	}
	/* Telemetry: the CQ's counters over a few sleeps and wake-ups. */
	if (hw_run_open(&run, t, &conf, why, sizeof(why)) != 0) {
		hw_fail(r, "%s", why);
		return;
	}
	for (k = 0; k < 8; k++) {
		while (cqpoll_poll_and_arm(run.cq, c, 4) > 0)
			;
		ne = 0;
		if (hw_run_step(&run, &s, e, &ne, 4) != 0 || cqpoll_cq_wait(run.cq, 1000) != 1 ||
		    hw_run_collect(&run, c, 1, 1000) != 1) {
			hw_run_close(&run);
			hw_fail(r, "round %d: no wake-up", k);
			return;
		}
	}
	cqpoll_cq_stats_get(run.cq, &st);
	hw_run_close(&run);
	hw_data_u64(r, "polls", st.polls);
	hw_data_u64(r, "empty_polls", st.empty_polls);
	hw_data_u64(r, "completions", st.completions);
	hw_data_u64(r, "arms", st.arms);
	hw_data_u64(r, "events", st.events);
	hw_data_u64(r, "spurious_events", st.spurious_events);
	hw_data_u64(r, "wait_timeouts", st.wait_timeouts);
	hw_data_u64(r, "timeout_recoveries", st.timeout_recoveries);
	hw_data_u64(r, "log_lines", hw_log_count());
	if (st.events != 8 || st.completions != 8) {
		hw_fail(r, "8 wake-ups: %llu events, %llu completions counted",
			(unsigned long long)st.events, (unsigned long long)st.completions);
		return;
	}
	hw_pass(r, "counters of 8 sleeps and wake-ups as they happened");
}

/* The plans the loopback makes, on the port views a device reports. */
static int
plan_views(char *why, size_t len)
{
	union ibv_gid roce[3];
	struct hw_port_view ib = { .active = true, .lid = 7, .active_mtu = IBV_MTU_4096 };
	struct hw_port_view eth = { .active = true, .ethernet = true,
				    .active_mtu = IBV_MTU_1024, .gid_count = 3, .gids = roce };
	struct hw_port_view bad[3] = {
		{ .active = false },
		{ .active = true, .lid = 0 },
		{ .active = true, .ethernet = true, .gid_count = 1, .gids = roce },
	};
	struct hw_lb_plan p;
	struct ibv_qp_attr a;
	char w[128];
	int i, m;

	memset(roce, 0, sizeof(roce));
	roce[1].raw[0] = 0xfe;
	roce[1].raw[1] = 0x80;
	roce[1].raw[15] = 1;
	roce[2].raw[10] = 0xff;
	roce[2].raw[11] = 0xff;
	roce[2].raw[12] = 10;
	roce[2].raw[15] = 1;
	if (hw_lb_plan(&ib, 1, &p, w, sizeof(w)) != 0 || p.ah.dlid != 7 || p.ah.is_global ||
	    p.gid_index != -1 || p.mtu != IBV_MTU_4096) {
		snprintf(why, len, "InfiniBand port: not addressed by its LID");
		return -1;
	}
	if (hw_lb_plan(&eth, 2, &p, w, sizeof(w)) != 0 || !p.ah.is_global ||
	    p.gid_index != 2 || p.ah.grh.sgid_index != 2 || p.ah.port_num != 2 ||
	    memcmp(&p.ah.grh.dgid, &roce[2], sizeof(roce[2])) != 0) {
		snprintf(why, len, "RoCE port: not addressed by its IPv4 GID");
		return -1;
	}
	/* The zero GID of bad[2]: roce[0]. */
	for (i = 0; i < 3; i++) {
		if (hw_lb_plan(&bad[i], 1, &p, w, sizeof(w)) == 0) {
			snprintf(why, len, "bad port view %d accepted", i);
			return -1;
		}
	}
	/* ibv_modify_qp(3): the attributes each RC transition requires. */
	m = hw_lb_attr(&p, IBV_QPS_INIT, 0, &a);
	if (m != (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		goto mask;
	m = hw_lb_attr(&p, IBV_QPS_RTR, 0x42, &a);
	if (m != (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) ||
	    a.dest_qp_num != 0x42)
		goto mask;
	m = hw_lb_attr(&p, IBV_QPS_RTS, 0, &a);
	if (m != (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		goto mask;
	if (hw_lb_attr(&p, IBV_QPS_SQD, 0, &a) >= 0) {
		snprintf(why, len, "a transition the loopback never makes was given attributes");
		return -1;
	}
	return 0;
mask:
	snprintf(why, len, "transition mask 0x%x differs from ibv_modify_qp(3)'s", m);
	return -1;
}

static void
loopback_plan(struct hw_target *t, struct hw_result *r)
{
	struct hw_lb_plan p;
	char why[256];

	if (plan_views(why, sizeof(why)) != 0) {
		hw_fail(r, "%s", why);
		return;
	}
	if (t->emulated) {
		hw_pass(r, "InfiniBand (LID) and RoCE (IPv4 GID) plans and ibv_modify_qp(3) "
			"masks; refused: inactive port, no LID, no GID");
		return;
	}
	if (hw_lb_plan_device(t->ctx, &p, why, sizeof(why)) != 0) {
		hw_fail(r, "%s: %s", t->name, why);
		return;
	}
	hw_data_i64(r, "port", p.port);
	hw_data_i64(r, "gid_index", p.gid_index);
	hw_data_i64(r, "mtu", 128 << p.mtu);
	hw_pass(r, "port %u, %s", p.port, p.gid_index >= 0 ? "RoCE (GID)" : "InfiniBand (LID)");
}

const struct hw_check hw_check_device = {
	"device-info", "device clock, NUMA node, firmware, CQ counters and log",
	device_info };
const struct hw_check hw_check_loopback = {
	"loopback-plan", "the loopback RC QP pair's address and transitions", loopback_plan };
