/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pollers on poll groups: with --pollers=N, poller k runs a cqpoll group
 * of CQs k, k + N, k + 2N, ... on its own lcore (poller 0 on the main one),
 * in busy, interrupt or adaptive mode, each CQ's completions checked by its
 * own callback against its own sequence. After the generator is done each
 * group turns busy and drains, so every posted completion is accounted for;
 * then the pollers' results are summed into one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include <cqpoll_dpdk.h>

#include "hist.h"
#include "params.h"
#include "poller.h"
#include "run.h"
#include "testpmd_cq.h"

/* How long the drain may take beyond any injected visibility delay. */
#define GROUP_DRAIN_LIMIT_NS TPCQ_NS_PER_S
/* Name of the group in DPDK telemetry (--telemetry). */
#define GROUP_TELEMETRY_NAME "testpmd-cq"

struct group_poller {
	struct tpcq_run *run;
	struct tpcq_result *res;
	struct cqpoll_group *g;
	unsigned int index;         /* poller k: CQs k, k + npollers, ... */
	unsigned int ncqs;          /* CQs of this poller */
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
	/*
	 * Release: a device bounded by what is unread may reuse these slots.
	 * An add, not a store: other pollers consume too.
	 */
	__atomic_fetch_add(&run->consumed, n, __ATOMIC_RELEASE);
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
	return posted > k && k < n ? (posted - k + n - 1) / n : 0;
}

static bool
all_received(const struct group_poller *gp, const struct group_cq *gcs,
	     uint64_t posted)
{
	unsigned int i;

	for (i = 0; i < gp->ncqs; i++)
		if (gcs[i].check.received < posted_to(posted, gcs[i].check.index,
						      gp->run->traffic_cqs))
			return false;
	return true;
}

/* Read what the generator posted, then make sure nothing more comes. */
static int
drain(struct group_poller *gp, const struct group_cq *gcs)
{
	const struct tpcq_params *p = gp->run->params;
	unsigned int i, n = gp->run->traffic_cqs;
	uint64_t posted, limit, want;
	int r;

	/* Busy: nothing is left to sleep for, only entries to read. */
	r = cqpoll_group_set_mode(gp->g, CQPOLL_GROUP_MODE_BUSY);
	if (r < 0)
		return fail(gp->res, "cqpoll_group_set_mode", r);
	posted = __atomic_load_n(&gp->run->posted, __ATOMIC_ACQUIRE);
	limit = tpcq_now_ns(CLOCK_MONOTONIC) + GROUP_DRAIN_LIMIT_NS +
		p->faults.visibility_delay_ns;
	while (!all_received(gp, gcs, posted)) {
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
	for (i = 0; i < gp->ncqs; i++) {
		want = posted_to(posted, gcs[i].check.index, n);
		if (gcs[i].check.received < want)
			gp->res->missing += want - gcs[i].check.received;
	}
	return 0;
}

/* A member failed (its device's event, e.g. FI_SHUTDOWN): the run fails. */
static void
on_member_failed(struct cqpoll_group *g, struct cqpoll_cq *cq,
		 const struct cqpoll_cq_failure *f, void *arg)
{
	struct group_poller *gp = arg;

	(void)g;
	(void)cq;
	fail(gp->res, "the group's CQ", f->error);
}

static int
run_group_watched(struct group_poller *gp, struct group_cq *gcs)
{
	struct tpcq_run *run = gp->run;
	unsigned int i, k;
	int r;

	for (i = 0, k = gp->index; i < gp->ncqs; i++, k += run->npollers) {
		r = cqpoll_group_add(gp->g, run->dcs[k].cq, on_completions,
				     &gcs[i]);
		if (r < 0)
			return fail(gp->res, "cqpoll_group_add", r);
	}
	r = cqpoll_group_failure_cb_register(gp->g, on_member_failed, gp);
	if (r < 0)
		return fail(gp->res, "cqpoll_group_failure_cb_register", r);
	/*
	 * Sequentially consistent with the generator's gen_done store and group
	 * load: either it sees the group and wakes it, or this loop sees it done.
	 */
	__atomic_store_n(&run->groups[gp->index], gp->g, __ATOMIC_SEQ_CST);
	/* The last poller ready starts the generator. */
	if (__atomic_add_fetch(&run->ready, 1, __ATOMIC_ACQ_REL) == run->npollers)
		__atomic_store_n(&run->start, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&run->gen_done, __ATOMIC_SEQ_CST)) {
		r = cqpoll_group_run_once(gp->g);
		/* A signal only means "iterate again"; the generator stops. */
		if (r < 0 && r != -EINTR)
			return fail(gp->res, "cqpoll_group_run_once", r);
		if (gp->res->error != 0)
			return gp->res->error;
	}
	return drain(gp, gcs);
}

/* The group's run with its recoveries judged late or lost (recovery.c). */
static int
run_group(struct group_poller *gp, struct group_cq *gcs)
{
	struct tpcq_run *run = gp->run;
	struct tpcq_check **cks;
	struct cqpoll_cq **cqs;
	unsigned int i, k;
	int r;

	cqs = calloc(gp->ncqs, sizeof(*cqs));
	cks = calloc(gp->ncqs, sizeof(*cks));
	if (cqs == NULL || cks == NULL) {
		free(cqs);
		free(cks);
		return fail(gp->res, "calloc", -ENOMEM);
	}
	for (i = 0, k = gp->index; i < gp->ncqs; i++, k += run->npollers) {
		gcs[i].gp = gp;
		tpcq_check_init(&gcs[i].check, run, gp->res, k);
		cqs[i] = run->dcs[k].cq;
		cks[i] = &gcs[i].check;
	}
	tpcq_recovery_watch(run, gp->res, cqs, cks, gp->ncqs);
	r = run_group_watched(gp, gcs);
	tpcq_recovery_unwatch();
	free(cqs);
	free(cks);
	return r;
}

/* Per-CQ counters summed: the group's CQs are one device's, alike. */
static void
stats_sum_range(const struct tpcq_run *run, unsigned int first,
		unsigned int step, struct cqpoll_cq_stats *sum)
{
	struct cqpoll_cq_stats s;
	unsigned int k;

	memset(sum, 0, sizeof(*sum));
	for (k = first; k < run->ncqs; k += step) {
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
		sum->timeout_recoveries += s.timeout_recoveries;
	}
}

/* Every CQ of the run, whichever poller has it (the prompt's show stats). */
void
tpcq_cq_stats_sum(const struct tpcq_run *run, struct cqpoll_cq_stats *sum)
{
	stats_sum_range(run, 0, 1, sum);
}

/* The CQs of one poller. */
static void
stats_sum(const struct group_poller *gp, struct cqpoll_cq_stats *sum)
{
	stats_sum_range(gp->run, gp->index, gp->run->npollers, sum);
}

/* Poller 0's group keeps the name it had before there were several. */
static void
telemetry_name(unsigned int index, char *buf, size_t len)
{
	if (index == 0)
		snprintf(buf, len, GROUP_TELEMETRY_NAME);
	else
		snprintf(buf, len, GROUP_TELEMETRY_NAME "-%u", index);
}

/* One poller, on its lcore: its group from creation to destruction. */
static int
poller_main(void *arg)
{
	struct group_poller *gp = arg;
	struct tpcq_run *run = gp->run;
	struct tpcq_result *res = gp->res;
	char name[CQPOLL_DPDK_NAME_MAX];
	struct tpcq_clocks c0;
	struct group_cq *gcs;
	int r;

	res->grouped = true;
	telemetry_name(gp->index, name, sizeof(name));
	gcs = calloc(gp->ncqs, sizeof(*gcs));
	gp->g = group_create(run->params);
	if (gcs == NULL || gp->g == NULL) {
		fail(res, gcs == NULL ? "calloc" : "cqpoll_group_create",
		     gcs == NULL ? -ENOMEM : -errno);
		__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
		cqpoll_group_destroy(gp->g);
		free(gcs);
		return res->error;
	}

	if (run->params->telemetry) {
		r = cqpoll_dpdk_telemetry_register_group(name, gp->g);
		if (r < 0) {
			fail(res, "cqpoll_dpdk_telemetry_register_group", r);
			__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
			cqpoll_group_destroy(gp->g);
			free(gcs);
			return r;
		}
	}

	tpcq_clocks_read(&c0, true);
	r = run_group(gp, gcs);
	if (r < 0)
		__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
	tpcq_poller_clocks(res, &c0);
	cqpoll_group_stats_get(gp->g, &res->group);
	cqpoll_group_sleep_cpu_get(gp->g, &res->sleep_cpu_ns, &res->sleeps_timed);
	stats_sum(gp, &res->stats);
	/* The group's sleeps are not the CQs' own: count both kinds of loss. */
	res->stats.lost_wakeups += res->group.lost_wakeups;

	/* The generator may still be waking the group: wait until it left. */
	while (!__atomic_load_n(&run->gen_left, __ATOMIC_ACQUIRE))
		rte_pause();
	if (run->group_lock != NULL)
		pthread_mutex_lock(run->group_lock);
	__atomic_store_n(&run->groups[gp->index], NULL, __ATOMIC_SEQ_CST);
	if (run->group_lock != NULL)
		pthread_mutex_unlock(run->group_lock);
	if (run->params->telemetry)
		cqpoll_dpdk_telemetry_unregister_group(name);
	cqpoll_group_destroy(gp->g);
	free(gcs);
	return res->error;
}

void
tpcq_group_stats_add(struct cqpoll_group_stats *d, const struct cqpoll_group_stats *s)
{
	d->iterations += s->iterations;
	d->polls += s->polls;
	d->empty_polls += s->empty_polls;
	d->completions += s->completions;
	d->transitions += s->transitions;
	d->sleeps += s->sleeps;
	d->wakeups_event += s->wakeups_event;
	d->wakeups_timeout += s->wakeups_timeout;
	d->wakeups_xthread += s->wakeups_xthread;
	d->lost_wakeups += s->lost_wakeups;
	d->timeout_recoveries += s->timeout_recoveries;
	d->busy_ns += s->busy_ns;
	d->asleep_ns += s->asleep_ns;
	d->mode_changes += s->mode_changes;
}

static void
cq_stats_add(struct cqpoll_cq_stats *d, const struct cqpoll_cq_stats *s)
{
	d->polls += s->polls;
	d->empty_polls += s->empty_polls;
	d->completions += s->completions;
	d->arms += s->arms;
	d->missed_reports += s->missed_reports;
	d->events += s->events;
	d->spurious_events += s->spurious_events;
	d->event_acks += s->event_acks;
	d->waits += s->waits;
	d->wait_timeouts += s->wait_timeouts;
	d->lost_wakeups += s->lost_wakeups;
	d->timeout_recoveries += s->timeout_recoveries;
}

/*
 * Another poller's result into poller 0's: counts and CPU add up (cpu_pct is
 * then in percent of one CPU, as top shows it); the run lasted as long as the
 * slowest poller; the process CPU is poller 0's reading, already process-wide.
 */
void
tpcq_poller_result_add(struct tpcq_result *d, const struct tpcq_result *s)
{
	double d_wall = d->wall_s;

	d->completions += s->completions;
	d->order_errors += s->order_errors;
	d->bad_completions += s->bad_completions;
	d->no_timestamp += s->no_timestamp;
	d->recoveries_late += s->recoveries_late;
	d->recoveries_lost += s->recoveries_lost;
	d->missing += s->missing;
	tpcq_hist_merge(d->latency, s->latency);
	d->cpu_pct = (d->cpu_pct * d_wall + s->cpu_pct * s->wall_s) /
		(d_wall > s->wall_s ? d_wall : s->wall_s);
	if (s->wall_s > d_wall) {
		d->cpu_pct_process *= d_wall / s->wall_s;
		d->wall_s = s->wall_s;
	}
	if (d->error == 0 && s->error != 0) {
		d->error = s->error;
		d->error_call = s->error_call;
	}
	cq_stats_add(&d->stats, &s->stats);
	tpcq_group_stats_add(&d->group, &s->group);
	d->sleeps_timed += s->sleeps_timed;
	d->sleep_cpu_ns += s->sleep_cpu_ns;
}

/* The next lcore after prev that is neither the main one nor the generator's. */
unsigned int
tpcq_poller_next_lcore(const struct tpcq_run *run, unsigned int prev)
{
	unsigned int lc = prev;

	do
		lc = rte_get_next_lcore(lc, 1, 0);
	while (lc == run->gen_lcore);
	return lc;
}

void
tpcq_poller_group_run(struct tpcq_run *run, struct tpcq_result *res)
{
	unsigned int n = run->npollers, k, lc = (unsigned int)-1;
	struct tpcq_result *others = NULL;
	struct group_poller *gps;
	unsigned int launched = 0;
	int r;

	gps = calloc(n, sizeof(*gps));
	if (n > 1)
		others = calloc(n - 1, sizeof(*others));
	if (gps == NULL || (n > 1 && others == NULL)) {
		fail(res, "calloc", -ENOMEM);
		__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
		free(others);
		free(gps);
		return;
	}
	for (k = 0; k < n; k++) {
		gps[k].run = run;
		gps[k].res = k == 0 ? res : &others[k - 1];
		gps[k].index = k;
		/* CQs k, k + n, ...: --pollers <= --cqs gives each at least one. */
		gps[k].ncqs = (run->ncqs - k + n - 1) / n;
	}
	/* Pollers 1..n-1 on their lcores; run_cqs() checked there are enough. */
	for (k = 1; k < n; k++) {
		others[k - 1].latency = tpcq_hist_create();
		lc = tpcq_poller_next_lcore(run, lc);
		r = others[k - 1].latency == NULL ? -ENOMEM :
			rte_eal_remote_launch(poller_main, &gps[k], lc);
		if (r != 0) {
			fail(res, "rte_eal_remote_launch", r);
			__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
			break;
		}
		launched++;
	}
	/* Otherwise stop is set: the generator leaves without starting. */
	if (launched == n - 1)
		poller_main(&gps[0]);
	lc = (unsigned int)-1;
	for (k = 1; k <= launched; k++) {
		lc = tpcq_poller_next_lcore(run, lc);
		rte_eal_wait_lcore(lc);
		tpcq_poller_result_add(res, &others[k - 1]);
	}
	for (k = 1; k < n; k++)
		tpcq_hist_free(others[k - 1].latency);
	free(others);
	free(gps);
}
