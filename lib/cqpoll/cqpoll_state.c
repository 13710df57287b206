/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQ states: a CQ fails once, for good. The report may come from any thread
 * (an async event reader); the consumer latches it at its next poll, so the
 * completions the CQ still holds are delivered before the error, and from
 * then on the handle polls through a function that returns the state's
 * errno without touching the dead device.
 */

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

#include "cqpoll_log_private.h"
#include "cqpoll_private.h"
#include "cqpoll_trace_private.h"
#include "cqpoll_mutant.h"

static const struct {
	const char *name;
	int error;
} states[] = {
	[CQPOLL_CQ_STATE_OK] = { "ok", 0 },
	[CQPOLL_CQ_STATE_OVERRUN] = { "overrun", -EOVERFLOW },
	[CQPOLL_CQ_STATE_DEVICE_LOST] = { "device-lost", -ENODEV },
	[CQPOLL_CQ_STATE_PORT_DOWN] = { "port-down", -ENETDOWN },
	[CQPOLL_CQ_STATE_PEER_CLOSED] = { "peer-closed", -ESHUTDOWN },
	[CQPOLL_CQ_STATE_QUEUE_LOST] = { "queue-lost", -EBADF },
	[CQPOLL_CQ_STATE_ERROR] = { "error", -EIO },
};

#define N_STATES (sizeof(states) / sizeof(states[0]))

const char *
cqpoll_cq_state_name(enum cqpoll_cq_state state)
{
	return (unsigned int)state < N_STATES ? states[state].name : "unknown";
}

int
cqpoll_cq_state_errno(enum cqpoll_cq_state state)
{
	return (unsigned int)state < N_STATES ? states[state].error : -EINVAL;
}

static enum cqpoll_cq_state
state_of_errno(int error)
{
	unsigned int i;

	for (i = CQPOLL_CQ_STATE_OVERRUN; i < N_STATES; i++)
		if (states[i].error == error)
			return (enum cqpoll_cq_state)i;
	return CQPOLL_CQ_STATE_ERROR;
}

int
cqpoll_cq_state_get(const struct cqpoll_cq *cq, struct cqpoll_cq_failure *f)
{
	enum cqpoll_cq_state s;

	if (cq == NULL)
		return -EINVAL;
	s = cqpoll_cq_state_now(cq);
	if (f != NULL) {
		f->state = s;
		f->error = states[s].error;
		/* Stored before the state (release), read after it (acquire). */
		f->cause = s != CQPOLL_CQ_STATE_OK ? cq->fail_cause : NULL;
	}
	return (int)s;
}

/*
 * Nobody may sleep on a dead CQ (doc/guides/contract.md, 11): a sleeper
 * wakes, polls what is left and gets the errno. Called after the state is
 * stored, so that the woken thread sees it.
 */
#if CQPOLL_MUTANT(NO_FAIL_WAKE)
/* Negative control only (test build): a sleeper on the CQ sleeps on. */
static void
wake_sleeper(struct cqpoll_cq *cq)
{
	(void)cq;
}
#else
static void
wake_sleeper(struct cqpoll_cq *cq)
{
	int r;

	if (cq->wake == NULL)
		return;
	r = cq->wake(cq->fp.priv);
	if (r < 0)
		CQPOLL_LOG(ERR, cq->ops.name, "cq %p: waking its sleeper after the failure: %s",
			   (void *)cq, strerror(-r));
}
#endif

int
cqpoll_cq_fail(struct cqpoll_cq *cq, int error, const char *cause)
{
	int ok = CQPOLL_CQ_STATE_OK;

	if (cq == NULL || error >= 0)
		return -EINVAL;
	/*
	 * Claim first, then write the cause, then publish the state: two
	 * reports racing each other never mix one's cause with the other's
	 * state. Readers take a claimed CQ for alive until it is published.
	 */
	if (!__atomic_compare_exchange_n(&cq->state, &ok, CQPOLL_CQ_STATE_CLAIMED,
					 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return -EALREADY;
	cq->fail_cause = cause != NULL ? cause : strerror(-error);
	__atomic_store_n(&cq->state, (int)state_of_errno(error), __ATOMIC_RELEASE);
	/* The consumer's next empty poll latches it (cqpoll_cq_poll_judge()). */
	__atomic_fetch_or(&cq->fp.pending, CQPOLL_CQ_FP_PENDING_FAILED,
			  __ATOMIC_RELEASE);
	wake_sleeper(cq);
	return 0;
}

/* One poll function per state: a failed CQ is never polled on the device. */
#define FAILED_POLL(st) \
static int \
failed_poll_##st(void *priv, struct cqpoll_completion *c, unsigned int n) \
{ \
	(void)priv; \
	(void)c; \
	(void)n; \
	return states[CQPOLL_CQ_STATE_##st].error; \
}
FAILED_POLL(OVERRUN)
FAILED_POLL(DEVICE_LOST)
FAILED_POLL(PORT_DOWN)
FAILED_POLL(PEER_CLOSED)
FAILED_POLL(QUEUE_LOST)
FAILED_POLL(ERROR)

static const cqpoll_poll_burst_t failed_polls[N_STATES] = {
	[CQPOLL_CQ_STATE_OVERRUN] = failed_poll_OVERRUN,
	[CQPOLL_CQ_STATE_DEVICE_LOST] = failed_poll_DEVICE_LOST,
	[CQPOLL_CQ_STATE_PORT_DOWN] = failed_poll_PORT_DOWN,
	[CQPOLL_CQ_STATE_PEER_CLOSED] = failed_poll_PEER_CLOSED,
	[CQPOLL_CQ_STATE_QUEUE_LOST] = failed_poll_QUEUE_LOST,
	[CQPOLL_CQ_STATE_ERROR] = failed_poll_ERROR,
};

int
cqpoll_cq_latch_failure(struct cqpoll_cq *cq, int r)
{
	enum cqpoll_cq_state s;

	if (cqpoll_cq_state_now(cq) == CQPOLL_CQ_STATE_OK)
		cqpoll_cq_fail(cq, r < 0 ? r : -EIO, NULL);
	/* Another thread's report may be half-way: it publishes at once. */
	while ((s = cqpoll_cq_state_now(cq)) == CQPOLL_CQ_STATE_OK)
		sched_yield();
	if (cq->fail_latched)
		return states[s].error;
	cq->fail_latched = true;
	/* The consumer owns fp.poll: nothing else reads it. */
	cq->fp.poll = failed_polls[s];
	/* A dead CQ's arm is no promise: nothing may sleep on it. */
	cq->armed = false;
	/* A cause that is only the errno's text is said once. */
	if (strcmp(cq->fail_cause, strerror(-states[s].error)) == 0)
		CQPOLL_LOG(ERR, cq->ops.name, "cq %p: failed: %s (%s) from now on",
			   (void *)cq, cqpoll_cq_state_name(s), cq->fail_cause);
	else
		CQPOLL_LOG(ERR, cq->ops.name, "cq %p: failed: %s (%s), %s from now on",
			   (void *)cq, cqpoll_cq_state_name(s), cq->fail_cause,
			   strerror(-states[s].error));
	CQPOLL_TRACE(cq_state, (const struct cqpoll_group *)(const void *)cq->group,
		     cq, s, states[s].error);
	return states[s].error;
}
