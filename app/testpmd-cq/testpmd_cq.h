/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TESTPMD_CQ_H
#define TESTPMD_CQ_H

/*
 * State shared by the files of testpmd-cq. The generator lcore plays the
 * device and the main lcore the consumer; they share only struct tpcq_run,
 * whose cross-thread fields are accessed with __atomic builtins.
 */

#include <stdbool.h>
#include <stdint.h>

#include <cqpoll.h>
#include <cqpoll_sw.h>

#include "hist.h"

#define TPCQ_PROG "testpmd-cq"

/* Exit statuses, documented in --help. */
#define TPCQ_EXIT_OK 0
#define TPCQ_EXIT_FAIL 1  /* device error, or completions lost or out of order */
#define TPCQ_EXIT_USAGE 2 /* bad option */

/* Bounds of the options; cqpoll_cq_wait() accepts 1 .. 3600000 ms. */
#define TPCQ_RATE_MAX 1000000000ULL
#define TPCQ_DURATION_MAX_S 86400.0
#define TPCQ_TIMEOUT_MS_MAX 3600000
#define TPCQ_BURST_MAX 4096
#define TPCQ_SIZE_MAX (1U << 24)

/* The completion every generator post carries, checked by the poller. */
#define TPCQ_BYTE_LEN 64
#define TPCQ_QP_NUM 1

enum tpcq_mode {
	TPCQ_MODE_POLL = 0,
	TPCQ_MODE_INTERRUPT,
};

enum tpcq_transition {
	TPCQ_TRANSITION_POLL_AND_ARM = 0,
	TPCQ_TRANSITION_NAIVE,
};

struct tpcq_dev;

struct tpcq_params {
	const struct tpcq_dev *dev;
	enum tpcq_mode mode;
	enum tpcq_transition transition;
	enum cqpoll_arm_semantics arm;
	uint64_t rate;            /* completions per second */
	double duration_s;
	int timeout_ms;           /* safety net of each sleep */
	unsigned int burst;
	uint32_t size;            /* 0: the driver's default */
	struct cqpoll_sw_faults faults;
	const char *json_path;    /* NULL: no JSON */
};

/* A device the generator can drive: it creates the CQ and posts into it. */
struct tpcq_dev {
	const char *name;
	struct cqpoll_cq *(*open)(const struct tpcq_params *p);
	int (*post)(struct cqpoll_cq *cq, const struct cqpoll_completion *comp);
};

/* Everything both lcores see during a run. */
struct tpcq_run {
	const struct tpcq_params *params;
	struct cqpoll_cq *cq;
	uint64_t total;           /* completions the generator will post */

	/* Poller to generator. */
	bool start;               /* the poller is ready: begin the schedule */
	bool stop;                /* give up posting (poller error or signal) */

	/* Generator to poller; posted and gen_done are released after each post. */
	uint64_t posted;
	uint64_t overruns;        /* completions that found the CQ full */
	uint64_t gen_tsc;         /* generator run time, TSC cycles */
	int gen_error;            /* -errno of a failed post, or 0 */
	bool gen_done;
};

/* What the poller measured. */
struct tpcq_result {
	uint64_t completions;     /* completions received */
	uint64_t order_errors;    /* wr_id differed from the expected sequence */
	uint64_t bad_completions; /* wrong status, opcode or length */
	uint64_t no_timestamp;    /* completions without a device timestamp */
	uint64_t missing;         /* posted but never received */
	struct tpcq_hist *latency;
	double wall_s;
	double cpu_pct;
	double gen_s;
	int error;                /* -errno of a failed library call, or 0 */
	const char *error_call;   /* the call that failed */
	struct cqpoll_cq_stats stats;
	struct cqpoll_cq_info info;
};

/* params.c */
int tpcq_params_parse(int argc, char **argv, struct tpcq_params *p);
const char *tpcq_mode_name(enum tpcq_mode mode);
const char *tpcq_transition_name(enum tpcq_transition t);

/* dev.c */
const struct tpcq_dev *tpcq_dev_find(const char *name);
const char *tpcq_dev_names(void);

/* gen.c */
int tpcq_gen_main(void *arg);

/* poller.c */
void tpcq_poller_run(struct tpcq_run *run, struct tpcq_result *res);

/* report.c */
void tpcq_report_table(const struct tpcq_params *p, const struct tpcq_run *run,
		       const struct tpcq_result *res);
int tpcq_report_json(const char *path, const struct tpcq_params *p,
		     const struct tpcq_run *run, const struct tpcq_result *res);

/* main.c: set by SIGINT/SIGTERM. */
bool tpcq_interrupted(void);

#endif /* TESTPMD_CQ_H */
