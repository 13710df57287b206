/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transition into sleep, written once for every driver.
 *
 * A completion that lands after the last empty poll and before the arm takes
 * effect raises no event on edge devices, so a consumer that arms and sleeps
 * can sleep forever. Each arm semantics closes that window differently:
 *  - level: the device compares the armed consumer index with its producer
 *    index and fires at once for entries already there; arming after an empty
 *    poll is enough.
 *  - edge: only entries written after the arm fire; a poll after the arm sees
 *    every entry written before it.
 *  - report-missed: the arm says when entries may have been missed; then the
 *    CQ is not assumed armed, and we poll and arm again.
 */

#include <errno.h>
#include <string.h>

#include "cqpoll_log_private.h"
#include "cqpoll_private.h"
#include "cqpoll_trace_private.h"
#include "cqpoll_mutant.h"

/* Ring the device. > 0 means "poll again, the CQ is not armed". */
static int
arm_device(struct cqpoll_cq *cq)
{
	int r;

	r = cq->ops.arm(cq->fp.priv);
	if (r < 0) {
		CQPOLL_LOG(ERR, cq->ops.name, "cq %p: arm failed: %s", (void *)cq,
			   strerror(-r));
		/* Failed: what the CQ still holds goes out before the errno. */
		cqpoll_cq_fail(cq, r, NULL);
		return r;
	}
	cqpoll_stat_add(&cq->counters.arms, 1);
	CQPOLL_TRACE(arm, cq, r > 0);
	CQPOLL_LOG_FP(DEBUG, cq->ops.name, "cq %p: armed (%s)%s", (void *)cq,
		      cqpoll_arm_semantics_name(cq->arm),
		      r > 0 ? ", misses reported" : "");
	if (r > 0) {
		cqpoll_stat_add(&cq->counters.missed_reports, 1);
		return 1;
	}
	return 0;
}

/*
 * Reported failed (cqpoll_cq_fail(), from any thread) after the look that
 * let the arm go ahead: a driver whose arm resets its wait object may have
 * taken the report's wake-up with it (libfabric: fi_trywait() resets what
 * fi_cq_signal() set), and a sleep after it would end only by its
 * timeout. The report stores the state before it sends the wake-up, so a
 * look after the arm sees every report whose wake-up the arm could take.
 */
#if CQPOLL_MUTANT(NO_STATE_AFTER_ARM)
/* Negative control only (test build): the arm's word is taken as is. */
static bool
failed_at_arm(struct cqpoll_cq *cq)
{
	(void)cq;
	return false;
}
#else
static bool
failed_at_arm(struct cqpoll_cq *cq)
{
	return __builtin_expect(cqpoll_cq_failed_now(cq), 0);
}
#endif

/*
 * A failed CQ's last words: the entries it still holds first (flushed work;
 * the device wrote them before it reported), then the state's errno.
 */
static int
failed_out(struct cqpoll_cq *cq, struct cqpoll_completion *comps,
	   unsigned int n)
{
	int r = cqpoll_poll_burst(cq, comps, n);

	return r != 0 ? r : cqpoll_cq_latch_failure(cq, 0);
}

int
cqpoll_cq_arm_check(struct cqpoll_cq *cq)
{
	int r;

	/*
	 * Reported failed (cqpoll_cq_fail(), from any thread): "poll again",
	 * as a reported miss. The poll just before read the CQ before this
	 * look saw the report, so its "empty" may predate the device's last
	 * entries; the next poll drains them, then latches the errno.
	 */
	if (cq->fail_latched)
		return cqpoll_cq_latch_failure(cq, 0);
	if (cqpoll_cq_failed_now(cq)) {
		cq->armed = false;
		return 1;
	}
	if (!cq->armed)
		return 0;
	/* An arm of an armed, empty CQ changes nothing on any driver. */
	r = arm_device(cq);
	if (r < 0)
		return cqpoll_cq_latch_failure(cq, r);
	if (failed_at_arm(cq)) {
		cq->armed = false;
		return 1;
	}
	if (r > 0)
		cq->armed = false;
	return r;
}

/*
 * Arms in a row that may report misses while polls find nothing. A device
 * that keeps saying "missed" with nothing visible (entries not yet visible,
 * or a broken device) would otherwise hold the caller in this call forever.
 */
#define ARM_MISSED_MAX 64

/*
 * The last poll of @p cq was the first after an event and found fewer than
 * @p n: the CQ was drained then. A poll now would only repeat it: what
 * landed since, the arm's own handling returns (edge: the look after the
 * arm; report-missed: the report, then a poll), so a loop of poll-and-arm
 * and wait polls a CQ as often as the stack's blocking wait does. Not on a
 * level CQ: there the arm announces an entry already there by an event
 * instead of returning it, and a transition returns what it finds.
 */
#if CQPOLL_MUTANT(POLL_BEFORE_ARM)
/* Negative control only (test build): every poll-and-arm polls first. */
static bool
drained_at_wake(struct cqpoll_cq *cq, unsigned int n)
{
	(void)cq;
	(void)n;
	return false;
}
#else
static bool
drained_at_wake(struct cqpoll_cq *cq, unsigned int n)
{
	return cq->arm != CQPOLL_ARM_LEVEL && cq->event_poll_seq != 0 &&
	       cq->event_poll_seq == __atomic_load_n(&cq->counters.fp.polls,
						     __ATOMIC_RELAXED) &&
	       (unsigned int)cq->event_poll_n < n;
}
#endif

int
cqpoll_poll_and_arm(struct cqpoll_cq *cq, struct cqpoll_completion *comps,
		    unsigned int n)
{
	int r;

	if (cq == NULL || comps == NULL || n == 0)
		return -EINVAL;
	if (drained_at_wake(cq, n)) {
		/* Once: a second call polls, as the arm's result may ask. */
		cq->event_poll_seq = 0;
		return cqpoll_cq_arm_polled(cq, comps, n);
	}
	r = cqpoll_poll_burst(cq, comps, n);
	if (r != 0)
		return r;
	return cqpoll_cq_arm_polled(cq, comps, n);
}

int
cqpoll_cq_arm_polled(struct cqpoll_cq *cq, struct cqpoll_completion *comps,
		     unsigned int n)
{
	unsigned int tries = 0;
	int r;

	/*
	 * Reported failed: never an arm; what it still holds goes out first,
	 * then the errno. The poll before may have come before the report,
	 * and the device wrote its last entries before it reported: a poll
	 * now sees them.
	 */
	if (__builtin_expect(cqpoll_cq_failed_now(cq), 0))
		return failed_out(cq, comps, n);
	/*
	 * An arm stays in force until its event is consumed: the device will
	 * still fire, or its event is already pending. Ringing again would only
	 * cost a doorbell.
	 */
	if (cq->armed)
		return 0;
	r = cqpoll_cq_channel_check(cq);
	if (r != 0)
		return r;
	for (;;) {
		r = arm_device(cq);
		if (r < 0)
			return failed_out(cq, comps, n);
		if (r == 0)
			break;
		/* Not armed: the caller must poll again, never sleep on it. */
		if (++tries == ARM_MISSED_MAX)
			return -EAGAIN;
		/* A miss was reported: the CQ is not armed until an arm says so. */
		r = cqpoll_poll_burst(cq, comps, n);
		if (r != 0)
			return r;
	}
	if (failed_at_arm(cq))
		return failed_out(cq, comps, n);
	cq->armed = true;
	if (cq->arm != CQPOLL_ARM_EDGE)
		return 0;
	/*
	 * Edge: an entry that became visible between the first poll and the arm
	 * raised no event, and none will come for it. Entries after the arm will
	 * raise one, so a poll now is the last that can find a silent entry. If
	 * it finds some, the arm stays in force for what comes next.
	 */
	return cqpoll_poll_burst(cq, comps, n);
}

bool
cqpoll_cq_is_armed(const struct cqpoll_cq *cq)
{
	return cq != NULL && cq->armed;
}
