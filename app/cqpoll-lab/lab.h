/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_LAB_H
#define TPCQ_LAB_H

/*
 * The policy lab (cqpoll-lab, or testpmd-cq --sim): an arrival trace
 * replayed through the library's own policies (their cqpoll_policy_ops) on
 * a virtual clock, with a cost model, against yardsticks of the same trace
 * (lab_opt.c). Deterministic: the same options give the same output.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prng.h"

#define TPCQ_LAB_PROG "cqpoll-lab"
/* Exit statuses, as testpmd-cq's. */
#define TPCQ_LAB_EXIT_OK 0
#define TPCQ_LAB_EXIT_FAIL 1  /* the floors cannot be measured, out of memory */
#define TPCQ_LAB_EXIT_USAGE 2 /* bad option */
/* Room for a policy spec, as a sweep's. */
#define TPCQ_LAB_SPEC_MAX 128

#define TPCQ_LAB_TRACES "poisson, onoff[:ON_US:OFF_US], pareto, diurnal, " \
	"periodic, regime, file:PATH"
#define TPCQ_LAB_POLICIES_DEFAULT \
	"spin:0,spin:5,spin:50,spin:200,adaptive,hybrid,target-p99:100"
#define TPCQ_LAB_POLICIES_MAX 32
/*
 * The cost model without --sim-cost or --floors: wake-ups of 30 us median
 * and 80 us p99 (the order of the wake-up floor of an idle machine here), a
 * sleep 5 us of CPU. Fixed, so that the lab's default output is the same on
 * every machine and every run.
 */
#define TPCQ_LAB_COST_DEFAULT "poll_ns=100,arm_ns=1000,wake_ns=30000," \
	"wake_p99_ns=80000,wake_cpu_ns=5000"

/*
 * Arrival times, ns from the first. untold: the device gives no host
 * timestamps, so a policy is not told a sleep's wake-up (wake_cost(); the
 * group measures one only from a CLOCK_MONOTONIC stamp): a file recorded
 * on such a device (io_uring, UCX, libfabric, mlx5 and mlx5-emu, whose
 * stamps are the device's clock; its "host timestamps: no" comment, as
 * testpmd-cq --record writes it), or --sim-wake=untold.
 */
struct tpcq_lab_trace {
	char name[64];
	uint64_t *at;
	size_t n, cap;
	bool untold;
};

/* What the machine costs the poller (--sim-cost, or calibrated by --floors). */
struct tpcq_lab_cost {
	uint64_t poll_ns;         /* one iteration of an awake poller */
	uint64_t arm_ns;          /* the transition into sleep (poll and arm) */
	uint64_t wake_ns;         /* wake-up latency, median */
	uint64_t wake_p99_ns;     /* and 99th percentile (log-normal between) */
	uint64_t wake_cpu_ns;     /* CPU a sleep and its wake-up cost the poller */
	/*
	 * Optional (0 in a --sim-cost without them): a timer nap's overshoot,
	 * median and 99th percentile (without them, the wake-up's), and the
	 * picoseconds one instruction of a policy's decide() takes (without
	 * it, decisions are free).
	 */
	uint64_t nap_ns, nap_p99_ns;
	uint64_t instr_ps;
	/* A measured profile's provenance (where, when); "" for none. */
	char measured[320];
};

struct tpcq_hist;

/* Seeds per run: every goal is judged on the median over them. */
#define TPCQ_LAB_SEEDS_DEFAULT 10
#define TPCQ_LAB_SEEDS_MAX 100
/* The windows of the best budget per window in hindsight. */
#define TPCQ_LAB_WINDOW_NS 10000000ULL

/* One policy's (or one fixed budget's) run through one trace. */
struct tpcq_lab_result {
	char policy[TPCQ_LAB_SPEC_MAX];
	uint64_t cpu_ns, span_ns, wakeups, naps;
	double lat_sum_ns;
	struct tpcq_hist *lat;
	double cost;              /* cpu + penalty x latency */
	/* The cost by TPCQ_LAB_WINDOW_NS window of the trace; NULL: not kept. */
	double *win;
	size_t nwin;
	double penalty;
	uint64_t t0;              /* the trace's first arrival on the clock */
};

/*
 * The fixed spin budgets of the yardsticks: 0, then 1 us to
 * TPCQ_LAB_GRID_MAX_US, each about 15% above the last (lab.c), then
 * polling (never sleeping).
 */
#define TPCQ_LAB_GRID_MAX_US 10000
#define TPCQ_LAB_GRID_POINTS 128

/*
 * One policy over the seeds: medians (and min..max where it says), and what
 * its goals need. Ratios are of total cost unless named cpu.
 */
struct tpcq_lab_row {
	char policy[TPCQ_LAB_SPEC_MAX];
	double cpu_pct, p50_us, p99_us, p999_us, wakeups_s, cost_pct;
	double x_dp, x_dp_lo, x_dp_hi;          /* over the offline optimum */
	double x_fixed, x_fixed_lo, x_fixed_hi; /* over the best fixed budget */
	double x_win, x_win_lo, x_win_hi;       /* over the best per window */
	/* Over the causal rate rule (lab_rate.c); NAN: not run. */
	double x_rate, x_rate_lo, x_rate_hi;
	double x_mix;         /* cpu over the best mix of two budgets at its p99 */
	double x_spin0;       /* over spin:0 */
	double cpu_x_poll;    /* cpu over polling's */
	double p99_x_poll;    /* p99 over polling's */
	/* latency-target: cpu over the cheapest budget with p99 <= 0.8 target. */
	double x_target;
	double target_met;        /* share of judged seeds where p99 <= target */
	/* p99 over the target on the judged seeds: median, min..max. */
	double p99_x_target, p99_x_target_lo, p99_x_target_hi;
	unsigned int target_seeds; /* seeds where such a budget exists */
	unsigned int same_as_spin0; /* seeds identical to spin:0 where the best
				     * fixed budget is not 0 */
};

/* What one run (a trace, a rate, a penalty, the seeds) judged. */
struct tpcq_lab_summary {
	const char *trace;
	double rate, penalty, mean_gap_ns;
	uint64_t wake_p99_ns;
	unsigned int seeds;
	double fixed_us;          /* the best fixed budget, median over seeds */
	double fixed_x_opt_lo;    /* its cost over the optimum, least over seeds */
};

/*
 * The offline optimum (lab_opt.c), a lower bound: the least total cost, CPU
 * + penalty x latency in ns, of any schedule of polls, sleeps and naps of
 * any length on trace at[0..n-1] that knows every arrival and every draw:
 * w[k], the wake-up of a sleep that arrival k ends, o[k], the overshoot of
 * a nap taken while k is the next arrival (tpcq_lab_draws(): the draws the
 * policies are charged with). naps = false leaves naps out: the negative
 * control, which the hybrid policy beats. -1: out of memory. The least
 * cost exactly at penalty 1 and above, and below 1 when no two arrivals
 * tie; below 1 with tied arrivals a bound only (lab_opt.c prunes later nap
 * ends on a ns of cost per waiting arrival a ns).
 */
struct tpcq_lab_opt_in {
	const uint64_t *at;
	size_t n;
	const uint64_t *w, *o;
	const struct tpcq_lab_cost *c;
	double penalty;
	bool naps;
};
double tpcq_lab_opt_bound(const struct tpcq_lab_opt_in *in);
/* The same by a search of every schedule at 1 ns: for tests, tiny traces. */
double tpcq_lab_opt_brute(const struct tpcq_lab_opt_in *in);

int tpcq_lab_trace_make(struct tpcq_lab_trace *t, const char *spec, double rate,
			double duration_s, uint64_t seed, char *why, size_t len);
void tpcq_lab_trace_free(struct tpcq_lab_trace *t);

struct tpcq_floors;
/*
 * Parse "poll_ns=N,arm_ns=N,..." into c, or "measured:PATH", a cost
 * profile (doc/guides/testpmd-cq.md: key=value lines, a measured= line
 * saying where and when): 0 or -EINVAL with why.
 */
int tpcq_lab_cost_parse(const char *s, struct tpcq_lab_cost *c, char *why,
			size_t len);
/* c as a --sim-cost string that reproduces it (the profile's keys too). */
void tpcq_lab_cost_format(const struct tpcq_lab_cost *c, char *buf, size_t len);
/* This machine's cost model, from its floors (--sim --floors). */
void tpcq_lab_cost_from_floors(const struct tpcq_floors *f,
			       struct tpcq_lab_cost *c);
/* Judge the goals of issue 21 that this run can judge. */
void tpcq_lab_goals_print(const struct tpcq_lab_row *rows, unsigned int n,
			  const struct tpcq_lab_summary *sum);
/* The lab's options (lab_params.c). */
struct tpcq_lab_opts {
	uint64_t rate;            /* --rate: arrivals per second */
	double duration_s;        /* --duration */
	uint64_t seed;            /* --seed: of the first trace */
	bool floors;              /* --floors: the cost model from the floors */
	const char *trace;        /* --trace; NULL: poisson */
	const char *cost;         /* --sim-cost; NULL: the default, or the floors */
	const char *policies;     /* --sim-policies, ';' between; NULL: defaults */
	double penalty;           /* --sim-penalty: CPU ns per ns of latency */
	unsigned int seeds;       /* --sim-seeds: traces of seeds seed.. */
	bool sched;               /* --sim-sched: placement of groups (lab_sched.c) */
	int wake;                 /* --sim-wake: TPCQ_LAB_WAKE_* */
	bool quiet;               /* --quiet: no progress line on a terminal */
};

/*
 * lab_sim.c: the virtual clock. One policy through trace t (0, or -errno if
 * the policy cannot be created), the result's bookkeeping, and the grid of
 * fixed budgets: each budget through t, and the least CPU of a mix of two
 * whose p99 is at most p99_ns (0: none).
 */
/* The grid of fixed budgets of one seed, each with its latency histogram. */
struct tpcq_lab_grid {
	struct tpcq_lab_result pt[TPCQ_LAB_GRID_POINTS];
	unsigned int spin_us[TPCQ_LAB_GRID_POINTS];
	unsigned int n;
};

int tpcq_lab_sim_policy(const char *spec, const struct tpcq_lab_trace *t,
			const struct tpcq_lab_cost *c, uint64_t seed,
			struct tpcq_lab_result *r);
/*
 * The same with the policy's ops; naps: its state begins with a struct
 * cqpoll_policy_nap whose hook the clock takes over (hybrid's does).
 */
struct cqpoll_policy_ops;
int tpcq_lab_sim_ops(const struct cqpoll_policy_ops *ops, const char *args,
		     bool naps, const struct tpcq_lab_trace *t,
		     const struct tpcq_lab_cost *c, uint64_t seed,
		     struct tpcq_lab_result *r);
/*
 * The draws of seed for the n arrivals of a trace, as the clock charges
 * them: w[k], the wake-up of the sleep that arrival k ends; o[k], the
 * overshoot of a nap taken while k is the next arrival.
 */
void tpcq_lab_draws(const struct tpcq_lab_cost *c, uint64_t seed, size_t n,
		    uint64_t *w, uint64_t *o);
void tpcq_lab_result_reset(struct tpcq_lab_result *r,
			   const struct tpcq_lab_trace *t, double penalty,
			   bool windows);
int tpcq_lab_result_alloc(struct tpcq_lab_result *r, size_t nwin);
void tpcq_lab_result_release(struct tpcq_lab_result *r);
void tpcq_lab_grid_budgets(struct tpcq_lab_grid *g);
void tpcq_lab_grid_run(struct tpcq_lab_grid *g, const struct tpcq_lab_trace *t,
		       const struct tpcq_lab_cost *c, uint64_t seed,
		       double penalty);
double tpcq_lab_mix_cpu(const struct tpcq_lab_grid *g, uint64_t p99_ns);

/*
 * lab_rate.c: the causal rate rule, a yardstick ("rate-rule:cost_ns=N", N a
 * sleep's cost); the lab's policies by name, the rate rule with the
 * library's; a sleep's expected cost under c at penalty.
 */
const struct cqpoll_policy_ops *tpcq_lab_rate_rule(void);
const struct cqpoll_policy_ops *tpcq_lab_policy_find(const char *spec,
						     const char **args);
double tpcq_lab_sleep_cost(const struct tpcq_lab_cost *c, double penalty);
/* The one-sided normal quantile of 0.99: the wake-up's log-normal spread. */
#define TPCQ_LAB_Z99 2.326347874

/* --sim-wake: as the trace says (synthetic: told), told, untold. */
#define TPCQ_LAB_WAKE_TRACE 0
#define TPCQ_LAB_WAKE_TOLD 1
#define TPCQ_LAB_WAKE_UNTOLD 2

/* lab.c: the lab's run, an exit status. */
int tpcq_lab_run(const struct tpcq_lab_opts *o);
/* lab_params.c: 0 to run, 1 when --help was answered, -EINVAL (said why). */
int tpcq_lab_params_parse(int argc, char **argv, const char *prog,
			  struct tpcq_lab_opts *o);
void tpcq_lab_usage(FILE *f, const char *prog);
/* The program's name in messages: cqpoll-lab, or testpmd-cq --sim. */
const char *tpcq_lab_prog(void);
/*
 * The lab as a program: the options (argv[0] is skipped), the run, its exit
 * status. prog names it in messages.
 */
int tpcq_lab_main(const char *prog, int argc, char **argv);

#endif /* TPCQ_LAB_H */
