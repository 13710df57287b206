/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's net: what finds work, or a dead CQ, that no event announced.
 * The safety net runs when a sleep ends by its timeout and polls the next
 * slice of members believed armed; a polling group with cold CQs runs it on
 * its own clock from the cold check, which also takes the cold CQs' events
 * without sleeping; the health check, due once per period whatever the
 * traffic, polls the armed members and rings their arms. Each walks at most
 * GROUP_SLICE members per period, taking turns.
 */

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "cqpoll_clock.h"
#include "cqpoll_group_run_private.h"
#include "cqpoll_log_private.h"
#include "cqpoll_private.h"
#include "cqpoll_trace_private.h"
#include "cqpoll_mutant.h"

/*
 * The health check counts work it finds in an armed member as a recovery
 * when its host timestamp is older than the check's own look at the events
 * by this much: an event raised then would have been taken (1 ms is far
 * above an emulated or software device's event latency; devices without
 * host timestamps are never counted by the check).
 */
#define GROUP_HEALTH_EVENT_SLACK_NS 1000000u

/*
 * Ring the arm of @p m, found armed and empty: 0, a reported miss (> 0), or
 * the CQ's death (< 0).
 */
#if CQPOLL_MUTANT(NO_NET_ARM_CHECK)
/* Negative control only (test build): the arm is not rung. */
static int
ring_arm(struct cqpoll_group_member *m)
{
	(void)m;
	return 0;
}
#else
static inline int
ring_arm(struct cqpoll_group_member *m)
{
	return cqpoll_cq_arm_check(m->cq);
}
#endif

/*
 * Poll @p m, a member believed armed, for work no event announced, and,
 * found empty, ring its arm again (cqpoll_cq_arm_check()): that is where a
 * driver finds a queue that died without an event or a failing poll
 * (io_uring: its fd closed), and where a CQ reported failed from another
 * thread is latched. An arm of an armed, empty CQ changes nothing on any
 * driver; a reported miss makes it poll and arm again. Work found, or a
 * miss, puts it back on the active list. Returns the completions found; a
 * dead member is handed to cqpoll_group_member_failed() and counts 0.
 */
static inline int
check_armed(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	int r = cqpoll_group_poll_member(g, m);

	if (r == 0) {
		r = ring_arm(m);
		if (r > 0)
			cqpoll_group_activate(g, m);
		if (r >= 0)
			return 0;
	}
	if (r < 0) {
		/* Dead, with no event to say so: found here. */
		if (cqpoll_group_isolate(g, m, r) != 0)
			return r;
		return 0;
	}
	cqpoll_group_activate(g, m);
	return r;
}

/*
 * The sleep that began at @p t_sleep ended by timeout: poll the next slice of
 * members (GROUP_SLICE, round-robin), each still believed armed, since an
 * event may have been lost (a shared channel read by someone else, a device
 * or driver bug). Work found
 * re-activates its member, whose arm is spent, so the next transition arms it
 * again. Members that went cold after @p cold_before are skipped: a polling
 * group's net looks only at CQs armed for a whole timeout. Returns
 * completions found, or < 0.
 */
#if CQPOLL_MUTANT(NO_SAFETY_NET)
/* Negative control only (test build): the timeout recovers nothing. */
static int
safety_net_since(struct cqpoll_group *g, uint64_t t_sleep, uint64_t cold_before)
{
	(void)g;
	(void)t_sleep;
	(void)cold_before;
	return 0;
}
#else
static int
safety_net_since(struct cqpoll_group *g, uint64_t t_sleep, uint64_t cold_before)
{
	struct cqpoll_group_member *m;
	unsigned int k, i, n;
	bool recovered = false;
	uint64_t before;
	int r, total = 0;

	if (g->n == 0)
		return 0;
	n = g->n < GROUP_SLICE ? g->n : GROUP_SLICE;
	i = g->net_next < g->n ? g->net_next : 0;
	for (k = 0; k < n; k++) {
		m = g->members[i];
		if (++i == g->n)
			i = 0;
		if (m->failed || (!m->active && m->t_work > cold_before))
			continue;
		before = m->cq->counters.timeout_recoveries;
		cqpoll_cq_timeout_mark(m->cq, t_sleep);
		r = check_armed(g, m);
		if (r < 0)
			return r;
		total += r;
		if (m->cq->counters.timeout_recoveries != before)
			recovered = true;
	}
	g->net_next = i;
	if (recovered)
		cqpoll_stat_add(&g->stats.timeout_recoveries, 1);
	return total;
}
#endif

/*
 * The sleep that began at @p t_sleep ended by timeout: every member of the
 * next slice counts.
 */
static int
safety_net(struct cqpoll_group *g, uint64_t t_sleep)
{
	/* A net over the whole group is that period's health check too. */
	if (g->n <= GROUP_SLICE)
		g->t_health = cqpoll_now_ns() + cqpoll_group_period_ns(g);
	return safety_net_since(g, t_sleep, UINT64_MAX);
}

/*
 * Busy and adaptive modes: collect, without sleeping, the events of the cold
 * CQs, when cqpoll_group_cold_check_due() says so: every GROUP_COLD_CHECK_NS
 * while some CQs are hot, at every iteration when none is. A cross-thread wake-up seen here is consumed: the group is
 * awake and looks at its requests at every iteration anyway.
 */
int
cqpoll_group_check_cold(struct cqpoll_group *g, uint64_t now)
{
	struct epoll_event evs[GROUP_EPOLL_EVENTS];
	bool cq_ready = false, xthread = false;
	int r, total;

	g->t_check = now;
	cqpoll_stat_add(&g->stats.event_checks, 1);
	r = epoll_wait(g->epfd, evs, GROUP_EPOLL_EVENTS, 0);
	if (r < 0)
		return errno != EINTR ? -errno : 0;
	/* No wake-up to measure: the group did not sleep (t_sleep = now). */
	total = r > 0 ?
		cqpoll_group_take_ready(g, evs, r, now, &cq_ready, &xthread) : 0;
	if (total < 0)
		return total;
	/*
	 * A polling group never times out a sleep, so it runs the safety net
	 * on its own clock: once per wait_timeout_ms while it has cold CQs,
	 * after the events at hand were taken, so that only CQs whose event
	 * is missing are left to find. One found with work older than a
	 * timeout counts as a timeout recovery, and is hot again.
	 */
	if (g->nactive < g->n &&
	    now - g->t_net >= cqpoll_group_period_ns(g)) {
		if (g->t_net != 0) {
			uint64_t t0 = now - cqpoll_group_period_ns(g);

			r = safety_net_since(g, t0, t0);
			if (r < 0)
				return r;
			total += r;
		}
		g->t_net = now;
	}
	return total;
}

#if CQPOLL_MUTANT(NO_HEALTH_CHECK) || CQPOLL_MUTANT(NO_SAFETY_NET)
/*
 * Negative control only (test build): no check on the group's timer, only
 * the net at quiet timeouts. Never due again.
 */
int
cqpoll_group_health_check(struct cqpoll_group *g, uint64_t now)
{
	(void)now;
	g->t_health = UINT64_MAX;
	return 0;
}
#else
/*
 * The health check (doc/guides/contract.md, section 11), due once per
 * period on the group's own clock whatever the traffic: a group whose other
 * members keep it awake never has a sleep that times out, so the net alone
 * would never look at an armed member, and a silent death there would wait
 * for the traffic to stop. It first takes the events at hand (one
 * epoll_wait() that does not block), so that members whose event is pending
 * are woken the normal way; then each armed member left in the next slice
 * (GROUP_SLICE members, round-robin: the whole group up to that size) is
 * checked as the net checks it (check_armed()). Active members need
 * nothing: the loop polls them at every iteration. Work found in an armed member is
 * delivered, its arm taken as spent (the next transition arms it again).
 * It counts as a timeout recovery only when a host timestamp says it was
 * visible well before the check took the events at hand
 * (GROUP_HEALTH_EVENT_SLACK_NS); without one, nothing tells a lost event
 * from one on its way (a shared channel's, read by another member's fd), so
 * it is only reported to the trace hook (cqpoll_cq_health_mark()).
 * Cost: one epoll_wait(), and one poll and one arm per armed member of the
 * slice, per period, whatever the group's size; one compare per iteration.
 */
int
cqpoll_group_health_check(struct cqpoll_group *g, uint64_t now)
{
	struct epoll_event evs[GROUP_EPOLL_EVENTS];
	bool cq_ready = false, xthread = false;
	struct cqpoll_group_member *m;
	unsigned int i, k, n, checked = 0;
	int r, total = 0;

	g->t_health = now + cqpoll_group_period_ns(g);
	r = epoll_wait(g->epfd, evs, GROUP_EPOLL_EVENTS, 0);
	if (r < 0)
		return errno != EINTR ? -errno : 0;
	if (r > 0) {
		total = cqpoll_group_take_ready(g, evs, r, now, &cq_ready,
						&xthread);
		if (total < 0)
			return total;
	}
	n = g->n < GROUP_SLICE ? g->n : GROUP_SLICE;
	i = g->health_next < g->n ? g->health_next : 0;
	for (k = 0; k < n; k++) {
		m = g->members[i];
		if (++i == g->n)
			i = 0;
		if (m->failed || m->active)
			continue;
		checked++;
		cqpoll_cq_health_mark(m->cq, now > GROUP_HEALTH_EVENT_SLACK_NS ?
				      now - GROUP_HEALTH_EVENT_SLACK_NS : 0);
		r = check_armed(g, m);
		if (r < 0)
			return r;
		if (r > 0) {
			m->cq->armed = false;
			total += r;
		}
	}
	g->health_next = i;
	CQPOLL_LOG_LIB(DEBUG, "group %p: health check of %u armed of %u cqs, %d completions",
		       (void *)g, checked, g->n, total);
	return total;
}
#endif

/*
 * A sleep ended by its timeout (the epoll's or the lone member's wait): the
 * safety net looks for completions no event announced. Returns what it
 * delivered, or < 0.
 */
int
cqpoll_group_timed_out(struct cqpoll_group *g, uint64_t t_sleep, uint64_t asleep)
{
	uint64_t recovered = g->stats.timeout_recoveries;
	int r;

	cqpoll_stat_add(&g->stats.wakeups_timeout, 1);
	CQPOLL_LOG_LIB(DEBUG, "group %p: woken by the %d ms timeout",
		       (void *)g, g->wait_timeout_ms);
	r = safety_net(g, t_sleep);
	/* Recovered: the safety net found completions no event announced. */
	CQPOLL_TRACE(wake, g, NULL,
		     g->stats.timeout_recoveries != recovered ?
		     CQPOLL_TRACE_WAKE_RECOVERY : CQPOLL_TRACE_WAKE_TIMEOUT,
		     asleep, r > 0 ? (uint32_t)r : 0);
	return r;
}

