/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The life of one run, shared by the command line run (main.c) and the
 * prompt (-i): prepare, then (once the poller and the generator returned)
 * collect, report and release.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "interrupt.h"
#include "dev.h"
#include "hist.h"
#include "interrupt.h"
#include "params.h"
#include "report.h"
#include "run.h"
#include "testpmd_cq.h"

/*
 * Lost wake-ups are a measurement, not a failure: the negative control is
 * expected to show them. A run fails when the library or the device failed, or
 * when a completion was lost, duplicated, reordered or malformed.
 */
static int
verdict(const struct tpcq_params *p, const struct tpcq_run *tr,
	const struct tpcq_result *res)
{
	int ret = 0;

	if (res->error != 0) {
		fprintf(stderr, TPCQ_PROG ": %s failed: %s\n", res->error_call,
			strerror(-res->error));
		ret = -1;
	}
	if (tr->gen_error != 0) {
		fprintf(stderr, TPCQ_PROG ": posting to the %s device failed: %s\n",
			p->dev_name, strerror(-tr->gen_error));
		ret = -1;
	}
	if (res->order_errors != 0 || res->missing != 0 ||
	    res->bad_completions != 0 || res->no_timestamp != 0) {
		fprintf(stderr, TPCQ_PROG ": delivery check FAILED: %" PRIu64
			" out of order or duplicated, %" PRIu64 " missing, %" PRIu64
			" malformed, %" PRIu64 " without timestamp\n",
			res->order_errors, res->missing, res->bad_completions,
			res->no_timestamp);
		ret = -1;
	}
	/* Interactive runs (-i) and closed-loop engines have no total. */
	if (tpcq_interrupted()) {
		fprintf(stderr, TPCQ_PROG ": interrupted after %" PRIu64
			" completions\n", tr->posted);
		ret = -1;
	}
	return ret;
}

/* Slots of the post-time ring: twice what the device may hold unread. */
static uint64_t
post_ns_slots(const struct tpcq_devctx *dc, uint64_t total)
{
	uint64_t n = 1;

	/*
	 * Twice, because a post that finds no room records its time before it
	 * knows, in the slot of a post up to max_outstanding older. Bounded,
	 * for the endless total of an interactive run: calloc() then refuses.
	 */
	while (n < (dc->max_outstanding != 0 ? 2ULL * dc->max_outstanding : total) &&
	       n < (UINT64_C(1) << 62))
		n <<= 1;
	return n;
}

/* Set up a run of total completions, or print why not and return -1. */
int
tpcq_run_prepare(struct tpcq_run *tr, struct tpcq_result *res,
		 const struct tpcq_params *p, struct tpcq_devctx *dcs,
		 uint64_t total)
{
	struct tpcq_devctx *dc = &dcs[0];
	unsigned int i;

	memset(tr, 0, sizeof(*tr));
	memset(res, 0, sizeof(*res));
	tr->params = p;
	tr->dc = dc;
	tr->cq = dc->cq;
	tr->dcs = dcs;
	tr->ncqs = p->cqs;
	tr->traffic_cqs = p->active_cqs != 0 ? p->active_cqs : p->cqs;
	tr->npollers = p->pollers;
	/* The generator's lcore, the first worker; pollers take the others. */
	tr->gen_lcore = rte_get_next_lcore(-1, 1, 0);
	tr->total = total;
	for (i = 0; i < p->cqs; i++)
		dcs[i].consumed = &tr->consumed;

	res->latency = tpcq_hist_create();
	if (p->record_path != NULL) {
		tr->record = calloc(total, sizeof(*tr->record));
		if (tr->record == NULL) {
			fprintf(stderr, TPCQ_PROG ": --record: out of memory for "
				"%" PRIu64 " timestamps\n", total);
			tpcq_run_release(tr, res);
			return -1;
		}
	}
	if (!dc->monotonic_ts) {
		tr->post_ns_mask = post_ns_slots(dc, tr->total) - 1;
		tr->post_ns = calloc(tr->post_ns_mask + 1, sizeof(*tr->post_ns));
		tr->post_end_ns = calloc(tr->post_ns_mask + 1, sizeof(*tr->post_end_ns));
	}
	if (res->latency == NULL || (!dc->monotonic_ts &&
				     (tr->post_ns == NULL || tr->post_end_ns == NULL))) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		tpcq_run_release(tr, res);
		return -1;
	}
	cqpoll_cq_info_get(tr->cq, &res->info);
	res->dev_numa_node = tpcq_dev_numa_node(p);
	res->remote_pollers = tpcq_numa_check(p, tr, res->dev_numa_node);
	return 0;
}

/* After the poller and the generator returned: what they left to gather. */
void
tpcq_run_collect(struct tpcq_run *tr, struct tpcq_result *res)
{
	res->gen_s = (double)tr->gen_tsc / (double)rte_get_tsc_hz();
	if (res->wall_s > 0.0)
		res->harness_cpu_pct = 100.0 * (double)tr->gen_cpu_ns /
			(res->wall_s * 1e9);
	/* The group sums its CQs' counters and adds its own. */
	if (!res->grouped)
		cqpoll_cq_stats_get(tr->cq, &res->stats);
	res->stats.waits += res->peer.waits;
	res->stats.wait_timeouts += res->peer.wait_timeouts;
	res->stats.events += res->peer.events;
	res->stats.arms += res->peer.arms;
	res->stats.lost_wakeups += res->peer.lost_wakeups;
}

/* --record: the posts made, one CLOCK_MONOTONIC ns a line. */
static int
record_write(const char *path, const struct tpcq_params *p,
	     const struct tpcq_run *tr)
{
	uint64_t i, n = tr->posted < tr->total ? tr->posted : tr->total;
	FILE *out;

	out = tpcq_outfile_open("record", path, false);
	if (out == NULL)
		return -EIO;
	/*
	 * Whether the device's completions carry host timestamps: only those
	 * tell the group a wake-up's latency, and the lab its policies.
	 */
	fprintf(out, "# testpmd-cq --record: post times, CLOCK_MONOTONIC ns; "
		"device %s, host timestamps: %s\n", p->dev->name,
		tr->dc->monotonic_ts ? "yes" : "no");
	for (i = 0; i < n; i++)
		fprintf(out, "%" PRIu64 "\n", tr->record[i]);
	return tpcq_report_close(out, path);
}

/* The table, the JSON and CSV files if asked, and the verdict: an exit status. */
int
tpcq_run_report(const struct tpcq_params *p, const struct tpcq_run *tr,
		const struct tpcq_result *res)
{
	int ret = TPCQ_EXIT_OK;

	tpcq_report_table(p, tr, res);
	if (p->json_path != NULL &&
	    tpcq_report_json(p->json_path, p, tr, res) != 0)
		ret = TPCQ_EXIT_FAIL;
	if (p->csv_path != NULL &&
	    tpcq_report_csv(p->csv_path, p, tr, res) != 0)
		ret = TPCQ_EXIT_FAIL;
	if (tr->record != NULL && record_write(p->record_path, p, tr) != 0)
		ret = TPCQ_EXIT_FAIL;

	if (verdict(p, tr, res) != 0)
		ret = TPCQ_EXIT_FAIL;
	return ret;
}

void
tpcq_run_release(struct tpcq_run *tr, struct tpcq_result *res)
{
	tpcq_hist_free(res->latency);
	res->latency = NULL;
	free(tr->post_ns);
	tr->post_ns = NULL;
	free(tr->post_end_ns);
	tr->post_end_ns = NULL;
	free(tr->record);
	tr->record = NULL;
}

