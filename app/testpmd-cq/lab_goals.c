/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's verdicts: the goals of issue 12 for the policies of one
 * run, against the clairvoyant and against the grid of fixed spin budgets.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "lab.h"

/* The cheapest budget of the grid with a p99 of at most p99_ns, or NULL. */
static const struct tpcq_lab_grid_point *
grid_best(const struct tpcq_lab_grid *g, uint64_t p99_ns)
{
	const struct tpcq_lab_grid_point *best = NULL;
	unsigned int i;

	for (i = 0; i < g->n; i++)
		if (g->pt[i].p99_ns <= p99_ns &&
		    (best == NULL || g->pt[i].cpu_ns < best->cpu_ns))
			best = &g->pt[i];
	return best;
}

/*
 * The goals of issue 12 that this trace and these policies can judge, each
 * against the online yardstick too: the cheapest fixed spin budget of the
 * grid at the same p99.
 */
void
tpcq_lab_goals_print(const struct tpcq_lab_result *rs, unsigned int n,
		     const struct tpcq_lab_result *opt, const char *trace,
		     const struct tpcq_lab_grid *g, const struct tpcq_lab_grid *cg)
{
	const struct tpcq_lab_grid_point *best;
	uint64_t opt_p99 = tpcq_hist_quantile(opt->lat, 0.99), target, p99;
	/* Equal: within two buckets of the histogram (1/64 of a value each). */
	uint64_t opt_p99_eq = opt_p99 + opt_p99 / 32;
	double x;
	unsigned int i;

	for (i = 0; i < n; i++) {
		p99 = tpcq_hist_quantile(rs[i].lat, 0.99);
		x = (double)rs[i].cpu_ns / (double)opt->cpu_ns;
		if (strncmp(rs[i].policy, "adaptive", 8) == 0) {
			printf(" goal %s: CPU %.2fx the clairvoyant's (<= 1.3) at "
			       "p99 %.1f us vs %.1f us (equal or better): %s\n",
			       rs[i].policy, x, p99 / 1e3, opt_p99 / 1e3,
			       x <= 1.3 && p99 <= opt_p99_eq ? "PASS" : "MISS");
			best = grid_best(g, opt_p99_eq);
			if (best == NULL)
				printf(" bound: no fixed spin budget up to %u us "
				       "reaches the clairvoyant's p99\n",
				       TPCQ_LAB_GRID_MAX_US);
			else
				printf(" bound: the cheapest fixed spin budget "
				       "with the clairvoyant's p99 is spin:%u, CPU "
				       "%.2fx the clairvoyant's (p99 %.1f us)\n",
				       best->spin_us, (double)best->cpu_ns /
				       (double)opt->cpu_ns, best->p99_ns / 1e3);
			/*
			 * The other reading of the goal: the clairvoyant
			 * brought to adaptive's p99 (its cheapest threshold
			 * schedule with an equal or better p99), and
			 * adaptive's CPU over that.
			 */
			best = grid_best(cg, p99 + p99 / 32);
			if (best != NULL)
				printf(" goal %s at its own p99: CPU %.2fx that of "
				       "the cheapest clairvoyant schedule with an "
				       "equal or better p99 (sleeps through gaps "
				       "over %u us, p99 %.1f us) (<= 1.3): %s\n",
				       rs[i].policy, (double)rs[i].cpu_ns /
				       (double)best->cpu_ns, best->spin_us,
				       best->p99_ns / 1e3,
				       (double)rs[i].cpu_ns <=
				       1.3 * (double)best->cpu_ns ? "PASS" : "MISS");
		}
		if (strncmp(rs[i].policy, "hybrid", 6) == 0 &&
		    strcmp(trace, "periodic") == 0)
			printf(" goal %s on periodic: CPU %.2fx the clairvoyant's "
			       "(<= 1.2): %s\n", rs[i].policy, x,
			       x <= 1.2 ? "PASS" : "MISS");
		if (sscanf(rs[i].policy, "target-p99:%" SCNu64, &target) != 1)
			continue;
		best = grid_best(g, target * 1000);
		if (best == NULL) {
			printf(" goal %s: no fixed spin budget up to %u us meets a "
			       "p99 of %" PRIu64 " us: not judged\n", rs[i].policy,
			       TPCQ_LAB_GRID_MAX_US, target);
			continue;
		}
		x = (double)rs[i].cpu_ns / (double)best->cpu_ns;
		printf(" goal %s: p99 %.1f us (target %" PRIu64 " us: %s), CPU "
		       "%.2fx that of spin:%u, the cheapest fixed budget meeting "
		       "it (<= 1.1): %s\n", rs[i].policy, p99 / 1e3, target,
		       p99 <= target * 1000 ? "met" : "missed", x, best->spin_us,
		       p99 <= target * 1000 && x <= 1.1 ? "PASS" : "MISS");
	}
}
