/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_POLLER_H
#define TPCQ_POLLER_H

/*
 * The pollers (poller/): the consumer side of a run, and the delivery
 * check of every completion.
 */

#include "harness.h"
#include "run.h"

struct tpcq_check {
	struct tpcq_harness h;    /* the work tpcq-peer does too, and the order */
	uint64_t wr_id_mask;      /* bits of the sequence number wr_id carries */
	uint64_t received;        /* completions read from this CQ */
	unsigned int index;       /* the CQ's place in tpcq_run::dcs */
};

/* CQ @p index of @p run, its tallies in @p res. */
void tpcq_check_init(struct tpcq_check *ck, const struct tpcq_run *run,
		     struct tpcq_result *res, unsigned int index);
/* Its tallies now in @p res: the CQ's group moved to another poller. */
void tpcq_check_bind(struct tpcq_check *ck, struct tpcq_result *res);
/* The sequence number of the CQ's next completion, whatever --harness. */
uint64_t tpcq_check_expected(const struct tpcq_check *ck);

void tpcq_check_burst(const struct tpcq_run *run, struct tpcq_result *res,
		      struct tpcq_check *ck, const struct cqpoll_completion *comps,
		      unsigned int n);

/*
 * recovery.c: judge the safety net's recoveries on this thread's CQs
 * (cqs[i] checked by *cks[i]) late or lost, into res; until unwatched.
 */
void tpcq_recovery_watch(struct tpcq_run *run, struct tpcq_result *res,
			 struct cqpoll_cq *const *cqs,
			 struct tpcq_check *const *cks, unsigned int n);
void tpcq_recovery_unwatch(void);

/* poller.c */
void tpcq_poller_run(struct tpcq_run *run, struct tpcq_result *res);
bool tpcq_poller_grouped(const struct tpcq_params *p);

/* poller.c: the poller's clocks at its end, into res. */
void tpcq_poller_clocks(struct tpcq_result *res, const struct tpcq_clocks *start);

/* poller_group.c */
void tpcq_poller_group_run(struct tpcq_run *run, struct tpcq_result *res);
void tpcq_cq_stats_sum(const struct tpcq_run *run, struct cqpoll_cq_stats *sum);
enum cqpoll_group_mode tpcq_group_mode(enum tpcq_mode mode);
/* Another poller's result into d; a group's counters into d. */
void tpcq_poller_result_add(struct tpcq_result *d, const struct tpcq_result *s);
void tpcq_group_stats_add(struct cqpoll_group_stats *d,
			  const struct cqpoll_group_stats *s);
/* The next lcore after prev that is neither the main one nor the generator's. */
unsigned int tpcq_poller_next_lcore(const struct tpcq_run *run, unsigned int prev);

/* poller_sched.c: --groups, placed by the consolidating scheduler. */
void tpcq_poller_sched_run(struct tpcq_run *run, struct tpcq_result *res);

#endif /* TPCQ_POLLER_H */
