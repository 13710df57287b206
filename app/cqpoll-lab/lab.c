/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab (--sim). Each policy runs through its own ops, the code the
 * poll group calls, on a virtual clock that the cost model advances:
 *  - an awake iteration polls, takes poll_ns of CPU, then asks decide();
 *  - a sleep takes arm_ns (poll and arm; an arrival by then is found by the
 *    re-poll and cancels the sleep), then lasts until the next arrival plus
 *    a wake-up latency drawn from a log-normal (median wake_ns, 99th
 *    percentile wake_p99_ns), and costs wake_cpu_ns of CPU; the policy
 *    learns that latency through wake_cost(), as from a device timestamp,
 *    unless the trace's device has none (--sim-wake);
 *  - the hybrid policy's naps advance the clock by the nap plus a drawn
 *    overshoot (median nap_ns, p99 nap_p99_ns: a timer's) and cost
 *    wake_cpu_ns of CPU (a sleep on a timer, no arm), wherever decide()
 *    takes them;
 *  - with instr_ps, each iteration also costs the instructions of the
 *    policy's decide() (lab_sim.c).
 * Each policy is judged on its total cost, CPU + penalty x the latency it
 * added, against yardsticks of the same trace: the offline optimum
 * (lab_opt.c), the best fixed spin budget in hindsight, the best budget per
 * 10 ms window in hindsight, and (at the policy's own p99) the best mix of
 * two fixed budgets; all over --sim-seeds traces, medians and spread.
 * Every random draw comes from --seed: the same command, the same output.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cqpoll_group.h>

#include "lab.h"
#include "floors.h"
#include "hist.h"
#include "progress.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n-1] (sorted in place), and its min and max. */
static double
median(double *v, unsigned int n, double *lo, double *hi)
{
	qsort(v, n, sizeof(*v), cmp_double);
	if (lo != NULL)
		*lo = v[0];
	if (hi != NULL)
		*hi = v[n - 1];
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What one seed gives one policy: the row's inputs. */
enum {
	M_CPU, M_P50, M_P99, M_P999, M_WAKE, M_COST, M_DP, M_FIXED, M_WIN, M_RATE,
	M_MIX, M_SPIN0, M_CPU_POLL, M_P99_POLL, M_TARGET, M_TARGET_MET, M_TP99,
	M_N
};

static void
row_print(const struct tpcq_lab_row *r)
{
	printf(" %-22s %6.2f %9.2f %9.2f %9.2f %10.0f %7.2f %6.3f %5.3f..%5.3f "
	       "%6.3f %5.3f..%5.3f %6.3f %5.3f..%5.3f %6.3f %5.3f..%5.3f %7.3f\n",
	       r->policy, r->cpu_pct, r->p50_us, r->p99_us, r->p999_us,
	       r->wakeups_s, r->cost_pct, r->x_dp, r->x_dp_lo, r->x_dp_hi,
	       r->x_fixed, r->x_fixed_lo, r->x_fixed_hi, r->x_win, r->x_win_lo,
	       r->x_win_hi, r->x_rate, r->x_rate_lo, r->x_rate_hi, r->x_mix);
}

static int
policies_split(const char *list, char (*out)[TPCQ_LAB_SPEC_MAX],
	       unsigned int *n, char *why, size_t len)
{
	const char *p = list, *end;
	const char *args;
	size_t l;

	*n = 0;
	while (*p != '\0') {
		/* A policy's own parameters use ',': policies are split on ';'. */
		end = strchr(p, ';');
		l = end != NULL ? (size_t)(end - p) : strlen(p);
		if (l == 0 || l >= TPCQ_LAB_SPEC_MAX || *n == TPCQ_LAB_POLICIES_MAX) {
			snprintf(why, len, "--sim-policies: expected up to %d "
				 "policies separated by ';'", TPCQ_LAB_POLICIES_MAX);
			return -EINVAL;
		}
		memcpy(out[*n], p, l);
		out[*n][l] = '\0';
		if (tpcq_lab_policy_find(out[*n], &args) == NULL) {
			snprintf(why, len, "--sim-policies: unknown policy '%s'",
				 out[*n]);
			return -EINVAL;
		}
		(*n)++;
		p += l + (end != NULL);
	}
	if (*n == 0) {
		snprintf(why, len, "--sim-policies: no policy");
		return -EINVAL;
	}
	return 0;
}

/*
 * The spec a policy runs with: the policies that weigh CPU against latency
 * are told the lab's penalty through their own parameter, unless the spec
 * gives one.
 */
static void
policy_spec(const char *spec, double penalty, const struct tpcq_lab_cost *c,
	    char *out, size_t len)
{
	const char *args;
	const struct cqpoll_policy_ops *ops = tpcq_lab_policy_find(spec, &args);

	if (ops == tpcq_lab_rate_rule() && args == NULL)
		snprintf(out, len, "%s:cost_ns=%.0f", spec,
			 tpcq_lab_sleep_cost(c, penalty));
	else if ((ops == cqpoll_policy_adaptive() || ops == cqpoll_policy_hybrid()) &&
	    (args == NULL || strstr(args, "penalty=") == NULL) &&
	    penalty == floor(penalty))
		snprintf(out, len, "%s%s%.0f", spec, args == NULL ? ":penalty=" :
			 *args == '\0' ? "penalty=" : ",penalty=", penalty);
	else
		snprintf(out, len, "%s", spec);
}

static bool
same_result(const struct tpcq_lab_result *a, const struct tpcq_lab_result *b)
{
	return a->cpu_ns == b->cpu_ns && a->wakeups == b->wakeups &&
	       a->lat_sum_ns == b->lat_sum_ns && a->span_ns == b->span_ns;
}

int
tpcq_lab_run(const struct tpcq_lab_opts *o)
{
	static char specs[TPCQ_LAB_POLICIES_MAX][TPCQ_LAB_SPEC_MAX];
	static char run_specs[TPCQ_LAB_POLICIES_MAX][TPCQ_LAB_SPEC_MAX];
	static struct tpcq_lab_grid grid;
	struct tpcq_lab_result *rs = NULL, rr;
	char rate_spec[TPCQ_LAB_SPEC_MAX];
	struct tpcq_lab_trace trace;
	struct tpcq_lab_cost cost;
	struct tpcq_floors floors;
	struct tpcq_lab_row *rows = NULL;
	struct tpcq_lab_summary sum;
	const char *tname = o->trace != NULL ? o->trace : "poisson";
	unsigned int n = 0, i, k, seeds = (unsigned int)o->seeds, sd, best;
	double *m = NULL, *v = NULL, pen = o->penalty;
	uint64_t *dw = NULL, *dn = NULL;
	struct tpcq_lab_opt_in oi;
	double dp, win, span, fixed_us[TPCQ_LAB_SEEDS_MAX], arrivals[TPCQ_LAB_SEEDS_MAX];
	double gap[TPCQ_LAB_SEEDS_MAX], dps[TPCQ_LAB_SEEDS_MAX], wins[TPCQ_LAB_SEEDS_MAX];
	double bests[TPCQ_LAB_SEEDS_MAX], polls[TPCQ_LAB_SEEDS_MAX], target, mx;
	double fixed_lo, rates[TPCQ_LAB_SEEDS_MAX];
	/* The best fixed budget over the per-window one, seed by seed. */
	double fw[TPCQ_LAB_SEEDS_MAX], fw_med, fw_lo, fw_hi;
	char why[512], list[1024];
	int ret = TPCQ_LAB_EXIT_FAIL, r;
	size_t nwin, w;
	uint64_t p99, poll_p99, tg;
	char cost_str[256];
	bool untold;

	memset(&trace, 0, sizeof(trace));
	memset(&rr, 0, sizeof(rr));
	memset(&grid, 0, sizeof(grid));
	if (o->floors && o->cost == NULL) {
		/* This machine's cost, from the floors measured now. */
		if (tpcq_floors_measure_base(-1, &floors) != 0 ||
		    !floors.valid) {
			fprintf(stderr, "%s: --floors: cannot measure the floors "
				"for the cost model; give --sim-cost\n",
				tpcq_lab_prog());
			return TPCQ_LAB_EXIT_FAIL;
		}
		tpcq_floors_print(&floors);
		tpcq_lab_cost_from_floors(&floors, &cost);
	} else if (tpcq_lab_cost_parse(o->cost != NULL ? o->cost :
				       TPCQ_LAB_COST_DEFAULT, &cost, why,
				       sizeof(why)) != 0) {
		goto usage;
	}
	/* The semicolon list, or the defaults with ',' between policies. */
	if (o->policies != NULL) {
		snprintf(list, sizeof(list), "%s", o->policies);
	} else {
		snprintf(list, sizeof(list), "%s", TPCQ_LAB_POLICIES_DEFAULT);
		for (i = 0; list[i] != '\0'; i++)
			if (list[i] == ',')
				list[i] = ';';
	}
	if (policies_split(list, specs, &n, why, sizeof(why)) != 0)
		goto usage;
	for (i = 0; i < n; i++)
		policy_spec(specs[i], pen, &cost, run_specs[i],
			    sizeof(run_specs[i]));
	/* Check the trace spec (and a file's contents) once before the seeds. */
	if (tpcq_lab_trace_make(&trace, tname, (double)o->rate, o->duration_s,
				o->seed, why, sizeof(why)) != 0)
		goto usage;
	untold = o->wake == TPCQ_LAB_WAKE_TRACE ? trace.untold :
		 o->wake == TPCQ_LAB_WAKE_UNTOLD;
	/* A file is one trace: its seeds differ only in the wake-up draws. */
	nwin = (size_t)(o->duration_s * 1e9 / TPCQ_LAB_WINDOW_NS) + 2;
	if (strncmp(tname, "file:", 5) == 0)
		nwin = (size_t)((trace.at[trace.n - 1] - trace.at[0]) /
				TPCQ_LAB_WINDOW_NS) + 2;
	tpcq_lab_trace_free(&trace);

	rs = calloc(n, sizeof(*rs));
	rows = calloc(n, sizeof(*rows));
	m = calloc((size_t)n * M_N * seeds, sizeof(*m));
	v = calloc(seeds, sizeof(*v));
	if (rs == NULL || rows == NULL || m == NULL || v == NULL)
		goto oom;
	for (i = 0; i < n; i++)
		if (tpcq_lab_result_alloc(&rs[i], 0) != 0)
			goto oom;
	if (tpcq_lab_result_alloc(&rr, 0) != 0)
		goto oom;
	policy_spec("rate-rule", pen, &cost, rate_spec, sizeof(rate_spec));
	tpcq_lab_grid_budgets(&grid);
	for (k = 0; k < grid.n; k++)
		if (tpcq_lab_result_alloc(&grid.pt[k], nwin) != 0)
			goto oom;

#define M(pol, seed, what) m[((size_t)(pol) * M_N + (what)) * seeds + (seed)]
	for (sd = 0; sd < seeds; sd++) {
		uint64_t seed = o->seed + sd;

		tpcq_progress("trace %s, seed %u of %u", tname, sd + 1, seeds);

		if (tpcq_lab_trace_make(&trace, tname, (double)o->rate,
					o->duration_s, seed, why, sizeof(why)) != 0)
			goto usage;
		trace.untold = untold;
		arrivals[sd] = (double)trace.n;
		gap[sd] = (double)(trace.at[trace.n - 1] - trace.at[0]) /
			  (double)(trace.n - 1);
		/* The bound, on the draws the policies are charged with. */
		free(dw);
		free(dn);
		dw = malloc(trace.n * sizeof(*dw));
		dn = malloc(trace.n * sizeof(*dn));
		if (dw == NULL || dn == NULL)
			goto oom;
		tpcq_lab_draws(&cost, seed, trace.n, dw, dn);
		oi = (struct tpcq_lab_opt_in){ .at = trace.at, .n = trace.n,
			.w = dw, .o = dn, .c = &cost, .penalty = pen,
			.naps = true };
		dp = tpcq_lab_opt_bound(&oi);
		if (dp < 0)
			goto oom;
		tpcq_lab_grid_run(&grid, &trace, &cost, seed, pen);
		/* The best fixed budget, and the best per window. */
		best = 0;
		for (k = 1; k < grid.n; k++)
			if (grid.pt[k].cost < grid.pt[best].cost)
				best = k;
		win = 0;
		for (w = 0; w < nwin; w++) {
			mx = grid.pt[0].win[w];
			for (k = 1; k < grid.n; k++)
				if (grid.pt[k].win[w] < mx)
					mx = grid.pt[k].win[w];
			win += mx;
		}
		fixed_us[sd] = grid.spin_us[best] == UINT32_MAX ? INFINITY :
			       grid.spin_us[best];
		dps[sd] = dp;
		wins[sd] = win;
		bests[sd] = grid.pt[best].cost;
		poll_p99 = tpcq_hist_quantile(grid.pt[grid.n - 1].lat, 0.99);
		/* The causal rate rule, the yardstick of a rule that follows the rate. */
		tpcq_lab_result_reset(&rr, &trace, pen, false);
		if (tpcq_lab_sim_policy(rate_spec, &trace, &cost, seed, &rr) != 0)
			goto oom;
		rr.cost = (double)rr.cpu_ns + pen * rr.lat_sum_ns;
		rates[sd] = rr.cost / dp;
		polls[sd] = (double)grid.pt[grid.n - 1].cpu_ns;
		for (i = 0; i < n; i++) {
			tpcq_lab_result_reset(&rs[i], &trace, pen, false);
			r = tpcq_lab_sim_policy(run_specs[i], &trace, &cost, seed, &rs[i]);
			if (r != 0) {
				snprintf(why, sizeof(why), "--sim-policies: '%.127s': %s",
					 run_specs[i], r == -EINVAL ?
					 "bad parameters" : "out of memory");
				goto usage;
			}
			rs[i].cost = (double)rs[i].cpu_ns + pen * rs[i].lat_sum_ns;
			span = (double)rs[i].span_ns;
			p99 = tpcq_hist_quantile(rs[i].lat, 0.99);
			M(i, sd, M_CPU) = span > 0 ? 100.0 * (double)rs[i].cpu_ns / span : 0;
			M(i, sd, M_COST) = span > 0 ? 100.0 * rs[i].cost / span : 0;
			M(i, sd, M_P50) = (double)tpcq_hist_quantile(rs[i].lat, 0.5) / 1e3;
			M(i, sd, M_P99) = (double)p99 / 1e3;
			M(i, sd, M_P999) = (double)tpcq_hist_quantile(rs[i].lat, 0.999) / 1e3;
			M(i, sd, M_WAKE) = span > 0 ? (double)rs[i].wakeups * 1e9 / span : 0;
			M(i, sd, M_DP) = rs[i].cost / dp;
			M(i, sd, M_FIXED) = rs[i].cost / grid.pt[best].cost;
			M(i, sd, M_WIN) = rs[i].cost / win;
			M(i, sd, M_RATE) = rs[i].cost / rr.cost;
			mx = tpcq_lab_mix_cpu(&grid, p99);
			M(i, sd, M_MIX) = mx > 0 ? (double)rs[i].cpu_ns / mx : INFINITY;
			M(i, sd, M_SPIN0) = rs[i].cost / grid.pt[0].cost;
			M(i, sd, M_CPU_POLL) = (double)rs[i].cpu_ns / polls[sd];
			M(i, sd, M_P99_POLL) = (double)p99 / (double)(poll_p99 ? poll_p99 : 1);
			M(i, sd, M_TARGET) = NAN;
			if (sscanf(specs[i], "target-p99:%" SCNu64, &tg) == 1) {
				/* The cheapest budget meeting 0.8 x the target. */
				target = 0.8 * (double)tg * 1000;
				mx = 0;
				for (k = 0; k < grid.n; k++)
					if ((double)tpcq_hist_quantile(grid.pt[k].lat, 0.99) <= target &&
					    (mx == 0 || (double)grid.pt[k].cpu_ns < mx))
						mx = (double)grid.pt[k].cpu_ns;
				if (mx > 0) {
					M(i, sd, M_TARGET) = (double)rs[i].cpu_ns / mx;
					M(i, sd, M_TARGET_MET) = p99 <= tg * 1000;
					M(i, sd, M_TP99) = (double)p99 / ((double)tg * 1000);
				}
			}
			if (fixed_us[sd] != 0 && same_result(&rs[i], &grid.pt[0]))
				rows[i].same_as_spin0++;
		}
		tpcq_lab_trace_free(&trace);
	}

	for (i = 0; i < n; i++) {
		struct tpcq_lab_row *row = &rows[i];
		unsigned int j, nt = 0;

		memcpy(row->policy, specs[i], sizeof(row->policy));
#define MED(what, lo, hi) (memcpy(v, &M(i, 0, what), seeds * sizeof(*v)), \
			   median(v, seeds, lo, hi))
		row->cpu_pct = MED(M_CPU, NULL, NULL);
		row->p50_us = MED(M_P50, NULL, NULL);
		row->p99_us = MED(M_P99, NULL, NULL);
		row->p999_us = MED(M_P999, NULL, NULL);
		row->wakeups_s = MED(M_WAKE, NULL, NULL);
		row->cost_pct = MED(M_COST, NULL, NULL);
		row->x_dp = MED(M_DP, &row->x_dp_lo, &row->x_dp_hi);
		row->x_fixed = MED(M_FIXED, &row->x_fixed_lo, &row->x_fixed_hi);
		row->x_win = MED(M_WIN, &row->x_win_lo, &row->x_win_hi);
		row->x_rate = MED(M_RATE, &row->x_rate_lo, &row->x_rate_hi);
		row->x_mix = MED(M_MIX, NULL, NULL);
		row->x_spin0 = MED(M_SPIN0, NULL, NULL);
		row->cpu_x_poll = MED(M_CPU_POLL, NULL, NULL);
		row->p99_x_poll = MED(M_P99_POLL, NULL, NULL);
#undef MED
		row->x_target = NAN;
		for (j = 0; j < seeds; j++)
			if (!isnan(M(i, j, M_TARGET))) {
				v[nt] = M(i, j, M_TARGET);
				row->target_met += M(i, j, M_TARGET_MET);
				nt++;
			}
		row->target_seeds = nt;
		if (nt > 0) {
			row->x_target = median(v, nt, NULL, NULL);
			row->target_met /= nt;
			for (j = 0, nt = 0; j < seeds; j++)
				if (!isnan(M(i, j, M_TARGET)))
					v[nt++] = M(i, j, M_TP99);
			row->p99_x_target = median(v, nt, &row->p99_x_target_lo,
						   &row->p99_x_target_hi);
		}
	}
#undef M

	tpcq_progress_end();
	if (strncmp(tname, "file:", 5) == 0)
		printf("testpmd-cq --sim: trace %s, seeds %" PRIu64 "..%" PRIu64
		       " (the wake-up draws): ", tname, o->seed,
		       o->seed + seeds - 1);
	else
		printf("testpmd-cq --sim: trace %s, rate %" PRIu64 "/s, %.3g s, "
		       "seeds %" PRIu64 "..%" PRIu64 ": ", tname, o->rate,
		       o->duration_s, o->seed, o->seed + seeds - 1);
	printf("%.0f arrivals (median), mean gap %.2f us\n",
	       median(arrivals, seeds, NULL, NULL),
	       median(gap, seeds, NULL, NULL) / 1e3);
	tpcq_lab_cost_format(&cost, cost_str, sizeof(cost_str));
	printf(" cost --sim-cost=%s%s%s%s; penalty %.3g CPU ns per ns of "
	       "latency; wake-ups %s\n", cost_str,
	       cost.measured[0] != '\0' ? " (measured: " : o->cost != NULL ? "" :
	       o->floors ? " (from the floors)" : " (the default)",
	       cost.measured, cost.measured[0] != '\0' ? ")" : "", pen,
	       untold ? "not told to the policies (no completion timestamps)" :
	       "told to the policies (completion timestamps)");
	for (i = 0; i < seeds; i++) {
		fw[i] = bests[i] / wins[i];
		wins[i] /= dps[i];
		bests[i] /= dps[i];
	}
	mx = median(fixed_us, seeds, NULL, NULL);
	median(bests, seeds, &fixed_lo, NULL);
	fw_med = median(fw, seeds, &fw_lo, &fw_hi);
	printf(" offline optimum (the lower bound: every schedule of polls, "
	       "sleeps and naps, knowing the arrivals and the draws) %.0f ns per "
	       "arrival (median over the seeds)\n",
	       median(dps, seeds, NULL, NULL) / median(arrivals, seeds, NULL, NULL));
	printf(" best fixed budget (not a bound) %s%.0f%s, %.3fx the optimum "
	       "(%.3f..%.3f); best per-window budget (not a bound: the best "
	       "budget of each %u ms window) %.3fx; the best fixed budget over "
	       "the per-window one %.3fx (%.3f..%.3f)\n",
	       isinf(mx) ? "" : "spin:", isinf(mx) ? 0.0 : mx,
	       isinf(mx) ? " (poll)" : "", median(bests, seeds, NULL, NULL),
	       fixed_lo, bests[seeds - 1],
	       (unsigned int)(TPCQ_LAB_WINDOW_NS / 1000000),
	       median(wins, seeds, NULL, NULL), fw_med, fw_lo, fw_hi);
	printf(" causal rate rule (not a bound: the rate over the last 2 ms; %d "
	       "mean gaps of budget when rate x a sleep's cost, %.0f ns, is over "
	       "1, else 0) %.3fx the optimum\n", 5, tpcq_lab_sleep_cost(&cost, pen),
	       median(rates, seeds, NULL, NULL));
	printf(" %-22s %6s %9s %9s %9s %10s %7s %6s %12s %6s %12s %6s %12s %6s "
	       "%12s %7s\n", "policy", "cpu_%", "p50_us", "p99_us", "p99.9_us",
	       "wakeups/s", "cost_%", "/opt", "spread", "/fixed", "spread",
	       "/win", "spread", "/rate", "spread", "cpu/mix");
	for (i = 0; i < n; i++)
		row_print(&rows[i]);
	printf(" cost_%%: (CPU + penalty x latency) per unit of time; /opt, "
	       "/fixed, /win, /rate: total cost over the offline optimum's (the "
	       "bound: >= 1 on every seed), the best fixed budget's, the best "
	       "per-window budget's, the causal rate rule's (median, min..max "
	       "over the seeds); cpu/mix: "
	       "CPU over the best mix of two fixed budgets at the policy's p99\n");
	memset(&sum, 0, sizeof(sum));
	sum.trace = tname;
	sum.rate = (double)o->rate;
	sum.penalty = pen;
	sum.mean_gap_ns = median(gap, seeds, NULL, NULL);
	sum.wake_p99_ns = cost.wake_p99_ns;
	sum.seeds = seeds;
	sum.fixed_us = mx;
	sum.fixed_x_opt_lo = fixed_lo;
	tpcq_lab_goals_print(rows, n, &sum);
	fflush(stdout);
	ret = TPCQ_LAB_EXIT_OK;
	goto out;
usage:
	tpcq_progress_end();
	fprintf(stderr, "%s: %s\n", tpcq_lab_prog(), why);
	ret = TPCQ_LAB_EXIT_USAGE;
	goto out;
oom:
	tpcq_progress_end();
	fprintf(stderr, "%s: out of memory\n", tpcq_lab_prog());
out:
	for (i = 0; rs != NULL && i < n; i++)
		tpcq_lab_result_release(&rs[i]);
	tpcq_lab_result_release(&rr);
	for (k = 0; k < grid.n; k++)
		tpcq_lab_result_release(&grid.pt[k]);
	free(rs);
	free(rows);
	free(m);
	free(v);
	free(dw);
	free(dn);
	tpcq_lab_trace_free(&trace);
	return ret;
}
