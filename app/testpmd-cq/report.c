/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Results as a key/value table on stdout and, on request, as JSON. Both use
 * the same key names, so a figure read on the terminal is found in the file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_version.h>

#include "testpmd_cq.h"

#define RULE "-------------------------------------------------------------------------------"

struct latency {
	uint64_t p50, p90, p99, p999, p9999, min, max;
};

static void
latency_get(const struct tpcq_result *res, struct latency *l)
{
	const struct tpcq_hist *h = res->latency;

	l->p50 = tpcq_hist_quantile(h, 0.50);
	l->p90 = tpcq_hist_quantile(h, 0.90);
	l->p99 = tpcq_hist_quantile(h, 0.99);
	l->p999 = tpcq_hist_quantile(h, 0.999);
	l->p9999 = tpcq_hist_quantile(h, 0.9999);
	l->min = h->count ? h->min : 0;
	l->max = h->max;
}

/* A rate is only meaningful over a measured, non-zero time. */
static double
achieved_rate(const struct tpcq_run *run, const struct tpcq_result *res)
{
	return res->gen_s > 0.0 ? (double)run->posted / res->gen_s : 0.0;
}

/* Poll mode never goes to sleep, so no transition is in use. */
static const char *
transition_name(const struct tpcq_params *p)
{
	if (p->mode == TPCQ_MODE_POLL)
		return "none";
	return tpcq_transition_name(p->transition);
}

/* Where the latency samples come from. */
static const char *
latency_source(const struct tpcq_run *run)
{
	return run->post_ns != NULL ? "post-time" : "device-timestamp";
}

/* The arm the CQ follows, as its driver declared it: what the run used. */
static const char *
arm_name(const struct tpcq_params *p, const struct tpcq_result *res)
{
	return cqpoll_arm_semantics_name(res->info.driver != NULL ?
					 res->info.arm : p->arm);
}

static void
faults_describe(const struct cqpoll_sw_faults *f, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
#define FAULT(cond, ...) do { \
		if ((cond) && n < len) \
			n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__); \
	} while (0)
	FAULT(f->arm_delay_ns, "arm-delay=%" PRIu32 "ns@%" PRIu32 "%% ",
	      f->arm_delay_ns, f->arm_delay_pct);
	FAULT(f->visibility_delay_ns, "visibility-delay=%" PRIu32 "ns@%" PRIu32 "%% ",
	      f->visibility_delay_ns, f->visibility_delay_pct);
	FAULT(f->event_delay_us, "event-delay=%" PRIu32 "us ", f->event_delay_us);
	FAULT(f->spurious_event_pct, "spurious=%" PRIu32 "%% ",
	      f->spurious_event_pct);
	FAULT(f->duplicate_event_pct, "duplicate=%" PRIu32 "%% ",
	      f->duplicate_event_pct);
	FAULT(f->report_missed_keeps_armed, "missed-keeps-armed ");
#undef FAULT
	if (n == 0)
		snprintf(buf, len, "none");
	else if (n < len)
		buf[n - 1] = '\0';
}

/* Only the adaptive mode asks a policy when to sleep. */
static const char *
policy_name(const struct tpcq_params *p)
{
	return p->mode == TPCQ_MODE_ADAPTIVE ? p->policy : "none";
}

static double
pct_of_wall(uint64_t ns, const struct tpcq_result *res)
{
	return res->wall_s > 0.0 ? 100.0 * (double)ns / (res->wall_s * 1e9) : 0.0;
}

static void
group_table(const struct tpcq_result *res)
{
	const struct cqpoll_group_stats *g = &res->group;

	if (!res->grouped)
		return;
	printf(RULE "\n");
#define ROW(key, fmt, ...) printf(" %-20s: " fmt "\n", key, __VA_ARGS__)
	ROW("group_iterations", "%" PRIu64, g->iterations);
	ROW("group_transitions", "%" PRIu64, g->transitions);
	ROW("group_sleeps", "%" PRIu64, g->sleeps);
	ROW("group_wakeups", "%" PRIu64 " event, %" PRIu64 " timeout, %" PRIu64
	    " cross-thread", g->wakeups_event, g->wakeups_timeout,
	    g->wakeups_xthread);
	ROW("group_lost_wakeups", "%" PRIu64, g->lost_wakeups);
	ROW("group_busy_pct", "%.1f", pct_of_wall(g->busy_ns, res));
	ROW("group_asleep_pct", "%.1f", pct_of_wall(g->asleep_ns, res));
	ROW("group_polls", "%" PRIu64 " (%" PRIu64 " empty)", g->polls,
	    g->empty_polls);
#undef ROW
}

static void
group_json(FILE *out, const struct tpcq_result *res)
{
	const struct cqpoll_group_stats *g = &res->group;

	if (!res->grouped) {
		fprintf(out, "  \"group\": null,\n");
		return;
	}
	fprintf(out, "  \"group\": {\"iterations\": %" PRIu64
		", \"polls\": %" PRIu64 ", \"empty_polls\": %" PRIu64
		", \"completions\": %" PRIu64 ", \"transitions\": %" PRIu64
		", \"sleeps\": %" PRIu64 ", \"wakeups_event\": %" PRIu64
		", \"wakeups_timeout\": %" PRIu64
		", \"wakeups_xthread\": %" PRIu64
		", \"lost_wakeups\": %" PRIu64 ", \"busy_ns\": %" PRIu64
		", \"asleep_ns\": %" PRIu64 ", \"busy_pct\": %.3f"
		", \"asleep_pct\": %.3f, \"mode_changes\": %" PRIu64 "},\n",
		g->iterations, g->polls, g->empty_polls, g->completions,
		g->transitions, g->sleeps, g->wakeups_event, g->wakeups_timeout,
		g->wakeups_xthread, g->lost_wakeups, g->busy_ns, g->asleep_ns,
		pct_of_wall(g->busy_ns, res), pct_of_wall(g->asleep_ns, res),
		g->mode_changes);
}

/*
 * The latency line as perftest prints it, one column per percentile, in
 * microseconds; unlike perftest's t_max, max is the largest sample.
 */
static void
latency_table(const struct tpcq_result *res, const struct latency *l)
{
	const uint64_t v[] = { l->min, l->p50, l->p90, l->p99, l->p999,
			       l->p9999, l->max };
	size_t i;

	printf(RULE "\n");
	printf(" %12s %10s %10s %10s %10s %10s %10s %10s\n", "samples", "t_min[us]",
	       "p50[us]", "p90[us]", "p99[us]", "p99.9[us]", "p99.99[us]",
	       "t_max[us]");
	printf(" %12" PRIu64, res->latency->count);
	for (i = 0; i < RTE_DIM(v); i++)
		printf(" %10.2f", (double)v[i] / 1e3);
	printf("\n");
}

void
tpcq_report_table(const struct tpcq_params *p, const struct tpcq_run *run,
		  const struct tpcq_result *res)
{
	const struct cqpoll_cq_stats *s = &res->stats;
	char faults[256];
	struct latency l;

	latency_get(res, &l);
	faults_describe(&p->faults, faults, sizeof(faults));

	printf(RULE "\n");
	printf(" testpmd-cq: cqpoll %s, %s\n", cqpoll_version(), rte_version());
	printf(" device %s%s%s%s\n", p->dev_name, p->dev_why != NULL ? " (" : "",
	       p->dev_why != NULL ? p->dev_why : "", p->dev_why != NULL ? ")" : "");
	printf(RULE "\n");
#define ROW(key, fmt, ...) printf(" %-20s: " fmt "\n", key, __VA_ARGS__)
	ROW("dev", "%s", p->dev_name);
	ROW("driver", "%s", res->info.driver != NULL ? res->info.driver : "?");
	ROW("mode", "%s", tpcq_mode_name(p->mode));
	ROW("policy", "%s", policy_name(p));
	ROW("cqs", "%u", p->cqs);
	ROW("transition", "%s", transition_name(p));
	ROW("naive_delay_ns", "%" PRIu32, p->naive_delay_ns);
	ROW("arm", "%s", arm_name(p, res));
	ROW("rate", "%" PRIu64 " /s (achieved %.0f /s)", p->rate,
	    achieved_rate(run, res));
	ROW("duration", "%.3f s (generator %.3f s, poller %.3f s)",
	    p->duration_s, res->gen_s, res->wall_s);
	ROW("timeout_ms", "%d", p->timeout_ms);
	ROW("burst", "%u", p->burst);
	ROW("cq_size", "%" PRIu32, res->info.size);
	ROW("faults", "%s", faults);
	ROW("latency_source", "%s", latency_source(run));
	printf(RULE "\n");
	ROW("posted", "%" PRIu64, run->posted);
	ROW("completions", "%" PRIu64, res->completions);
	ROW("overruns", "%" PRIu64, run->overruns);
	ROW("order_errors", "%" PRIu64, res->order_errors);
	ROW("missing", "%" PRIu64, res->missing);
	ROW("lost_wakeups", "%" PRIu64, s->lost_wakeups);
	ROW("cpu_pct", "%.1f", res->cpu_pct);
	ROW("latency_p50_ns", "%" PRIu64, l.p50);
	ROW("latency_p90_ns", "%" PRIu64, l.p90);
	ROW("latency_p99_ns", "%" PRIu64, l.p99);
	ROW("latency_p99.9_ns", "%" PRIu64, l.p999);
	ROW("latency_p99.99_ns", "%" PRIu64, l.p9999);
	ROW("latency_max_ns", "%" PRIu64, l.max);
	ROW("arms", "%" PRIu64, s->arms);
	ROW("missed_reports", "%" PRIu64, s->missed_reports);
	ROW("events", "%" PRIu64, s->events);
	ROW("spurious_events", "%" PRIu64, s->spurious_events);
	ROW("waits", "%" PRIu64, s->waits);
	ROW("wait_timeouts", "%" PRIu64, s->wait_timeouts);
	ROW("polls", "%" PRIu64, s->polls);
	ROW("empty_polls", "%" PRIu64, s->empty_polls);
#undef ROW
	group_table(res);
	latency_table(res, &l);
	printf(RULE "\n");
	fflush(stdout);
}

/*
 * Every string written is a fixed name (mode, arm, driver, versions), the
 * device name, which names a kernel device, or the policy spec, checked plain
 * by params.c: none needs escapes, so plain printf is a valid JSON writer.
 */
int
tpcq_report_json(const char *path, const struct tpcq_params *p,
		 const struct tpcq_run *run, const struct tpcq_result *res)
{
	const struct cqpoll_sw_faults *f = &p->faults;
	const struct cqpoll_cq_stats *s = &res->stats;
	struct latency l;
	int err = 0;
	FILE *out;

	out = fopen(path, "w");
	if (out == NULL) {
		fprintf(stderr, TPCQ_PROG ": cannot open %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	latency_get(res, &l);

	fprintf(out, "{\n");
	fprintf(out, "  \"dev\": \"%s\",\n", p->dev_name);
	fprintf(out, "  \"dev_default\": %s,\n", p->dev_why != NULL ? "true" : "false");
	fprintf(out, "  \"driver\": \"%s\",\n",
		res->info.driver != NULL ? res->info.driver : "");
	fprintf(out, "  \"mode\": \"%s\",\n", tpcq_mode_name(p->mode));
	fprintf(out, "  \"policy\": \"%s\",\n", policy_name(p));
	fprintf(out, "  \"cqs\": %u,\n", p->cqs);
	fprintf(out, "  \"transition\": \"%s\",\n", transition_name(p));
	fprintf(out, "  \"naive_delay_ns\": %" PRIu32 ",\n", p->naive_delay_ns);
	fprintf(out, "  \"arm\": \"%s\",\n", arm_name(p, res));
	fprintf(out, "  \"latency_source\": \"%s\",\n", latency_source(run));
	fprintf(out, "  \"rate\": %" PRIu64 ",\n", p->rate);
	fprintf(out, "  \"duration_s\": %.6f,\n", p->duration_s);
	fprintf(out, "  \"timeout_ms\": %d,\n", p->timeout_ms);
	fprintf(out, "  \"burst\": %u,\n", p->burst);
	fprintf(out, "  \"cq_size\": %" PRIu32 ",\n", res->info.size);
	fprintf(out, "  \"faults\": {\"arm_delay_ns\": %" PRIu32
		", \"arm_delay_pct\": %" PRIu32
		", \"visibility_delay_ns\": %" PRIu32
		", \"visibility_delay_pct\": %" PRIu32
		", \"event_delay_us\": %" PRIu32
		", \"spurious_event_pct\": %" PRIu32
		", \"duplicate_event_pct\": %" PRIu32
		", \"report_missed_keeps_armed\": %" PRIu32
		", \"seed\": %" PRIu64 "},\n",
		f->arm_delay_ns, f->arm_delay_pct, f->visibility_delay_ns,
		f->visibility_delay_pct, f->event_delay_us,
		f->spurious_event_pct, f->duplicate_event_pct,
		f->report_missed_keeps_armed, f->seed);
	fprintf(out, "  \"posted\": %" PRIu64 ",\n", run->posted);
	fprintf(out, "  \"completions\": %" PRIu64 ",\n", res->completions);
	fprintf(out, "  \"overruns\": %" PRIu64 ",\n", run->overruns);
	fprintf(out, "  \"order_errors\": %" PRIu64 ",\n", res->order_errors);
	fprintf(out, "  \"missing\": %" PRIu64 ",\n", res->missing);
	fprintf(out, "  \"bad_completions\": %" PRIu64 ",\n", res->bad_completions);
	fprintf(out, "  \"no_timestamp\": %" PRIu64 ",\n", res->no_timestamp);
	fprintf(out, "  \"lost_wakeups\": %" PRIu64 ",\n", s->lost_wakeups);
	fprintf(out, "  \"cpu_pct\": %.3f,\n", res->cpu_pct);
	fprintf(out, "  \"latency_ns\": {\"p50\": %" PRIu64 ", \"p90\": %" PRIu64
		", \"p99\": %" PRIu64 ", \"p999\": %" PRIu64
		", \"p9999\": %" PRIu64 ", \"max\": %" PRIu64 ", \"min\": %" PRIu64
		", \"samples\": %" PRIu64 "},\n",
		l.p50, l.p90, l.p99, l.p999, l.p9999, l.max, l.min,
		res->latency->count);
	fprintf(out, "  \"arms\": %" PRIu64 ",\n", s->arms);
	fprintf(out, "  \"missed_reports\": %" PRIu64 ",\n", s->missed_reports);
	fprintf(out, "  \"events\": %" PRIu64 ",\n", s->events);
	fprintf(out, "  \"spurious_events\": %" PRIu64 ",\n", s->spurious_events);
	fprintf(out, "  \"event_acks\": %" PRIu64 ",\n", s->event_acks);
	fprintf(out, "  \"waits\": %" PRIu64 ",\n", s->waits);
	fprintf(out, "  \"wait_timeouts\": %" PRIu64 ",\n", s->wait_timeouts);
	fprintf(out, "  \"polls\": %" PRIu64 ",\n", s->polls);
	fprintf(out, "  \"empty_polls\": %" PRIu64 ",\n", s->empty_polls);
	group_json(out, res);
	fprintf(out, "  \"achieved_rate\": %.1f,\n", achieved_rate(run, res));
	fprintf(out, "  \"generator_s\": %.6f,\n", res->gen_s);
	fprintf(out, "  \"poller_s\": %.6f,\n", res->wall_s);
	fprintf(out, "  \"cqpoll_version\": \"%s\",\n", cqpoll_version());
	fprintf(out, "  \"dpdk_version\": \"%s\"\n", rte_version());
	fprintf(out, "}\n");

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
