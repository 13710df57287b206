/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poller on a poll group: every CQ of the run in one cqpoll group, in
 * busy, interrupt or adaptive mode, each CQ's completions checked by its own
 * callback against its own sequence. After the generator is done the group
 * turns busy and drains, so every posted completion is accounted for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_pause.h>

#include <cqpoll_dpdk.h>

#include "testpmd_cq.h"

/* How long the drain may take beyond any injected visibility delay. */
#define GROUP_DRAIN_LIMIT_NS TPCQ_NS_PER_S
/* Name of the group in DPDK telemetry (--telemetry). */
#define GROUP_TELEMETRY_NAME "testpmd-cq"

struct group_poller {
	struct tpcq_run *run;
	struct tpcq_result *res;
	struct cqpoll_group *g;
	struct tpcq_check *checks;  /* one per CQ, the callback's argument */
};

/* Callback arguments: the check of one CQ and the run it belongs to. */
struct group_cq {
	struct group_poller *gp;
	struct tpcq_check check;
};

static void
on_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	       unsigned int n, void *arg)
{
	struct group_cq *gc = arg;
	struct tpcq_run *run = gc->gp->run;

	(void)cq;
	tpcq_check_burst(run, gc->gp->res, &gc->check, c, n);
	/* Release: a device bounded by what is unread may reuse these slots. */
	__atomic_store_n(&run->consumed, gc->gp->res->completions,
			 __ATOMIC_RELEASE);
}

static int
fail(struct tpcq_result *res, const char *call, int err)
{
	res->error = err;
	res->error_call = call;
	return err;
}

enum cqpoll_group_mode
tpcq_group_mode(enum tpcq_mode mode)
{
	if (mode == TPCQ_MODE_POLL)
		return CQPOLL_GROUP_MODE_BUSY;
	if (mode == TPCQ_MODE_INTERRUPT)
		return CQPOLL_GROUP_MODE_INTERRUPT;
	return CQPOLL_GROUP_MODE_ADAPTIVE;
}

static struct cqpoll_group *
group_create(const struct tpcq_params *p)
{
	struct cqpoll_group_conf conf = {
		.mode = tpcq_group_mode(p->mode),
		.policy = p->policy_ops,
		.policy_args = p->policy_args,
		.wait_timeout_ms = (uint32_t)p->timeout_ms,
		.burst = p->burst,
	};

	return cqpoll_group_create(&conf);
}

/* CQ k receives the schedule's completions k, k + n, k + 2n, ... */
static uint64_t
posted_to(uint64_t posted, unsigned int k, unsigned int n)
{
	return posted > k ? (posted - k + n - 1) / n : 0;
}

static bool
all_received(const struct group_cq *gcs, unsigned int n, uint64_t posted)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		if (gcs[k].check.received < posted_to(posted, k, n))
			return false;
	return true;
}

/* Read what the generator posted, then make sure nothing more comes. */
static int
drain(struct group_poller *gp, const struct group_cq *gcs)
{
	const struct tpcq_params *p = gp->run->params;
	unsigned int k, n = gp->run->ncqs;
	uint64_t posted, limit, want;
	int r;

	/* Busy: nothing is left to sleep for, only entries to read. */
	r = cqpoll_group_set_mode(gp->g, CQPOLL_GROUP_MODE_BUSY);
	if (r < 0)
		return fail(gp->res, "cqpoll_group_set_mode", r);
	posted = __atomic_load_n(&gp->run->posted, __ATOMIC_ACQUIRE);
	limit = tpcq_now_ns(CLOCK_MONOTONIC) + GROUP_DRAIN_LIMIT_NS +
		p->faults.visibility_delay_ns;
	while (!all_received(gcs, n, posted)) {
		r = cqpoll_group_run_once(gp->g);
		if (r < 0)
			return fail(gp->res, "cqpoll_group_run_once", r);
		if (r == 0 && tpcq_now_ns(CLOCK_MONOTONIC) > limit)
			break;
	}
	/* Anything still there was delivered twice or never posted. */
	while ((r = cqpoll_group_run_once(gp->g)) > 0)
		;
	if (r < 0)
		return fail(gp->res, "cqpoll_group_run_once", r);
	/* Per CQ: a duplicate on one must not hide a loss on another. */
	for (k = 0; k < n; k++) {
		want = posted_to(posted, k, n);
		if (gcs[k].check.received < want)
			gp->res->missing += want - gcs[k].check.received;
	}
	return 0;
}

static int
run_group(struct group_poller *gp, struct group_cq *gcs)
{
	struct tpcq_run *run = gp->run;
	unsigned int k;
	int r;

	for (k = 0; k < run->ncqs; k++) {
		gcs[k].gp = gp;
		gcs[k].check.wr_id_mask = run->dcs[k].wr_id_mask;
		gcs[k].check.index = k;
		r = cqpoll_group_add(gp->g, run->dcs[k].cq, on_completions,
				     &gcs[k]);
		if (r < 0)
			return fail(gp->res, "cqpoll_group_add", r);
	}
	/*
	 * Sequentially consistent with the generator's gen_done store and group
	 * load: either it sees the group and wakes it, or this loop sees it done.
	 */
	__atomic_store_n(&run->group, gp->g, __ATOMIC_SEQ_CST);
	__atomic_store_n(&run->start, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&run->gen_done, __ATOMIC_SEQ_CST)) {
		r = cqpoll_group_run_once(gp->g);
		/* A signal only means "iterate again"; the generator stops. */
		if (r < 0 && r != -EINTR)
			return fail(gp->res, "cqpoll_group_run_once", r);
	}
	return drain(gp, gcs);
}

/* Per-CQ counters summed: the group's CQs are one device's, alike. */
void
tpcq_cq_stats_sum(const struct tpcq_run *run, struct cqpoll_cq_stats *sum)
{
	struct cqpoll_cq_stats s;
	unsigned int k;

	memset(sum, 0, sizeof(*sum));
	for (k = 0; k < run->ncqs; k++) {
		if (cqpoll_cq_stats_get(run->dcs[k].cq, &s) != 0)
			continue;
		sum->polls += s.polls;
		sum->empty_polls += s.empty_polls;
		sum->completions += s.completions;
		sum->arms += s.arms;
		sum->missed_reports += s.missed_reports;
		sum->events += s.events;
		sum->spurious_events += s.spurious_events;
		sum->event_acks += s.event_acks;
		sum->waits += s.waits;
		sum->wait_timeouts += s.wait_timeouts;
		sum->lost_wakeups += s.lost_wakeups;
	}
}

void
tpcq_poller_group_run(struct tpcq_run *run, struct tpcq_result *res)
{
	struct group_poller gp = { .run = run, .res = res };
	uint64_t wall0, wall1, cpu0, cpu1;
	struct group_cq *gcs;
	int r;

	res->grouped = true;
	gcs = calloc(run->ncqs, sizeof(*gcs));
	gp.g = group_create(run->params);
	if (gcs == NULL || gp.g == NULL) {
		fail(res, gcs == NULL ? "calloc" : "cqpoll_group_create",
		     gcs == NULL ? -ENOMEM : -errno);
		__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
		cqpoll_group_destroy(gp.g);
		free(gcs);
		return;
	}

	if (run->params->telemetry) {
		r = cqpoll_dpdk_telemetry_register_group(GROUP_TELEMETRY_NAME, gp.g);
		if (r < 0) {
			fail(res, "cqpoll_dpdk_telemetry_register_group", r);
			__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
			cqpoll_group_destroy(gp.g);
			free(gcs);
			return;
		}
	}

	wall0 = tpcq_now_ns(CLOCK_MONOTONIC);
	cpu0 = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID);
	r = run_group(&gp, gcs);
	if (r < 0)
		__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
	cpu1 = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID);
	wall1 = tpcq_now_ns(CLOCK_MONOTONIC);

	res->wall_s = (double)(wall1 - wall0) / (double)TPCQ_NS_PER_S;
	if (wall1 > wall0)
		res->cpu_pct = 100.0 * (double)(cpu1 - cpu0) /
			(double)(wall1 - wall0);
	cqpoll_group_stats_get(gp.g, &res->group);
	tpcq_cq_stats_sum(run, &res->stats);
	/* The group's sleeps are not the CQs' own: count both kinds of loss. */
	res->stats.lost_wakeups += res->group.lost_wakeups;

	/* The generator may still be waking the group: wait until it left. */
	while (!__atomic_load_n(&run->gen_left, __ATOMIC_ACQUIRE))
		rte_pause();
	if (run->group_lock != NULL)
		pthread_mutex_lock(run->group_lock);
	__atomic_store_n(&run->group, NULL, __ATOMIC_SEQ_CST);
	if (run->group_lock != NULL)
		pthread_mutex_unlock(run->group_lock);
	if (run->params->telemetry)
		cqpoll_dpdk_telemetry_unregister_group(GROUP_TELEMETRY_NAME);
	cqpoll_group_destroy(gp.g);
	free(gcs);
}
