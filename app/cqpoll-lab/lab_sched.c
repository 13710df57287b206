/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll-lab --sim-sched: 64 poll groups on 16 lcores on a virtual clock,
 * placed five ways on the same traces and the same wake-up draws:
 * - static: group g on lcore g % 16, for good;
 * - cqpoll_sched: the library's consolidating scheduler (cqpoll_sched.h),
 *   stepped every 10 ms on each group's offered load (its completions x the
 *   work of one) in the last 10 ms;
 * - spdk and spdk-10ms: SPDK's dynamic scheduler as SPDK runs it
 *   (lab_sched_spdk.c): its reactors poll without pause while they hold a
 *   thread (they sleep only in interrupt mode, without threads), the main
 *   one always (it holds SPDK's app thread), and its balance step runs
 *   every period, 1 s by default (framework_set_scheduler without a period,
 *   lib/event/app_rpc.c) or 10 ms, on SPDK's load measure: a thread's busy
 *   and idle time are those of its own polls (spdk_thread_poll(),
 *   lib/thread/thread.c), so a reactor's idle time is shared among the
 *   threads it polls in turn, one empty poll each;
 * - spdk-offered: the lab's earlier variant of that rule, every 10 ms on
 *   the offered load, on lcores that spin and sleep as static's do.
 * The spinning lcores (static, cqpoll_sched, spdk-offered) serve their
 * groups' completions in arrival order (SCHED_WORK_NS each), spin
 * SCHED_SPIN_NS after the last one, then arm and sleep, paying the cost
 * model's wake-up (latency and CPU) when the next arrives; an lcore without
 * groups sleeps. A move costs the cost model's arm on both lcores and a
 * wake-up's CPU on the new one (on SPDK's polling reactors, only the
 * wake-up of a parked one). Completions queued before a move are served
 * where they were.
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

/* The clock's step: every scheduler's period is a multiple of it. */
#define SCHED_INTERVAL_NS 10000000ULL
/*
 * Three periods of SPDK's default, so that it balances twice; the first is
 * a warm-up that no placement is judged on (each starts static, and SPDK's
 * first step comes at its end).
 */
#define SCHED_DURATION_NS 3000000000ULL
#define SPDK_PERIOD_NS 1000000000ULL
#define SCHED_WARM_NS SPDK_PERIOD_NS
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

enum { PLACE_STATIC, PLACE_CQPOLL, PLACE_SPDK, PLACE_SPDK_10MS,
       PLACE_SPDK_OFFERED, PLACE_N };
static const char *const place_name[PLACE_N] = {
	"static", "cqpoll_sched", "spdk", "spdk-10ms", "spdk-offered" };
/* Each placement's period (0: never moves) and whether its lcores poll. */
static const uint64_t place_period[PLACE_N] = {
	0, SCHED_INTERVAL_NS, SPDK_PERIOD_NS, SCHED_INTERVAL_NS, SCHED_INTERVAL_NS };
static const bool place_polls[PLACE_N] = { false, false, true, true, false };
/* SPDK's main lcore: its app thread keeps its reactor polling. */
#define SPDK_MAIN_LCORE 0U

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

/*
 * A heap of the next arrival of each group on one lcore, each as one key:
 * its time above its group, so that keys order as the lcore serves them
 * (by time, then by group). Times are of a few seconds: well under 2^56.
 */
#define KEY_GROUP_BITS 8
_Static_assert(TPCQ_LAB_SCHED_GROUPS <= 1U << KEY_GROUP_BITS,
	       "a group's index must fit its bits of a heap key");
struct heap {
	uint64_t key[TPCQ_LAB_SCHED_GROUPS];
	uint32_t n;
};

static void
heap_sift(struct heap *hp, uint32_t i)
{
	uint64_t t;
	uint32_t m, l;

	for (;;) {
		m = i;
		l = 2 * i + 1;
		if (l < hp->n && hp->key[l] < hp->key[m])
			m = l;
		if (l + 1 < hp->n && hp->key[l + 1] < hp->key[m])
			m = l + 1;
		if (m == i)
			return;
		t = hp->key[i];
		hp->key[i] = hp->key[m];
		hp->key[m] = t;
		i = m;
	}
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
      bool polls, struct tpcq_hist *h)
{
	uint64_t start = a->at, gap;

	if (a->at <= l->t_free) {
		start = l->t_free;
	} else if (polls) {
		/* Found by the next poll; the reactor's CPU is its time. */
		start = a->at + r->c->poll_ns;
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
	if (!polls)
		l->cpu_ns += SCHED_WORK_NS;
	if (a->at >= SCHED_WARM_NS)
		tpcq_hist_add(h, l->t_free - a->at);
}

/* Per placement's period: what each group and lcore did in it. */
struct period {
	uint64_t gbusy[TPCQ_LAB_SCHED_GROUPS], gidle[TPCQ_LAB_SCHED_GROUPS];
	uint64_t cbusy[TPCQ_LAB_SCHED_LCORES], cidle[TPCQ_LAB_SCHED_LCORES];
	uint32_t order[TPCQ_LAB_SCHED_GROUPS];
};

/*
 * SPDK's step on its own measure (polls) or on offered load: each group's
 * and lcore's busy and idle time over the period len, and its walk's order
 * (lcore by lcore, each lcore's groups in the order they came to it).
 */
static void
spdk_step(struct period *pd, uint64_t len, bool polls, const uint64_t *seq,
	  const bool *polled, uint32_t *lcore_of)
{
	uint32_t cnt[TPCQ_LAB_SCHED_LCORES] = { 0 }, g, c, i, n = 0, j;
	struct tpcq_lab_spdk_in in = {
		.nb_lcores = TPCQ_LAB_SCHED_LCORES,
		.nb_groups = TPCQ_LAB_SCHED_GROUPS,
		.busy = pd->gbusy, .idle = pd->gidle,
		.core_busy = pd->cbusy, .core_idle = pd->cidle,
		.order = pd->order,
	};

	for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++) {
		if (pd->gbusy[g] > len)
			pd->gbusy[g] = len;
		cnt[lcore_of[g]]++;
	}
	for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++) {
		if (pd->cbusy[c] > len)
			pd->cbusy[c] = len;
		pd->cidle[c] = len - pd->cbusy[c];
		if (polls && !polled[c])
			pd->cbusy[c] = pd->cidle[c] = 0;
	}
	for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
		pd->gidle[g] = polls ? pd->cidle[lcore_of[g]] / cnt[lcore_of[g]] :
				       len - pd->gbusy[g];
	for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++) {
		i = n;
		for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
			if (lcore_of[g] == c)
				pd->order[n++] = g;
		/* Insertion sort by arrival on the lcore: a few each. */
		for (; i < n; i++)
			for (j = i; j > 0 && lcore_of[pd->order[j - 1]] == c &&
			     seq[pd->order[j - 1]] > seq[pd->order[j]]; j--) {
				g = pd->order[j];
				pd->order[j] = pd->order[j - 1];
				pd->order[j - 1] = g;
			}
	}
	tpcq_lab_spdk_balance(&in, lcore_of);
}

static int
simulate(struct run *r, int place, struct tpcq_hist *h, struct outcome *out)
{
	struct lcore lc[TPCQ_LAB_SCHED_LCORES] = { 0 };
	static uint32_t lcore_of[TPCQ_LAB_SCHED_GROUPS], before[TPCQ_LAB_SCHED_GROUPS];
	static uint64_t seq[TPCQ_LAB_SCHED_GROUPS];
	static size_t next[TPCQ_LAB_SCHED_GROUPS];
	static struct period pd;
	static struct heap hp;
	bool polled[TPCQ_LAB_SCHED_LCORES], polls = place_polls[place];
	struct cqpoll_sched_move mv[TPCQ_LAB_SCHED_GROUPS];
	struct cqpoll_sched_conf conf = { .nb_lcores = TPCQ_LAB_SCHED_LCORES,
					  .nb_groups = TPCQ_LAB_SCHED_GROUPS };
	struct cqpoll_sched *s = NULL;
	uint64_t t_end, t_step = 0, moves = 0, active = 0, cpu = 0, ivs = 0;
	uint64_t warm_cpu = 0;
	uint64_t period = place_period[place], nseq = TPCQ_LAB_SCHED_GROUPS;
	uint32_t g, c;
	size_t i;
	int k;

	if (place == PLACE_CQPOLL && (s = cqpoll_sched_create(&conf)) == NULL)
		return -errno;
	memset(&pd, 0, sizeof(pd));
	for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++) {
		lcore_of[g] = g % TPCQ_LAB_SCHED_LCORES;
		seq[g] = g;
		next[g] = 0;
	}
	for (t_end = SCHED_INTERVAL_NS; t_end <= SCHED_DURATION_NS;
	     t_end += SCHED_INTERVAL_NS) {
		if (t_end - SCHED_INTERVAL_NS == SCHED_WARM_NS)
			for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++)
				warm_cpu += lc[c].cpu_ns;
		for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++)
			polled[c] = polls && c == SPDK_MAIN_LCORE;
		for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
			polled[lcore_of[g]] = polls;
		for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++) {
			if (polled[c])
				lc[c].cpu_ns += SCHED_INTERVAL_NS;
			/* Each group's arrivals are in order: merged by a heap. */
			hp.n = 0;
			for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
				if (lcore_of[g] == c && next[g] < r->tr[g].n &&
				    r->tr[g].at[next[g]] < t_end)
					hp.key[hp.n++] = r->tr[g].at[next[g]] <<
							 KEY_GROUP_BITS | g;
			for (i = hp.n; i-- > 0;)
				heap_sift(&hp, (uint32_t)i);
			while (hp.n > 0) {
				struct arrival a;

				g = (uint32_t)(hp.key[0] & ((1U << KEY_GROUP_BITS) - 1));
				a = (struct arrival){ hp.key[0] >> KEY_GROUP_BITS, g,
						      (uint32_t)next[g] };
				serve(r, &lc[c], &a, polls, h);
				pd.gbusy[g] += SCHED_WORK_NS;
				pd.cbusy[c] += SCHED_WORK_NS;
				if (++next[g] < r->tr[g].n && r->tr[g].at[next[g]] < t_end)
					hp.key[0] = r->tr[g].at[next[g]] << KEY_GROUP_BITS | g;
				else
					hp.key[0] = hp.key[--hp.n];
				heap_sift(&hp, 0);
			}
		}
		if (period == 0 || t_end - t_step < period)
			goto count;
		memcpy(before, lcore_of, sizeof(before));
		if (place == PLACE_CQPOLL) {
			for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
				cqpoll_sched_load_set(s, g, pd.gbusy[g] >= period ? 1.0 :
						      (double)pd.gbusy[g] / period);
			k = cqpoll_sched_step(s, mv, TPCQ_LAB_SCHED_GROUPS);
			for (i = 0; k > 0 && i < (size_t)k; i++)
				lcore_of[mv[i].group] = mv[i].to;
		} else {
			spdk_step(&pd, t_end - t_step, polls, seq, polled, lcore_of);
		}
		memset(&pd, 0, sizeof(pd));
		t_step = t_end;
		for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++) {
			if (before[g] == lcore_of[g])
				continue;
			moves += t_end > SCHED_WARM_NS;
			seq[g] = nseq++;
			if (polls) {
				if (!polled[lcore_of[g]])
					lc[lcore_of[g]].cpu_ns += r->c->wake_cpu_ns;
				continue;
			}
			lc[before[g]].cpu_ns += r->c->arm_ns;
			lc[lcore_of[g]].cpu_ns += r->c->arm_ns + r->c->wake_cpu_ns;
		}
count:
		if (t_end <= SCHED_WARM_NS)
			continue;
		ivs++;
		for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++)
			for (g = 0; g < TPCQ_LAB_SCHED_GROUPS; g++)
				if (lcore_of[g] == c) {
					active++;
					break;
				}
	}
	cqpoll_sched_destroy(s);
	for (c = 0; c < TPCQ_LAB_SCHED_LCORES; c++) {
		if (!polls && lc[c].t_free < SCHED_DURATION_NS)
			lc[c].cpu_ns += SCHED_DURATION_NS - lc[c].t_free < SCHED_SPIN_NS ?
				SCHED_DURATION_NS - lc[c].t_free : SCHED_SPIN_NS;
		cpu += lc[c].cpu_ns;
	}
	out->cpu_cores = (double)(cpu - warm_cpu) /
			 (SCHED_DURATION_NS - SCHED_WARM_NS);
	out->p99_us = tpcq_hist_quantile(h, 0.99) / 1e3;
	out->lcores = (double)active / (double)ivs;
	out->moves_s = moves / ((SCHED_DURATION_NS - SCHED_WARM_NS) * 1e-9);
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

/* The median over the seeds of the candidate's ratio to ref's, in m. */
static double
ratio_median(double col[][6][TPCQ_LAB_SEEDS_MAX], unsigned int seeds,
	     unsigned int cand, unsigned int ref, unsigned int m)
{
	double v[TPCQ_LAB_SEEDS_MAX];
	unsigned int sd;

	for (sd = 0; sd < seeds; sd++)
		v[sd] = col[cand][m][sd] / col[ref][m][sd];
	return median(v, seeds);
}

/*
 * The goals of the consolidating scheduler over a yardstick: CPU at most
 * 0.70x its at low load and 1.00x at high load, p99 at most 1.10x. Judged
 * against SPDK as SPDK runs it (its default period); the other lines say
 * where it stands against the rest.
 */
static void
goal_print(double col[][6][TPCQ_LAB_SEEDS_MAX], unsigned int seeds,
	   const char *trace, const char *level, double util, unsigned int ref)
{
	double goal_cpu = util < SCHED_HIGH ? GOAL_CPU_LOW : GOAL_CPU_HIGH;
	double cx = ratio_median(col, seeds, PLACE_CQPOLL, ref, 0);
	double px = ratio_median(col, seeds, PLACE_CQPOLL, ref, 1);

	printf("%s %s %s cqpoll_sched vs %s: cpu %.3fx (goal <= %.2f), p99 "
	       "%.3fx (goal <= %.2f): %s\n", ref == PLACE_SPDK ? "goal" : "also",
	       trace, level, place_name[ref], cx, goal_cpu, px, GOAL_P99,
	       cx <= goal_cpu && px <= GOAL_P99 ? "PASS" : "FAIL");
}

/* One trace at one load over the seeds: the table's rows and the goal lines. */
static int
compare(const struct tpcq_lab_opts *o, const struct tpcq_lab_cost *cost,
	const char *trace, const char *level, double util)
{
	static double col[PLACE_N][6][TPCQ_LAB_SEEDS_MAX];
	struct outcome out[PLACE_N];
	struct tpcq_hist *h;
	struct run r;
	double row[PLACE_N][6], v[TPCQ_LAB_SEEDS_MAX];
	unsigned int sd, p, m;
	int ret = 0;

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
	if (ret != 0)
		return ret;
	for (p = 0; p < PLACE_N; p++) {
		/* median() sorts: a copy, the seeds' order kept for the ratios. */
		for (m = 0; m < 6; m++) {
			memcpy(v, col[p][m], o->seeds * sizeof(*v));
			row[p][m] = median(v, o->seeds);
		}
		printf("%-8s %-5s %-13s %9.2f %9.1f %9.3f %9.3f %7.2f %8.1f\n",
		       trace, level, place_name[p], row[p][0], row[p][1],
		       row[p][4], row[p][5], row[p][2], row[p][3]);
	}
	goal_print(col, o->seeds, trace, level, util, PLACE_SPDK);
	goal_print(col, o->seeds, trace, level, util, PLACE_SPDK_10MS);
	goal_print(col, o->seeds, trace, level, util, PLACE_STATIC);
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
	printf("sched: %u lcores x %u groups, %u seeds from %llu, %.1f s "
	       "judged after %.1f s, "
	       "step %llu ms (spdk: every %llu ms), work %llu ns a completion, "
	       "lcores spin %llu ns then sleep (spdk, spdk-10ms: poll while they "
	       "hold groups, lcore 0 always); cost poll_ns=%llu,arm_ns=%llu,wake_ns=%llu,"
	       "wake_p99_ns=%llu,wake_cpu_ns=%llu; load: an lcore's busy share "
	       "under static placement, low %.2f, high %.2f (diurnal: at its "
	       "peak); medians over seeds, ratios the median of the seeds' ratios\n",
	       TPCQ_LAB_SCHED_LCORES, TPCQ_LAB_SCHED_GROUPS, o->seeds,
	       (unsigned long long)o->seed, SCHED_DURATION_NS * 1e-9,
	       SCHED_WARM_NS * 1e-9,
	       SCHED_INTERVAL_NS / 1000000ULL, SPDK_PERIOD_NS / 1000000ULL,
	       SCHED_WORK_NS, SCHED_SPIN_NS,
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
