/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_PARAMS_H
#define TPCQ_PARAMS_H

/*
 * The options of a run (params.c): parsed before the EAL starts.
 */

#include "testpmd_cq.h"
#include "floors.h"
#include "harness.h"
#include "sweep.h"

struct tpcq_params {
	const struct tpcq_dev *dev;
	char dev_name[TPCQ_DEV_NAME_MAX]; /* as run, e.g. "mlx5:mlx5_0" */
	const char *ibdev;        /* in dev_name, after ':'; NULL for emulators */
	const char *dev_why;      /* why the default device was chosen; NULL if given */
	const struct tpcq_engine *engine;
	enum tpcq_mode mode;
	enum tpcq_transition transition;
	/* --harness: the work on each completion (harness.h), as tpcq-peer's */
	enum tpcq_harness_work harness;
	unsigned int cqs;         /* CQs of the device, spread over the pollers */
	unsigned int active_cqs;  /* the first N of them get the traffic; 0: all */
	/* mlx5-emu: payload scattered into each CQE (--inline-scatter), 0: none. */
	uint32_t inline_scatter;
	bool cqe_compress;        /* mlx5-emu: the device compresses CQEs */
	bool cqe_compress_enhanced; /* ... in the enhanced layout */
	unsigned int pollers;     /* poller lcores, each with its own group */
	/* --groups: poll groups over the pollers, placed by cqpoll_sched; 0: off */
	unsigned int groups;
	bool groups_static;       /* --groups-static: never moved (a control) */
	uint32_t work_ns;         /* --work-ns: a handler's work per completion */
	const char *policy;       /* adaptive mode: policy spec, e.g. "spin:50" */
	const struct cqpoll_policy_ops *policy_ops; /* NULL unless adaptive */
	const char *policy_args;  /* in policy, after ':'; NULL if none */
	enum cqpoll_arm_semantics arm;
	uint64_t rate;            /* completions per second */
	enum tpcq_pattern pattern;
	uint32_t on_us, off_us;   /* --pattern=onoff:ON_US:OFF_US */
	double duration_s;
	int timeout_ms;           /* safety net of each sleep */
	unsigned int burst;
	uint32_t size;            /* 0: the driver's default */
	uint32_t naive_delay_ns;  /* spin between the naive last poll and arm */
	bool peer_process;        /* ofi: --peer=process (dev_ofi_peer.c) */
	uint32_t kill_peer_after_ms; /* ofi: --kill-peer-after-ms; 0: never */
	struct cqpoll_sw_faults faults; /* the superset every device maps from */
	uint32_t faults_given;    /* TPCQ_FAULT_* options on the command line */
	const char *json_path;    /* NULL: no JSON */
	const char *csv_path;     /* NULL: no CSV */
	bool telemetry;           /* expose the counters through DPDK telemetry */
	int numa_node;            /* --dev-numa-node; -1: from sysfs, if any */
	bool interactive;         /* -i: runs start and stop at the prompt */
	bool floors;              /* --floors: measure them before the run */
	const char *record_path;  /* --record: post times, one a line; NULL: none */
	const struct tpcq_floors *floors_measured; /* NULL: not measured */
	struct tpcq_sweep_opts sweep;
};


/* params.c */
/* --help, on f. */
void tpcq_params_usage(FILE *f, const char *prog);
int tpcq_params_parse(int argc, char **argv, struct tpcq_params *p);
int tpcq_params_policy(struct tpcq_params *p, const char *spec, char *why,
		       size_t len);
int tpcq_params_check_run(struct tpcq_params *p, char *why, size_t len);
const char *tpcq_mode_name(enum tpcq_mode mode);
const char *tpcq_transition_name(enum tpcq_transition t);

#endif /* TPCQ_PARAMS_H */
