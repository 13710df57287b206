/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_POLLER_SCHED_H
#define TPCQ_POLLER_SCHED_H

/*
 * --groups (poller_sched.c: the pollers' loop; poller_sched_run.c: the
 * groups, the pollers' launch and the report).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "poller.h"
#include "run.h"
#include "testpmd_cq.h"

struct sched_group;

struct sched_cq {
	struct sched_group *sg;
	struct tpcq_check check;
};

struct sched_group {
	struct cqpoll_group *g;
	struct tpcq_run *run;
	/* The result of the poller that runs it: set by the adopter. */
	struct tpcq_result *res;
	unsigned int dest;         /* where a requested move goes */
	struct sched_cq *cqs;
	unsigned int ncqs;
};

struct runner {
	struct sched_ctx *ctx;
	struct tpcq_result *res;
	unsigned int id;
	int epfd, mbox_fd;
	pthread_mutex_t lock;
	unsigned int mbox[TPCQ_POLLERS_MAX], nmbox;
	bool owned[TPCQ_POLLERS_MAX], sleeping[TPCQ_POLLERS_MAX];
	uint64_t wakeups;          /* epoll waits that returned with work */
	uint64_t wakeups_late;     /* those in the second half of the traffic */
	uint64_t t_half;           /* when that half begins */
	unsigned int held;         /* groups held when the traffic ended */
};

struct sched_ctx {
	struct tpcq_run *run;
	struct sched_group groups[TPCQ_POLLERS_MAX];
	unsigned int ngroups;
	struct runner runners[TPCQ_POLLERS_MAX];
	unsigned int nrunners;
	struct cqpoll_cq **all_cqs;
	struct tpcq_check **all_cks;
	bool done;
	unsigned int stopped;
	uint64_t moves;
	double wall_s;
};

int tpcq_sched_fail(struct tpcq_result *res, const char *call, int err);
void tpcq_sched_on_completions(struct cqpoll_cq *cq,
			       const struct cqpoll_completion *c,
			       unsigned int n, void *arg);
void tpcq_sched_mail(struct runner *to, unsigned int gi);
void tpcq_sched_wake_all(struct sched_ctx *ctx);
/* A poller: its groups from the start to their drain; rte_eal_remote_launch(). */
int tpcq_sched_runner_main(void *arg);

#endif /* TPCQ_POLLER_SCHED_H */
