/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's offline optimum (app/cqpoll-lab/lab_opt.c): its dynamic
 * program against an exhaustive search of the decision tree on small random
 * traces, and, as the negative control, the greedy clairvoyant (sleep
 * whenever the gap ahead exceeds break-even, the lab's old yardstick) caught
 * as not optimal on a trace made for it: a gap just over break-even before a
 * burst that queues behind the wake-up.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lab.h"

#define NQ 3
#define TRACES 300

static int
close_enough(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-6;
}

int
main(void)
{
	struct tpcq_lab_cost c = {
		.poll_ns = 100, .arm_ns = 1000, .wake_ns = 30000,
		.wake_p99_ns = 80000, .wake_cpu_ns = 5000,
	};
	uint64_t at[32], s = 12345;
	double w[NQ], pen[] = { 0.0, 1.0, 10.0 }, dp, bf, gr, mean, be;
	unsigned int t, i, n, k, worse = 0;

	tpcq_lab_wake_quantiles(&c, NQ, w);
	if (!(w[0] < w[1] && w[1] < w[2]) || fabs(w[1] - 30000) > 1) {
		fprintf(stderr, "FAIL: wake-up quantiles %.0f %.0f %.0f (median "
			"must be 30000)\n", w[0], w[1], w[2]);
		return 1;
	}
	for (t = 0; t < TRACES; t++) {
		n = 2 + (unsigned int)(tpcq_prng_unit(&s) * 8);
		at[0] = 0;
		for (i = 1; i < n; i++) {
			/* Gaps from 0.5 us to ~300 us, some bunched. */
			double g = tpcq_prng_unit(&s) < 0.4 ?
				   500 + tpcq_prng_unit(&s) * 20000 :
				   tpcq_prng_unit(&s) * 300000;
			at[i] = at[i - 1] + (uint64_t)g;
		}
		for (k = 0; k < 3; k++) {
			dp = tpcq_lab_opt_cost(at, n, &c, pen[k], w, NQ);
			bf = tpcq_lab_opt_brute(at, n, &c, pen[k], w, NQ);
			if (!close_enough(dp, bf)) {
				fprintf(stderr, "FAIL: trace %u (%u arrivals), "
					"penalty %.0f: DP %.3f, exhaustive %.3f\n",
					t, n, pen[k], dp, bf);
				return 1;
			}
			mean = (w[0] + w[1] + w[2]) / 3;
			be = (double)(2 * c.poll_ns + c.arm_ns + c.wake_cpu_ns) +
			     pen[k] * mean;
			gr = tpcq_lab_greedy_cost(at, n, &c, pen[k], w, NQ, be);
			if (gr < bf - 1e-6) {
				fprintf(stderr, "FAIL: trace %u: the greedy rule "
					"(%.3f) beats the optimum (%.3f)\n", t, gr, bf);
				return 1;
			}
			worse += gr > bf * (1 + 1e-9);
		}
	}
	printf("ok: DP = exhaustive search on %u traces x 3 penalties; greedy "
	       "costlier on %u of them\n", TRACES, worse);

	/*
	 * The negative control: a gap 5 us over break-even, then 20 arrivals
	 * 1 us apart. Greedy sleeps through the gap and the burst waits out
	 * the wake-up; the optimum polls.
	 */
	mean = (w[0] + w[1] + w[2]) / 3;
	be = (double)(2 * c.poll_ns + c.arm_ns + c.wake_cpu_ns) + mean;
	at[0] = 0;
	at[1] = (uint64_t)be + 5000;
	for (i = 2; i < 22; i++)
		at[i] = at[i - 1] + 1000;
	n = 22;
	dp = tpcq_lab_opt_cost(at, n, &c, 1.0, w, NQ);
	bf = tpcq_lab_opt_brute(at, n, &c, 1.0, w, NQ);
	gr = tpcq_lab_greedy_cost(at, n, &c, 1.0, w, NQ, be);
	if (!close_enough(dp, bf) || !(gr > 1.5 * dp)) {
		fprintf(stderr, "FAIL: crafted trace: DP %.0f, exhaustive %.0f, "
			"greedy %.0f (greedy must cost > 1.5x the optimum)\n",
			dp, bf, gr);
		return 1;
	}
	printf("ok: crafted trace: greedy %.0f ns, optimum %.0f ns (%.2fx)\n",
	       gr, dp, gr / dp);
	return 0;
}
