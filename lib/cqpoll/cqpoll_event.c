/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event side of a CQ: the pollable fd, consuming and acknowledging
 * events, and the bounded sleep.
 */

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "cqpoll_clock.h"
#include "cqpoll_log_private.h"
#include "cqpoll_private.h"
#include "cqpoll_trace_private.h"
#include "cqpoll_mutant.h"

/* Longest safety-net timeout accepted by cqpoll_cq_wait(): one hour. */
#define CQPOLL_WAIT_TIMEOUT_MS_MAX 3600000

int
cqpoll_cq_event_fd(const struct cqpoll_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	return cq->ops.event_fd(cq->fp.priv);
}

static int
ack_unacked(struct cqpoll_cq *cq)
{
	int r;

	if (cq->events_unacked == 0)
		return 0;
	r = cq->ops.event_ack(cq->fp.priv, cq->events_unacked);
	if (r < 0)
		return r;
	cq->events_unacked = 0;
	cqpoll_stat_add(&cq->counters.event_acks, 1);
	return 0;
}

/*
 * What the driver's event_get, its own wait or its fired op returned (@p r):
 * the core's side of taking an event. Returns what cqpoll_cq_event_get()
 * returns.
 */
static int
event_taken(struct cqpoll_cq *cq, int r)
{
	int a;

	if (r < 0) {
		/*
		 * The CQ's events failed: it is failed. Taken as an event, so
		 * that the caller polls what it still holds, then the errno.
		 */
		cqpoll_cq_fail(cq, r, NULL);
		/* Failed here: the polls that follow read the CQ after it. */
		cq->fail_seen = true;
		cq->armed = false;
		return 1;
	}
	if (r == 0) {
		/* Reported failed while asleep, its fd made readable: poll it. */
		if (!cqpoll_cq_failed_now(cq))
			return 0;
		cq->armed = false;
		return 1;
	}
	/* The arm fired: the next sleep needs a new one. */
	cq->armed = false;
	/*
	 * Or a report's wake-up: sent after its state, which this look sees,
	 * so that the poll that follows, empty, may latch it.
	 */
	(void)cqpoll_cq_failed_now(cq);
	__atomic_fetch_or(&cq->fp.pending, CQPOLL_CQ_FP_PENDING_EVENT,
			  __ATOMIC_RELAXED);
	cqpoll_stat_add(&cq->counters.events, (uint64_t)r);
	cq->events_unacked += (unsigned int)r;
	/* Acking takes a lock in verbs: pay it once per batch, not per event. */
	if (cq->events_unacked >= cq->event_ack_batch) {
		a = ack_unacked(cq);
		if (a < 0)
			return a;
	}
	return r;
}

int
cqpoll_cq_event_get(struct cqpoll_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	/* Latched: the dead device's events mean nothing, poll for the errno. */
	if (cq->fail_latched)
		return 1;
	return event_taken(cq, cq->ops.event_get(cq->fp.priv));
}

int
cqpoll_cq_fired_take(struct cqpoll_cq *cq, struct cqpoll_cq **fired,
		     unsigned int max)
{
	int i, n;

	if (cq->fired == NULL)
		return -ENOTSUP;
	n = cq->fired(cq->fp.priv, fired, max);
	if (n < 0)
		return n;
	/*
	 * One event per CQ named: the driver names a CQ once per arm. Only
	 * @p cq's group's members: another CQ's state is its own thread's
	 * (a CQ of a served channel is not armed outside the group, but may
	 * have been armed before the group took the channel).
	 */
	for (i = 0; i < n; i++)
		if (!fired[i]->fail_latched && fired[i]->group == cq->group)
			(void)event_taken(fired[i], 1);
	return n;
}

int
cqpoll_cq_event_ack(struct cqpoll_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	return ack_unacked(cq);
}

#if CQPOLL_MUTANT(NO_SAFETY_NET)
/* Negative control only (test build): a timeout judges nothing. */
void
cqpoll_cq_timeout_mark(struct cqpoll_cq *cq, uint64_t t_sleep)
{
	(void)cq;
	(void)t_sleep;
}

void
cqpoll_cq_health_mark(struct cqpoll_cq *cq, uint64_t t_since)
{
	(void)cq;
	(void)t_since;
}
#else
void
cqpoll_cq_timeout_mark(struct cqpoll_cq *cq, uint64_t t_sleep)
{
	/* Only an arm believed in force can have had its event lost. */
	if (!cq->armed)
		return;
	cq->t_timeout_sleep = t_sleep;
	__atomic_fetch_or(&cq->fp.pending, CQPOLL_CQ_FP_PENDING_TIMEOUT,
			  __ATOMIC_RELAXED);
}

void
cqpoll_cq_health_mark(struct cqpoll_cq *cq, uint64_t t_since)
{
	if (!cq->armed)
		return;
	cq->t_timeout_sleep = t_since;
	__atomic_fetch_or(&cq->fp.pending, CQPOLL_CQ_FP_PENDING_TIMEOUT |
			  CQPOLL_CQ_FP_PENDING_HEALTH, __ATOMIC_RELAXED);
}
#endif

/*
 * The rule (doc/guides/contract.md, "The safety net"): poll-and-arm returned 0
 * (empty, and the arm guarantees an event for anything that lands), no event
 * was consumed since, and a poll after the timeout finds completions. Then
 * the arm fired and its event is lost or later than the whole timeout. It is
 * a recovery, a lost wake-up seen on any device, when the completions were
 * visible before the sleep: the oldest one's host timestamp says so; without
 * one, nothing tells "visible before" from "landed during the sleep with its
 * event still on its way", and both count.
 */
static void
timeout_judge(struct cqpoll_cq *cq, const struct cqpoll_completion *comps,
	      int n, bool health)
{
	if (n <= 0 || !cq->armed)
		return;
	/* Its event is lost or late: either way the arm is spent, arm again. */
	cq->armed = false;
	if ((comps[0].flags & CQPOLL_COMPLETION_F_TIMESTAMP) != 0 &&
	    comps[0].timestamp >= cq->t_timeout_sleep)
		return;
	/*
	 * A health check's find without a host timestamp: told to the hook, for
	 * a caller that knows its post times (test/common/recovery_judge.h),
	 * not counted (cqpoll_cq_health_mark()).
	 */
	if (health && (comps[0].flags & CQPOLL_COMPLETION_F_TIMESTAMP) == 0) {
		CQPOLL_TRACE(wake, NULL, cq, CQPOLL_TRACE_WAKE_RECOVERY, 0, (uint32_t)n);
		return;
	}
	cqpoll_stat_add(&cq->counters.timeout_recoveries, 1);
	/* After the timeout's own wake event: this one recovered work. */
	CQPOLL_TRACE(wake, NULL, cq, CQPOLL_TRACE_WAKE_RECOVERY, 0, (uint32_t)n);
}

/*
 * A poll that returned @p n found a failed CQ drained: empty, and it read
 * the CQ after a look that saw the failure (cqpoll_cq::fail_seen), not
 * before the device's last entries.
 */
#if CQPOLL_MUTANT(LATCH_STALE_EMPTY)
/* Negative control only (test build): any empty poll latches. */
static bool
drained(const struct cqpoll_cq *cq, int n)
{
	(void)cq;
	return n == 0;
}
#else
static bool
drained(const struct cqpoll_cq *cq, int n)
{
	return n == 0 && cq->fail_seen;
}
#endif

void
cqpoll_cq_poll_judge(struct cqpoll_cq_fp *fp,
		     const struct cqpoll_completion *comps, int n)
{
	struct cqpoll_cq *cq = cqpoll_cq_of_fp(fp);
	uint32_t pending = __atomic_exchange_n(&fp->pending, 0, __ATOMIC_ACQUIRE);

	if (n < 0) {
		cqpoll_cq_latch_failure(cq, n);
		return;
	}
	if ((pending & CQPOLL_CQ_FP_PENDING_EVENT) != 0) {
		if (n == 0)
			cqpoll_stat_add(&cq->counters.spurious_events, 1);
		cq->event_poll_seq = __atomic_load_n(&fp->counters->polls,
						     __ATOMIC_RELAXED);
		cq->event_poll_n = n;
	}
	if ((pending & CQPOLL_CQ_FP_PENDING_TIMEOUT) != 0)
		timeout_judge(cq, comps, n,
			      (pending & CQPOLL_CQ_FP_PENDING_HEALTH) != 0);
	if ((pending & CQPOLL_CQ_FP_PENDING_FAILED) != 0) {
		/*
		 * Reported failed: what the CQ held before goes out first; the
		 * first poll that finds it drained latches the state. Drained,
		 * not just empty: this poll read the CQ before it saw the report,
		 * and the device may have written its last entries and reported
		 * in between. Only a poll that read the CQ after a look that saw
		 * the failure (fail_seen) may latch it.
		 */
		if (drained(cq, n))
			cqpoll_cq_latch_failure(cq, 0);
		else
			__atomic_fetch_or(&fp->pending, CQPOLL_CQ_FP_PENDING_FAILED,
					  __ATOMIC_RELAXED);
		cq->fail_seen = true;
	}
}

int
cqpoll_cq_own_wait(struct cqpoll_cq *cq, int timeout_ms)
{
	int r = cq->wait(cq->fp.priv, timeout_ms);

	if (r == -EINTR)
		return r;
	if (r != 0) {
		r = event_taken(cq, r);
		return r < 0 ? r : 1;
	}
	/* Reported failed while asleep (its wake-up ended the wait): poll it. */
	if (cqpoll_cq_failed_now(cq)) {
		cq->armed = false;
		return 1;
	}
	return 0;
}

int
cqpoll_cq_wake_sleeper(struct cqpoll_cq *cq)
{
	return cq->wake != NULL ? cq->wake(cq->fp.priv) : 0;
}

int
cqpoll_cq_wait(struct cqpoll_cq *cq, int timeout_ms)
{
	uint64_t t_sleep;
	bool dbg;
	int r;

	if (cq == NULL || timeout_ms <= 0 || timeout_ms > CQPOLL_WAIT_TIMEOUT_MS_MAX) {
		CQPOLL_LOG_LIB(ERR, "cq wait: %s", cq == NULL ? "NULL cq" :
			       "timeout out of range 1..3600000 ms");
		return -EINVAL;
	}
	/*
	 * A failed CQ never puts its caller to sleep: the errno once drained;
	 * before, "poll it", as an event would, for what it still holds.
	 */
	if (cqpoll_cq_failed_now(cq)) {
		if (cq->fail_latched)
			return cqpoll_cq_latch_failure(cq, 0);
		cq->armed = false;
		return 1;
	}
	if (!cq->armed)
		return -EAGAIN;
	r = cqpoll_cq_channel_check(cq);
	if (r != 0)
		return r;
	/* Only a registered check answers (emulated devices' ground truth). */
	if (cqpoll_sleep_check_run(cq) == 1)
		cqpoll_stat_add(&cq->counters.lost_wakeups, 1);
	cqpoll_stat_add(&cq->counters.waits, 1);
	/* The start of the sleep: a timeout's recovery is judged against it. */
	t_sleep = cqpoll_now_ns();
	dbg = cqpoll_log_lib_debug(t_sleep);
	if (dbg)
		CQPOLL_LOG_LIB(DEBUG, "cq %p: empty and armed, sleeping up to %d ms",
			       (void *)cq, timeout_ms);
	CQPOLL_TRACE(sleep, NULL, cq, timeout_ms);
	if (cq->wait != NULL) {
		/*
		 * The driver's own wait (io_uring: on the ring itself) sleeps and
		 * takes the event in one call, where the fd costs a poll(2) and
		 * event_get's system call after it.
		 */
		r = cq->wait(cq->fp.priv, timeout_ms);
		if (r == -EINTR)
			return r;
		if (r != 0) {
			r = event_taken(cq, r);
			if (r < 0)
				return r;
			CQPOLL_TRACE(wake, NULL, cq, CQPOLL_TRACE_WAKE_EVENT,
				     cqpoll_now_ns() - t_sleep, 0);
			return r > 0 ? 1 : 0;
		}
	} else {
		/* The timeout is the CQ's alarm, beside the fd. */
		r = cqpoll_alarm_poll(&cq->alarm, cq->ops.event_fd(cq->fp.priv),
				      timeout_ms, t_sleep);
		if (r < 0) {
			CQPOLL_LOG_LIB(ERR, "cq %p: sleep on its event fd: %s",
				       (void *)cq, strerror(-r));
			return r;
		}
	}
	if (r == 0) {
		/* Reported failed while asleep in the driver's wait: poll it. */
		if (cq->wait != NULL && cqpoll_cq_failed_now(cq)) {
			cq->armed = false;
			return 1;
		}
		cqpoll_stat_add(&cq->counters.wait_timeouts, 1);
		if (dbg)
			CQPOLL_LOG_LIB(DEBUG, "cq %p: woken by the %d ms timeout",
				       (void *)cq, timeout_ms);
		CQPOLL_TRACE(wake, NULL, cq, CQPOLL_TRACE_WAKE_TIMEOUT,
			     cqpoll_now_ns() - t_sleep, 0);
		cqpoll_cq_timeout_mark(cq, t_sleep);
		return 0;
	}
	r = cqpoll_cq_event_get(cq);
	if (dbg)
		CQPOLL_LOG_LIB(DEBUG, "cq %p: woken by %s", (void *)cq,
			       r > 0 ? "its event" : r == 0 ?
			       "a shared channel's event" : "an event that failed");
	if (r < 0)
		return r;
	CQPOLL_TRACE(wake, NULL, cq, CQPOLL_TRACE_WAKE_EVENT,
		     cqpoll_now_ns() - t_sleep, 0);
	/* Woken by the failure: the caller polls what is left, then the errno. */
	/* Readable with nothing for us (a shared channel): like a timeout. */
	return r > 0 ? 1 : 0;
}
