/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_TEST_RECOVERY_JUDGE_H
#define CQPOLL_TEST_RECOVERY_JUDGE_H

/*
 * Late or lost: the safety net's recoveries on queues without host
 * timestamps, told apart by what the test knows.
 *
 * A real queue's completions (io_uring, libfabric, UCX, an ethdev Rx queue)
 * carry no host timestamp, so a recovery (a timeout, or the net of a
 * polling group, that found work no event announced) is either a lost event
 * or work posted as the timeout ran out, and the library counts both in
 * timeout_recoveries. A test that asserts none fails on a loaded machine,
 * where a producer preempted for a whole timeout posts just as it ends.
 *
 * The producer records when each post returned (rj_post_begin() and
 * rj_post_end() around it; what the post makes visible, and its event, is
 * done by then). A trace hook sees each recovery on its CQ right before the
 * completions it found are delivered, so the consumer's next expected
 * sequence number on that CQ is the oldest one found. Its post is judged
 * against the deadline by which its event must have ended the wait:
 *   after a sleep   the sleep's start, taken at the sleep hook (before the
 *                   consumer blocks), plus its timeout: epoll_wait returns
 *                   an event raised before its timeout, so work posted
 *                   before that and found by the timeout lost its event;
 *   while polling   a group's net looks once per timeout at its cold CQs,
 *                   after taking the events at hand: work older than a
 *                   timeout when the net finds it lost its event (the
 *                   library's own rule for completions with a timestamp).
 * Posted before the deadline less RJ_SLACK_NS: lost. Posted after it, or
 * still being posted when found: late. A loaded machine makes late ones
 * more common and lost ones no more likely, so tests assert rj_lost() == 0
 * and report rj_late(), and negative controls expect rj_lost() > 0.
 *
 * One consumer thread (a group's, or one CQ's) per process; producers on
 * any thread, one per CQ at a time.
 */

#include <stdint.h>

#include "cqpoll.h"

#define RJ_MAX_CQS 16
/*
 * Posts remembered per CQ: a producer must not run further ahead of the
 * consumer than this.
 */
#define RJ_RING 4096
/* Clock reads and epoll's millisecond rounding, on the late side. */
#define RJ_SLACK_NS 1000000ull

/*
 * Start judging: install the trace hook. @p next[i] is the consumer's next
 * expected sequence number on cqs[i], updated after each delivery.
 */
void rj_init(struct cqpoll_cq *const *cqs, unsigned int n, const uint64_t *next);
/* Stop judging: remove the trace hook (before the CQs are destroyed). */
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
