/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's net: what finds work, or a dead CQ, that no event announced.
 * The safety net runs when a sleep ends by its timeout and polls the next
 * slice of members believed armed; a polling group with cold CQs runs it on
 * its own clock from the cold check, which also takes the cold CQs' events
 * without sleeping; the health check, due once per period whatever the
 * traffic, polls the armed members and rings their arms. Each walks at most
 * GROUP_SLICE members per period, taking turns; in the loop, a few per
 * iteration (GROUP_STEP).
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
/* unused: a test build may replace both of its callers. */
static inline __attribute__((unused)) int
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
 * The safety net's look at @p m, a member believed armed, since an event
 * may have been lost (a shared channel read by someone else, a device or
 * driver bug): work found re-activates it, whose arm is spent, so the next
 * transition arms it again. Sets @p recovered when that counts as a timeout
 * recovery (work visible since before @p t_sleep). Returns completions
 * found, or < 0.
 */
#if CQPOLL_MUTANT(NO_SAFETY_NET)
/* Negative control only (test build): the net recovers nothing. */
static int
net_visit(struct cqpoll_group *g, struct cqpoll_group_member *m,
	  uint64_t t_sleep, bool *recovered)
{
	(void)g;
	(void)m;
	(void)t_sleep;
	(void)recovered;
	return 0;
}
#else
static int
net_visit(struct cqpoll_group *g, struct cqpoll_group_member *m,
	  uint64_t t_sleep, bool *recovered)
{
	uint64_t before = m->cq->counters.timeout_recoveries;
	int r;

	cqpoll_cq_timeout_mark(m->cq, t_sleep);
	r = check_armed(g, m);
	if (m->cq->counters.timeout_recoveries != before)
		*recovered = true;
	return r;
}
#endif

/*
 * The next member of @p s's walk over the group, or NULL when the group is
 * empty (the walk is then over).
 */
static inline struct cqpoll_group_member *
sweep_next(struct cqpoll_group *g, struct cqpoll_group_sweep *s)
{
	if (g->n == 0) {
		s->left = 0;
		return NULL;
	}
	if (s->next >= g->n)
		s->next = 0;
	return g->members[s->next++];
}

/*
 * The net visits @p k members from where it stopped, each still believed
 * armed; members that went cold after @p cold_before are skipped: a polling
 * group's net looks only at CQs armed for a whole timeout. Returns
 * completions found, or < 0.
 */
static int
net_walk(struct cqpoll_group *g, unsigned int k, uint64_t t_sleep,
	 uint64_t cold_before)
{
	struct cqpoll_group_member *m;
	bool recovered = false;
	int r, total = 0;

	while (k-- > 0 && (m = sweep_next(g, &g->net)) != NULL) {
		if (m->failed || (!m->active && m->t_work > cold_before))
			continue;
		r = net_visit(g, m, t_sleep, &recovered);
		if (r < 0)
			return r;
		total += r;
	}
	if (recovered)
		cqpoll_stat_add(&g->stats.timeout_recoveries, 1);
	return total;
}

/* The next @p k members of the open net slice (at most what is left). */
static int
net_step(struct cqpoll_group *g, unsigned int k)
{
	g->net.left -= k;
	return net_walk(g, k, g->net.t_mark, g->net.t_mark);
}

/* A slice of the group, beginning at @p now, judged against @p t_mark. */
static void
sweep_begin(const struct cqpoll_group *g, struct cqpoll_group_sweep *s,
	    uint64_t now, uint64_t t_mark)
{
	s->t_start = now;
	s->t_mark = t_mark;
	s->n = g->n < GROUP_SLICE ? g->n : GROUP_SLICE;
	s->left = s->n;
}

/*
 * How many members @p s is behind by at @p now if it is to be done half a
 * period after it began; a slice done within its period keeps the bound of
 * contract.md section 11. 0 for a slice that is not on.
 */
#if CQPOLL_MUTANT(HOUSEKEEPING_AT_ONCE)
/* Negative control only (test build): the whole slice is due at once. */
static unsigned int
sweep_behind(const struct cqpoll_group *g, const struct cqpoll_group_sweep *s,
	     uint64_t now)
{
	(void)g;
	(void)now;
	return s->left;
}
#else
static unsigned int
sweep_behind(const struct cqpoll_group *g, const struct cqpoll_group_sweep *s,
	     uint64_t now)
{
	uint64_t half = cqpoll_group_period_ns(g) / 2, due;
	uint64_t done = s->n - s->left, t = now - s->t_start;

	due = t >= half ? s->n : s->n * t / half;
	return due <= done ? 0 : (unsigned int)(due - done);
}
#endif

/* The loop calls the health check at every iteration while a slice is on. */
static inline void
sweep_schedule(struct cqpoll_group *g)
{
	g->t_health = g->health.left != 0 || g->net.left != 0 ?
		      0 : g->t_health_due;
}

/*
 * The sleep that began at @p t_sleep ended by timeout: every member of the
 * next slice counts, looked at now (the group was idle for a whole timeout:
 * no busy loop to stall).
 */
static int
safety_net(struct cqpoll_group *g, uint64_t t_sleep)
{
	/* A net over the whole group is that period's health check too. */
	if (g->n <= GROUP_SLICE) {
		g->t_health_due = cqpoll_now_ns() + cqpoll_group_period_ns(g);
		sweep_schedule(g);
	}
	return net_walk(g, g->n < GROUP_SLICE ? g->n : GROUP_SLICE, t_sleep,
			UINT64_MAX);
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
	g->t_woke = now;
	total = r > 0 ?
		cqpoll_group_take_ready(g, evs, r, now, &cq_ready, &xthread) : 0;
	if (total < 0)
		return total;
	/*
	 * A polling group never times out a sleep, so it runs the safety net
	 * on its own clock: once per wait_timeout_ms while it has cold CQs,
	 * after the events at hand were taken, so that only CQs whose event
	 * is missing are left to find. One found with work older than a
	 * timeout counts as a timeout recovery, and is hot again. Its slice
	 * is walked from the health check, a few members per iteration.
	 */
	if (g->nactive < g->n &&
	    now - g->t_net >= cqpoll_group_period_ns(g)) {
		if (g->t_net != 0) {
			/* The last slice, if the loop was too slow for it, first. */
			if (g->net.left != 0) {
				r = net_step(g, g->net.left);
				if (r < 0)
					return r;
				total += r;
			}
			sweep_begin(g, &g->net, now,
				    now - cqpoll_group_period_ns(g));
			sweep_schedule(g);
		}
		g->t_net = now;
	}
	return total;
}

/*
 * The health check (doc/guides/contract.md, section 11), due once per
 * period on the group's own clock whatever the traffic: a group whose other
 * members keep it awake never has a sleep that times out, so the net alone
 * would never look at an armed member, and a silent death there would wait
 * for the traffic to stop. It first takes the events at hand (one
 * epoll_wait() that does not block), so that members whose event is pending
 * are woken the normal way; then each armed member left in the next slice
 * (GROUP_SLICE members, round-robin: the whole group up to that size) is
 * checked as the net checks it (check_armed()), a few per iteration
 * (health_walk()). Returns completions found, or < 0.
 */
#if CQPOLL_MUTANT(NO_HEALTH_CHECK) || CQPOLL_MUTANT(NO_SAFETY_NET)
/*
 * Negative control only (test build): no check on the group's timer, only
 * the net at quiet timeouts. Never due again.
 */
static int
health_begin(struct cqpoll_group *g, uint64_t now)
{
	(void)now;
	g->t_health_due = UINT64_MAX;
	return 0;
}
#else
static int
health_begin(struct cqpoll_group *g, uint64_t now)
{
	struct epoll_event evs[GROUP_EPOLL_EVENTS];
	bool cq_ready = false, xthread = false;
	int r;

	g->t_health_due = now + cqpoll_group_period_ns(g);
	/*
	 * Every member active: none is armed, so no CQ event can be pending
	 * and the slice would skip them all. A group of one woken by its CQ
	 * at every sleep is there at each check: no system call for nothing.
	 * A kick left on the eventfd ends the next sleep at once, as one that
	 * lands after the check does.
	 */
	if (g->nactive == g->n)
		return 0;
	r = epoll_wait(g->epfd, evs, GROUP_EPOLL_EVENTS, 0);
	if (r < 0)
		return errno != EINTR ? -errno : 0;
	/* A slice still on (the loop was late) is finished by the caller. */
	sweep_begin(g, &g->health, now,
		    now > GROUP_HEALTH_EVENT_SLACK_NS ?
		    now - GROUP_HEALTH_EVENT_SLACK_NS : 0);
	g->t_woke = now;
	return r > 0 ?
	       cqpoll_group_take_ready(g, evs, r, now, &cq_ready, &xthread) : 0;
}
#endif

/*
 * The health check visits @p k members of its slice. Active members need
 * nothing: the loop polls them at every iteration. Work found in an armed
 * member is delivered, its arm taken as spent (the next transition arms it
 * again). It counts as a timeout recovery only when a host timestamp says it
 * was visible well before the check took the events at hand
 * (GROUP_HEALTH_EVENT_SLACK_NS); without one, nothing tells a lost event
 * from one on its way (a shared channel's, read by another member's fd), so
 * it is only reported to the trace hook (cqpoll_cq_health_mark()).
 */
static int
health_walk(struct cqpoll_group *g, unsigned int k)
{
	struct cqpoll_group_member *m;
	int r, total = 0;

	while (k-- > 0 && (m = sweep_next(g, &g->health)) != NULL) {
		if (m->failed || m->active)
			continue;
		cqpoll_cq_health_mark(m->cq, g->health.t_mark);
		r = check_armed(g, m);
		if (r < 0)
			return r;
		if (r > 0) {
			m->cq->armed = false;
			total += r;
		}
	}
	return total;
}

/* The next @p k members of the open health slice (at most what is left). */
static int
health_step(struct cqpoll_group *g, unsigned int k)
{
	g->health.left -= k;
	return health_walk(g, k);
}

/*
 * The group's housekeeping in the loop, called when g->t_health is due:
 * begins the period's health check, and walks the slices that are on:
 * GROUP_STEP members in all, or what they are behind by if more. Cost: one
 * epoll_wait() per period, one poll and one arm per armed member of a slice;
 * one compare per iteration when no slice is on.
 */
int
cqpoll_group_health_check(struct cqpoll_group *g, uint64_t now)
{
	unsigned int bn = sweep_behind(g, &g->net, now);
	unsigned int bh = sweep_behind(g, &g->health, now);
	unsigned int k, spare = bn + bh < GROUP_STEP ? GROUP_STEP - bn - bh : 0;
	int r, total = 0;

	/* The net begun by the cold check first, as a net without slices was. */
	if (g->net.left != 0) {
		k = bn + spare < g->net.left ? bn + spare : g->net.left;
		spare -= k - bn;
		r = net_step(g, k);
		if (r < 0)
			return r;
		total += r;
	}
	if (now >= g->t_health_due) {
		/* The last slice, if the loop was too slow for it, first. */
		if (g->health.left != 0) {
			r = health_step(g, g->health.left);
			if (r < 0)
				return r;
			total += r;
		}
		bh = 0;
		r = health_begin(g, now);
		if (r < 0)
			return r;
		total += r;
	}
	if (g->health.left != 0) {
		k = bh + spare < g->health.left ? bh + spare : g->health.left;
		r = health_step(g, k);
		if (r < 0)
			return r;
		total += r;
	}
	sweep_schedule(g);
	return total;
}

/*
 * Before a sleep: the slices still on are walked to their end, so that no
 * sleep delays them past their period. Returns completions found (the group
 * must not sleep then), or < 0.
 */
int
cqpoll_group_sweep_finish(struct cqpoll_group *g)
{
	int r, total = 0;

	if (g->health.left != 0) {
		total = health_step(g, g->health.left);
		if (total < 0)
			return total;
	}
	if (g->net.left != 0) {
		r = net_step(g, g->net.left);
		if (r < 0)
			return r;
		total += r;
	}
	sweep_schedule(g);
	return total;
}

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

