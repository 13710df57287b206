/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's verdicts: the goals of issue 21 that one run (a trace, a
 * rate, a penalty, over the seeds) can judge, each on the medians over the
 * seeds, with the min..max over them. One line per goal and policy,
 * "goal NAME POLICY: ...: PASS|MISS";
 * devtools/check-lab-goals.py runs the lab over every trace, rate and
 * penalty and tallies them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"

#define ADAPTIVE_FIXED 1.03
#define ADAPTIVE_WINDOW 1.10
#define ADAPTIVE_OPT 2.0
#define HYBRID_P99 2.0
#define HYBRID_CPU 0.5
#define TARGET_CPU 1.1
#define ADAPTIVE_RATE 1.0

static const char *
verdict(bool ok)
{
	return ok ? "PASS" : "MISS";
}

static bool
non_stationary(const char *trace)
{
	return strncmp(trace, "diurnal", 7) == 0 ||
	       strncmp(trace, "onoff", 5) == 0 ||
	       strncmp(trace, "regime", 6) == 0;
}

void
tpcq_lab_goals_print(const struct tpcq_lab_row *rows, unsigned int n,
		     const struct tpcq_lab_summary *sum)
{
	const struct tpcq_lab_row *r;
	uint64_t target;
	unsigned int i;
	bool ok;

	/*
	 * The optimum is a lower bound on the draws every schedule is charged
	 * with: a policy or a fixed budget below it on any seed is a lab bug.
	 */
	printf(" goal bound fixed-budgets: cost over the offline optimum, the "
	       "least over the seeds %.3f (>= 1 on every seed): %s\n",
	       sum->fixed_x_opt_lo, verdict(sum->fixed_x_opt_lo >= 1.0));
	for (i = 0; i < n; i++) {
		r = &rows[i];
		printf(" goal bound %s: cost over the offline optimum, median "
		       "%.3f (%.3f..%.3f) (>= 1 on every seed): %s\n", r->policy,
		       r->x_dp, r->x_dp_lo, r->x_dp_hi, verdict(r->x_dp_lo >= 1.0));
		if (strncmp(r->policy, "adaptive", 8) == 0) {
			printf(" goal adaptive-fixed %s: cost over the best fixed "
			       "budget, median %.3f (%.3f..%.3f) (<= %.2f): %s\n",
			       r->policy, r->x_fixed, r->x_fixed_lo, r->x_fixed_hi,
			       ADAPTIVE_FIXED, verdict(r->x_fixed <= ADAPTIVE_FIXED));
			if (non_stationary(sum->trace))
				printf(" goal adaptive-window %s: cost over the "
				       "best per-window budget, median %.3f "
				       "(%.3f..%.3f) (<= %.2f): %s\n", r->policy,
				       r->x_win, r->x_win_lo, r->x_win_hi,
				       ADAPTIVE_WINDOW,
				       verdict(r->x_win <= ADAPTIVE_WINDOW));
			printf(" goal adaptive-opt %s: cost over the offline "
			       "optimum, median %.3f (%.3f..%.3f) (<= %.1f): %s\n",
			       r->policy, r->x_dp, r->x_dp_lo, r->x_dp_hi,
			       ADAPTIVE_OPT, verdict(r->x_dp <= ADAPTIVE_OPT));
			if (!isnan(r->x_rate))
				printf(" goal adaptive-rate %s: cost over the "
				       "causal rate rule's, median %.3f "
				       "(%.3f..%.3f) (<= %.2f): %s\n", r->policy,
				       r->x_rate, r->x_rate_lo, r->x_rate_hi,
				       ADAPTIVE_RATE,
				       verdict(r->x_rate <= ADAPTIVE_RATE));
		}
		if (strncmp(r->policy, "hybrid", 6) == 0 &&
		    strncmp(sum->trace, "periodic", 8) == 0) {
			if (sum->mean_gap_ns < 2.0 * (double)sum->wake_p99_ns) {
				printf(" goal hybrid-periodic %s: mean gap %.1f us "
				       "under twice the wake-up p99 (%.1f us): not "
				       "judged\n", r->policy, sum->mean_gap_ns / 1e3,
				       (double)sum->wake_p99_ns / 1e3);
			} else {
				ok = r->p99_x_poll <= HYBRID_P99 &&
				     r->cpu_x_poll <= HYBRID_CPU &&
				     r->x_spin0 < 1.0 && r->x_fixed < 1.0;
				printf(" goal hybrid-periodic %s: cost over the best "
				       "fixed budget, median %.3f (%.3f..%.3f) (< 1), "
				       "over spin:0's %.3f (< 1); p99 %.2fx polling's "
				       "(<= %.1f), CPU %.3fx polling's (<= %.1f), "
				       "medians: %s\n", r->policy, r->x_fixed,
				       r->x_fixed_lo, r->x_fixed_hi, r->x_spin0,
				       r->p99_x_poll, HYBRID_P99, r->cpu_x_poll,
				       HYBRID_CPU, verdict(ok));
			}
		}
		if (sscanf(r->policy, "target-p99:%" SCNu64, &target) == 1 ||
		    (strncmp(r->policy, "latency-target", 14) == 0 &&
		     strstr(r->policy, "p99_us=") != NULL &&
		     sscanf(strstr(r->policy, "p99_us="), "p99_us=%" SCNu64,
			    &target) == 1)) {
			if (2 * r->target_seeds <= sum->seeds) {
				printf(" goal target %s: no fixed budget meets "
				       "%.0f us with 20%% margin on most seeds (%u "
				       "of %u): not judged\n", r->policy,
				       0.8 * (double)target, r->target_seeds,
				       sum->seeds);
			} else {
				ok = r->target_met == 1.0 && r->x_target <= TARGET_CPU;
				printf(" goal target %s: p99 over the target on the "
				       "%u seeds where a fixed budget meets it with "
				       "20%% margin, median %.3f (%.3f..%.3f) (<= 1 "
				       "on every one), CPU %.3fx the cheapest such "
				       "budget's (<= %.1f): %s\n", r->policy,
				       r->target_seeds, r->p99_x_target,
				       r->p99_x_target_lo, r->p99_x_target_hi,
				       r->x_target, TARGET_CPU, verdict(ok));
			}
		}
		if (strcmp(r->policy, "spin:0") != 0 && sum->fixed_us != 0)
			printf(" goal not-spin0 %s: identical to spin:0 on %u of "
			       "%u seeds (the best fixed budget is not 0; 0 "
			       "asked): %s\n", r->policy, r->same_as_spin0,
			       sum->seeds, verdict(r->same_as_spin0 == 0));
	}
}
