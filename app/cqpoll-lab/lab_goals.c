/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's verdicts: the goals of issue 21 that one run (a trace, a
 * rate, a penalty, over the seeds) can judge, each on the medians over the
 * seeds. One line per goal and policy, "goal NAME POLICY: ...: PASS|MISS";
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
	printf(" goal bound fixed-budgets: least cost over the seeds %.3fx the "
	       "offline optimum (>= 1 on every seed): %s\n", sum->fixed_x_opt_lo,
	       verdict(sum->fixed_x_opt_lo >= 1.0));
	for (i = 0; i < n; i++) {
		r = &rows[i];
		printf(" goal bound %s: least cost over the seeds %.3fx the "
		       "offline optimum (>= 1 on every seed): %s\n", r->policy,
		       r->x_dp_lo, verdict(r->x_dp_lo >= 1.0));
		if (strncmp(r->policy, "adaptive", 8) == 0) {
			printf(" goal adaptive-fixed %s: cost %.3fx the best fixed "
			       "budget in hindsight (<= %.2f): %s\n", r->policy,
			       r->x_fixed, ADAPTIVE_FIXED,
			       verdict(r->x_fixed <= ADAPTIVE_FIXED));
			if (non_stationary(sum->trace))
				printf(" goal adaptive-window %s: cost %.3fx the "
				       "best budget per window in hindsight (<= "
				       "%.2f): %s\n", r->policy, r->x_win,
				       ADAPTIVE_WINDOW,
				       verdict(r->x_win <= ADAPTIVE_WINDOW));
			printf(" goal adaptive-opt %s: cost %.3fx the offline "
			       "optimum (<= %.1f): %s\n", r->policy, r->x_dp,
			       ADAPTIVE_OPT, verdict(r->x_dp <= ADAPTIVE_OPT));
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
				printf(" goal hybrid-periodic %s: p99 %.2fx "
				       "polling's (<= %.1f), CPU %.3fx polling's "
				       "(<= %.1f), cost %.3fx spin:0's and %.3fx "
				       "the best fixed budget's (< 1): %s\n",
				       r->policy, r->p99_x_poll, HYBRID_P99,
				       r->cpu_x_poll, HYBRID_CPU, r->x_spin0,
				       r->x_fixed, verdict(ok));
			}
		}
		if (sscanf(r->policy, "target-p99:%" SCNu64, &target) == 1 ||
		    (strncmp(r->policy, "latency-target", 14) == 0 &&
		     strstr(r->policy, "p99_us=") != NULL &&
		     sscanf(strstr(r->policy, "p99_us="), "p99_us=%" SCNu64,
			    &target) == 1)) {
			if (2 * r->target_seeds <= sum->seeds) {
				printf(" goal target %s: no fixed budget in "
				       "hindsight meets %.0f us with 20%% margin "
				       "on most seeds (%u of %u): not judged\n",
				       r->policy, 0.8 * (double)target,
				       r->target_seeds, sum->seeds);
			} else {
				ok = r->target_met == 1.0 && r->x_target <= TARGET_CPU;
				printf(" goal target %s: target met on %.0f%% of "
				       "the %u seeds where the best fixed budget "
				       "meets it with 20%% margin (all), CPU %.3fx "
				       "that budget's (<= %.1f): %s\n", r->policy,
				       100.0 * r->target_met, r->target_seeds,
				       r->x_target, TARGET_CPU, verdict(ok));
			}
		}
		if (strcmp(r->policy, "spin:0") != 0 && sum->fixed_us != 0)
			printf(" goal not-spin0 %s: identical to spin:0 on %u of "
			       "%u seeds (the best fixed budget is not 0): %s\n",
			       r->policy, r->same_as_spin0, sum->seeds,
			       verdict(r->same_as_spin0 == 0));
	}
}
