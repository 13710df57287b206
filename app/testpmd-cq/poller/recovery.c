/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Late or lost: the safety net's recoveries on devices without host
 * timestamps (io_uring, UCX, libfabric, ethdev), told apart by the post
 * times the generator keeps.
 *
 * The library counts a recovery (a timeout, or a polling group's net, that
 * found work no event announced) in timeout_recoveries whenever it cannot
 * tell that the work landed during the sleep: with no host timestamp it
 * cannot, and a generator preempted for a whole timeout on a loaded machine
 * posts just as the timeout runs out. Here the poller's thread sees each
 * recovery through the trace hook, right before the completions it found are
 * checked, so the CQ's next expected sequence number is the oldest found,
 * and the generator recorded when that post began and returned
 * (run->post_ns, run->post_end_ns). Its deadline:
 *   after a sleep   the sleep's start (the sleep hook, before the thread
 *                   blocks) plus its timeout: epoll_wait returns an event
 *                   raised before its timeout, so work whose post returned
 *                   before then, found by the timeout, lost its event;
 *   while polling   a group's net looks at its cold CQs once per timeout,
 *                   after the events at hand: work older than a timeout
 *                   when found lost its event (the library's own rule for
 *                   completions with a timestamp).
 * A post that returned before its deadline less SLACK_NS: lost
 * (recoveries_lost). Returned after, or still under way: late
 * (recoveries_late). Tests on real queues expect recoveries_lost=0; their
 * naive controls expect lost ones.
 */
#include <pthread.h>
#include <time.h>

#include <cqpoll_trace.h>

#include "poller.h"
#include "run.h"
#include "testpmd_cq.h"

/* Clock reads and epoll's millisecond rounding, on the late side. */
#define SLACK_NS 1000000ull

/* The CQs of the poller on this thread, and its sleep as the hooks saw it. */
struct watch {
	struct tpcq_run *run;
	struct tpcq_result *res;
	struct cqpoll_cq *const *cqs;  /* cqs[i] is checked by *cks[i] */
	struct tpcq_check *const *cks;
	unsigned int n;
	int asleep;           /* from a sleep hook to a group's wake/transition */
	uint64_t t_sleep;
	uint64_t timeout_ns;  /* the last sleep's; the net's period too */
};

static __thread struct watch tls_watch;
static const struct cqpoll_trace_hook *prev_hook;
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;

static void
judge(struct watch *w, const struct tpcq_check *ck)
{
	struct tpcq_run *run = w->run;
	uint64_t slot, t_begin, t_end, now, deadline;

	slot = (ck->expected * run->traffic_cqs + ck->index) & run->post_ns_mask;
	t_begin = __atomic_load_n(&run->post_ns[slot], __ATOMIC_ACQUIRE);
	t_end = __atomic_load_n(&run->post_end_ns[slot], __ATOMIC_ACQUIRE);
	now = tpcq_now_ns(CLOCK_MONOTONIC);
	if (w->asleep)
		deadline = w->t_sleep + w->timeout_ns;
	else
		deadline = now > w->timeout_ns ? now - w->timeout_ns : 0;
	/* An end older than its begin is the slot's previous post. */
	if (t_end == 0 || t_end < t_begin || t_end + SLACK_NS >= deadline)
		w->res->recoveries_late++;
	else
		w->res->recoveries_lost++;
}

static void
on_arm(void *arg, const struct cqpoll_cq *cq, int missed)
{
	(void)arg;
	if (prev_hook->arm != NULL)
		prev_hook->arm(prev_hook->arg, cq, missed);
}

static void
on_transition(void *arg, const struct cqpoll_group *g, uint32_t active,
	      uint32_t n, uint32_t found)
{
	(void)arg;
	tls_watch.asleep = 0;
	if (prev_hook->transition != NULL)
		prev_hook->transition(prev_hook->arg, g, active, n, found);
}

static void
on_sleep(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	 int timeout_ms)
{
	(void)arg;
	tls_watch.t_sleep = tpcq_now_ns(CLOCK_MONOTONIC);
	tls_watch.timeout_ns = (uint64_t)timeout_ms * 1000000u;
	tls_watch.asleep = 1;
	if (prev_hook->sleep != NULL)
		prev_hook->sleep(prev_hook->arg, g, cq, timeout_ms);
}

/*
 * A group reports its wake-up after its net ran; a CQ alone finds what its
 * timeout left at its next poll, after its own wake report: only a group's
 * ends the sleep for the judge.
 */
static void
on_wake(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	enum cqpoll_trace_wake why, uint64_t asleep_ns, uint32_t completions)
{
	struct watch *w = &tls_watch;
	unsigned int i;

	(void)arg;
	if (g != NULL)
		w->asleep = 0;
	else if (why == CQPOLL_TRACE_WAKE_RECOVERY && w->run != NULL &&
		 w->run->post_ns != NULL)
		for (i = 0; i < w->n; i++)
			if (w->cqs[i] == cq) {
				judge(w, w->cks[i]);
				break;
			}
	if (prev_hook->wake != NULL)
		prev_hook->wake(prev_hook->arg, g, cq, why, asleep_ns, completions);
}

static void
on_mode_change(void *arg, const struct cqpoll_group *g,
	       enum cqpoll_group_mode from, enum cqpoll_group_mode to)
{
	(void)arg;
	if (prev_hook->mode_change != NULL)
		prev_hook->mode_change(prev_hook->arg, g, from, to);
}

static void
on_policy_decision(void *arg, const struct cqpoll_group *g, uint32_t completions,
		   enum cqpoll_policy_action action)
{
	(void)arg;
	if (prev_hook->policy_decision != NULL)
		prev_hook->policy_decision(prev_hook->arg, g, completions, action);
}

static void
on_cq_state(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	    enum cqpoll_cq_state state, int error)
{
	(void)arg;
	if (prev_hook->cq_state != NULL)
		prev_hook->cq_state(prev_hook->arg, g, cq, state, error);
}

static const struct cqpoll_trace_hook judge_hook = {
	.arm = on_arm,
	.transition = on_transition,
	.sleep = on_sleep,
	.wake = on_wake,
	.mode_change = on_mode_change,
	.policy_decision = on_policy_decision,
	.cq_state = on_cq_state,
};

/* What was installed before (DPDK's trace points) still sees every event. */
static const struct cqpoll_trace_hook no_hook;

static void
hook_install(void)
{
	prev_hook = cqpoll_trace_get_hook();
	if (prev_hook == NULL)
		prev_hook = &no_hook;
	cqpoll_trace_set_hook(&judge_hook);
}

void
tpcq_recovery_watch(struct tpcq_run *run, struct tpcq_result *res,
		    struct cqpoll_cq *const *cqs, struct tpcq_check *const *cks,
		    unsigned int n)
{
	pthread_once(&hook_once, hook_install);
	tls_watch = (struct watch){ .run = run, .res = res, .cqs = cqs,
				    .cks = cks, .n = n };
}

void
tpcq_recovery_unwatch(void)
{
	tls_watch = (struct watch){ .run = NULL };
}
