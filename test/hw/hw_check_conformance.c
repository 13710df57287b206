/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance on the target's CQs: what each driver claims about its arm,
 * events on armed CQs, completions the transition must return instead of
 * sleeping on them, one arm per sleep, CQs of both drivers on one channel,
 * and report-missed where the provider has it (libibverbs does not).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cqpoll_emu.h"
#include "hw_check.h"

#define NROUNDS 20

static const struct hw_step send8 = { .kind = HW_STEP_SEND, .len = 8 };

static int
drivers_of(const struct hw_target *t, enum hw_driver *d)
{
	int n = 0;

	if (t->has_mlx5)
		d[n++] = HW_DRV_MLX5;
	d[n++] = HW_DRV_VERBS;
	return n;
}

static int
open_single(struct hw_run *run, struct hw_target *t, enum hw_driver d,
	    struct ibv_comp_channel *ch, struct hw_result *r)
{
	struct hw_lane_conf c = { .driver = d, .channel = ch };
	char why[256];

	if (hw_run_open(run, t, &c, why, sizeof(why)) != 0) {
		hw_fail(r, "%s: %s", hw_driver_name(d), why);
		return -1;
	}
	return 0;
}

static int
send_one(struct hw_run *run, struct hw_result *r)
{
	struct hw_expect e[2];
	int ne = 0, s = hw_run_step(run, &send8, e, &ne, 2);

	if (s != 0) {
		hw_fail(r, "%s: posting a send: %s", hw_driver_name(run->driver), strerror(-s));
		return -1;
	}
	return 0;
}

/*
 * mlx5 declares its arm level (contract §5.3): armed after an empty poll at
 * ci, it fires for a CQE already at ci. Checked with the naive arm (no poll
 * after it), which is what the claim lets the core skip. Verbs promises an
 * event only for completions after the arm (edge), so the core polls again
 * after arming: the claim checked is that the core declared it so, and
 * whether this device fired anyway is recorded.
 */
static void
arm_claim(struct hw_target *t, struct hw_result *r)
{
	enum hw_driver d[2];
	int nd = drivers_of(t, d), i, w;
	struct cqpoll_completion c[4];
	struct cqpoll_cq_info info;
	char key[64];

	for (i = 0; i < nd; i++) {
		struct hw_run run;

		if (open_single(&run, t, d[i], NULL, r) != 0)
			return;
		cqpoll_cq_info_get(run.cq, &info);
		if (cqpoll_poll_burst(run.cq, c, 4) != 0 || send_one(&run, r) != 0) {
			hw_run_close(&run);
			if (r->status != HW_FAIL)
				hw_fail(r, "%s: the CQ was not empty at the start",
					hw_driver_name(d[i]));
			return;
		}
		/* Written by now: the next poll would find it. */
		run.t->ops->settle(run.lane);
		hw_sleep_us(2000);
		cqpoll_cq_arm_naive(run.cq);
		w = cqpoll_cq_wait(run.cq, 200);
		snprintf(key, sizeof(key), "%s_arm", hw_driver_name(d[i]));
		hw_data_str(r, key, cqpoll_arm_semantics_name(info.arm));
		snprintf(key, sizeof(key), "%s_fired_for_existing", hw_driver_name(d[i]));
		hw_data_i64(r, key, w == 1);
		w = w == 1;
		/* Whatever fired, the entry is there and is read once. */
		if (hw_run_collect(&run, c, 1, 1000) != 1) {
			hw_run_close(&run);
			hw_fail(r, "%s: the completion never came", hw_driver_name(d[i]));
			return;
		}
		hw_run_close(&run);
		if (d[i] == HW_DRV_MLX5 && info.arm != CQPOLL_ARM_LEVEL) {
			hw_fail(r, "mlx5 CQ declared %s, not level",
				cqpoll_arm_semantics_name(info.arm));
			return;
		}
		if (d[i] == HW_DRV_MLX5 && !w) {
			hw_fail(r, "mlx5: armed after an empty poll, no event within 200 ms "
				"for the CQE already there: the level claim (contract §5.3) "
				"does not hold on this device");
			return;
		}
		if (d[i] == HW_DRV_VERBS && info.arm != CQPOLL_ARM_EDGE) {
			hw_fail(r, "verbs CQ declared %s, not edge",
				cqpoll_arm_semantics_name(info.arm));
			return;
		}
	}
	hw_pass(r, "%s", t->has_mlx5 ?
		"mlx5 level (fired for the entry already there), verbs edge (re-poll after arm)" :
		"verbs edge (re-poll after arm)");
}

static void
events(struct hw_target *t, struct hw_result *r)
{
	enum hw_driver d[2];
	int nd = drivers_of(t, d), i, k, n;
	struct cqpoll_completion c[8];
	struct cqpoll_cq_stats st;
	char key[64];

	for (i = 0; i < nd; i++) {
		const char *dn = hw_driver_name(d[i]);
		struct hw_run run;

		if (open_single(&run, t, d[i], NULL, r) != 0)
			return;
#define CHECK(cond, ...) do { if (!(cond)) { hw_run_close(&run); \
	hw_fail(r, __VA_ARGS__); return; } } while (0)
		/* Empty and armed: the safety-net timeout ends the wait, no event. */
		CHECK(cqpoll_poll_and_arm(run.cq, c, 8) == 0, "%s: empty CQ not armed", dn);
		CHECK(cqpoll_cq_wait(run.cq, 20) == 0, "%s: an empty armed CQ woke", dn);
		for (k = 0; k < NROUNDS; k++) {
			while ((n = cqpoll_poll_and_arm(run.cq, c, 8)) > 0)
				;
			CHECK(n == 0, "%s: poll-and-arm: %d", dn, n);
			CHECK(send_one(&run, r) == 0, "%s: send", dn);
			n = cqpoll_cq_wait(run.cq, 1000);
			CHECK(n == 1, "%s: round %d: armed CQ not woken by its completion "
			      "(wait returned %d)", dn, k, n);
			CHECK(hw_run_collect(&run, c, 1, 1000) == 1, "%s: round %d: "
			      "woken, but no completion", dn, k);
		}
		/* Completions there before the transition are returned by it. */
		for (k = 1; k <= 4; k++) {
			int got = 0, j;

			for (j = 0; j < k; j++)
				CHECK(send_one(&run, r) == 0, "%s: send", dn);
			run.t->ops->settle(run.lane);
			hw_sleep_us(2000);
			while ((n = cqpoll_poll_and_arm(run.cq, c, 8)) > 0)
				got += n;
			CHECK(n == 0 && got == k, "%s: the transition returned %d of %d "
			      "pending completions", dn, got, k);
			cqpoll_cq_event_get(run.cq);
		}
		CHECK(cqpoll_cq_stats_get(run.cq, &st) == 0, "%s: stats", dn);
		{
			uint64_t arms = st.arms;

			for (k = 0; k < 10; k++)
				CHECK(cqpoll_poll_and_arm(run.cq, c, 8) == 0, "%s: re-arm", dn);
			cqpoll_cq_stats_get(run.cq, &st);
			CHECK(st.arms - arms <= 1, "%s: 10 poll-and-arms on an armed empty CQ "
			      "rang the device %llu times", dn,
			      (unsigned long long)(st.arms - arms));
		}
		CHECK(st.timeout_recoveries == 0, "%s: %llu lost wake-ups recovered by timeouts",
		      dn, (unsigned long long)st.timeout_recoveries);
		snprintf(key, sizeof(key), "%s_events", dn);
		hw_data_u64(r, key, st.events);
		snprintf(key, sizeof(key), "%s_wait_timeouts", dn);
		hw_data_u64(r, key, st.wait_timeouts);
		snprintf(key, sizeof(key), "%s_spurious_events", dn);
		hw_data_u64(r, key, st.spurious_events);
#undef CHECK
		hw_run_close(&run);
	}
	hw_pass(r, "%d armed rounds woken by their completion, pending completions "
		"returned by the transition, one arm per sleep", NROUNDS);
}

/* One channel, a CQ of each driver (two verbs CQs without mlx5): events reach their CQ. */
static void
shared_channel(struct hw_target *t, struct hw_result *r)
{
	struct cqpoll_completion c[8];
	struct ibv_comp_channel *ch;
	struct hw_run run[2];
	enum hw_driver d[2] = { t->has_mlx5 ? HW_DRV_MLX5 : HW_DRV_VERBS, HW_DRV_VERBS };
	int i, k, ok = 0;

	ch = t->ops->channel_open(t);
	if (ch == NULL) {
		hw_fail(r, "creating a completion channel: %s", strerror(errno));
		return;
	}
	memset(run, 0, sizeof(run));
	for (i = 0; i < 2; i++)
		if (open_single(&run[i], t, d[i], ch, r) != 0)
			goto out;
	for (k = 0; k < 2; k++) {
		int o = 1 - k;

		for (i = 0; i < 2; i++)
			while (cqpoll_poll_and_arm(run[i].cq, c, 8) > 0)
				;
		if (send_one(&run[k], r) != 0)
			goto out;
		/* The other CQ may read the event off the channel: it must hand it over. */
		if (cqpoll_cq_wait(run[o].cq, 50) != 0) {
			hw_fail(r, "%s CQ woken by the %s CQ's completion",
				hw_driver_name(d[o]), hw_driver_name(d[k]));
			goto out;
		}
		if (cqpoll_cq_wait(run[k].cq, 1000) != 1) {
			hw_fail(r, "%s CQ not woken by its own completion on the shared channel",
				hw_driver_name(d[k]));
			goto out;
		}
		if (hw_run_collect(&run[k], c, 1, 1000) != 1) {
			hw_fail(r, "%s CQ: woken, no completion", hw_driver_name(d[k]));
			goto out;
		}
	}
	ok = 1;
out:
	for (i = 0; i < 2; i++)
		hw_run_close(&run[i]);
	/* Every event acknowledged: the channel goes without EBUSY or a hang. */
	if (t->ops->channel_close(t, ch) != 0 && ok) {
		hw_fail(r, "destroying the shared channel: %s", strerror(errno));
		return;
	}
	if (ok)
		hw_pass(r, "%s and %s CQs on one channel: each woken by its own completion only",
			hw_driver_name(d[0]), hw_driver_name(d[1]));
}

static void
report_missed(struct hw_target *t, struct hw_result *r)
{
	(void)t;
	hw_skip(r, "libibverbs has no report-missed arm: IB_CQ_REPORT_MISSED_EVENTS is a "
		"kernel verb (ib_req_notify_cq), ibv_req_notify_cq() takes solicited_only "
		"only; the sw CQ's report-missed mode covers the semantics");
}

const struct hw_check hw_check_arm_claim = {
	"arm-claim", "each driver's arm semantics on real CQs", arm_claim };
const struct hw_check hw_check_events = {
	"events", "armed CQs woken by completions; the transition returns pending ones", events };
const struct hw_check hw_check_shared_channel = {
	"shared-channel", "CQs of both drivers on one completion channel", shared_channel };
const struct hw_check hw_check_report_missed = {
	"report-missed", "report-missed arm, where the provider has one", report_missed };
