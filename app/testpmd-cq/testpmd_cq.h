/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TESTPMD_CQ_H
#define TESTPMD_CQ_H

/*
 * What every module of testpmd-cq uses: its name, exit statuses, the
 * bounds of its options and their enums. Each module has its own header
 * (params.h, run.h, devices/dev.h, engines/engine.h, poller/poller.h,
 * report/report.h, prompt/prompt.h, sweep/sweep.h, floors/floors_paced.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include <cqpoll.h>
#include <cqpoll_group.h>
#include <cqpoll_sw.h>
#include <cqpoll_sw_emu.h>

#include "clock.h"

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
#define TPCQ_CQS_MAX 4096
/* Poller lcores, each with its group; the EAL has at most RTE_MAX_LCORE. */
#define TPCQ_POLLERS_MAX 64
/* cqpoll_group_conf::burst accepts 1 .. 1024. */
#define TPCQ_GROUP_BURST_MAX 1024
#define TPCQ_POLICY_DEFAULT "adaptive"

/* The completion every emulated post carries, checked by the poller. */
#define TPCQ_BYTE_LEN 64
#define TPCQ_QP_NUM 1
/* --dev-numa-node: Linux's largest node number (MAX_NUMNODES) is 1023. */
#define TPCQ_NUMA_NODE_MAX 1023
#define TPCQ_NAIVE_DELAY_NS_MAX 100000000U

enum tpcq_mode {
	TPCQ_MODE_POLL = 0,
	TPCQ_MODE_INTERRUPT,
	TPCQ_MODE_ADAPTIVE,       /* the poll group asks its policy when to sleep */
};

/* When the rate engine's completions are due (--pattern, arrival.c). */
enum tpcq_pattern {
	TPCQ_PATTERN_CONST = 0,
	TPCQ_PATTERN_POISSON,
	TPCQ_PATTERN_ONOFF,
};

/* Longest ON or OFF period of --pattern=onoff: a minute. */
#define TPCQ_ONOFF_US_MAX 60000000U

enum tpcq_transition {
	TPCQ_TRANSITION_POLL_AND_ARM = 0,
	TPCQ_TRANSITION_NAIVE,
	/* DPDK's examples/l3fwd-power, reproduced on an ethdev Rx queue. */
	TPCQ_TRANSITION_L3FWD_POWER,
};

/* Fault options, as given on the command line (struct tpcq_params::faults_given). */
#define TPCQ_FAULT_ARM_DELAY        (1u << 0)
#define TPCQ_FAULT_VISIBILITY_DELAY (1u << 1)
#define TPCQ_FAULT_PCT              (1u << 2)
#define TPCQ_FAULT_EVENT_DELAY      (1u << 3)
#define TPCQ_FAULT_SPURIOUS         (1u << 4)
#define TPCQ_FAULT_DUPLICATE        (1u << 5)
#define TPCQ_FAULT_KEEP_ARMED       (1u << 6)
#define TPCQ_FAULT_SEED             (1u << 7)
#define TPCQ_FAULT_ALL              ((1u << 8) - 1)

/* Longest --dev value: a kernel device name is at most 64 bytes. */
#define TPCQ_DEV_NAME_MAX 80

struct tpcq_dev;
struct tpcq_engine;

#endif /* TESTPMD_CQ_H */
