/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_GROUP_RUN_PRIVATE_H
#define CQPOLL_GROUP_RUN_PRIVATE_H

/*
 * What the rooms of a group's run share, private to the library:
 *   cqpoll_group_loop.c     the loop: run_once, run, the mode's decision
 *   cqpoll_group_sleep.c    the transition, the waits, taking fired members
 *   cqpoll_group_net.c      the safety net, the health check, the cold check
 *   cqpoll_group_sample.c   sleep CPU, wake-up latency, the sleep check
 *   cqpoll_group_members.c  add, remove, the fd demux, the active list
 *   cqpoll_group_failure.c  member failure, reaping, the failure callback
 * The per-poll helpers are inline here: the loop calls them millions of
 * times a second, and a call across files would cost more than they do.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "cqpoll_group_private.h"
#include "cqpoll_mutant.h"
#include "cqpoll_private.h"

/* Ready fds taken per epoll_wait; more stay ready for the next sleep. */
#define GROUP_EPOLL_EVENTS 64
/*
 * Members the safety net and the health check look at per period (a
 * timeout, or a health check): the whole group up to this size, else this
 * many, taking turns (round-robin). Their cost per period is thus bounded
 * (a walk over every member of a large group stalled the loop for
 * milliseconds: doc/guides/poll-group.md), and a full round over N members
 * takes ceil(N / GROUP_SLICE) periods: 256 at 65536 members, 2.56 s at the
 * default 10 ms. The price of a bounded period: a lost event or a silent
 * death in a group of N members is found within that many periods (plus
 * one), not within one.
 */
#define GROUP_SLICE 256u
/*
 * Members of a begun slice the health check or the busy loop's net visits
 * per iteration: a few polls, so that no iteration stalls on housekeeping;
 * an iteration takes more when the loop runs too slowly to finish the slice
 * within half a period at this pace, so that the bound holds whatever the
 * rate (doc/guides/poll-group.md).
 */
#define GROUP_STEP 8u
/*
 * While some CQs are cold and others hot, how often a polling group looks
 * (epoll_wait, timeout 0) for the events of the cold ones. One look is a
 * system call, well under a microsecond: every 10 µs it costs a few percent
 * of the loop, and a cold CQ's first completion waits at most that much
 * more than a hot one's. With no hot CQ left the group looks at every
 * iteration.
 */
#define GROUP_COLD_CHECK_NS 10000u

/* Hand @p n completions of @p m to its callback. */
static inline void
cqpoll_group_deliver(struct cqpoll_group *g, struct cqpoll_group_member *m,
		     int n)
{
	/* Membership must not change under the loops that walk it. */
	g->in_callback = true;
	m->cb(m->cq, g->comps, (unsigned int)n, m->arg);
	g->in_callback = false;
	cqpoll_stat_add(&g->stats.completions, (uint64_t)n);
}

/* After stats.polls: see cqpoll_group::found_polls. */
static inline void
cqpoll_group_count_found(struct cqpoll_group *g, uint64_t n)
{
	__atomic_store_n(&g->found_polls,
			 __atomic_load_n(&g->found_polls, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELEASE);
}

static inline void
cqpoll_group_count_poll(struct cqpoll_group *g, int r)
{
	cqpoll_stat_add(&g->stats.polls, 1);
	if (r != 0)
		cqpoll_group_count_found(g, 1);
}

/* Poll one member once and hand what it finds to its callback. */
static inline int
cqpoll_group_poll_member(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	int r;

	r = cqpoll_poll_burst(m->cq, g->comps, g->burst);
	cqpoll_stat_add(&g->stats.polls, 1);
	/* Counted after the callback, whose call orders memory anyway. */
	if (r > 0)
		cqpoll_group_deliver(g, m, r);
	if (r != 0)
		cqpoll_group_count_found(g, 1);
	return r;
}

/*
 * A member's CQ failed (@p r) where the loop met it: isolate it, and go on
 * with the others (0). The negative control (test build only) returns
 * @p r instead, which its caller returns: one CQ's error stops the group.
 */
#if CQPOLL_MUTANT(NO_ISOLATION)
static inline int
cqpoll_group_isolate(struct cqpoll_group *g, struct cqpoll_group_member *m,
		     int r)
{
	(void)g;
	(void)m;
	return r;
}
#else
static inline int
cqpoll_group_isolate(struct cqpoll_group *g, struct cqpoll_group_member *m,
		     int r)
{
	cqpoll_group_member_failed(g, m, r);
	return 0;
}
#endif

/* The safety net's period: the group's sleep timeout. */
static inline uint64_t
cqpoll_group_period_ns(const struct cqpoll_group *g)
{
	return (uint64_t)g->wait_timeout_ms * 1000000u;
}

/*
 * A polling group with cold CQs looks at their events now: every
 * GROUP_COLD_CHECK_NS while some CQs are hot, at every iteration when none
 * is (one compare per iteration on the busy path).
 */
static inline bool
cqpoll_group_cold_check_due(const struct cqpoll_group *g, uint64_t now)
{
	return g->nactive != g->n &&
	       (g->nactive == 0 || now - g->t_check >= GROUP_COLD_CHECK_NS);
}

/* cqpoll_group_sleep.c */
int cqpoll_group_transition(struct cqpoll_group *g, bool *unarmed,
			    uint64_t now);
void cqpoll_group_begin_sleep(struct cqpoll_group *g, int timeout_ms);
int cqpoll_group_take_ready(struct cqpoll_group *g,
			    const struct epoll_event *evs, int r,
			    uint64_t t_sleep, bool *cq_ready, bool *xthread);
struct cqpoll_group_member *cqpoll_group_lone_member(struct cqpoll_group *g);
/* The alarm's timerfd into the epoll set (none if the kernel refuses it). */
void cqpoll_group_alarm_open(struct cqpoll_group *g);
/*
 * The timeout an epoll sleep of the group's starting at @p now needs: -1
 * when its alarm covers it (due within [T/2, T] of now, moved if not),
 * else @p timeout_ms.
 */
int cqpoll_group_alarm_cover(struct cqpoll_group *g, int timeout_ms, uint64_t now);
int cqpoll_group_wait_and_wake(struct cqpoll_group *g, uint64_t t_sleep,
			       int timeout_ms);
int cqpoll_group_lone_wait_and_wake(struct cqpoll_group *g,
				    struct cqpoll_group_member *m,
				    uint64_t t_sleep, int timeout_ms);

/* cqpoll_group_net.c */
int cqpoll_group_check_cold(struct cqpoll_group *g, uint64_t now);
int cqpoll_group_health_check(struct cqpoll_group *g, uint64_t now);
int cqpoll_group_sweep_finish(struct cqpoll_group *g);
int cqpoll_group_timed_out(struct cqpoll_group *g, uint64_t t_sleep,
			   uint64_t asleep);

/* cqpoll_group_sample.c */
void cqpoll_group_check_oracle(struct cqpoll_group *g);
void cqpoll_group_sleep_cpu_start(struct cqpoll_group *g);
void cqpoll_group_sleep_cpu_end(struct cqpoll_group *g);
void cqpoll_group_wake_seen(struct cqpoll_group *g,
			    const struct cqpoll_completion *c,
			    uint64_t t_sleep, bool *measured);

/* cqpoll_group_members.c */
void cqpoll_group_count_waits(struct cqpoll_group *g,
			      struct cqpoll_group_member *m);
int cqpoll_group_member_find(const struct cqpoll_group *g,
			     const struct cqpoll_cq *cq);
void cqpoll_group_member_remove(struct cqpoll_group *g, unsigned int i);

#endif /* CQPOLL_GROUP_RUN_PRIVATE_H */
