/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_REPORT_H
#define TPCQ_REPORT_H

/*
 * What a run reports (report/): the table, JSON and CSV, and the output
 * files they go to.
 */

#include "run.h"

/* results.c: what the reports show, derived once from a run. */
struct tpcq_latency {
	uint64_t p50, p90, p99, p999, p9999, min, max, samples;
};

void tpcq_latency_get(const struct tpcq_result *res, struct tpcq_latency *l);
double tpcq_achieved_rate(const struct tpcq_run *run,
			  const struct tpcq_result *res);
const char *tpcq_transition_used(const struct tpcq_params *p);
const char *tpcq_latency_source(const struct tpcq_run *run);
const char *tpcq_arm_used(const struct tpcq_params *p,
			  const struct tpcq_result *res);
const char *tpcq_policy_used(const struct tpcq_params *p);
double tpcq_pct_of_wall(uint64_t ns, const struct tpcq_result *res);
double tpcq_completions_per_s(const struct tpcq_result *res);
/* Sleeps of the poller that ended, per second of its run. */
double tpcq_wakeups_per_s(const struct tpcq_result *res);
/*
 * Mean thread CPU of the group's timed sleeps, ns (cqpoll_group_sleep_cpu_get():
 * a sample of the sleeps, from poll-and-arm to the first callback); 0 when
 * none was timed (no group, no sleep).
 */
double tpcq_sleep_cpu_ns(const struct tpcq_result *res);
/* The pattern the engine followed: "none" for the closed-loop ones. */
void tpcq_pattern_used(const struct tpcq_params *p, char *buf, size_t len);

/* Room for the longest value: the device name, TPCQ_DEV_NAME_MAX. */
#define TPCQ_FIELD_VAL_MAX 128
/* More than the fields of a run: results.c aborts if it is ever short. */
#define TPCQ_FIELDS_MAX 128

/* One setting or measurement of a run, as the JSON and the CSV write it. */
struct tpcq_field {
	const char *obj;          /* the JSON object it is in; NULL: top level */
	const char *key;
	bool quote;               /* a string */
	bool null;                /* no value in this run: null, empty cell */
	char val[TPCQ_FIELD_VAL_MAX];
};

/* Every field of a run, in the order of the JSON keys and CSV columns. */
struct tpcq_fields {
	unsigned int n;
	struct tpcq_field f[TPCQ_FIELDS_MAX];
};

void tpcq_fields_get(const struct tpcq_params *p, const struct tpcq_run *run,
		     const struct tpcq_result *res, struct tpcq_fields *fs);
/* fclose() with write errors reported; returns 0 or -errno. */
int tpcq_report_close(FILE *out, const char *path);
/* A JSON string of @s: names and arguments come from the user, so escaped. */
void tpcq_json_string(FILE *out, const char *s);

/* report.c */
void tpcq_report_table(const struct tpcq_params *p, const struct tpcq_run *run,
		       const struct tpcq_result *res);

/* report_json.c */
int tpcq_report_json(const char *path, const struct tpcq_params *p,
		     const struct tpcq_run *run, const struct tpcq_result *res);

/* report_csv.c */
int tpcq_report_csv(const char *path, const struct tpcq_params *p,
		    const struct tpcq_run *run, const struct tpcq_result *res);

/* Longest CSV first line read back: a testpmd-cq header is a few KiB. */
#define TPCQ_CSV_HEAD_MAX 65536
/* Checks --csv before the run: a FILE that exists has our header. */
int tpcq_report_csv_check(const struct tpcq_params *p);

/*
 * outfile.c: output files. Each function says what is wrong on stderr, the
 * option named as --opt.
 */
/* path can be written: a regular file, or a new one in a writable directory. */
int tpcq_outfile_check(const char *opt, const char *path);
/* Both outputs of p, before the run; 0 or -1. */
int tpcq_outfiles_check(const struct tpcq_params *p);
/* Opened without blocking (a FIFO), refused unless regular; NULL on error. */
FILE *tpcq_outfile_open(const char *opt, const char *path, bool append);
struct tpcq_outfile_head {
	bool exists;
	uint64_t size;
	bool ends_with_newline;   /* or empty */
};
/*
 * The first line of path (its line break dropped) in line, reading at most
 * cap - 1 bytes: -EINVAL if it is longer. A missing file: 0, h->exists false.
 */
int tpcq_outfile_head(const char *opt, const char *path, char *line, size_t cap,
		      struct tpcq_outfile_head *h);

#endif /* TPCQ_REPORT_H */
