/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_RUN_H
#define TPCQ_RUN_H

/*
 * One run: what the generator and the pollers share (struct tpcq_run),
 * what they measured (struct tpcq_result), and its steps (run.c).
 */

#include <pthread.h>

#include "dev.h"
#include "engine.h"
#include "hist.h"

struct tpcq_run {
	const struct tpcq_params *params;
	struct tpcq_devctx *dc;   /* dcs[0] */
	struct cqpoll_cq *cq;     /* dcs[0].cq */
	/*
	 * One open device per CQ. Completion i of the schedule goes to CQ
	 * i % traffic_cqs with that CQ's sequence number i / traffic_cqs; CQs
	 * from traffic_cqs on get nothing (--active-cqs).
	 */
	struct tpcq_devctx *dcs;
	unsigned int ncqs;
	unsigned int traffic_cqs;
	/*
	 * Completions the generator will post; 0: as many as the closed-loop
	 * engines post in --duration; UINT64_MAX: until stopped (-i).
	 */
	uint64_t total;
	/*
	 * Each poller's group, NULL without one: the generator wakes them when
	 * done, so a group asleep on idle CQs sees the end at once. Poller k
	 * has CQs k, k + npollers, ...
	 */
	struct cqpoll_group *groups[TPCQ_POLLERS_MAX];
	unsigned int npollers;
	unsigned int gen_lcore;   /* the generator's; pollers take the others */
	/*
	 * Held by a poller to clear its groups[] entry before destroying the
	 * group, and by other threads (the prompt) while they use it; NULL when
	 * none does.
	 */
	pthread_mutex_t *group_lock;
	/*
	 * Post times (CLOCK_MONOTONIC ns) by sequence number modulo
	 * post_ns_mask + 1, for devices whose timestamps are on another clock;
	 * NULL when the device's timestamps give the latency.
	 */
	uint64_t *post_ns;
	uint64_t post_ns_mask;
	/* When each of those posts returned, in the same slots (recovery.c). */
	uint64_t *post_end_ns;
	/* --record: each post's CLOCK_MONOTONIC ns by sequence number; or NULL. */
	uint64_t *record;

	/* Poller to generator. */
	unsigned int ready;       /* pollers ready; the last one sets start */
	bool start;               /* the pollers are ready: begin the schedule */
	bool stop;                /* give up posting (poller error or signal) */

	/* Generator to poller; posted and gen_done are released after each post. */
	uint64_t posted;
	uint64_t overruns;        /* completions that found the CQ full */
	uint64_t gen_tsc;         /* generator run time, TSC cycles */
	uint64_t gen_cpu_ns;      /* the generator thread's CPU time: the harness */
	bool gen_watch;           /* a post since all were read set watch */
	struct tpcq_gen_clock gen_clock; /* the generator's own */
	int gen_error;            /* -errno of a failed post, or 0 */
	bool gen_done;
	bool gen_left;            /* done with group too: it may be destroyed */

	/* Pollers to generator: completions read, added after each burst. */
	uint64_t consumed;
};

/* What the poller measured. */
struct tpcq_result {
	int dev_numa_node;        /* tpcq_dev_numa_node() */
	unsigned int remote_pollers; /* pollers on another socket than it */
	uint64_t completions;     /* completions received */
	uint64_t order_errors;    /* wr_id differed from the expected sequence */
	uint64_t bad_completions; /* wrong status, opcode or length */
	uint64_t no_timestamp;    /* completions without a latency sample */
	/*
	 * Safety-net recoveries judged from the post times (recovery.c): work
	 * posted as the timeout ran out, or work whose event was lost.
	 */
	uint64_t recoveries_late;
	uint64_t recoveries_lost;
	uint64_t missing;         /* posted but never received */
	struct tpcq_hist *latency;
	double wall_s;            /* poller, from start to the end of its drain */
	double cpu_pct;           /* poller thread CPU time / wall_s */
	double cpu_pct_process;   /* process CPU time / wall_s: may exceed 100 */
	double harness_cpu_pct;   /* generator (and device) CPU time / wall_s */
	double gen_s;
	int error;                /* -errno of a failed library call, or 0 */
	const char *error_call;   /* the call that failed */
	struct cqpoll_cq_stats stats; /* summed over the CQs */
	/* Counted by a peer's own transition (l3fwd-power), added to stats. */
	struct cqpoll_cq_stats peer;
	struct cqpoll_cq_info info;   /* of the first CQ; all are alike */
	bool grouped;                 /* run by the poll group: group is valid */
	struct cqpoll_group_stats group;
	/* The group's timed sleeps and their thread CPU (cqpoll_group_sleep_cpu_get()). */
	uint64_t sleeps_timed;
	uint64_t sleep_cpu_ns;
};

/* The delivery check of one CQ (check.c). */

/* run.c: the steps of one run, shared by main.c and the prompt. */
int tpcq_run_prepare(struct tpcq_run *tr, struct tpcq_result *res,
		     const struct tpcq_params *p, struct tpcq_devctx *dcs,
		     uint64_t total);
void tpcq_run_collect(struct tpcq_run *tr, struct tpcq_result *res);
int tpcq_run_report(const struct tpcq_params *p, const struct tpcq_run *tr,
		    const struct tpcq_result *res);
void tpcq_run_release(struct tpcq_run *tr, struct tpcq_result *res);

#endif /* TPCQ_RUN_H */
