/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_PRIVATE_H
#define CQPOLL_PRIVATE_H

/*
 * The whole CQ handle, private to the library. Drivers see only the opaque
 * struct cqpoll_cq; the inline fast path sees only its first member.
 */

#include <errno.h>
#include <stdbool.h>

#include "cqpoll_alarm_private.h"
#include "cqpoll_driver.h"
#include "cqpoll_sleep_check.h"

struct cqpoll_group;

/*
 * Every counter of a CQ. The consumer thread writes them; telemetry and
 * cqpoll_cq_stats_get() read them from any thread, so they have cache lines
 * of their own (struct cqpoll_cq_fp points at the first three).
 */
struct cqpoll_cq_counters {
	struct cqpoll_cq_fp_counters fp;
	uint64_t arms;
	uint64_t missed_reports;
	uint64_t events;
	uint64_t spurious_events;
	uint64_t event_acks;
	uint64_t waits;
	uint64_t wait_timeouts;
	uint64_t lost_wakeups;
	uint64_t timeout_recoveries;
};

/*
 * Line 0: what the inline poll reads (written at creation and when the CQ
 * sleeps or takes an event); lines 1-2: counters; then the control path's
 * state. Allocations are 64-byte aligned (cqpoll_mem_alloc()).
 */
struct cqpoll_cq {
	/* Must stay first: cqpoll_poll_burst() casts the handle to it. */
	struct cqpoll_cq_fp fp;
	struct cqpoll_cq_counters counters __attribute__((aligned(64)));
	/* Control path from here: its own line. */
	const struct cqpoll_driver_ops *driver __attribute__((aligned(64)));
	/* Copied from the driver's table with defaults filled in: no NULLs. */
	struct cqpoll_driver_ops ops;
	enum cqpoll_arm_semantics arm;
	uint32_t size;
	uint32_t event_ack_batch;
	/*
	 * True from an arm that guarantees an event until that event is
	 * consumed: while true, either the arm is still in force in the device
	 * or its event is pending on the fd, so sleeping is safe.
	 */
	bool armed;
	unsigned int events_unacked;
	/*
	 * The first poll after a consumed event (cqpoll_cq_poll_judge()):
	 * counters.fp.polls right after it, and what it returned. While no
	 * poll has come since, and it returned fewer than a caller's burst,
	 * the CQ was drained at that poll, as a blocking wait's loop knows
	 * after its read: cqpoll_poll_and_arm() starts at its arm.
	 */
	uint64_t event_poll_seq;
	int event_poll_n;
	/* Start of the last sleep that ended by timeout while armed. */
	uint64_t t_timeout_sleep;
	/* The poll group holding the CQ, or NULL: guards destroy and add. */
	struct cqpoll_group *group;
	/* Driver objects that use the CQ (cqpoll_cq_hold()): guards destroy. */
	unsigned int holds;
	/*
	 * enum cqpoll_cq_state: set once, from OK, by cqpoll_cq_fail() (any
	 * thread, compare-and-swap); fail_cause is stored before it.
	 */
	int state;
	const char *fail_cause;
	/* Consumer thread: the failure was latched (poll swapped, logged). */
	bool fail_latched;
	/*
	 * Consumer thread: a look at the state found it failed. A poll after
	 * that look reads every entry written before the report; one before it
	 * may have read the CQ before the device's last entries
	 * (cqpoll_cq_poll_judge()).
	 */
	bool fail_seen;
	/*
	 * The table's wake, wait and fired ops, NULL where the driver gives
	 * none or the CQ's params turned them off (CQPOLL_CQ_PARAMS_F_NO_*).
	 * Makes the event fd readable after a report.
	 */
	cqpoll_cq_wake_t wake;
	/* The driver's own sleep for cqpoll_cq_wait(). */
	cqpoll_cq_wait_t wait;
	/* Names the CQs of a shared fd that fired. */
	cqpoll_cq_fired_t fired;
	/* Its member in cqpoll_cq::group (struct cqpoll_group_member), or NULL. */
	void *group_member;
	/*
	 * cqpoll_cq_wait()'s timeout on the event fd (drivers without a wait
	 * of their own): an alarm beside it, opened at the first such wait.
	 */
	struct cqpoll_alarm alarm;
};

/*
 * The consumer met a failure: a driver op returned @p r < 0, or the CQ was
 * reported failed. Fixes the state (if no report came first), makes every
 * later poll return the state's errno, logs and traces it once. Returns the
 * state's errno. Consumer thread only.
 */
int cqpoll_cq_latch_failure(struct cqpoll_cq *cq, int r);
/*
 * @p cq, outside any group, may be armed and waited on alone: 0, or -EBUSY
 * if its shared channel is served by a group (cqpoll_group_members.c),
 * whose takes would consume its events.
 */
int cqpoll_cq_channel_check(const struct cqpoll_cq *cq);
/*
 * Ring the arm of a CQ that is armed and was just polled empty, as a check
 * that its queue still lives (a queue can die without an event and without
 * a failing poll, e.g. an io_uring whose fd was closed: its arm is where the
 * driver looks). 0: still armed, or not armed (nothing rung); > 0: the arm
 * reported misses, the CQ is no longer armed; < 0: the CQ failed (its
 * errno), rung or reported from elsewhere.
 */
int cqpoll_cq_arm_check(struct cqpoll_cq *cq);
/*
 * cqpoll_poll_and_arm() after its first poll, for a caller whose own poll of
 * @p cq just found it empty on this thread (a poll group's pass): the same
 * results. The poll it saves only spared an arm while work was visible; the
 * arm's own handling (the edge re-poll, reported misses) closes the window
 * since the caller's poll as it closes the window since its own.
 */
int cqpoll_cq_arm_polled(struct cqpoll_cq *cq, struct cqpoll_completion *comps,
			 unsigned int n);
/*
 * The CQs of @p cq's shared event fd that fired (cqpoll_cq_fired_t), up to
 * @p max, each with its event taken as cqpoll_cq_event_get() takes one.
 * Returns how many were stored, or -errno. Consumer thread only.
 */
int cqpoll_cq_fired_take(struct cqpoll_cq *cq, struct cqpoll_cq **fired,
			 unsigned int max);

/*
 * Sleep on @p cq's own wait (cqpoll_cq::wait, not NULL) for a poll group
 * whose lone member it is, the CQ empty and armed: > 0 woken (the event, if
 * any, taken as cqpoll_cq_event_get() takes one: the CQ needs poll-and-arm
 * again), 0 the timeout expired (still armed), -EINTR a signal, other < 0
 * the event's acknowledgement failed (-errno). Consumer
 * thread only.
 */
int cqpoll_cq_own_wait(struct cqpoll_cq *cq, int timeout_ms);
/*
 * Wake a thread asleep in @p cq's own wait (the driver's wake-up,
 * cqpoll_driver_ops::wake); 0 where the driver has none. Any thread, the CQ
 * alive.
 */
int cqpoll_cq_wake_sleeper(struct cqpoll_cq *cq);

/* cqpoll_cq::state while a report writes its cause: still alive to readers. */
#define CQPOLL_CQ_STATE_CLAIMED 0x100

/* The CQ's state as any thread reads it. */
static inline enum cqpoll_cq_state
cqpoll_cq_state_now(const struct cqpoll_cq *cq)
{
	int s = __atomic_load_n(&cq->state, __ATOMIC_ACQUIRE);

	return s == CQPOLL_CQ_STATE_CLAIMED ? CQPOLL_CQ_STATE_OK :
		(enum cqpoll_cq_state)s;
}

/*
 * The consumer's look at @p cq's state: true if it failed, remembered
 * (fail_seen), so that the next poll that finds the CQ empty may latch it.
 */
static inline bool
cqpoll_cq_failed_now(struct cqpoll_cq *cq)
{
	if (cqpoll_cq_state_now(cq) == CQPOLL_CQ_STATE_OK)
		return false;
	cq->fail_seen = true;
	return true;
}

/* The check of cqpoll_sleep_check_register(), NULL when none. */
extern const struct cqpoll_sleep_check *cqpoll_sleep_check_current;

/* 1 if the registered check says a sleep on @p cq now loses a wake-up. */
static inline int
cqpoll_sleep_check_run(struct cqpoll_cq *cq)
{
	const struct cqpoll_sleep_check *c =
		__atomic_load_n(&cqpoll_sleep_check_current, __ATOMIC_ACQUIRE);

	return c != NULL ? c->check(cq, c->arg) : -ENOTSUP;
}

/*
 * A sleep on the armed CQ, begun at @t_sleep (cqpoll_now_ns()), ended by
 * timeout without its event: the next poll judges whether the event was lost.
 */
void cqpoll_cq_timeout_mark(struct cqpoll_cq *cq, uint64_t t_sleep);
/*
 * As cqpoll_cq_timeout_mark(), for a poll group's health check of an armed
 * member that did not sleep: work found with a host timestamp older than
 * @p t_since is counted (its event is lost: visible well before the check
 * took the events at hand); work without one is reported to the trace hook
 * (a per-CQ recovery) but not counted: nothing tells a lost event from one
 * on its way.
 */
void cqpoll_cq_health_mark(struct cqpoll_cq *cq, uint64_t t_since);

/* The handle of which @p fp is the first member. */
static inline struct cqpoll_cq *
cqpoll_cq_of_fp(struct cqpoll_cq_fp *fp)
{
	return (struct cqpoll_cq *)(void *)fp;
}

#endif /* CQPOLL_PRIVATE_H */
