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
 * The clairvoyant schedule knows every gap: it sleeps exactly when the gap
 * exceeds the break-even time, arm + wake-up CPU + penalty x the mean
 * wake-up latency (ski rental: the rent is polling, the purchase a sleep),
 * and spins otherwise. A policy's competitive ratio is its cost, CPU +
 * penalty x the latency it added, over the clairvoyant's on the same trace.
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
};

static uint64_t
wake_draw(struct sim *s)
{
	double u1 = tpcq_lab_uniform(&s->rng), u2 = tpcq_lab_uniform(&s->rng);
	double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);

	return (uint64_t)exp(s->mu + s->sigma * z);
}

static double
wake_mean(const struct sim *s)
{
	return exp(s->mu + s->sigma * s->sigma / 2.0);
}

static uint64_t
sim_nap(void *arg, uint64_t ns)
{
	struct sim *s = arg;
	uint64_t took = ns + wake_draw(s);

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

static void
arrive(struct tpcq_lab_result *r, uint64_t late_ns)
{
	tpcq_hist_add(r->lat, late_ns);
	r->lat_sum_ns += (double)late_ns;
}

/* Arrivals due by t: their latency, and how many. */
static unsigned int
collect(const struct tpcq_lab_trace *t, size_t *i, uint64_t now,
	struct tpcq_lab_result *r)
{
	unsigned int k = 0;

	while (*i < t->n && T0_NS + t->at[*i] <= now) {
		arrive(r, now - (T0_NS + t->at[*i]));
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
		r->cpu_ns += c->poll_ns;
		nap0 = s.nap_ns;
		a = ops->decide(state, k, now);
		if (s.nap_ns != nap0) {
			now += s.nap_ns - nap0;
			r->naps++;
		}
		if (k > 0 || a != CQPOLL_POLICY_SLEEP || i >= t->n)
			continue;
		now += c->arm_ns;
		r->cpu_ns += c->arm_ns;
		/* The poll after the arm finds what came meanwhile: no sleep. */
		if (T0_NS + t->at[i] <= now) {
			k = collect(t, &i, now, r);
			ops->decide(state, k, now);
			continue;
		}
		r->wakeups++;
		r->cpu_ns += c->wake_cpu_ns;
		nap0 = wake_draw(&s);
		now = T0_NS + t->at[i] + nap0;
		k = collect(t, &i, now, r);
		now += c->poll_ns;
		r->cpu_ns += c->poll_ns;
		if (ops->wake_cost != NULL)
			ops->wake_cost(state, nap0);
		ops->decide(state, k, now);
	}
	r->span_ns = now - (T0_NS + t->at[0]);
	free(state);
	return 0;
}

/*
 * Sleeps exactly through the gaps longer than threshold_ns (break-even for
 * the clairvoyant schedule), on the same clock and costs as the policies:
 * whatever arrives during its wake-up is read by it, as a policy's would be.
 */
static void
sim_clairvoyant(const struct tpcq_lab_trace *t, const struct tpcq_lab_cost *c,
		uint64_t seed, double threshold_ns, struct tpcq_lab_result *r)
{
	uint64_t now = T0_NS + t->at[0], next, w;
	struct sim s;
	size_t i = 0;

	sim_init(&s, c, seed);
	while (i < t->n) {
		collect(t, &i, now, r);
		now += c->poll_ns;
		r->cpu_ns += c->poll_ns;
		if (i >= t->n)
			break;
		next = T0_NS + t->at[i];
		if (next <= now)
			continue;
		if ((double)(next - now) > threshold_ns) {
			w = wake_draw(&s);
			r->cpu_ns += c->arm_ns + c->wake_cpu_ns;
			r->wakeups++;
			now = next + w;
		} else {
			r->cpu_ns += next - now;
			now = next;
		}
	}
	r->span_ns = now - (T0_NS + t->at[0]);
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
			r->cpu_ns += c->poll_ns;
			last = now;
			continue;
		}
		/* Idle: iteration j polls at now + j x poll_ns. */
		next = T0_NS + t->at[i];
		need = last + spin_ns > now ? last + spin_ns - now : 0;
		j_sleep = need <= c->poll_ns ? 0 : (need - 1) / c->poll_ns;
		j_arr = (next - now + c->poll_ns - 1) / c->poll_ns;
		if (j_arr <= j_sleep) {
			now += j_arr * c->poll_ns;
			r->cpu_ns += j_arr * c->poll_ns;
			continue;
		}
		now += (j_sleep + 1) * c->poll_ns + c->arm_ns;
		r->cpu_ns += (j_sleep + 1) * c->poll_ns + c->arm_ns;
		if (next <= now) {
			collect(t, &i, now, r);
			last = now;
			continue;
		}
		r->wakeups++;
		r->cpu_ns += c->wake_cpu_ns + c->poll_ns;
		now = next + wake_draw(&s);
		collect(t, &i, now, r);
		now += c->poll_ns;
		last = now;
	}
	r->span_ns = now - (T0_NS + t->at[0]);
}

/*
 * The grid: each fixed spin budget (clairvoyant false), or each clairvoyant
 * schedule that sleeps through the gaps longer than that (true).
 */
static int
grid_run(const struct tpcq_lab_trace *t, const struct tpcq_lab_cost *c,
	 uint64_t seed, bool clairvoyant, struct tpcq_lab_grid *g)
{
	struct tpcq_lab_result r;
	double us = 1.0;
	unsigned int v = 0;

	g->n = 0;
	while (v <= TPCQ_LAB_GRID_MAX_US && g->n < TPCQ_LAB_GRID_POINTS) {
		memset(&r, 0, sizeof(r));
		r.lat = tpcq_hist_create();
		if (r.lat == NULL)
			return -ENOMEM;
		if (clairvoyant)
			sim_clairvoyant(t, c, seed, (double)v * 1000, &r);
		else
			sim_fixed((uint64_t)v * 1000, t, c, seed, &r);
		g->pt[g->n].spin_us = v;
		g->pt[g->n].cpu_ns = r.cpu_ns;
		g->pt[g->n].p99_ns = tpcq_hist_quantile(r.lat, 0.99);
		g->n++;
		tpcq_hist_free(r.lat);
		/* The next whole microsecond at least GRID_STEP above. */
		while ((unsigned int)(us + 0.5) <= v)
			us *= GRID_STEP;
		v = (unsigned int)(us + 0.5);
	}
	return 0;
}

static void
result_print(const struct tpcq_lab_result *r, const struct tpcq_lab_result *opt)
{
	double span = (double)r->span_ns;

	printf(" %-22s %6.2f %9.2f %9.2f %9.2f %10.0f %7.2f %7.2f\n", r->policy,
	       span > 0 ? 100.0 * (double)r->cpu_ns / span : 0.0,
	       (double)tpcq_hist_quantile(r->lat, 0.50) / 1e3,
	       (double)tpcq_hist_quantile(r->lat, 0.99) / 1e3,
	       (double)tpcq_hist_quantile(r->lat, 0.999) / 1e3,
	       span > 0 ? (double)r->wakeups * 1e9 / span : 0.0,
	       opt->cpu_ns ? (double)r->cpu_ns / (double)opt->cpu_ns : 0.0,
	       opt->cost > 0 ? r->cost / opt->cost : 0.0);
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

int
tpcq_lab_run(const struct tpcq_params *p)
{
	static char specs[TPCQ_LAB_POLICIES_MAX][TPCQ_SWEEP_SPEC_MAX];
	struct tpcq_lab_result opt, *rs = NULL;
	static struct tpcq_lab_grid grid, cgrid;
	struct tpcq_lab_trace trace;
	struct tpcq_lab_cost cost;
	struct tpcq_floors floors;
	const char *tname = p->sim_trace != NULL ? p->sim_trace : "poisson";
	unsigned int n = 0, i;
	char why[512], list[1024];
	int ret = TPCQ_EXIT_FAIL, r;
	double breakeven;
	struct sim s;

	memset(&opt, 0, sizeof(opt));
	memset(&trace, 0, sizeof(trace));
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
	if (tpcq_lab_trace_make(&trace, tname, (double)p->rate, p->duration_s,
				p->faults.seed, why, sizeof(why)) != 0)
		goto usage;

	rs = calloc(n, sizeof(*rs));
	opt.lat = tpcq_hist_create();
	if (rs == NULL || opt.lat == NULL)
		goto oom;
	sim_init(&s, &cost, p->faults.seed);
	breakeven = (double)(cost.arm_ns + cost.wake_cpu_ns) +
		p->sim_penalty * wake_mean(&s);
	sim_clairvoyant(&trace, &cost, p->faults.seed, breakeven, &opt);
	opt.cost = (double)opt.cpu_ns + p->sim_penalty * opt.lat_sum_ns;
	snprintf(opt.policy, sizeof(opt.policy), "clairvoyant");
	for (i = 0; i < n; i++) {
		memcpy(rs[i].policy, specs[i], sizeof(rs[i].policy));
		rs[i].lat = tpcq_hist_create();
		if (rs[i].lat == NULL)
			goto oom;
		r = sim_policy(specs[i], &trace, &cost, p->faults.seed, &rs[i]);
		if (r != 0) {
			snprintf(why, sizeof(why), "--sim-policies: '%.127s': %s",
				 specs[i], r == -EINVAL ? "bad parameters" :
				 "out of memory");
			goto usage;
		}
		rs[i].cost = (double)rs[i].cpu_ns + p->sim_penalty * rs[i].lat_sum_ns;
	}

	grid.n = 0;
	cgrid.n = 0;
	for (i = 0; i < n; i++)
		if (strncmp(specs[i], "adaptive", 8) == 0 ||
		    strncmp(specs[i], "target-p99:", 11) == 0)
			break;
	if (i < n && (grid_run(&trace, &cost, p->faults.seed, false, &grid) != 0 ||
		      grid_run(&trace, &cost, p->faults.seed, true, &cgrid) != 0))
		goto oom;

	printf("testpmd-cq --sim: trace %s, %zu arrivals over %.3f s (mean %.0f/s), "
	       "seed %" PRIu64 "\n", trace.name, trace.n,
	       (double)(trace.at[trace.n - 1] - trace.at[0]) / 1e9,
	       (double)(trace.n - 1) * 1e9 /
	       (double)(trace.at[trace.n - 1] - trace.at[0]), p->faults.seed);
	printf(" cost --sim-cost=poll_ns=%" PRIu64 ",arm_ns=%" PRIu64 ",wake_ns=%"
	       PRIu64 ",wake_p99_ns=%" PRIu64 ",wake_cpu_ns=%" PRIu64
	       "%s; penalty %.3g CPU ns per ns of latency; break-even %.2f us\n",
	       cost.poll_ns, cost.arm_ns, cost.wake_ns, cost.wake_p99_ns,
	       cost.wake_cpu_ns, p->sim_cost != NULL ? "" : p->floors ?
	       " (from the floors)" : " (the default)",
	       p->sim_penalty, breakeven / 1e3);
	printf(" %-22s %6s %9s %9s %9s %10s %7s %7s\n", "policy", "cpu_%",
	       "p50_us", "p99_us", "p99.9_us", "wakeups/s", "cpu/opt", "ratio");
	result_print(&opt, &opt);
	for (i = 0; i < n; i++)
		result_print(&rs[i], &opt);
	printf(" ratio: the competitive ratio, (CPU + penalty x latency) over "
	       "the clairvoyant's\n");
	tpcq_lab_goals_print(rs, n, &opt, tname, &grid, &cgrid);
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
		tpcq_hist_free(rs[i].lat);
	free(rs);
	tpcq_hist_free(opt.lat);
	tpcq_lab_trace_free(&trace);
	return ret;
}
