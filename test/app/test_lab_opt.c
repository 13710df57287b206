/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's offline optimum (app/cqpoll-lab/lab_opt.c), a lower
 * bound:
 * 1. its backward pass equals a search of every schedule at 1 ns
 *    resolution (every poll, sleep and nap end), with naps and without, on
 *    small random traces and draws, at penalty 1 and above, and below 1 on
 *    traces without tied arrivals; below 1 with tied arrivals it is a bound
 *    only, held to never above the search (its pruning of later nap ends,
 *    lab_opt.c, assumes each waiting arrival adds a ns of cost a ns, which
 *    below penalty 1 needs distinct arrivals; an independent exhaustive
 *    search found it below on such traces, these draws may not);
 * 2. no schedule the lab's clock runs costs less on the same draws: random
 *    schedules of polls, sleeps and naps of random length, the fixed
 *    budgets and the library's policies, on short random traces;
 * 3. a nap is charged and applied wherever decide() takes it: after an
 *    empty poll, a failed arm or a wake-up (the clock used to drop the last
 *    two);
 * 4. the negative control: the optimum without naps (what the lab used to
 *    call the optimum) is beaten by the hybrid policy on periodic traffic
 *    at penalty 10, while the whole optimum is not.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cqpoll_group.h>

#include "cqpoll_policy_private.h"
#include "lab.h"

#define TRACES 200
#define CLOCK_TRACES 40
#define SCHEDULES 150

static int
close_enough(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-6;
}

static int
test_brute(void)
{
	struct tpcq_lab_cost c = { .poll_ns = 1, .arm_ns = 3, .wake_ns = 10,
				   .wake_p99_ns = 20, .wake_cpu_ns = 2 };
	double pen[] = { 0.0, 0.3, 1.0, 10.0 }, dp, bf, nonap;
	uint64_t at[8], w[8], o[8], s = 12345;
	struct tpcq_lab_opt_in in = { .at = at, .w = w, .o = o, .c = &c };
	unsigned int t, i, k, naps, cheaper = 0, exact = 0, below = 0;
	bool tied;

	for (t = 0; t < TRACES; t++) {
		in.n = 2 + (size_t)(tpcq_prng_unit(&s) * 5);
		at[0] = 0;
		tied = false;
		for (i = 0; i < in.n; i++) {
			if (i > 0) {
				at[i] = at[i - 1] + (uint64_t)(tpcq_prng_unit(&s) * 24);
				tied |= at[i] == at[i - 1];
			}
			w[i] = 1 + (uint64_t)(tpcq_prng_unit(&s) * 24);
			o[i] = 1 + (uint64_t)(tpcq_prng_unit(&s) * 24);
		}
		for (k = 0; k < sizeof(pen) / sizeof(pen[0]); k++) {
			in.penalty = pen[k];
			for (naps = 0; naps < 2; naps++) {
				in.naps = naps;
				dp = tpcq_lab_opt_bound(&in);
				bf = tpcq_lab_opt_brute(&in);
				/* Below penalty 1 with ties: a bound, not equal. */
				if (dp >= 0 && bf >= 0 && pen[k] < 1.0 && tied &&
				    dp <= bf + 1e-6) {
					below += !close_enough(dp, bf);
					continue;
				}
				if (dp < 0 || bf < 0 || !close_enough(dp, bf)) {
					fprintf(stderr, "FAIL: trace %u (%zu arrivals), "
						"penalty %.1f, naps %u, ties %d: backward "
						"pass %.3f, search of every schedule "
						"%.3f\n", t, in.n, pen[k], naps, tied,
						dp, bf);
					return 1;
				}
				exact++;
			}
			in.naps = false;
			nonap = tpcq_lab_opt_bound(&in);
			cheaper += dp < nonap - 1e-9;
		}
	}
	printf("ok: backward pass = search of every schedule in %u cases (%u "
	       "traces x 4 penalties, naps and none); below it, a bound, in %u "
	       "(penalty < 1, tied arrivals); naps cheaper on %u\n", exact,
	       TRACES, below, cheaper);
	return 0;
}

/* A schedule drawn at random: each empty poll polls, sleeps or naps. */
struct random_state {
	struct cqpoll_policy_nap nap; /* First: the clock's hook. */
	uint64_t rng;
	double act;                   /* Chance an empty poll does not poll. */
};

static int
random_init(void *state, const char *args)
{
	struct random_state *r = state;

	memset(r, 0, sizeof(*r));
	r->rng = strtoull(args, NULL, 10);
	/* From one in 10^4 polls to one in two: short and long spins. */
	r->act = pow(10.0, -4.0 + 3.7 * tpcq_prng_unit(&r->rng));
	return 0;
}

static enum cqpoll_policy_action
random_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct random_state *r = state;
	double u;

	(void)now_ns;
	if (completions > 0 || tpcq_prng_unit(&r->rng) > r->act)
		return CQPOLL_POLICY_KEEP_POLLING;
	u = tpcq_prng_unit(&r->rng);
	if (u < 0.5)
		return CQPOLL_POLICY_SLEEP;
	r->nap.fn(r->nap.arg, (uint64_t)(tpcq_prng_unit(&r->rng) * 300000));
	return CQPOLL_POLICY_KEEP_POLLING;
}

static const struct cqpoll_policy_ops random_ops = {
	.name = "random",
	.state_size = sizeof(struct random_state),
	.init = random_init,
	.decide = random_decide,
};

static int
check_run(const char *what, const struct tpcq_lab_result *r, double pen,
	  double bound, double *least)
{
	double cost = (double)r->cpu_ns + pen * r->lat_sum_ns;

	if (cost < bound - 1e-6) {
		fprintf(stderr, "FAIL: %s costs %.0f ns, below the optimum %.0f\n",
			what, cost, bound);
		return 1;
	}
	if (cost / bound < *least)
		*least = cost / bound;
	return 0;
}

static int
test_clock(void)
{
	struct tpcq_lab_cost c;
	const char *libs[] = { "spin:0", "spin:20", "spin:200", "adaptive",
			       "adaptive:penalty=10", "hybrid", "hybrid:penalty=10",
			       "target-p99:60" };
	double pen[] = { 1.0, 10.0 }, bound, least = INFINITY;
	struct tpcq_lab_trace t = { .name = "random" };
	struct tpcq_lab_result r;
	uint64_t w[64], o[64], s = 777, seed;
	struct tpcq_lab_opt_in in = { .w = w, .o = o, .c = &c, .naps = true };
	const struct cqpoll_policy_ops *ops;
	const char *args;
	char why[256], arg[32];
	unsigned int tr, k, j, runs = 0;
	size_t i;

	if (tpcq_lab_cost_parse(TPCQ_LAB_COST_DEFAULT, &c, why, sizeof(why)) != 0 ||
	    tpcq_lab_result_alloc(&r, 0) != 0) {
		fprintf(stderr, "FAIL: setup: %s\n", why);
		return 1;
	}
	t.at = calloc(64, sizeof(*t.at));
	if (t.at == NULL)
		return 1;
	for (tr = 0; tr < CLOCK_TRACES; tr++) {
		/* Bunched and sparse gaps: up to 400 us, some a few us. */
		t.n = 4 + (size_t)(tpcq_prng_unit(&s) * 40);
		t.at[0] = 0;
		for (i = 1; i < t.n; i++)
			t.at[i] = t.at[i - 1] + (uint64_t)(tpcq_prng_unit(&s) < 0.4 ?
				  tpcq_prng_unit(&s) * 8000 :
				  tpcq_prng_unit(&s) * 400000);
		seed = tr;
		tpcq_lab_draws(&c, seed, t.n, w, o);
		in.at = t.at;
		in.n = t.n;
		for (k = 0; k < 2; k++) {
			in.penalty = pen[k];
			bound = tpcq_lab_opt_bound(&in);
			for (j = 0; j < SCHEDULES; j++) {
				snprintf(arg, sizeof(arg), "%u", tr * 1000 + j);
				tpcq_lab_result_reset(&r, &t, pen[k], false);
				if (tpcq_lab_sim_ops(&random_ops, arg, true, &t, &c,
						     seed, &r) != 0 ||
				    check_run("a random schedule", &r, pen[k],
					      bound, &least) != 0)
					goto fail;
				runs++;
			}
			for (j = 0; j < sizeof(libs) / sizeof(libs[0]); j++) {
				ops = cqpoll_policy_find(libs[j], &args);
				tpcq_lab_result_reset(&r, &t, pen[k], false);
				if (tpcq_lab_sim_ops(ops, args,
						     ops == cqpoll_policy_hybrid(),
						     &t, &c, seed, &r) != 0 ||
				    check_run(libs[j], &r, pen[k], bound, &least) != 0)
					goto fail;
				runs++;
			}
		}
	}
	printf("ok: %u schedules through the lab's clock, none below the "
	       "optimum (least %.3fx)\n", runs, least);
	free(t.at);
	tpcq_lab_result_release(&r);
	return 0;
fail:
	fprintf(stderr, "  trace %u (%zu arrivals), penalty %.0f\n", tr, t.n,
		pen[k]);
	free(t.at);
	tpcq_lab_result_release(&r);
	return 1;
}

static int
test_no_nap_control(void)
{
	struct tpcq_lab_cost c;
	struct tpcq_lab_trace t;
	struct tpcq_lab_result r;
	struct tpcq_lab_opt_in in = { .c = &c, .penalty = 10.0 };
	double with, without, hyb;
	uint64_t *w, *o;
	char why[256];

	if (tpcq_lab_cost_parse(TPCQ_LAB_COST_DEFAULT, &c, why, sizeof(why)) != 0 ||
	    tpcq_lab_trace_make(&t, "periodic", 5000, 0.2, 3, why, sizeof(why)) != 0 ||
	    tpcq_lab_result_alloc(&r, 0) != 0) {
		fprintf(stderr, "FAIL: setup: %s\n", why);
		return 1;
	}
	w = malloc(t.n * sizeof(*w));
	o = malloc(t.n * sizeof(*o));
	if (w == NULL || o == NULL)
		return 1;
	tpcq_lab_draws(&c, 3, t.n, w, o);
	in.at = t.at;
	in.n = t.n;
	in.w = w;
	in.o = o;
	in.naps = true;
	with = tpcq_lab_opt_bound(&in);
	in.naps = false;
	without = tpcq_lab_opt_bound(&in);
	tpcq_lab_result_reset(&r, &t, 10.0, false);
	if (tpcq_lab_sim_policy("hybrid:penalty=10", &t, &c, 3, &r) != 0)
		return 1;
	hyb = (double)r.cpu_ns + 10.0 * r.lat_sum_ns;
	free(w);
	free(o);
	tpcq_lab_trace_free(&t);
	tpcq_lab_result_release(&r);
	if (!(hyb < without) || !(hyb >= with)) {
		fprintf(stderr, "FAIL: periodic 5000/s, penalty 10: hybrid %.0f, "
			"optimum %.0f, without naps %.0f (hybrid must fall below "
			"the latter, not the former)\n", hyb, with, without);
		return 1;
	}
	printf("ok: the optimum without naps is caught: hybrid %.3fx it, %.3fx "
	       "the whole optimum\n", hyb / without, hyb / with);
	return 0;
}

/* Naps 1 us at every decide() that saw completions, else sleeps. */
static enum cqpoll_policy_action
napper_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct cqpoll_policy_nap *nap = state;

	(void)now_ns;
	if (completions > 0)
		nap->fn(nap->arg, 1000);
	return CQPOLL_POLICY_SLEEP;
}

static int
napper_init(void *state, const char *args)
{
	(void)args;
	memset(state, 0, sizeof(struct cqpoll_policy_nap));
	return 0;
}

static const struct cqpoll_policy_ops napper_ops = {
	.name = "napper",
	.state_size = sizeof(struct cqpoll_policy_nap),
	.init = napper_init,
	.decide = napper_decide,
};

static int
test_nap_charged(void)
{
	struct tpcq_lab_cost c = { .poll_ns = 100, .arm_ns = 1000,
				   .wake_ns = 30000, .wake_p99_ns = 30000,
				   .wake_cpu_ns = 5000 };
	uint64_t at[] = { 0, 1000000, 2000000, 3000000, 3000500 };
	struct tpcq_lab_trace t = { .at = at, .n = 5 };
	struct tpcq_lab_result r;
	uint64_t cpu;

	if (tpcq_lab_result_alloc(&r, 0) != 0)
		return 1;
	tpcq_lab_result_reset(&r, &t, 1.0, false);
	if (tpcq_lab_sim_ops(&napper_ops, "", true, &t, &c, 1, &r) != 0)
		return 1;
	/*
	 * Arrival 0 is polled; 1, 2 and 3 end a sleep; 4 comes during the nap
	 * after 3. Each of the four decide()s that saw completions naps, the
	 * three after a wake-up among them: 4 naps of a wake-up's CPU each,
	 * 3 sleeps of an arm and a wake-up's CPU, 7 polls (one after each
	 * wake-up, the last arrival's and one after the naps).
	 */
	cpu = 4 * c.wake_cpu_ns + 3 * (c.arm_ns + c.wake_cpu_ns);
	tpcq_lab_result_release(&r);
	if (r.naps != 4 || r.wakeups != 3 || r.cpu_ns < cpu ||
	    r.cpu_ns > cpu + 10 * c.poll_ns) {
		fprintf(stderr, "FAIL: naps after a wake-up: %" PRIu64 " naps, %"
			PRIu64 " wake-ups, CPU %" PRIu64 " ns (want 4, 3, %" PRIu64
			" ns + the polls)\n", r.naps, r.wakeups, r.cpu_ns, cpu);
		return 1;
	}
	printf("ok: naps after a wake-up charged: %" PRIu64 " naps, CPU %" PRIu64
	       " ns\n", r.naps, r.cpu_ns);
	return 0;
}

int
main(void)
{
	if (test_brute() != 0 || test_clock() != 0 || test_nap_charged() != 0 ||
	    test_no_nap_control() != 0)
		return 1;
	return 0;
}
