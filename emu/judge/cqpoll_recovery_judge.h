/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_RECOVERY_JUDGE_H
#define CQPOLL_RECOVERY_JUDGE_H

/**
 * @file
 * Late or lost: the safety net's recoveries on queues without host
 * timestamps, told apart by the post times their producer keeps. Internal:
 * a static library (emu/judge/) that the tests and testpmd-cq link, never
 * part of libcqpoll or its ABI.
 *
 * A real queue's completions (io_uring, libfabric, UCX, an ethdev Rx queue)
 * carry no host timestamp, so a recovery (a timeout, or the net of a
 * polling group, that found work no event announced) is either a lost event
 * or work posted as the timeout ran out, and the library counts both in
 * timeout_recoveries. A loaded machine, whose producer is preempted for a
 * whole timeout and posts just as it ends, makes such late ones common.
 *
 * The trace hook sees each recovery on its CQ right before the completions
 * it found are delivered, so the consumer's next expected work on that CQ
 * is the oldest found; the caller says when its post returned (what the
 * post makes visible, and its event, is done by then). That is judged
 * against the deadline by which its event must have ended the wait:
 *   after a sleep   the sleep's start, taken at the sleep hook (before the
 *                   consumer blocks), plus half its timeout: the earliest
 *                   the safety net ends a sleep (its alarm is due within
 *                   [T/2, T] of the start); a wait returns an event raised
 *                   before its timeout, so work posted before that and
 *                   found by the timeout lost its event;
 *   while polling   a group's net looks once per timeout at its cold CQs,
 *                   after taking the events at hand: work older than a
 *                   timeout when the net finds it lost its event (the
 *                   library's own rule for completions with a timestamp).
 * Posted before the deadline less CQPOLL_RJ_SLACK_NS: lost. Posted after
 * it, or still being posted when found: late. A loaded machine makes late
 * ones more common and lost ones no more likely, so checks assert no lost
 * one and report the late ones; negative controls expect lost ones.
 *
 * The hook is installed once per process over the one found installed
 * (DPDK's trace points, say), which still sees every event.
 */

#include <stdint.h>

#include <cqpoll.h>

/** Clock reads and epoll's millisecond rounding, on the late side. */
#define CQPOLL_RJ_SLACK_NS 1000000ull

/** A recovery's verdict. */
enum cqpoll_rj_verdict {
	CQPOLL_RJ_LATE = 0, /**< posted as the wait ran out, or unknown */
	CQPOLL_RJ_LOST,     /**< posted before its deadline: its event was lost */
};

/** The consumer's sleep, as the trace hooks saw it. */
struct cqpoll_rj_sleep {
	int asleep;          /**< from a sleep hook to a group's wake/transition */
	uint64_t t_sleep;    /**< when the sleep began, CLOCK_MONOTONIC ns */
	uint64_t timeout_ns; /**< the last sleep's timeout: the net's period too */
};

/**
 * When the post of the oldest work the consumer still expects on @p cq
 * returned (CLOCK_MONOTONIC ns).
 *
 * @return
 *   1 with *t_end set (0: the post is still under way, or the record holds
 *   another post); 0 if @p cq is not judged.
 */
typedef int (*cqpoll_rj_post_end_fn)(void *arg, const struct cqpoll_cq *cq,
				     uint64_t *t_end);

/**
 * The verdict on a recovery of @p cq; @p early_ns: how long before its
 * deadline a lost one was posted (0 for a late one).
 */
typedef void (*cqpoll_rj_verdict_fn)(void *arg, const struct cqpoll_cq *cq,
				     enum cqpoll_rj_verdict v, uint64_t early_ns);

/** One consumer's judge: filled by the caller, watched until unwatched. */
struct cqpoll_rj_watch {
	cqpoll_rj_post_end_fn post_end;
	cqpoll_rj_verdict_fn verdict;
	void *arg;                  /**< passed to both */
	struct cqpoll_rj_sleep sleep; /**< the hooks' own: zero it, then leave it */
};

/**
 * The deadline of work found by a recovery at @p now_ns.
 *
 * @return
 *   The sleep's start plus half its timeout if asleep, else @p now_ns less
 *   the timeout (0 if that is before the clock's start).
 *
 * Thread safety: a pure function.
 */
uint64_t cqpoll_rj_deadline(const struct cqpoll_rj_sleep *s, uint64_t now_ns);

/**
 * The verdict on work whose post returned at @p t_end (0: under way) and
 * whose event had to end the wait by @p deadline.
 *
 * @return
 *   CQPOLL_RJ_LOST if t_end + CQPOLL_RJ_SLACK_NS < deadline, else
 *   CQPOLL_RJ_LATE; *early_ns (if not NULL) is deadline - t_end for a lost
 *   one, else 0.
 *
 * Thread safety: a pure function.
 */
enum cqpoll_rj_verdict cqpoll_rj_judge(uint64_t t_end, uint64_t deadline,
				       uint64_t *early_ns);

/**
 * Judge the recoveries seen on the calling thread with @p w, until
 * cqpoll_rj_unwatch(); installs the hook on first use.
 *
 * Thread safety: per thread; @p w is used by this thread's hooks only.
 */
void cqpoll_rj_watch(struct cqpoll_rj_watch *w);

/**
 * Judge with @p w the recoveries seen on any thread that watches nothing
 * itself (a test's single consumer thread, started after this call), until
 * cqpoll_rj_unwatch_all(); installs the hook on first use.
 *
 * Thread safety: call it before the consumer runs; @p w's sleep is then the
 * consumer's alone, so one consumer thread (a group's, or one CQ's) per
 * process.
 */
void cqpoll_rj_watch_all(struct cqpoll_rj_watch *w);

/** Stop judging on the calling thread. Thread safety: per thread. */
void cqpoll_rj_unwatch(void);

/**
 * Stop judging for threads without a watch of their own (before the CQs
 * are destroyed). Thread safety: once the consumer is done.
 */
void cqpoll_rj_unwatch_all(void);

#endif /* CQPOLL_RECOVERY_JUDGE_H */
