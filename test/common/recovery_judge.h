/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_TEST_RECOVERY_JUDGE_H
#define CQPOLL_TEST_RECOVERY_JUDGE_H

/*
 * Late or lost, for the tests: the safety net's recoveries on queues without
 * host timestamps, judged by the rule of emu/judge/cqpoll_recovery_judge.h
 * (which testpmd-cq uses too) against the post times the test records.
 *
 * The producer records when each post returned (rj_post_begin() and
 * rj_post_end() around it; what the post makes visible, and its event, is
 * done by then). At each recovery on a CQ the consumer's next expected
 * sequence number there is the oldest work found; its post is judged lost
 * if it returned before its deadline less CQPOLL_RJ_SLACK_NS, else late
 * (also while still being posted, or if its record was overwritten). Tests
 * assert rj_lost() == 0 and report rj_late(); negative controls expect
 * rj_lost() > 0.
 *
 * One consumer thread (a group's, or one CQ's) per process, started after
 * rj_init(); producers on any thread, one per CQ at a time.
 */

#include <stdint.h>

#include "cqpoll.h"

#define RJ_MAX_CQS 16
/*
 * Posts remembered per CQ: a producer must not run further ahead of the
 * consumer than this.
 */
#define RJ_RING 4096

/*
 * Start judging (cqpoll_rj_watch_all()). @p next[i] is the consumer's next
 * expected sequence number on cqs[i], updated after each delivery.
 */
void rj_init(struct cqpoll_cq *const *cqs, unsigned int n, const uint64_t *next);
/* Stop judging (before the CQs are destroyed). */
void rj_fini(void);
/* Around each post of sequence number @p seq on CQ @p i. */
void rj_post_begin(unsigned int i, uint64_t seq);
void rj_post_end(unsigned int i, uint64_t seq);
/* Recoveries judged on CQ @p i (atomic reads: any thread). */
uint64_t rj_late(unsigned int i);
uint64_t rj_lost(unsigned int i);
/* How long before its deadline the worst lost one was posted, in ns. */
uint64_t rj_worst_ns(unsigned int i);

#endif /* CQPOLL_TEST_RECOVERY_JUDGE_H */
