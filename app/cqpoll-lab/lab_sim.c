/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lab's virtual clock (lab.c runs it): one policy, or one fixed spin
 * budget, through one trace with the cost model; and the grid of fixed
 * budgets the yardsticks are taken from.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cqpoll_group.h>

#include "cqpoll_policy_private.h"
#include "hist.h"
#include "lab.h"

/* The virtual clock starts here: a policy may read 0 as "never". */
#define T0_NS 1000000000ULL
/* The grid of fixed spin budgets (lab.h): each about 15% above the last. */
#define GRID_STEP 1.15

struct sim {
	const struct tpcq_lab_cost *c;
	uint64_t rng;
	double mu, sigma;         /* a sleep's wake-up's log-normal */
	double nap_mu, nap_sigma; /* a nap's overshoot's */
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
	uint64_t st = s->rng ^ ((uint64_t)k * TPCQ_PRNG_GAMMA) ^
		      ((uint64_t)what << 62);
	double u1, u2, z;

	/* Two rounds apart from the stream's start, so nearby keys differ. */
	(void)tpcq_prng_unit(&st);
	u1 = tpcq_prng_unit(&st);
	u2 = tpcq_prng_unit(&st);
	z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
	if (what == DRAW_NAP)
		return (uint64_t)exp(s->nap_mu + s->nap_sigma * z);
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
		log((double)c->wake_p99_ns / (double)c->wake_ns) / TPCQ_LAB_Z99 : 0.0;
	s->nap_mu = log((double)c->nap_ns);
	s->nap_sigma = c->nap_p99_ns > c->nap_ns ?
		log((double)c->nap_p99_ns / (double)c->nap_ns) / TPCQ_LAB_Z99 : 0.0;
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

void
tpcq_lab_draws(const struct tpcq_lab_cost *c, uint64_t seed, size_t n,
	       uint64_t *w, uint64_t *o)
{
	struct sim s;
	size_t k;

	sim_init(&s, c, seed);
	for (k = 0; k < n; k++) {
		w[k] = wake_draw(&s, k, DRAW_SLEEP);
		o[k] = wake_draw(&s, k, DRAW_NAP);
	}
}

/*
 * The instructions one decide() of a policy executes, the mean over a run
 * (callgrind on the lab's clock, poisson 5000/s, 0.5 s, seed 0; hybrid's
 * include its adaptive member's): what instr_ps charges an iteration
 * beside its poll. A policy not listed decides for free.
 */
static const struct {
	const char *name;
	uint64_t instr;
} decide_instr[] = {
	{ "spin", 7 },
	{ "adaptive", 419 },
	{ "hybrid", 512 },
	{ "latency-target", 131 },
	{ "target-p99", 131 },
	{ "rate-rule", 93 },
};

/* A copy of c whose iterations carry ops's decide() at c's instr_ps. */
static void
cost_with_decide(const struct cqpoll_policy_ops *ops,
		 const struct tpcq_lab_cost *c, struct tpcq_lab_cost *out)
{
	size_t i;

	*out = *c;
	if (c->instr_ps == 0)
		return;
	for (i = 0; i < sizeof(decide_instr) / sizeof(decide_instr[0]); i++)
		if (strcmp(ops->name, decide_instr[i].name) == 0)
			out->poll_ns += (decide_instr[i].instr * c->instr_ps + 500) /
					1000;
}

int
tpcq_lab_sim_policy(const char *spec, const struct tpcq_lab_trace *t,
		    const struct tpcq_lab_cost *c, uint64_t seed,
		    struct tpcq_lab_result *r)
{
	const struct cqpoll_policy_ops *ops;
	const char *args;

	ops = tpcq_lab_policy_find(spec, &args);
	if (ops == NULL)
		return -EINVAL;
	/* The hybrid policy naps through its first member's hook. */
	return tpcq_lab_sim_ops(ops, args, ops == cqpoll_policy_hybrid(), t, c,
				seed, r);
}

/*
 * One decide() at *now, next the arrival a nap would wait for: the naps it
 * took (a sleep on a timer: a wake-up's CPU, no arm) charged and the clock
 * moved past them, wherever it is asked (after an empty poll, a failed arm
 * or a wake-up alike).
 */
static enum cqpoll_policy_action
sim_decide(const struct cqpoll_policy_ops *ops, void *state, unsigned int k,
	   uint64_t *now, size_t next, struct sim *s, struct tpcq_lab_result *r)
{
	uint64_t nap0 = s->nap_ns;
	enum cqpoll_policy_action a;

	s->next = next;
	a = ops->decide(state, k, *now);
	if (s->nap_ns != nap0) {
		spend(r, *now, s->c->wake_cpu_ns);
		*now += s->nap_ns - nap0;
		r->naps++;
	}
	return a;
}

int
tpcq_lab_sim_ops(const struct cqpoll_policy_ops *ops, const char *args,
		 bool naps, const struct tpcq_lab_trace *t,
		 const struct tpcq_lab_cost *c, uint64_t seed,
		 struct tpcq_lab_result *r)
{
	uint64_t now = T0_NS + t->at[0], woke;
	enum cqpoll_policy_action a;
	struct tpcq_lab_cost cd;
	struct sim s;
	size_t i = 0;
	unsigned int k;
	void *state;

	state = aligned_alloc(64, (ops->state_size + 63) / 64 * 64);
	if (state == NULL)
		return -ENOMEM;
	memset(state, 0, ops->state_size);
	if (ops->init(state, args) != 0) {
		free(state);
		return -EINVAL;
	}
	cost_with_decide(ops, c, &cd);
	c = &cd;
	sim_init(&s, c, seed);
	if (naps) {
		((struct cqpoll_policy_nap *)state)->fn = sim_nap;
		((struct cqpoll_policy_nap *)state)->arg = &s;
	}
	while (i < t->n) {
		k = collect(t, &i, now, r);
		now += c->poll_ns;
		spend(r, now, c->poll_ns);
		a = sim_decide(ops, state, k, &now, i, &s, r);
		if (k > 0 || a != CQPOLL_POLICY_SLEEP || i >= t->n)
			continue;
		now += c->arm_ns;
		spend(r, now, c->arm_ns);
		/* The poll after the arm finds what came meanwhile: no sleep. */
		if (T0_NS + t->at[i] <= now) {
			k = collect(t, &i, now, r);
			sim_decide(ops, state, k, &now, i, &s, r);
			continue;
		}
		r->wakeups++;
		spend(r, now, c->wake_cpu_ns);
		woke = wake_draw(&s, i, DRAW_SLEEP);
		now = T0_NS + t->at[i] + woke;
		k = collect(t, &i, now, r);
		now += c->poll_ns;
		spend(r, now, c->poll_ns);
		/* Told only where the device timestamps completions. */
		if (ops->wake_cost != NULL && !t->untold)
			ops->wake_cost(state, woke);
		/*
		 * What the group measures of a sleep's thread CPU and tells
		 * the policy before its first completion reaches a callback:
		 * here the CPU charged for it. Other policies ignore it, and
		 * so does one given sleep_cpu_us. A nap is not told: the
		 * group cannot time one (it happens inside decide()).
		 */
		cqpoll_policy_sleep_cpu(ops, state, c->arm_ns + c->wake_cpu_ns);
		sim_decide(ops, state, k, &now, i, &s, r);
	}
	r->span_ns = now - (T0_NS + t->at[0]);
	free(state);
	return 0;
}

/*
 * What tpcq_lab_sim_policy() does with the spin policy, iteration for
 * iteration and draw for draw, but a whole idle stretch at a time: the
 * grid's hundred budgets cost about as much as one policy's run.
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


void
tpcq_lab_result_reset(struct tpcq_lab_result *r,
		      const struct tpcq_lab_trace *t, double penalty,
		      bool windows)
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

int
tpcq_lab_result_alloc(struct tpcq_lab_result *r, size_t nwin)
{
	memset(r, 0, sizeof(*r));
	r->lat = tpcq_hist_create();
	r->nwin = nwin;
	r->win = nwin != 0 ? calloc(nwin, sizeof(*r->win)) : NULL;
	return r->lat == NULL || (nwin != 0 && r->win == NULL) ? -ENOMEM : 0;
}

void
tpcq_lab_result_release(struct tpcq_lab_result *r)
{
	tpcq_hist_free(r->lat);
	free(r->win);
	r->lat = NULL;
	r->win = NULL;
}

void
tpcq_lab_grid_budgets(struct tpcq_lab_grid *g)
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

void
tpcq_lab_grid_run(struct tpcq_lab_grid *g, const struct tpcq_lab_trace *t,
		  const struct tpcq_lab_cost *c, uint64_t seed, double penalty)
{
	struct tpcq_lab_cost cd;
	unsigned int k;

	/* The budgets are the spin policy's: its decide() on each iteration. */
	cost_with_decide(cqpoll_policy_spin(), c, &cd);
	c = &cd;
	for (k = 0; k < g->n; k++) {
		tpcq_lab_result_reset(&g->pt[k], t, penalty, true);
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
double
tpcq_lab_mix_cpu(const struct tpcq_lab_grid *g, uint64_t p99_ns)
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

