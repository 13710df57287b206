/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Results as a key/value table on stdout. It uses the JSON's key names, so a
 * figure read on the terminal is found in the file.
 */
#include <inttypes.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_version.h>

#include "engine.h"
#include "params.h"
#include "report.h"
#include "run.h"

#define RULE "-------------------------------------------------------------------------------"

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
	ROW("group_timeout_recoveries", "%" PRIu64, g->timeout_recoveries);
	ROW("group_busy_pct", "%.1f", tpcq_pct_of_wall(g->busy_ns, res));
	ROW("group_asleep_pct", "%.1f", tpcq_pct_of_wall(g->asleep_ns, res));
	ROW("group_polls", "%" PRIu64 " (%" PRIu64 " empty)", g->polls,
	    g->empty_polls);
#undef ROW
}

/*
 * The latency line as perftest prints it, one column per percentile, in
 * microseconds; unlike perftest's t_max, max is the largest sample.
 */
static void
latency_table(const struct tpcq_result *res, const struct tpcq_latency *l)
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
	char faults[256], pattern[64];
	struct tpcq_latency l;

	tpcq_latency_get(res, &l);
	faults_describe(&p->faults, faults, sizeof(faults));
	tpcq_pattern_used(p, pattern, sizeof(pattern));

	printf(RULE "\n");
	printf(" testpmd-cq: cqpoll %s, %s\n", cqpoll_version(), rte_version());
	printf(" device %s%s%s%s\n", p->dev_name, p->dev_why != NULL ? " (" : "",
	       p->dev_why != NULL ? p->dev_why : "", p->dev_why != NULL ? ")" : "");
	printf(RULE "\n");
#define ROW(key, fmt, ...) printf(" %-20s: " fmt "\n", key, __VA_ARGS__)
	ROW("dev", "%s", p->dev_name);
	ROW("driver", "%s", res->info.driver != NULL ? res->info.driver : "?");
	ROW("mode", "%s", tpcq_mode_name(p->mode));
	ROW("policy", "%s", tpcq_policy_used(p));
	ROW("cqs", "%u (traffic to %u)", p->cqs, run->traffic_cqs);
	ROW("pollers", "%u", p->pollers);
	ROW("transition", "%s", tpcq_transition_used(p));
	if (p->harness != TPCQ_HARNESS_FULL)
		ROW("harness", "%s (no latency, no order check)",
		    tpcq_harness_name(p->harness));
	ROW("naive_delay_ns", "%" PRIu32, p->naive_delay_ns);
	ROW("arm", "%s", tpcq_arm_used(p, res));
	ROW("engine", "%s", p->engine->name);
	if (p->engine->open_loop)
		ROW("rate", "%" PRIu64 " /s (achieved %.0f /s)", p->rate,
		    tpcq_achieved_rate(run, res));
	else
		ROW("rate", "closed loop (achieved %.0f /s)",
		    tpcq_achieved_rate(run, res));
	ROW("pattern", "%s", pattern);
	ROW("seed", "%" PRIu64, p->faults.seed);
	ROW("duration", "%.3f s (generator %.3f s, poller %.3f s)",
	    p->duration_s, res->gen_s, res->wall_s);
	ROW("timeout_ms", "%d", p->timeout_ms);
	ROW("burst", "%u", p->burst);
	ROW("cq_size", "%" PRIu32, res->info.size);
	ROW("faults", "%s", faults);
	ROW("latency_source", "%s", tpcq_latency_source(run));
	printf(RULE "\n");
	ROW("posted", "%" PRIu64, run->posted);
	ROW("completions", "%" PRIu64, res->completions);
	ROW("completions_per_s", "%.0f", tpcq_completions_per_s(res));
	if (p->engine == &tpcq_engine_pingpong)
		ROW("round_trips_per_s", "%.0f", tpcq_achieved_rate(run, res));
	ROW("overruns", "%" PRIu64, run->overruns);
	ROW("order_errors", "%" PRIu64, res->order_errors);
	ROW("missing", "%" PRIu64, res->missing);
	ROW("lost_wakeups", "%" PRIu64, s->lost_wakeups);
	ROW("timeout_recoveries", "%" PRIu64, s->timeout_recoveries);
	ROW("recoveries_late", "%" PRIu64, res->recoveries_late);
	ROW("recoveries_lost", "%" PRIu64, res->recoveries_lost);
	ROW("cpu_pct", "%.1f", res->cpu_pct);
	ROW("cpu_pct_process", "%.1f", res->cpu_pct_process);
	ROW("harness_cpu_pct", "%.1f", res->harness_cpu_pct);
	ROW("wakeups_per_s", "%.0f", tpcq_wakeups_per_s(res));
	ROW("sleep_cpu_ns", "%.0f (%" PRIu64 " sleeps timed)",
	    tpcq_sleep_cpu_ns(res), res->sleeps_timed);
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
