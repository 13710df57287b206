/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_SWEEP_H
#define TPCQ_SWEEP_H

/*
 * --sweep: the parent process runs itself once per point (device x load x
 * policy), each child a normal run with its own EAL and --json, then merges
 * the children's reports into one JSON file and prints one table. A child per
 * point keeps points independent (no state, warm caches or EAL carried over)
 * and lets the parent stay out of the EAL.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TPCQ_SWEEP_LOADS_MAX 32
#define TPCQ_SWEEP_POLICIES_MAX 16
#define TPCQ_SWEEP_DEVS_MAX 8
#define TPCQ_SWEEP_SPEC_MAX 128
#define TPCQ_SWEEP_DURATION_MAX_S 3600.0

/*
 * Default points, for a 2-core machine: there, with other builds running,
 * mlx5-emu's generator reached about 390000 completions/s against a busy
 * poller (--mode=poll --rate=2000000). The loads span two decades below half
 * of that, so that the highest still measures the poller, not a generator
 * that falls behind. 16 points of 2 s, plus about 1.5 s of start-up each on
 * a busy machine (0.3 s on an idle one), take about a minute.
 */
#define TPCQ_SWEEP_LOADS_DEFAULT "1000,10000,50000,200000"
#define TPCQ_SWEEP_POLICIES_DEFAULT "poll,interrupt,adaptive,spin"
#define TPCQ_SWEEP_DURATION_DEFAULT_S 2.0

/* The --sweep options as given (struct tpcq_params::sweep). */
struct tpcq_sweep_opts {
	bool on;                  /* --sweep */
	bool point;               /* --sweep-point: a child of a sweep */
	const char *loads;        /* --sweep-loads, NULL: the default */
	const char *policies;     /* --sweep-policies, NULL: the default */
	const char *devs;         /* --sweep-devs, NULL: --dev's device */
	const char *duration;     /* --sweep-duration, NULL: the default */
	const char *plot_dir;     /* --plot, NULL: print the command only */
	const char *fixed_opt;    /* an option the sweep sets per point, if given */
};

/* What the sweep runs, from struct tpcq_sweep_opts. */
struct tpcq_sweep_plan {
	uint64_t loads[TPCQ_SWEEP_LOADS_MAX];
	unsigned int nloads;
	char policies[TPCQ_SWEEP_POLICIES_MAX][TPCQ_SWEEP_SPEC_MAX];
	unsigned int npolicies;
	char devs[TPCQ_SWEEP_DEVS_MAX][TPCQ_SWEEP_SPEC_MAX];
	unsigned int ndevs;
	double duration_s;
};

/* One run of the sweep and what the parent read from its report. */
struct tpcq_sweep_point {
	const char *dev;
	uint64_t load;
	const char *policy;
	int exit_status;          /* the child's, or -1 if a signal ended it */
	const char *why;          /* why the point failed; NULL if it did not */
	char *report;             /* the child's JSON object; NULL if none */
	/* From the report; valid when report != NULL. */
	double achieved_rate, cpu_pct, wakeups_per_s, lost_wakeups;
	double p50_ns, p99_ns, p999_ns, max_ns;
	double harness_cpu_pct, cpu_pct_process;
};

struct tpcq_params;
struct tpcq_floors;

/* sweep_opts.c */
void tpcq_sweep_option(const char *name, const char *arg,
		       struct tpcq_sweep_opts *o);
void tpcq_sweep_usage(FILE *f);
int tpcq_sweep_plan_make(const struct tpcq_params *p,
			 struct tpcq_sweep_plan *plan, char *why, size_t len);
int tpcq_sweep_check(struct tpcq_params *p, char *why, size_t len);
/* poll and interrupt are modes; anything else is the adaptive mode's policy. */
bool tpcq_sweep_policy_is_mode(const char *spec);

/* sweep.c */
int tpcq_sweep_run(int argc, char **argv, const struct tpcq_params *p);
int tpcq_sweep_self(char *buf, size_t len);

/* sweep_out.c */
/* floors: NULL or not valid, no columns against them. */
void tpcq_sweep_table(const struct tpcq_sweep_point *pts, unsigned int n,
		      bool show_dev, const struct tpcq_floors *floors);
int tpcq_sweep_json(const char *path, int argc, char **argv,
		    const struct tpcq_sweep_plan *plan,
		    const struct tpcq_sweep_point *pts, unsigned int n,
		    double wall_s, const struct tpcq_floors *floors);
int tpcq_sweep_plot(const char *json_path, const char *plot_dir);

#endif /* TPCQ_SWEEP_H */
