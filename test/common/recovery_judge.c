/* SPDX-License-Identifier: BSD-3-Clause */
/* Late or lost: see recovery_judge.h. */

#include <time.h>

#include "cqpoll_trace.h"
#include "recovery_judge.h"

/* When each post returned; t_end 0 while the post is under way. */
struct post_rec {
	uint64_t seq;
	uint64_t t_end;
};

static struct post_rec posts[RJ_MAX_CQS][RJ_RING];
static struct cqpoll_cq *const *cqs;
static unsigned int ncqs;
static const uint64_t *next;
static uint64_t late[RJ_MAX_CQS], lost[RJ_MAX_CQS], worst[RJ_MAX_CQS];

/* The consumer's sleep, as the hooks saw it (the consumer's thread only). */
static int asleep;          /* from a sleep hook to a group's wake/transition */
static uint64_t t_sleep;    /* when it began */
static uint64_t timeout_ns; /* the last sleep's timeout: also the net's period */

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
rj_post_begin(unsigned int i, uint64_t seq)
{
	struct post_rec *pr = &posts[i][seq % RJ_RING];

	__atomic_store_n(&pr->t_end, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pr->seq, seq, __ATOMIC_RELEASE);
}

void
rj_post_end(unsigned int i, uint64_t seq)
{
	__atomic_store_n(&posts[i][seq % RJ_RING].t_end, now_ns(), __ATOMIC_RELEASE);
}

static void
judge(unsigned int i, uint64_t now)
{
	uint64_t want = __atomic_load_n(&next[i], __ATOMIC_ACQUIRE);
	const struct post_rec *pr = &posts[i][want % RJ_RING];
	uint64_t seq = __atomic_load_n(&pr->seq, __ATOMIC_ACQUIRE);
	uint64_t t_end = __atomic_load_n(&pr->t_end, __ATOMIC_ACQUIRE);
	uint64_t deadline;

	if (asleep)
		deadline = t_sleep + timeout_ns;
	else
		deadline = now > timeout_ns ? now - timeout_ns : 0;
	if (seq != want || t_end == 0 || t_end + RJ_SLACK_NS >= deadline) {
		__atomic_fetch_add(&late[i], 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&lost[i], 1, __ATOMIC_RELAXED);
	if (deadline - t_end > __atomic_load_n(&worst[i], __ATOMIC_RELAXED))
		__atomic_store_n(&worst[i], deadline - t_end, __ATOMIC_RELAXED);
}

static void
hook_transition(void *arg, const struct cqpoll_group *g, uint32_t active,
		uint32_t n, uint32_t found)
{
	(void)arg, (void)g, (void)active, (void)n, (void)found;
	asleep = 0;
}

static void
hook_sleep(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	   int timeout_ms)
{
	(void)arg, (void)g, (void)cq;
	t_sleep = now_ns();
	timeout_ns = (uint64_t)timeout_ms * 1000000u;
	asleep = 1;
}

/*
 * A group reports its wake-up after its net ran; a CQ alone finds what its
 * timeout left at its next poll, after its own wake report: only a group's
 * ends the sleep for the judge.
 */
static void
hook_wake(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	  enum cqpoll_trace_wake why, uint64_t asleep_ns, uint32_t completions)
{
	unsigned int i;

	(void)arg, (void)asleep_ns, (void)completions;
	if (g != NULL) {
		asleep = 0;
		return;
	}
	if (why != CQPOLL_TRACE_WAKE_RECOVERY)
		return;
	for (i = 0; i < ncqs; i++)
		if (cqs[i] == cq)
			judge(i, now_ns());
}

static const struct cqpoll_trace_hook hook = {
	.transition = hook_transition,
	.sleep = hook_sleep,
	.wake = hook_wake,
};

void
rj_init(struct cqpoll_cq *const *c, unsigned int n, const uint64_t *nx)
{
	cqs = c;
	ncqs = n < RJ_MAX_CQS ? n : RJ_MAX_CQS;
	next = nx;
	cqpoll_trace_set_hook(&hook);
}

void
rj_fini(void)
{
	cqpoll_trace_set_hook(NULL);
	ncqs = 0;
}

uint64_t
rj_late(unsigned int i)
{
	return __atomic_load_n(&late[i], __ATOMIC_RELAXED);
}

uint64_t
rj_lost(unsigned int i)
{
	return __atomic_load_n(&lost[i], __ATOMIC_RELAXED);
}

uint64_t
rj_worst_ns(unsigned int i)
{
	return __atomic_load_n(&worst[i], __ATOMIC_RELAXED);
}
