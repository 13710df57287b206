/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll-lab --sim-sched: 64 poll groups on 16 lcores on a virtual clock,
 * placed three ways: static (group g on lcore g % 16, for good), by the
 * library's consolidating scheduler (cqpoll_sched.h, stepped every 10 ms on
 * the load each group had), and by SPDK's rule (lab_sched_spdk.c), on the
 * same traces and the same wake-up draws. Each lcore serves its groups'
 * completions in arrival order (SCHED_WORK_NS each), spins SCHED_SPIN_NS
 * after its last one, then arms and sleeps, paying the cost model's wake-up
 * (latency and CPU) when the next arrives; a parked lcore, one without
 * groups, sleeps. A move costs the cost model's arm on both lcores and a
 * wake-up's CPU on the new one; completions queued before a move are
 * served where they were.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll_sched.h"
#include "hist.h"
#include "lab.h"
#include "lab_sched.h"
#include "progress.h"

#define SCHED_INTERVAL_NS 10000000ULL
#define SCHED_DURATION_NS 500000000ULL
/* The work a completion takes: an RPC handler's. */
#define SCHED_WORK_NS 10000ULL
/* The lcores' policy: spin:50. */
#define SCHED_SPIN_NS 50000ULL
/* Load levels: the busy share of an lcore under static placement. */
#define SCHED_LOW 0.05
#define SCHED_HIGH 0.50
/* The goals: CPU 30 % below static at low load, at a p99 within 10 %. */
#define GOAL_CPU_LOW 0.70
#define GOAL_CPU_HIGH 1.00
#define GOAL_P99 1.10
/* onoff's cycle (lab_trace.c's default): phases are drawn over it. */
#define ONOFF_CYCLE_NS 10000000ULL

enum { PLACE_STATIC, PLACE_CQPOLL, PLACE_SPDK, PLACE_N };
static const char *const place_name[PLACE_N] = { "static", "cqpoll_sched", "spdk" };

struct arrival {
	uint64_t at;
	uint32_t g, k;
};

struct lcore {
	uint64_t t_free;   /* done with its work; spins SCHED_SPIN_NS more */
	uint64_t cpu_ns;
};

struct run {
	const struct tpcq_lab_cost *c;
	struct tpcq_lab_trace tr[TPCQ_LAB_SCHED_GROUPS];
	uint64_t seed;
	double mu, sigma;
	struct arrival *buf;
	size_t cap;
};

/* One placement's outcome on one seed. */
struct outcome {
	double cpu_cores, p99_us, lcores, moves_s;
};

/* The wake-up of arrival k of group g, the same under every placement. */
static uint64_t
wake_draw(const struct run *r, uint32_t g, uint32_t k)
{
	uint64_t st = r->seed ^ ((uint64_t)g << 40) ^ ((uint64_t)k * TPCQ_PRNG_GAMMA);
	double u1, u2;

	(void)tpcq_prng_unit(&st);
	u1 = tpcq_prng_unit(&st);
	u2 = tpcq_prng_unit(&st);
	return (uint64_t)exp(r->mu + r->sigma * sqrt(-2.0 * log(u1)) *
			     cos(2.0 * M_PI * u2));
}

static int
cmp_arrival(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->g < y->g ? -1 : x->g > y->g;
}

/* The groups' traces: onoff with a phase of its own per group (independent
 * connections), diurnal on one shared day. */
static int
traces_make(struct run *r, const char *trace, double util, uint64_t seed)
{
	double rate = util / (SCHED_WORK_NS * 1e-9) /
		      (TPCQ_LAB_SCHED_GROUPS / TPCQ_LAB_SCHED_LCORES);
	bool onoff = strcmp(trace, "onoff") == 0;
	double extra = onoff ? ONOFF_CYCLE_NS * 1e-9 : 0;
	uint64_t s = seed * 7919 + 1, phase;
	char why[256];
	uint32_t g;
	size_t i, n;

	for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++) {
		if (tpcq_lab_trace_make(&r->tr[g], trace, rate,
					SCHED_DURATION_NS * 1e-9 + extra,
					seed * 1000 + g, why, sizeof(why)) != 0) {
			fprintf(stderr, "%s: %s\n", tpcq_lab_prog(), why);
			return -EINVAL;
		}
		if (!onoff)
			continue;
		phase = (uint64_t)(tpcq_prng_unit(&s) * ONOFF_CYCLE_NS);
		for (i = 0, n = 0; i < r->tr[g].n; i++)
			if (r->tr[g].at[i] >= phase &&
			    r->tr[g].at[i] - phase < SCHED_DURATION_NS)
				r->tr[g].at[n++] = r->tr[g].at[i] - phase;
		r->tr[g].n = n;
	}
	return 0;
}

/* Serve one arrival on lcore l; its latency into h. */
static void
serve(const struct run *r, struct lcore *l, const struct arrival *a,
      struct tpcq_hist *h)
{
	uint64_t start = a->at, gap;

	if (a->at <= l->t_free) {
		start = l->t_free;
	} else {
		gap = a->at - l->t_free;
		if (gap <= SCHED_SPIN_NS) {
			l->cpu_ns += gap;
		} else {
			/* Spun its budget, armed, slept: woken by this one. */
			l->cpu_ns += SCHED_SPIN_NS + r->c->arm_ns + r->c->wake_cpu_ns;
			start = a->at + wake_draw(r, a->g, a->k);
		}
	}
	l->t_free = start + SCHED_WORK_NS;
	l->cpu_ns += SCHED_WORK_NS;
	tpcq_hist_add(h, l->t_free - a->at);
}

static int
simulate(struct run *r, int place, struct tpcq_hist *h, struct outcome *out)
{
	struct lcore lc[TPCQ_LAB_SCHED_LCORES] = { 0 };
	static uint32_t lcore_of[TPCQ_LAB_SCHED_GROUPS], before[TPCQ_LAB_SCHED_GROUPS];
	static size_t next[TPCQ_LAB_SCHED_GROUPS];
	static double load[TPCQ_LAB_SCHED_GROUPS];
	struct cqpoll_sched_move mv[TPCQ_LAB_SCHED_GROUPS];
	struct cqpoll_sched_conf conf = { .nb_lcores = TPCQ_LAB_SCHED_LCORES,
					  .nb_groups = TPCQ_LAB_SCHED_GROUPS };
	struct cqpoll_sched *s = NULL;
	uint64_t t_end, moves = 0, active = 0, cpu = 0, ivs = 0;
	uint32_t g, c;
	size_t n, i;
	int k;

	if (place == PLACE_CQPOLL && (s = cqpoll_sched_create(&conf)) == NULL)
		return -errno;
	for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++) {
		lcore_of[g] = g % TPCQ_LAB_SCHED_LCORES;
		next[g] = 0;
	}
	for (t_end = SCHED_INTERVAL_NS; t_end <= SCHED_DURATION_NS;
	     t_end += SCHED_INTERVAL_NS, ivs++) {
		for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
			load[g] = 0;
		for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++) {
			n = 0;
			for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++) {
				if (lcore_of[g] != c)
					continue;
				for (; next[g] < r->tr[g].n &&
				       r->tr[g].at[next[g]] < t_end; next[g]++) {
					if (n == r->cap) {
						size_t cap = r->cap ? r->cap * 2 : 4096;
						struct arrival *b = realloc(r->buf,
								cap * sizeof(*b));

						if (b == NULL) {
							cqpoll_sched_destroy(s);
							return -ENOMEM;
						}
						r->buf = b;
						r->cap = cap;
					}
					r->buf[n++] = (struct arrival){
						r->tr[g].at[next[g]], g,
						(uint32_t)next[g] };
					load[g] += (double)SCHED_WORK_NS /
						   SCHED_INTERVAL_NS;
				}
			}
			qsort(r->buf, n, sizeof(*r->buf), cmp_arrival);
			for (i = 0; i < n; i++)
				serve(r, &lc[c], &r->buf[i], h);
		}
		for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
			if (load[g] > 1)
				load[g] = 1;
		memcpy(before, lcore_of, sizeof(before));
		if (place == PLACE_CQPOLL) {
			for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
				cqpoll_sched_load_set(s, g, load[g]);
			k = cqpoll_sched_step(s, mv, TPCQ_LAB_SCHED_GROUPS);
			for (i = 0; k > 0 && i < (size_t)k; i++)
				lcore_of[mv[i].group] = mv[i].to;
		} else if (place == PLACE_SPDK) {
			tpcq_lab_spdk_step(TPCQ_LAB_SCHED_LCORES,
					   TPCQ_LAB_SCHED_GROUPS, load, lcore_of);
		}
		for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++) {
			if (before[g] == lcore_of[g])
				continue;
			moves++;
			lc[before[g]].cpu_ns += r->c->arm_ns;
			lc[lcore_of[g]].cpu_ns += r->c->arm_ns + r->c->wake_cpu_ns;
		}
		for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++)
			for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
				if (lcore_of[g] == c) {
					active++;
					break;
				}
	}
	cqpoll_sched_destroy(s);
	for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++) {
		if (lc[c].t_free < SCHED_DURATION_NS)
			lc[c].cpu_ns += SCHED_DURATION_NS - lc[c].t_free < SCHED_SPIN_NS ?
				SCHED_DURATION_NS - lc[c].t_free : SCHED_SPIN_NS;
		cpu += lc[c].cpu_ns;
	}
	out->cpu_cores = (double)cpu / SCHED_DURATION_NS;
	out->p99_us = tpcq_hist_quantile(h, 0.99) / 1e3;
	out->lcores = (double)active / (double)ivs;
	out->moves_s = moves / (SCHED_DURATION_NS * 1e-9);
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One trace at one load over the seeds: the table's rows and the goal line. */
static int
compare(const struct tpcq_lab_opts *o, const struct tpcq_lab_cost *cost,
	const char *trace, const char *level, double util)
{
	static double col[PLACE_N][6][TPCQ_LAB_SEEDS_MAX];
	struct outcome out[PLACE_N];
	struct tpcq_hist *h;
	struct run r;
	double row[PLACE_N][6], goal_cpu;
	unsigned int sd, p, m;
	int ret = 0;
	bool pass;

	memset(&r, 0, sizeof(r));
	r.c = cost;
	r.mu = log((double)cost->wake_ns);
	r.sigma = cost->wake_p99_ns > cost->wake_ns ?
		log((double)cost->wake_p99_ns / (double)cost->wake_ns) /
		TPCQ_LAB_Z99 : 0.0;
	h = tpcq_hist_create();
	if (h == NULL)
		return -ENOMEM;
	for (sd = 0; sd < o->seeds && ret == 0; sd++) {
		tpcq_progress("%s at %s load, seed %u of %u", trace, level, sd + 1,
			      o->seeds);
		r.seed = o->seed + sd;
		ret = traces_make(&r, trace, util, r.seed);
		for (p = 0; p < PLACE_N && ret == 0; p++) {
			memset(h, 0, sizeof(*h));
			ret = simulate(&r, (int)p, h, &out[p]);
			col[p][0][sd] = out[p].cpu_cores;
			col[p][1][sd] = out[p].p99_us;
			col[p][2][sd] = out[p].lcores;
			col[p][3][sd] = out[p].moves_s;
		}
		for (p = 0; p < PLACE_N && ret == 0; p++) {
			col[p][4][sd] = out[p].cpu_cores / out[PLACE_STATIC].cpu_cores;
			col[p][5][sd] = out[p].p99_us / out[PLACE_STATIC].p99_us;
		}
		for (p = 0; p < TPCQ_LAB_SCHED_GROUPS; p++)
			tpcq_lab_trace_free(&r.tr[p]);
	}
	tpcq_progress_end();
	tpcq_hist_free(h);
	free(r.buf);
	if (ret != 0)
		return ret;
	for (p = 0; p < PLACE_N; p++) {
		for (m = 0; m < 6; m++)
			row[p][m] = median(col[p][m], o->seeds);
		printf("%-8s %-5s %-13s %9.2f %9.1f %9.3f %9.3f %7.2f %8.0f\n",
		       trace, level, place_name[p], row[p][0], row[p][1],
		       row[p][4], row[p][5], row[p][2], row[p][3]);
	}
	goal_cpu = util < SCHED_HIGH ? GOAL_CPU_LOW : GOAL_CPU_HIGH;
	for (p = PLACE_CQPOLL; p < PLACE_N; p++) {
		pass = row[p][4] <= goal_cpu && row[p][5] <= GOAL_P99;
		printf("goal %s %s %s: cpu %.3fx static (goal <= %.2f), "
		       "p99 %.3fx static (goal <= %.2f): %s\n", trace, level,
		       place_name[p], row[p][4], goal_cpu, row[p][5], GOAL_P99,
		       pass ? "PASS" : "FAIL");
	}
	return 0;
}

int
tpcq_lab_sched_run(const struct tpcq_lab_opts *o)
{
	static const char *const traces[] = { "onoff", "diurnal" };
	struct tpcq_lab_cost cost;
	char why[256];
	unsigned int t;
	int r;

	if (tpcq_lab_cost_parse(o->cost != NULL ? o->cost : TPCQ_LAB_COST_DEFAULT,
				&cost, why, sizeof(why)) != 0) {
		fprintf(stderr, "%s: %s\n", tpcq_lab_prog(), why);
		return TPCQ_LAB_EXIT_USAGE;
	}
	printf("sched: %u lcores x %u groups, %u seeds from %llu, %.1f s, "
	       "interval %llu ms, work %llu ns a completion, lcores spin %llu ns "
	       "then sleep; cost poll_ns=%llu,arm_ns=%llu,wake_ns=%llu,"
	       "wake_p99_ns=%llu,wake_cpu_ns=%llu; load: an lcore's busy share "
	       "under static placement, low %.2f, high %.2f (diurnal: at its "
	       "peak); medians over seeds\n",
	       TPCQ_LAB_SCHED_LCORES, TPCQ_LAB_SCHED_GROUPS, o->seeds,
	       (unsigned long long)o->seed, SCHED_DURATION_NS * 1e-9,
	       SCHED_INTERVAL_NS / 1000000ULL, SCHED_WORK_NS, SCHED_SPIN_NS,
	       (unsigned long long)cost.poll_ns, (unsigned long long)cost.arm_ns,
	       (unsigned long long)cost.wake_ns,
	       (unsigned long long)cost.wake_p99_ns,
	       (unsigned long long)cost.wake_cpu_ns, SCHED_LOW, SCHED_HIGH);
	printf("%-8s %-5s %-13s %9s %9s %9s %9s %7s %8s\n", "trace", "load",
	       "placement", "cpu", "p99_us", "cpu_x", "p99_x", "lcores",
	       "moves/s");
	for (t = 0; t < 2; t++) {
		r = compare(o, &cost, traces[t], "low", SCHED_LOW);
		if (r == 0)
			r = compare(o, &cost, traces[t], "high", SCHED_HIGH);
		if (r != 0) {
			fprintf(stderr, "%s: --sim-sched: %s\n", tpcq_lab_prog(),
				strerror(-r));
			return TPCQ_LAB_EXIT_FAIL;
		}
	}
	return TPCQ_LAB_EXIT_OK;
}
