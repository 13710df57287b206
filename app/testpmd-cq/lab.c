/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab (--sim). Each policy runs through its own ops, the code the
 * poll group calls, on a virtual clock that the cost model advances:
 *  - an awake iteration polls, takes poll_ns of CPU, then asks decide();
 *  - a sleep takes arm_ns (poll and arm; an arrival by then is found by the
 *    re-poll and cancels the sleep), then lasts until the next arrival plus
 *    a wake-up latency drawn from a log-normal (median wake_ns, 99th
 *    percentile wake_p99_ns), and costs wake_cpu_ns of CPU; the policy
 *    learns that latency through wake_cost(), as from a device timestamp;
 *  - the hybrid policy's naps advance the clock by the nap plus a drawn
 *    wake-up latency, at no CPU.
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

#include "cqpoll_policy_private.h"
#include "lab.h"
#include "testpmd_cq.h"

/* The virtual clock starts here: a policy may read 0 as "never". */
#define T0_NS 1000000000ULL
/* The one-sided normal quantile of 0.99: the wake-up's log-normal spread. */
#define Z99 2.326347874
/* The grid of fixed spin budgets (lab.h): each about 15% above the last. */
#define GRID_STEP 1.15

struct sim {
	const struct tpcq_lab_cost *c;
	uint64_t rng;
	double mu, sigma;
	uint64_t nap_ns;          /* virtual time the naps took */
	size_t next;              /* the arrival a nap now waits for */
};

/* Draws of a sleep's wake-up and of a nap's overshoot apart. */
#define DRAW_SLEEP 0
#define DRAW_NAP 1

/*
 * The wake-up latency of the sleep (or the overshoot of the nap) that the
 * arrival of index k ends, a function of the seed and k alone: every
 * schedule that sleeps before arrival k draws the same latency (common
 * random numbers), so that comparing schedules, and choosing the best of
 * them in hindsight, compares their decisions, not their luck.
 */
static uint64_t
wake_draw(const struct sim *s, size_t k, unsigned int what)
{
	uint64_t st = s->rng ^ ((uint64_t)k * 0x9e3779b97f4a7c15ULL) ^
		      ((uint64_t)what << 62);
	double u1, u2, z;

	/* Two rounds apart from the stream's start, so nearby keys differ. */
	(void)tpcq_lab_uniform(&st);
	u1 = tpcq_lab_uniform(&st);
	u2 = tpcq_lab_uniform(&st);
	z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
	return (uint64_t)exp(s->mu + s->sigma * z);
}

static uint64_t
sim_nap(void *arg, uint64_t ns)
{
	struct sim *s = arg;
	uint64_t took = ns + wake_draw(s, s->next, DRAW_NAP);

	s->nap_ns += took;
	return took;
}

static void
sim_init(struct sim *s, const struct tpcq_lab_cost *c, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->c = c;
	s->rng = seed ^ 0x5bd1e995ULL;
	s->mu = log((double)c->wake_ns);
	s->sigma = c->wake_p99_ns > c->wake_ns ?
		log((double)c->wake_p99_ns / (double)c->wake_ns) / Z99 : 0.0;
}

static size_t
win_of(const struct tpcq_lab_result *r, uint64_t now)
{
	size_t w = (size_t)((now - r->t0) / TPCQ_LAB_WINDOW_NS);

	return w < r->nwin ? w : r->nwin - 1;
}

/* CPU spent by the poller at now. */
static void
spend(struct tpcq_lab_result *r, uint64_t now, uint64_t cpu_ns)
{
	r->cpu_ns += cpu_ns;
	if (r->win != NULL)
		r->win[win_of(r, now)] += (double)cpu_ns;
}

static void
arrive(struct tpcq_lab_result *r, uint64_t now, uint64_t late_ns)
{
	tpcq_hist_add(r->lat, late_ns);
	r->lat_sum_ns += (double)late_ns;
	if (r->win != NULL)
		r->win[win_of(r, now)] += r->penalty * (double)late_ns;
}

/* Arrivals due by t: their latency, and how many. */
static unsigned int
collect(const struct tpcq_lab_trace *t, size_t *i, uint64_t now,
	struct tpcq_lab_result *r)
{
	unsigned int k = 0;

	while (*i < t->n && T0_NS + t->at[*i] <= now) {
		arrive(r, now, now - (T0_NS + t->at[*i]));
		(*i)++;
		k++;
	}
	return k;
}

static int
sim_policy(const char *spec, const struct tpcq_lab_trace *t,
	   const struct tpcq_lab_cost *c, uint64_t seed, struct tpcq_lab_result *r)
{
	const struct cqpoll_policy_ops *ops;
	const char *args;
	uint64_t now = T0_NS + t->at[0], nap0;
	enum cqpoll_policy_action a;
	struct sim s;
	size_t i = 0;
	unsigned int k;
	void *state;

	ops = cqpoll_policy_find(spec, &args);
	if (ops == NULL)
		return -EINVAL;
	state = aligned_alloc(64, (ops->state_size + 63) / 64 * 64);
	if (state == NULL)
		return -ENOMEM;
	memset(state, 0, ops->state_size);
	if (ops->init(state, args) != 0) {
		free(state);
		return -EINVAL;
	}
	sim_init(&s, c, seed);
	/* The hybrid policy naps through its first member's hook. */
	if (ops == cqpoll_policy_hybrid()) {
		((struct cqpoll_policy_nap *)state)->fn = sim_nap;
		((struct cqpoll_policy_nap *)state)->arg = &s;
	}
	while (i < t->n) {
		k = collect(t, &i, now, r);
		now += c->poll_ns;
		spend(r, now, c->poll_ns);
		nap0 = s.nap_ns;
		s.next = i;
		a = ops->decide(state, k, now);
		if (s.nap_ns != nap0) {
			/* A nap is a sleep on a timer: its CPU, no arm. */
			spend(r, now, c->wake_cpu_ns);
			now += s.nap_ns - nap0;
			r->naps++;
		}
		if (k > 0 || a != CQPOLL_POLICY_SLEEP || i >= t->n)
			continue;
		now += c->arm_ns;
		spend(r, now, c->arm_ns);
		/* The poll after the arm finds what came meanwhile: no sleep. */
		if (T0_NS + t->at[i] <= now) {
			k = collect(t, &i, now, r);
			ops->decide(state, k, now);
			continue;
		}
		r->wakeups++;
		spend(r, now, c->wake_cpu_ns);
		nap0 = wake_draw(&s, i, DRAW_SLEEP);
		now = T0_NS + t->at[i] + nap0;
		k = collect(t, &i, now, r);
		now += c->poll_ns;
		spend(r, now, c->poll_ns);
		if (ops->wake_cost != NULL)
			ops->wake_cost(state, nap0);
		ops->decide(state, k, now);
	}
	r->span_ns = now - (T0_NS + t->at[0]);
	free(state);
	return 0;
}

/*
 * What sim_policy() does with the spin policy, iteration for iteration and
 * draw for draw, but a whole idle stretch at a time: the grid's hundred
 * budgets cost about as much as one policy's run.
 */
static void
sim_fixed(uint64_t spin_ns, const struct tpcq_lab_trace *t,
	  const struct tpcq_lab_cost *c, uint64_t seed, struct tpcq_lab_result *r)
{
	uint64_t now = T0_NS + t->at[0], last = 0, next, need, j_sleep, j_arr;
	struct sim s;
	size_t i = 0;

	sim_init(&s, c, seed);
	while (i < t->n) {
		if (collect(t, &i, now, r) > 0 || i >= t->n) {
			now += c->poll_ns;
			spend(r, now, c->poll_ns);
			last = now;
			continue;
		}
		/* Idle: iteration j polls at now + j x poll_ns. */
		next = T0_NS + t->at[i];
		need = spin_ns == UINT64_MAX ? UINT64_MAX :
		       last + spin_ns > now ? last + spin_ns - now : 0;
		j_sleep = need <= c->poll_ns ? 0 : (need - 1) / c->poll_ns;
		j_arr = (next - now + c->poll_ns - 1) / c->poll_ns;
		if (j_arr <= j_sleep) {
			now += j_arr * c->poll_ns;
			spend(r, now, j_arr * c->poll_ns);
			continue;
		}
		now += (j_sleep + 1) * c->poll_ns + c->arm_ns;
		spend(r, now, (j_sleep + 1) * c->poll_ns + c->arm_ns);
		if (next <= now) {
			collect(t, &i, now, r);
			last = now;
			continue;
		}
		r->wakeups++;
		spend(r, now, c->wake_cpu_ns + c->poll_ns);
		now = next + wake_draw(&s, i, DRAW_SLEEP);
		collect(t, &i, now, r);
		now += c->poll_ns;
		last = now;
	}
	r->span_ns = now - (T0_NS + t->at[0]);
}


/* The grid of fixed budgets of one seed, each with its latency histogram. */
struct grid {
	struct tpcq_lab_result pt[TPCQ_LAB_GRID_POINTS];
	unsigned int spin_us[TPCQ_LAB_GRID_POINTS];
	unsigned int n;
};

static void
result_reset(struct tpcq_lab_result *r, const struct tpcq_lab_trace *t,
	     double penalty, bool windows)
{
	struct tpcq_hist *lat = r->lat;
	double *win = r->win;
	size_t nwin = r->nwin;

	memset(lat, 0, sizeof(*lat));
	memset(r, 0, sizeof(*r));
	r->lat = lat;
	r->penalty = penalty;
	r->t0 = T0_NS + t->at[0];
	if (windows) {
		r->win = win;
		r->nwin = nwin;
		memset(win, 0, nwin * sizeof(*win));
	}
}

static int
result_alloc(struct tpcq_lab_result *r, size_t nwin)
{
	memset(r, 0, sizeof(*r));
	r->lat = tpcq_hist_create();
	r->nwin = nwin;
	r->win = nwin != 0 ? calloc(nwin, sizeof(*r->win)) : NULL;
	return r->lat == NULL || (nwin != 0 && r->win == NULL) ? -ENOMEM : 0;
}

static void
result_release(struct tpcq_lab_result *r)
{
	tpcq_hist_free(r->lat);
	free(r->win);
	r->lat = NULL;
	r->win = NULL;
}

static void
grid_budgets(struct grid *g)
{
	double us = 1.0;
	unsigned int v = 0;

	g->n = 0;
	while (v <= TPCQ_LAB_GRID_MAX_US && g->n < TPCQ_LAB_GRID_POINTS - 1) {
		g->spin_us[g->n++] = v;
		/* The next whole microsecond at least GRID_STEP above. */
		while ((unsigned int)(us + 0.5) <= v)
			us *= GRID_STEP;
		v = (unsigned int)(us + 0.5);
	}
	/* Polling: the last point. */
	g->spin_us[g->n++] = UINT32_MAX;
}

static void
grid_run(struct grid *g, const struct tpcq_lab_trace *t,
	 const struct tpcq_lab_cost *c, uint64_t seed, double penalty)
{
	unsigned int k;

	for (k = 0; k < g->n; k++) {
		result_reset(&g->pt[k], t, penalty, true);
		sim_fixed(g->spin_us[k] == UINT32_MAX ? UINT64_MAX :
			  (uint64_t)g->spin_us[k] * 1000, t, c, seed, &g->pt[k]);
		g->pt[k].cost = (double)g->pt[k].cpu_ns +
				penalty * g->pt[k].lat_sum_ns;
	}
}

/* The share of h's samples in buckets up to v's. */
static double
hist_share_upto(const struct tpcq_hist *h, uint64_t v)
{
	unsigned int i, top = tpcq_hist_index(v);
	uint64_t n = 0;

	if (h->count == 0)
		return 1.0;
	for (i = 0; i <= top && i < TPCQ_HIST_BUCKETS; i++)
		n += h->buckets[i];
	return (double)n / (double)h->count;
}

/*
 * The least CPU of a mix of two fixed budgets (a share x of the gaps with
 * one, the rest with the other) whose p99 is at most p99_ns: the mix's
 * latencies are the mixture of the two budgets', so it reaches p99_ns when
 * x F_a + (1 - x) F_b >= 0.99, F the share of each one's latencies within
 * p99_ns. 0: no mix reaches it.
 */
static double
mix_cpu(const struct grid *g, uint64_t p99_ns)
{
	double f[TPCQ_LAB_GRID_POINTS], best = 0, x, cpu;
	unsigned int a, b;

	for (a = 0; a < g->n; a++)
		f[a] = hist_share_upto(g->pt[a].lat, p99_ns);
	for (a = 0; a < g->n; a++) {
		if (f[a] < 0.99)
			continue;
		if (best == 0 || (double)g->pt[a].cpu_ns < best)
			best = (double)g->pt[a].cpu_ns;
		for (b = 0; b < g->n; b++) {
			if (f[b] >= 0.99 || g->pt[b].cpu_ns >= g->pt[a].cpu_ns)
				continue;
			x = (0.99 - f[b]) / (f[a] - f[b]);
			cpu = x * (double)g->pt[a].cpu_ns +
			      (1 - x) * (double)g->pt[b].cpu_ns;
			if (cpu < best)
				best = cpu;
		}
	}
	return best;
}

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
	M_CPU, M_P50, M_P99, M_P999, M_WAKE, M_COST, M_DP, M_FIXED, M_WIN,
	M_MIX, M_SPIN0, M_CPU_POLL, M_P99_POLL, M_TARGET, M_TARGET_MET, M_N
};

static void
row_print(const struct tpcq_lab_row *r)
{
	printf(" %-22s %6.2f %9.2f %9.2f %9.2f %10.0f %7.2f %6.3f %5.3f..%5.3f "
	       "%6.3f %5.3f..%5.3f %6.3f %5.3f..%5.3f %7.3f\n", r->policy,
	       r->cpu_pct, r->p50_us, r->p99_us, r->p999_us, r->wakeups_s,
	       r->cost_pct, r->x_dp, r->x_dp_lo, r->x_dp_hi, r->x_fixed,
	       r->x_fixed_lo, r->x_fixed_hi, r->x_win, r->x_win_lo, r->x_win_hi,
	       r->x_mix);
}

static int
policies_split(const char *list, char (*out)[TPCQ_SWEEP_SPEC_MAX],
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
		if (l == 0 || l >= TPCQ_SWEEP_SPEC_MAX || *n == TPCQ_LAB_POLICIES_MAX) {
			snprintf(why, len, "--sim-policies: expected up to %d "
				 "policies separated by ';'", TPCQ_LAB_POLICIES_MAX);
			return -EINVAL;
		}
		memcpy(out[*n], p, l);
		out[*n][l] = '\0';
		if (cqpoll_policy_find(out[*n], &args) == NULL) {
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
policy_spec(const char *spec, double penalty, char *out, size_t len)
{
	const char *args;
	const struct cqpoll_policy_ops *ops = cqpoll_policy_find(spec, &args);

	if ((ops == cqpoll_policy_adaptive() || ops == cqpoll_policy_hybrid()) &&
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
tpcq_lab_run(const struct tpcq_params *p)
{
	static char specs[TPCQ_LAB_POLICIES_MAX][TPCQ_SWEEP_SPEC_MAX];
	static char run_specs[TPCQ_LAB_POLICIES_MAX][TPCQ_SWEEP_SPEC_MAX];
	static struct grid grid;
	struct tpcq_lab_result *rs = NULL;
	struct tpcq_lab_trace trace;
	struct tpcq_lab_cost cost;
	struct tpcq_floors floors;
	struct tpcq_lab_row *rows = NULL;
	struct tpcq_lab_summary sum;
	const char *tname = p->sim_trace != NULL ? p->sim_trace : "poisson";
	unsigned int n = 0, i, k, seeds = (unsigned int)p->sim_seeds, sd, best;
	double *m = NULL, *v = NULL, wq[TPCQ_LAB_OPT_QUANTILES], pen = p->sim_penalty;
	double dp, win, span, fixed_us[TPCQ_LAB_SEEDS_MAX], arrivals[TPCQ_LAB_SEEDS_MAX];
	double gap[TPCQ_LAB_SEEDS_MAX], dps[TPCQ_LAB_SEEDS_MAX], wins[TPCQ_LAB_SEEDS_MAX];
	double bests[TPCQ_LAB_SEEDS_MAX], polls[TPCQ_LAB_SEEDS_MAX], target, mx;
	char why[512], list[1024];
	int ret = TPCQ_EXIT_FAIL, r;
	size_t nwin, w;
	uint64_t p99, poll_p99, tg;

	memset(&trace, 0, sizeof(trace));
	memset(&grid, 0, sizeof(grid));
	if (p->floors && p->sim_cost == NULL) {
		/* This machine's cost, from the floors measured now. */
		if (tpcq_floors_measure(p, NULL, 0, 0.0, &floors) != 0 ||
		    !floors.valid) {
			fprintf(stderr, TPCQ_PROG ": --sim --floors: cannot measure "
				"the floors for the cost model; give --sim-cost\n");
			return TPCQ_EXIT_FAIL;
		}
		tpcq_floors_print(&floors);
		tpcq_lab_cost_from_floors(&floors, &cost);
	} else if (tpcq_lab_cost_parse(p->sim_cost != NULL ? p->sim_cost :
				       TPCQ_LAB_COST_DEFAULT, &cost, why,
				       sizeof(why)) != 0) {
		goto usage;
	}
	/* The semicolon list, or the defaults with ',' between policies. */
	if (p->sim_policies != NULL) {
		snprintf(list, sizeof(list), "%s", p->sim_policies);
	} else {
		snprintf(list, sizeof(list), "%s", TPCQ_LAB_POLICIES_DEFAULT);
		for (i = 0; list[i] != '\0'; i++)
			if (list[i] == ',')
				list[i] = ';';
	}
	if (policies_split(list, specs, &n, why, sizeof(why)) != 0)
		goto usage;
	for (i = 0; i < n; i++)
		policy_spec(specs[i], pen, run_specs[i], sizeof(run_specs[i]));
	/* Check the trace spec (and a file's contents) once before the seeds. */
	if (tpcq_lab_trace_make(&trace, tname, (double)p->rate, p->duration_s,
				p->faults.seed, why, sizeof(why)) != 0)
		goto usage;
	/* A file is one trace: its seeds differ only in the wake-up draws. */
	nwin = (size_t)(p->duration_s * 1e9 / TPCQ_LAB_WINDOW_NS) + 2;
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
		if (result_alloc(&rs[i], 0) != 0)
			goto oom;
	grid_budgets(&grid);
	for (k = 0; k < grid.n; k++)
		if (result_alloc(&grid.pt[k], nwin) != 0)
			goto oom;
	tpcq_lab_wake_quantiles(&cost, TPCQ_LAB_OPT_QUANTILES, wq);

#define M(pol, seed, what) m[((size_t)(pol) * M_N + (what)) * seeds + (seed)]
	for (sd = 0; sd < seeds; sd++) {
		uint64_t seed = p->faults.seed + sd;

		if (tpcq_lab_trace_make(&trace, tname, (double)p->rate,
					p->duration_s, seed, why, sizeof(why)) != 0)
			goto usage;
		arrivals[sd] = (double)trace.n;
		gap[sd] = (double)(trace.at[trace.n - 1] - trace.at[0]) /
			  (double)(trace.n - 1);
		dp = tpcq_lab_opt_cost(trace.at, trace.n, &cost, pen, wq,
				       TPCQ_LAB_OPT_QUANTILES);
		if (dp < 0)
			goto oom;
		grid_run(&grid, &trace, &cost, seed, pen);
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
		polls[sd] = (double)grid.pt[grid.n - 1].cpu_ns;
		for (i = 0; i < n; i++) {
			result_reset(&rs[i], &trace, pen, false);
			r = sim_policy(run_specs[i], &trace, &cost, seed, &rs[i]);
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
			mx = mix_cpu(&grid, p99);
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
		}
	}
#undef M

	if (strncmp(tname, "file:", 5) == 0)
		printf("testpmd-cq --sim: trace %s, seeds %" PRIu64 "..%" PRIu64
		       " (the wake-up draws): ", tname, p->faults.seed,
		       p->faults.seed + seeds - 1);
	else
		printf("testpmd-cq --sim: trace %s, rate %" PRIu64 "/s, %.3g s, "
		       "seeds %" PRIu64 "..%" PRIu64 ": ", tname, p->rate,
		       p->duration_s, p->faults.seed, p->faults.seed + seeds - 1);
	printf("%.0f arrivals (median), mean gap %.2f us\n",
	       median(arrivals, seeds, NULL, NULL),
	       median(gap, seeds, NULL, NULL) / 1e3);
	printf(" cost --sim-cost=poll_ns=%" PRIu64 ",arm_ns=%" PRIu64 ",wake_ns=%"
	       PRIu64 ",wake_p99_ns=%" PRIu64 ",wake_cpu_ns=%" PRIu64
	       "%s; penalty %.3g CPU ns per ns of latency\n",
	       cost.poll_ns, cost.arm_ns, cost.wake_ns, cost.wake_p99_ns,
	       cost.wake_cpu_ns, p->sim_cost != NULL ? "" : p->floors ?
	       " (from the floors)" : " (the default)", pen);
	for (i = 0; i < seeds; i++) {
		wins[i] /= dps[i];
		bests[i] /= dps[i];
	}
	mx = median(fixed_us, seeds, NULL, NULL);
	printf(" yardsticks (median over the seeds): offline optimum (DP, %u "
	       "wake-up quantiles) %.0f ns per arrival; best fixed budget in "
	       "hindsight %s%.0f%s, cost %.3fx the optimum; best budget per %u ms "
	       "window %.3fx\n", TPCQ_LAB_OPT_QUANTILES,
	       median(dps, seeds, NULL, NULL) / median(arrivals, seeds, NULL, NULL),
	       isinf(mx) ? "" : "spin:", isinf(mx) ? 0.0 : mx,
	       isinf(mx) ? " (poll)" : "", median(bests, seeds, NULL, NULL),
	       (unsigned int)(TPCQ_LAB_WINDOW_NS / 1000000),
	       median(wins, seeds, NULL, NULL));
	printf(" %-22s %6s %9s %9s %9s %10s %7s %6s %12s %6s %12s %6s %12s %7s\n",
	       "policy", "cpu_%", "p50_us", "p99_us", "p99.9_us", "wakeups/s",
	       "cost_%", "/opt", "spread", "/fixed", "spread", "/win", "spread",
	       "cpu/mix");
	for (i = 0; i < n; i++)
		row_print(&rows[i]);
	printf(" cost_%%: (CPU + penalty x latency) per unit of time; /opt, "
	       "/fixed, /win: total cost over the offline optimum's, the best "
	       "fixed budget's, the best per-window budget's (median, min..max "
	       "over the seeds); cpu/mix: CPU over the best mix of two fixed "
	       "budgets at the policy's p99\n");
	memset(&sum, 0, sizeof(sum));
	sum.trace = tname;
	sum.rate = (double)p->rate;
	sum.penalty = pen;
	sum.mean_gap_ns = median(gap, seeds, NULL, NULL);
	sum.wake_p99_ns = cost.wake_p99_ns;
	sum.seeds = seeds;
	sum.fixed_us = mx;
	tpcq_lab_goals_print(rows, n, &sum);
	fflush(stdout);
	ret = TPCQ_EXIT_OK;
	goto out;
usage:
	fprintf(stderr, TPCQ_PROG ": %s\n", why);
	ret = TPCQ_EXIT_USAGE;
	goto out;
oom:
	fprintf(stderr, TPCQ_PROG ": out of memory\n");
out:
	for (i = 0; rs != NULL && i < n; i++)
		result_release(&rs[i]);
	for (k = 0; k < grid.n; k++)
		result_release(&grid.pt[k]);
	free(rs);
	free(rows);
	free(m);
	free(v);
	tpcq_lab_trace_free(&trace);
	return ret;
}
