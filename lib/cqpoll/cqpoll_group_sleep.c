/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's sleep: the transition (poll-and-arm on every active CQ; the
 * group may sleep only when all of them are empty and armed), the waits
 * (one bounded epoll_wait, or the lone member's own wait), and the wake-up:
 * the CQs whose events fired are taken and polled first, so a wake costs in
 * proportion to the CQs with work, not to the size of the group. A wait
 * that ends by timeout hands over to the safety net (cqpoll_group_net.c).
 */

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cqpoll_clock.h"
#include "cqpoll_group_run_private.h"
#include "cqpoll_log_private.h"
#include "cqpoll_private.h"
#include "cqpoll_trace_private.h"
#include "cqpoll_mutant.h"

/* Bursts read from a woken CQ before the normal loop takes over. */
#define GROUP_WAKE_BURSTS 16

#if CQPOLL_MUTANT(ARM_ALL)
/* Negative control only (test build): every member, at every sleep. */
static void
activate_all(struct cqpoll_group *g)
{
	unsigned int i;

	for (i = 0; i < g->n; i++)
		if (!g->members[i]->failed)
			cqpoll_group_activate(g, g->members[i]);
}
#else
/* Only the active members need poll-and-arm: the others are armed. */
static inline void
activate_all(struct cqpoll_group *g)
{
	(void)g;
}
#endif

/*
 * poll-and-arm on every ACTIVE CQ. A CQ that returns 0 is empty and armed,
 * and stays armed until its event is consumed: it leaves the active list,
 * and the group need not look at it again before sleeping, since anything
 * that lands in it raises an event. The group may sleep only if the whole
 * pass found nothing: a CQ that had completions may hold more that no event
 * will announce (edge arms ignore entries older than the arm), so it stays
 * active and the next pass drains it.
 */
int
cqpoll_group_transition(struct cqpoll_group *g, bool *unarmed, uint64_t now)
{
	struct cqpoll_group_member *m;
	unsigned int i = 0, active;
	int r, total = 0;

	activate_all(g);
	*unarmed = false;
	/* Housekeeping still on first: what it finds is polled and armed here. */
	total = cqpoll_group_sweep_finish(g);
	if (total < 0)
		return total;
	active = g->nactive;
	cqpoll_stat_add(&g->stats.transitions, 1);
	g->log_sleep = cqpoll_log_lib_debug(now);
	if (g->log_sleep)
		CQPOLL_LOG_LIB(DEBUG, "group %p: transition, poll-and-arm on %u active of %u cqs",
			       (void *)g, g->nactive, g->n);
	while (i < g->nactive) {
		m = g->active[i];
		/*
		 * Found empty by this pass's poll: not polled again to arm it.
		 * Unless it is believed armed (a safety net's suspicion woke it
		 * without its event): only a poll judges that arm.
		 */
		if (m->empty_pass == g->pass && !m->cq->armed)
			r = cqpoll_cq_arm_polled(m->cq, g->comps, g->burst);
		else
			r = cqpoll_poll_and_arm(m->cq, g->comps, g->burst);
		cqpoll_group_count_poll(g, r);
		if (r == -EAGAIN) {
			/* Not armed (misses kept being reported): no sleep now. */
			*unarmed = true;
			i++;
			continue;
		}
		if (r < 0) {
			/* A dead CQ needs no arm: the others may sleep. */
			if (cqpoll_group_isolate(g, m, r) != 0)
				return r;
			continue;
		}
		if (r == 0) {
			/* The last active member moves to i: look at it next. */
			cqpoll_group_deactivate(g, m);
			continue;
		}
		cqpoll_group_deliver(g, m, r);
		total += r;
		i++;
	}
	CQPOLL_TRACE(transition, g, active, g->n, (uint32_t)total);
	return total;
}

/*
 * A CQ whose event fired: poll it before anything else, so a wake costs in
 * proportion to the CQs that have work, not to the size of the group. The
 * first completion that became visible during the sleep measures the wake-up.
 * A poll that found less than a burst left the CQ empty: in the modes that
 * sleep the next pass takes that poll as its own
 * (cqpoll_group_member::empty_pass), and a sleep then goes to the arm; what
 * the callbacks' posts bring meanwhile, the arm's re-poll or reported miss
 * finds, as it finds what lands after any poll.
 */
static int
poll_woken(struct cqpoll_group *g, struct cqpoll_group_member *m,
	   uint64_t t_sleep, bool *measured)
{
	int r, total = 0, i;

	for (i = 0; i < GROUP_WAKE_BURSTS; i++) {
		r = cqpoll_poll_burst(m->cq, g->comps, g->burst);
		cqpoll_group_count_poll(g, r);
		if (r < 0) {
			if (cqpoll_group_isolate(g, m, r) != 0)
				return r;
			return total;
		}
		if ((uint32_t)r < g->burst)
			m->empty_pass = g->pass + 1;
		if (r == 0)
			return total;
		if (!*measured)
			cqpoll_group_wake_seen(g, &g->comps[0], t_sleep, measured);
		/* t0 is a thread's CPU time after it ran: 0 means none. */
		if (g->sleep_cpu_t0 != 0)
			cqpoll_group_sleep_cpu_end(g);
		cqpoll_group_deliver(g, m, r);
		total += r;
		if ((uint32_t)r < g->burst)
			break;
	}
	return total;
}

static void
drain_wake_fd(struct cqpoll_group *g)
{
	uint64_t v;

	/*
	 * The kick flag first: a kick that lands between the two leaves the
	 * flag set (the next lone sleep returns at once, maybe for nothing),
	 * never the flag clear with its write eaten by this read.
	 */
	__atomic_store_n(&g->kicked, 0, __ATOMIC_SEQ_CST);
	/* Non-blocking; one read resets the counter. */
	if (read(g->wake_fd, &v, sizeof(v)) < 0)
		return;
}

/*
 * Every CQ is armed and empty: the group goes to sleep, here or elsewhere
 * (@p timeout_ms -1: in an external event loop).
 */
void
cqpoll_group_begin_sleep(struct cqpoll_group *g, int timeout_ms)
{
	cqpoll_group_check_oracle(g);
	cqpoll_stat_add(&g->stats.sleeps, 1);
	CQPOLL_TRACE(sleep, g, NULL, timeout_ms);
	if (g->log_sleep)
		CQPOLL_LOG_LIB(DEBUG, "group %p: every cq empty and armed, sleeping",
			       (void *)g);
}

/*
 * A member woken by its event: back on the active list (its arm fired: it
 * needs poll-and-arm before the next sleep), and polled at once.
 */
static int
wake_member(struct cqpoll_group *g, struct cqpoll_group_member *m,
	    uint64_t t_sleep, bool *measured)
{
	cqpoll_group_activate_at(g, m, g->t_woke);
	return poll_woken(g, m, t_sleep, measured);
}

/* CQs asked of a shared fd's driver at a time (cqpoll_cq_fired_t). */
#define GROUP_FIRED_BATCH 64

/*
 * A shared fd whose driver names the CQs that fired: wake those, O(fired),
 * however many CQs share the fd. A CQ named that is no member here (it left
 * the group with its event pending) is skipped.
 */
static int
take_fired(struct cqpoll_group *g, struct cqpoll_group_fd *gfd,
	   uint64_t t_sleep, bool *measured)
{
	struct cqpoll_cq *fired[GROUP_FIRED_BATCH];
	struct cqpoll_group_member *m;
	int k, i, n, total = 0;

	do {
		n = cqpoll_cq_fired_take(gfd->members[0]->cq, fired,
					 GROUP_FIRED_BATCH);
		if (n < 0) {
			CQPOLL_LOG_LIB(ERR, "group %p: fd %d: which cqs fired: %s",
				       (void *)g, gfd->fd, strerror(-n));
			return n;
		}
		for (i = 0; i < n; i++) {
			m = fired[i]->group_member;
			if (m == NULL || fired[i]->group != g || m->failed)
				continue;
			k = wake_member(g, m, t_sleep, measured);
			if (k < 0)
				return k;
			total += k;
		}
	} while (n == GROUP_FIRED_BATCH);
	return total;
}

/*
 * The epoll sleep's safety-net timeout is the group's alarm
 * (cqpoll_alarm_private.h), a timerfd in its epoll set: an external loop sleeping
 * on the group's fd is woken by it too.
 */
void
cqpoll_group_alarm_open(struct cqpoll_group *g)
{
	cqpoll_alarm_open_in(&g->alarm, g->epfd, &g->alarm);
}

#if CQPOLL_MUTANT(GROUP_NO_ALARM)
/* Negative control only (test build): no timeout, and no alarm either. */
int
cqpoll_group_alarm_cover(struct cqpoll_group *g, int timeout_ms, uint64_t now)
{
	(void)g;
	(void)timeout_ms;
	(void)now;
	return -1;
}
#else
int
cqpoll_group_alarm_cover(struct cqpoll_group *g, int timeout_ms, uint64_t now)
{
	return cqpoll_alarm_cover(&g->alarm, timeout_ms, now);
}
#endif

static void
alarm_take(struct cqpoll_group *g)
{
	int r = cqpoll_alarm_take(&g->alarm);

	g->alarm_rang = true;
	if (r < 0)
		CQPOLL_LOG_LIB(ERR, "group %p: read of its alarm: %s", (void *)g,
			       strerror(-r));
}

/*
 * The @p r ready entries of an epoll_wait(): consume the events of their CQs,
 * put those CQs back on the active list and poll them; drain the cross-thread
 * wake-up fd. Wake-ups are measured from @p t_sleep.
 */
int
cqpoll_group_take_ready(struct cqpoll_group *g, const struct epoll_event *evs, int r,
	   uint64_t t_sleep, bool *cq_ready, bool *xthread)
{
	struct cqpoll_group_fd *gfd;
	bool measured = false;
	unsigned int j;
	int k, i, total = 0;

	for (i = 0; i < r; i++) {
		gfd = evs[i].data.ptr;
		if (gfd == NULL) {
			drain_wake_fd(g);
			*xthread = true;
			continue;
		}
		if (evs[i].data.ptr == &g->alarm) {
			alarm_take(g);
			continue;
		}
		*cq_ready = true;
		if (gfd->fired) {
			k = take_fired(g, gfd, t_sleep, &measured);
			if (k < 0)
				return k;
			total += k;
			continue;
		}
		/* A shared fd: only the CQs with a consumed event need a poll. */
		for (j = 0; j < gfd->n; j++) {
			if (gfd->members[j]->failed)
				continue;
			k = cqpoll_cq_event_get(gfd->members[j]->cq);
			if (k < 0) {
				if (cqpoll_group_isolate(g, gfd->members[j], k) != 0)
					return k;
				continue;
			}
			if (k == 0)
				continue;
			k = wake_member(g, gfd->members[j], t_sleep, &measured);
			if (k < 0)
				return k;
			total += k;
		}
	}
	return total;
}

/*
 * Wait on the group's epoll fd for up to @p timeout_ms (0: only take what is
 * ready, after an external wait), then consume the ready CQs' events and
 * poll those CQs. A sleep that nothing ended within the group's timeout,
 * here or in an external wait, runs the safety net.
 */
int
cqpoll_group_wait_and_wake(struct cqpoll_group *g, uint64_t t_sleep, int timeout_ms)
{
	struct epoll_event evs[GROUP_EPOLL_EVENTS];
	bool cq_ready = false, xthread = false;
	uint64_t asleep;
	int r, total;

	r = epoll_wait(g->epfd, evs, GROUP_EPOLL_EVENTS,
		       cqpoll_group_alarm_cover(g, timeout_ms, t_sleep));
	g->t_woke = cqpoll_now_ns();
	asleep = g->t_woke - t_sleep;
	cqpoll_stat_add(&g->stats.asleep_ns, asleep);
	if (r < 0) {
		if (errno == EINTR)
			return 0;
		r = -errno;
		CQPOLL_LOG_LIB(ERR, "group %p: epoll_wait: %s", (void *)g,
			       strerror(-r));
		return r;
	}
	if (r == 0) {
		/* An external wait that woke early for another fd: no timeout. */
		if (timeout_ms == 0 &&
		    asleep < (uint64_t)g->wait_timeout_ms * 1000000u)
			return 0;
		return cqpoll_group_timed_out(g, t_sleep, asleep);
	}
	g->alarm_rang = false;
	total = cqpoll_group_take_ready(g, evs, r, t_sleep, &cq_ready, &xthread);
	if (total < 0)
		return total;
	/*
	 * Ended by the alarm alone: the timeout it stands for, if the sleep
	 * was one it covered (half a period at least); an alarm left from
	 * before (a sleep it did not cover) ends nothing.
	 */
	if (g->alarm_rang && !cq_ready && !xthread) {
		if (asleep >= (uint64_t)g->wait_timeout_ms * 500000u)
			return cqpoll_group_timed_out(g, t_sleep, asleep);
		return 0;
	}
	/* A sleep ended by both a CQ and a cross-thread wake counts as event. */
	if (cq_ready)
		cqpoll_stat_add(&g->stats.wakeups_event, 1);
	else if (xthread)
		cqpoll_stat_add(&g->stats.wakeups_xthread, 1);
	if (g->log_sleep)
		CQPOLL_LOG_LIB(DEBUG, "group %p: woken by %s, %d completions", (void *)g,
			       cq_ready ? "a cq event" : xthread ? "another thread" :
			       "nothing", total);
	if (cq_ready || xthread)
		CQPOLL_TRACE(wake, g, NULL, cq_ready ? CQPOLL_TRACE_WAKE_EVENT :
			     CQPOLL_TRACE_WAKE_XTHREAD, asleep, (uint32_t)total);
	return total;
}

/*
 * The member a sleep may wait on in its CQ's own wait instead of the
 * group's epoll (doc/guides/poll-group.md, "The lone-member sleep"): the
 * group's only member, armed, and its driver has a wait of its own and a
 * wake-up that ends it from another thread (io_uring:
 * io_uring_enter(GETEVENTS) on its ring, one system call where the epoll
 * costs an epoll_wait() and the eventfd's read; UCX: poll(2) on the
 * worker's fd, without the event check's second poll(2)). The epoll
 * carries nothing else such a sleep would miss: its one other fd is the
 * group's eventfd, whose kicks (stop, mode change, move, wake-up) also
 * wake the member's wait (cqpoll_group_kick()); the safety net is the
 * wait's timeout; a member is added on this thread only, so never during
 * the sleep. NULL: the epoll it is.
 */
struct cqpoll_group_member *
cqpoll_group_lone_member(struct cqpoll_group *g)
{
	struct cqpoll_group_member *m;

	if (g->n != 1)
		return NULL;
	m = g->members[0];
	/* Without the driver's wake-up, a kick could not end that sleep. */
	if (m->failed || m->active || m->cq->wait == NULL || m->cq->wake == NULL)
		return NULL;
	return m;
}

/*
 * cqpoll_group_wait_and_wake() for a lone member (cqpoll_group_lone_member()): the same sleep, its
 * counters and its safety net, in the member's own wait. Published in
 * lone_cq for the kickers, and taken back before the member can leave:
 * a kicker that saw it is done with it once lone_users drops to 0.
 */
int
cqpoll_group_lone_wait_and_wake(struct cqpoll_group *g, struct cqpoll_group_member *m,
		   uint64_t t_sleep, int timeout_ms)
{
	bool measured = false, waited = false, xthread;
	uint64_t asleep, v;
	int r = 0, total = 0;

	__atomic_store_n(&g->lone_cq, m->cq, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&g->kicked, __ATOMIC_SEQ_CST)) {
		r = cqpoll_cq_own_wait(m->cq, timeout_ms);
		waited = true;
	}
	__atomic_store_n(&g->lone_cq, NULL, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&g->lone_users, __ATOMIC_ACQUIRE) != 0)
		sched_yield();
	g->t_woke = cqpoll_now_ns();
	asleep = g->t_woke - t_sleep;
	cqpoll_stat_add(&g->stats.asleep_ns, asleep);
	/* The kick's eventfd write is taken too, as the epoll's drain takes it. */
	xthread = __atomic_exchange_n(&g->kicked, 0, __ATOMIC_SEQ_CST) != 0;
	if (xthread && read(g->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		CQPOLL_LOG_LIB(ERR, "group %p: read of its wake-up eventfd: %s",
			       (void *)g, strerror(errno));
	if (r == -EINTR)
		return 0;
	if (r < 0) {
		if (cqpoll_group_isolate(g, m, r) != 0)
			return r;
		return 0;
	}
	/* A wait that timed out did so whatever kick came meanwhile. */
	if (r == 0 && waited) {
		return cqpoll_group_timed_out(g, t_sleep, asleep);
	}
	if (r > 0) {
		/* Its arm is spent either way: the member needs poll-and-arm. */
		total = wake_member(g, m, t_sleep, &measured);
		if (total < 0)
			return total;
	}
	/*
	 * The kick's wake-up ends the wait as an event would (the driver
	 * cannot tell them apart): an event only if the member had work, as
	 * the epoll counts a sleep ended by both.
	 */
	if (r > 0 && (total > 0 || !xthread)) {
		cqpoll_stat_add(&g->stats.wakeups_event, 1);
		r = 1;
	} else {
		cqpoll_stat_add(&g->stats.wakeups_xthread, 1);
		r = 0;
	}
	if (g->log_sleep)
		CQPOLL_LOG_LIB(DEBUG, "group %p: woken in its lone cq's wait by %s, %d completions",
			       (void *)g, r > 0 ? "a cq event" : "another thread", total);
	CQPOLL_TRACE(wake, g, NULL, r > 0 ? CQPOLL_TRACE_WAKE_EVENT :
		     CQPOLL_TRACE_WAKE_XTHREAD, asleep, (uint32_t)total);
	return total;
}
