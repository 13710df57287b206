/* SPDX-License-Identifier: BSD-3-Clause */
/* Late or lost: see cqpoll_recovery_judge.h. */

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include <cqpoll_trace.h>

#include "cqpoll_recovery_judge.h"

static __thread struct cqpoll_rj_watch *tls_watch;
static struct cqpoll_rj_watch *all_watch;
static const struct cqpoll_trace_hook *prev_hook;
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
cqpoll_rj_deadline(const struct cqpoll_rj_sleep *s, uint64_t now)
{
	/*
	 * The earliest a timeout ends a sleep: the safety net's alarm is due
	 * within [T/2, T] of the sleep's start (cqpoll_group_conf's
	 * wait_timeout_ms), not at T.
	 */
	if (s->asleep)
		return s->t_sleep + s->timeout_ns / 2;
	return now > s->timeout_ns ? now - s->timeout_ns : 0;
}

enum cqpoll_rj_verdict
cqpoll_rj_judge(uint64_t t_end, uint64_t deadline, uint64_t *early_ns)
{
	if (early_ns != NULL)
		*early_ns = 0;
#ifndef CQPOLL_RJ_MUTANT_ALL_LOST
	if (t_end == 0 || t_end + CQPOLL_RJ_SLACK_NS >= deadline)
		return CQPOLL_RJ_LATE;
#endif
	if (early_ns != NULL && deadline > t_end)
		*early_ns = deadline - t_end;
	return CQPOLL_RJ_LOST;
}

static struct cqpoll_rj_watch *
watch_here(void)
{
	struct cqpoll_rj_watch *w = tls_watch;

	return w != NULL ? w : __atomic_load_n(&all_watch, __ATOMIC_ACQUIRE);
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
	struct cqpoll_rj_watch *w = watch_here();

	(void)arg;
	if (w != NULL)
		w->sleep.asleep = 0;
	if (prev_hook->transition != NULL)
		prev_hook->transition(prev_hook->arg, g, active, n, found);
}

static void
on_sleep(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	 int timeout_ms)
{
	struct cqpoll_rj_watch *w = watch_here();

	(void)arg;
	if (w != NULL) {
		w->sleep.t_sleep = now_ns();
		w->sleep.timeout_ns = (uint64_t)timeout_ms * 1000000u;
		w->sleep.asleep = 1;
	}
	if (prev_hook->sleep != NULL)
		prev_hook->sleep(prev_hook->arg, g, cq, timeout_ms);
}

static void
judge(struct cqpoll_rj_watch *w, const struct cqpoll_cq *cq)
{
	uint64_t t_end, early;
	enum cqpoll_rj_verdict v;

	if (!w->post_end(w->arg, cq, &t_end))
		return;
	v = cqpoll_rj_judge(t_end, cqpoll_rj_deadline(&w->sleep, now_ns()), &early);
	w->verdict(w->arg, cq, v, early);
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
	struct cqpoll_rj_watch *w = watch_here();

	(void)arg;
	if (w != NULL) {
		if (g != NULL)
			w->sleep.asleep = 0;
		else if (why == CQPOLL_TRACE_WAKE_RECOVERY)
			judge(w, cq);
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

/* What was installed before still sees every event. */
static const struct cqpoll_trace_hook no_hook;

static void
hook_install(void)
{
	prev_hook = cqpoll_trace_get_hook();
#ifdef CQPOLL_RJ_MUTANT_NO_CHAIN
	prev_hook = NULL;
#endif
	if (prev_hook == NULL)
		prev_hook = &no_hook;
	cqpoll_trace_set_hook(&judge_hook);
}

void
cqpoll_rj_watch(struct cqpoll_rj_watch *w)
{
	pthread_once(&hook_once, hook_install);
	tls_watch = w;
}

void
cqpoll_rj_watch_all(struct cqpoll_rj_watch *w)
{
	pthread_once(&hook_once, hook_install);
	__atomic_store_n(&all_watch, w, __ATOMIC_RELEASE);
}

void
cqpoll_rj_unwatch(void)
{
	tls_watch = NULL;
}

void
cqpoll_rj_unwatch_all(void)
{
	__atomic_store_n(&all_watch, NULL, __ATOMIC_RELEASE);
}
