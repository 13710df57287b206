/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a run reports, derived from its parameters and measurements once, so
 * that the table, the JSON and the CSV cannot disagree. The field list is the
 * JSON's layout and the CSV's columns at the same time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_version.h>

#include "engine.h"
#include "floors.h"
#include "hist.h"
#include "params.h"
#include "report.h"
#include "run.h"
#include "testpmd_cq.h"

void
tpcq_latency_get(const struct tpcq_result *res, struct tpcq_latency *l)
{
	const struct tpcq_hist *h = res->latency;

	l->p50 = tpcq_hist_quantile(h, 0.50);
	l->p90 = tpcq_hist_quantile(h, 0.90);
	l->p99 = tpcq_hist_quantile(h, 0.99);
	l->p999 = tpcq_hist_quantile(h, 0.999);
	l->p9999 = tpcq_hist_quantile(h, 0.9999);
	l->min = h->count ? h->min : 0;
	l->max = h->max;
	l->samples = h->count;
}

/* A rate is only meaningful over a measured, non-zero time. */
double
tpcq_achieved_rate(const struct tpcq_run *run, const struct tpcq_result *res)
{
	return res->gen_s > 0.0 ? (double)run->posted / res->gen_s : 0.0;
}

/* Poll mode never goes to sleep, so no transition is in use. */
const char *
tpcq_transition_used(const struct tpcq_params *p)
{
	if (p->mode == TPCQ_MODE_POLL)
		return "none";
	return tpcq_transition_name(p->transition);
}

/* Where the latency samples come from. */
const char *
tpcq_latency_source(const struct tpcq_run *run)
{
	return run->post_ns != NULL ? "post-time" : "device-timestamp";
}

/* The arm the CQ follows, as its driver declared it: what the run used. */
const char *
tpcq_arm_used(const struct tpcq_params *p, const struct tpcq_result *res)
{
	return cqpoll_arm_semantics_name(res->info.driver != NULL ?
					 res->info.arm : p->arm);
}

/* Only the adaptive mode asks a policy when to sleep. */
const char *
tpcq_policy_used(const struct tpcq_params *p)
{
	return p->mode == TPCQ_MODE_ADAPTIVE ? p->policy : "none";
}

/* What the poller consumed per second of its run. */
double
tpcq_completions_per_s(const struct tpcq_result *res)
{
	return res->wall_s > 0.0 ? (double)res->completions / res->wall_s : 0.0;
}

/*
 * A single CQ's sleeps are its waits; a group sleeps on its own, its CQs
 * never wait, and counts how each sleep ended.
 */
double
tpcq_sleep_cpu_ns(const struct tpcq_result *res)
{
	return res->sleeps_timed != 0 ?
	       (double)res->sleep_cpu_ns / (double)res->sleeps_timed : 0.0;
}

double
tpcq_wakeups_per_s(const struct tpcq_result *res)
{
	const struct cqpoll_group_stats *g = &res->group;
	uint64_t n;

	n = res->grouped ? g->wakeups_event + g->wakeups_timeout +
		g->wakeups_xthread : res->stats.waits;
	return res->wall_s > 0.0 ? (double)n / res->wall_s : 0.0;
}

void
tpcq_pattern_used(const struct tpcq_params *p, char *buf, size_t len)
{
	if (p->engine->open_loop)
		tpcq_pattern_describe(p, buf, len);
	else
		snprintf(buf, len, "none");
}

double
tpcq_pct_of_wall(uint64_t ns, const struct tpcq_result *res)
{
	return res->wall_s > 0.0 ? 100.0 * (double)ns / (res->wall_s * 1e9) : 0.0;
}

/* The object the next fields belong to; NULL: the top level. */
struct builder {
	struct tpcq_fields *fs;
	const char *obj;
	bool null;                /* the object has no values in this run */
};

static void __attribute__((format(printf, 4, 5)))
add(struct builder *b, const char *key, bool quote, const char *fmt, ...)
{
	struct tpcq_field *f;
	va_list ap;

	/* A programming error, caught by every test run: never silently cut. */
	if (b->fs->n >= TPCQ_FIELDS_MAX) {
		fprintf(stderr, TPCQ_PROG ": internal error: more than %d "
			"report fields\n", TPCQ_FIELDS_MAX);
		abort();
	}
	f = &b->fs->f[b->fs->n++];
	f->obj = b->obj;
	f->key = key;
	f->quote = quote;
	f->null = b->null;
	f->val[0] = '\0';
	if (b->null)
		return;
	va_start(ap, fmt);
	vsnprintf(f->val, sizeof(f->val), fmt, ap);
	va_end(ap);
}

#define STR(b, key, v) add(b, key, true, "%s", v)
#define U64(b, key, v) add(b, key, false, "%" PRIu64, (uint64_t)(v))
#define U32(b, key, v) add(b, key, false, "%" PRIu32, (uint32_t)(v))
#define DBL(b, key, prec, v) add(b, key, false, "%." #prec "f", (double)(v))
#define BOOL(b, key, v) add(b, key, false, "%s", (v) ? "true" : "false")

static void
faults_fields(struct builder *b, const struct cqpoll_sw_faults *f)
{
	b->obj = "faults";
	U32(b, "arm_delay_ns", f->arm_delay_ns);
	U32(b, "arm_delay_pct", f->arm_delay_pct);
	U32(b, "visibility_delay_ns", f->visibility_delay_ns);
	U32(b, "visibility_delay_pct", f->visibility_delay_pct);
	U32(b, "event_delay_us", f->event_delay_us);
	U32(b, "spurious_event_pct", f->spurious_event_pct);
	U32(b, "duplicate_event_pct", f->duplicate_event_pct);
	U32(b, "report_missed_keeps_armed", f->report_missed_keeps_armed);
	U64(b, "seed", f->seed);
	b->obj = NULL;
}

static void
latency_fields(struct builder *b, const struct tpcq_result *res)
{
	struct tpcq_latency l;

	tpcq_latency_get(res, &l);
	b->obj = "latency_ns";
	U64(b, "p50", l.p50);
	U64(b, "p90", l.p90);
	U64(b, "p99", l.p99);
	U64(b, "p999", l.p999);
	U64(b, "p9999", l.p9999);
	U64(b, "max", l.max);
	U64(b, "min", l.min);
	U64(b, "samples", l.samples);
	b->obj = NULL;
}

/* Every key is present in every run, so CSV rows of any run line up. */
static void
group_fields(struct builder *b, const struct tpcq_result *res)
{
	const struct cqpoll_group_stats *g = &res->group;

	b->obj = "group";
	b->null = !res->grouped;
	U64(b, "iterations", g->iterations);
	U64(b, "polls", g->polls);
	U64(b, "empty_polls", g->empty_polls);
	U64(b, "completions", g->completions);
	U64(b, "transitions", g->transitions);
	U64(b, "sleeps", g->sleeps);
	U64(b, "wakeups_event", g->wakeups_event);
	U64(b, "wakeups_timeout", g->wakeups_timeout);
	U64(b, "wakeups_xthread", g->wakeups_xthread);
	U64(b, "lost_wakeups", g->lost_wakeups);
	U64(b, "timeout_recoveries", g->timeout_recoveries);
	U64(b, "busy_ns", g->busy_ns);
	U64(b, "asleep_ns", g->asleep_ns);
	DBL(b, "busy_pct", 3, tpcq_pct_of_wall(g->busy_ns, res));
	DBL(b, "asleep_pct", 3, tpcq_pct_of_wall(g->asleep_ns, res));
	U64(b, "mode_changes", g->mode_changes);
	b->obj = NULL;
	b->null = false;
}

/*
 * The floors the run was measured against (--floors), and its p50 and p99 as
 * multiples of the one that matches how the poller spent the run.
 */
static void
floor_fields(struct builder *b, const struct tpcq_params *p,
	     const struct tpcq_run *run, const struct tpcq_result *res)
{
	const struct tpcq_floors *f = p->floors_measured;
	const struct tpcq_floor_paced *fp;
	const struct tpcq_floor *m;
	struct tpcq_latency l;
	uint64_t paced;
	bool wakeup;

	b->obj = "floors";
	b->null = f == NULL || !f->valid;
	wakeup = !b->null && tpcq_floor_is_wakeup(p->mode == TPCQ_MODE_ADAPTIVE ?
		p->policy : tpcq_mode_name(p->mode), tpcq_wakeups_per_s(res),
		tpcq_achieved_rate(run, res));
	m = tpcq_floor_match(f, wakeup, p->rate, &paced);
	tpcq_latency_get(res, &l);
	U64(b, "handoff_p50_ns", b->null ? 0 : f->handoff.p50_ns);
	U64(b, "handoff_p99_ns", b->null ? 0 : f->handoff.p99_ns);
	U64(b, "wakeup_p50_ns", b->null ? 0 : f->wakeup.p50_ns);
	U64(b, "wakeup_p99_ns", b->null ? 0 : f->wakeup.p99_ns);
	/* The sleeper's CPU time per wake-up: the lab's wake_cpu_ns. */
	U64(b, "wake_cpu_ns", b->null ? 0 : f->wake_cpu_ns);
	/* A timer nap's overshoot: the lab's nap_ns, nap_p99_ns. */
	U64(b, "timer_p50_ns", b->null ? 0 : f->timer.p50_ns);
	U64(b, "timer_p99_ns", b->null ? 0 : f->timer.p99_ns);
	/* At the run's load, paced as its posts; 0: not measured. */
	fp = b->null || f->npaced == 0 ? NULL : &f->paced[0];
	U64(b, "handoff_paced_p50_ns", fp != NULL ? fp->handoff.p50_ns : 0);
	U64(b, "handoff_paced_p99_ns", fp != NULL ? fp->handoff.p99_ns : 0);
	U64(b, "wakeup_paced_p50_ns", fp != NULL ? fp->wakeup.p50_ns : 0);
	U64(b, "wakeup_paced_p99_ns", fp != NULL ? fp->wakeup.p99_ns : 0);
	/* The sleeper's CPU per wake-up at that load, cold from each gap. */
	U64(b, "wake_cpu_paced_ns", fp != NULL ? fp->wake_cpu_ns : 0);
	STR(b, "matching", tpcq_floor_name(wakeup, paced));
	DBL(b, "p50_x", 2, m != NULL && m->p50_ns ? (double)l.p50 / (double)m->p50_ns : 0.0);
	DBL(b, "p99_x", 2, m != NULL && m->p99_ns ? (double)l.p99 / (double)m->p99_ns : 0.0);
	b->obj = NULL;
	b->null = false;
}

void
tpcq_fields_get(const struct tpcq_params *p, const struct tpcq_run *run,
		const struct tpcq_result *res, struct tpcq_fields *fs)
{
	const struct cqpoll_cq_stats *s = &res->stats;
	struct builder b = { .fs = fs };
	char pattern[64];

	fs->n = 0;
	STR(&b, "dev", p->dev_name);
	BOOL(&b, "dev_default", p->dev_why != NULL);
	STR(&b, "driver", res->info.driver != NULL ? res->info.driver : "");
	STR(&b, "mode", tpcq_mode_name(p->mode));
	STR(&b, "policy", tpcq_policy_used(p));
	U32(&b, "cqs", p->cqs);
	U32(&b, "active_cqs", run->traffic_cqs);
	U32(&b, "pollers", p->pollers);
	add(&b, "dev_numa_node", false, "%d", res->dev_numa_node);
	U32(&b, "remote_pollers", res->remote_pollers);
	STR(&b, "transition", tpcq_transition_used(p));
	STR(&b, "harness", tpcq_harness_name(p->harness));
	U32(&b, "naive_delay_ns", p->naive_delay_ns);
	STR(&b, "arm", tpcq_arm_used(p, res));
	STR(&b, "latency_source", tpcq_latency_source(run));
	STR(&b, "engine", p->engine->name);
	/* Closed-loop engines have no offered rate: 0, their schedule "none". */
	U64(&b, "rate", p->engine->open_loop ? p->rate : 0);
	tpcq_pattern_used(p, pattern, sizeof(pattern));
	STR(&b, "pattern", pattern);
	U64(&b, "seed", p->faults.seed);
	DBL(&b, "duration_s", 6, p->duration_s);
	add(&b, "timeout_ms", false, "%d", p->timeout_ms);
	U32(&b, "burst", p->burst);
	U32(&b, "cq_size", res->info.size);
	faults_fields(&b, &p->faults);
	U64(&b, "posted", run->posted);
	U64(&b, "completions", res->completions);
	U64(&b, "overruns", run->overruns);
	U64(&b, "order_errors", res->order_errors);
	U64(&b, "missing", res->missing);
	U64(&b, "bad_completions", res->bad_completions);
	U64(&b, "no_timestamp", res->no_timestamp);
	U64(&b, "lost_wakeups", s->lost_wakeups);
	U64(&b, "timeout_recoveries", s->timeout_recoveries);
	U64(&b, "recoveries_late", res->recoveries_late);
	U64(&b, "recoveries_lost", res->recoveries_lost);
	DBL(&b, "cpu_pct", 3, res->cpu_pct);
	DBL(&b, "cpu_pct_process", 3, res->cpu_pct_process);
	DBL(&b, "harness_cpu_pct", 3, res->harness_cpu_pct);
	U64(&b, "harness_sleeps", run->gen_clock.sleeps);
	DBL(&b, "wakeups_per_s", 1, tpcq_wakeups_per_s(res));
	DBL(&b, "sleep_cpu_ns", 0, tpcq_sleep_cpu_ns(res));
	U64(&b, "sleeps_timed", res->sleeps_timed);
	latency_fields(&b, res);
	U64(&b, "arms", s->arms);
	U64(&b, "missed_reports", s->missed_reports);
	U64(&b, "events", s->events);
	U64(&b, "spurious_events", s->spurious_events);
	U64(&b, "event_acks", s->event_acks);
	U64(&b, "waits", s->waits);
	U64(&b, "wait_timeouts", s->wait_timeouts);
	U64(&b, "polls", s->polls);
	U64(&b, "empty_polls", s->empty_polls);
	group_fields(&b, res);
	floor_fields(&b, p, run, res);
	DBL(&b, "achieved_rate", 1, tpcq_achieved_rate(run, res));
	DBL(&b, "completions_per_s", 1, tpcq_completions_per_s(res));
	b.null = p->engine != &tpcq_engine_pingpong;
	DBL(&b, "round_trips_per_s", 1, tpcq_achieved_rate(run, res));
	b.null = false;
	DBL(&b, "generator_s", 6, res->gen_s);
	DBL(&b, "poller_s", 6, res->wall_s);
	STR(&b, "cqpoll_version", cqpoll_version());
	STR(&b, "dpdk_version", rte_version());
}

int
tpcq_report_close(FILE *out, const char *path)
{
	int err = 0;

	if (ferror(out))
		err = EIO;
	if (fclose(out) != 0 && err == 0)
		err = errno;
	if (err != 0) {
		fprintf(stderr, TPCQ_PROG ": cannot write %s: %s\n", path,
			strerror(err));
		return -err;
	}
	return 0;
}
