/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's loop: one iteration polls the CQs that may hold work (all of
 * them, the active ones, or the hot ones with cold CQs on), looks at the
 * events of cold CQs and runs the health check when due, asks the mode or
 * the policy whether to sleep, and if so goes through the transition into
 * sleep (cqpoll_group_sleep.c). A member whose CQ fails, wherever the loop
 * meets it, leaves the active list and every walk at once; between steps
 * the group removes it and tells the failure callback
 * (cqpoll_group_failure.c), and runs on. Owns cqpoll_group_run_once(),
 * cqpoll_group_run(), the mode's decision, the busy-time count, and the
 * entry points of an external event loop: cqpoll_group_event_fd(),
 * cqpoll_group_sleep_prepare() and cqpoll_group_sleep_finish().
 */

#include <errno.h>
#include <stdint.h>

#include "cqpoll_clock.h"
#include "cqpoll_group_run_private.h"
#include "cqpoll_log_private.h"
#include "cqpoll_monitor_private.h"
#include "cqpoll_private.h"
#include "cqpoll_trace_private.h"
#include "cqpoll_mutant.h"

/*
 * Poll each member of @p list once: every member, or the active ones. One
 * found empty is marked so: if the pass ends in a transition, that poll is
 * the first of its poll-and-arm. In a mode that sleeps (@p woken) a member
 * that the wake-up's poll left empty counts as polled by this pass: a
 * sleep that follows starts at its arm, as a blocking wait loops on a poll
 * and an arm.
 */
static int
poll_list(struct cqpoll_group *g, struct cqpoll_group_member **list,
	  unsigned int n, bool woken)
{
	struct cqpoll_group_member *m;
	unsigned int i = 0;
	int r, total = 0;

	while (i < n) {
		m = list[i];
		if (m->failed || (woken && m->empty_pass == g->pass)) {
			i++;
			continue;
		}
		r = cqpoll_group_poll_member(g, m);
		if (r == 0) {
			m->empty_pass = g->pass;
			i++;
			continue;
		}
		if (r < 0) {
			if (cqpoll_group_isolate(g, m, r) != 0)
				return r;
			/* Off the active list: its last member moved to i. */
			if (list == g->active) {
				n--;
				continue;
			}
			i++;
			continue;
		}
		total += r;
		i++;
	}
	return total;
}

/*
 * A hot member idle for cold_ns goes cold: poll-and-arm, whose poll after
 * the arm closes the race with a completion that lands in between.
 */
#if CQPOLL_MUTANT(COLD_NAIVE)
/*
 * Negative control only (test build): arm without that poll, ignore what
 * the arm reports, and believe it, as naive code does.
 */
static int
cold_arm(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	struct cqpoll_cq *cq = m->cq;
	int r;

	(void)g;
	r = cq->ops.arm(cq->fp.priv);
	if (r < 0)
		return r;
	cqpoll_stat_add(&cq->counters.arms, 1);
	cq->armed = true;
	return 0;
}
#else
static inline int
cold_arm(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	return cqpoll_poll_and_arm(m->cq, g->comps, g->burst);
}
#endif

/*
 * Busy and adaptive modes with cold CQs: poll the active (hot) CQs; one that
 * found nothing for cold_ns goes through poll-and-arm and, empty and armed,
 * goes cold: it leaves the active list and announces its next completion
 * with an event, collected by cqpoll_group_check_cold(). Counters are written once per
 * call, not per poll.
 */
static int
poll_hot(struct cqpoll_group *g, bool woken)
{
	struct cqpoll_group_member *m;
	/* End of the last iteration: no clock read of its own. */
	const uint64_t now = g->t_mark != 0 ? g->t_mark : cqpoll_now_ns();
	uint64_t polls = 0, empty = 0, cold = 0;
	unsigned int i = 0;
	int r, total = 0;

	while (i < g->nactive) {
		m = g->active[i];
		/* Left empty by its wake-up's poll: see poll_list(). */
		if (woken && m->empty_pass == g->pass) {
			i++;
			continue;
		}
		r = cqpoll_poll_burst(m->cq, g->comps, g->burst);
		polls++;
		if (r > 0) {
			m->t_work = now;
			cqpoll_group_deliver(g, m, r);
			total += r;
			i++;
			continue;
		}
		if (r < 0) {
			/* Off the active list: its last member moved to i. */
			if (cqpoll_group_isolate(g, m, r) != 0)
				return r;
			continue;
		}
		empty++;
		/*
		 * now is the end of the last iteration, older than a t_work
		 * set by a wake-up since (cqpoll_group_activate() reads the
		 * clock): such a CQ has just been woken, not idle for long.
		 */
		if (m->t_work > now || now - m->t_work < g->cold_ns) {
			i++;
			continue;
		}
		r = cold_arm(g, m);
		polls++;
		if (r == -EAGAIN) {
			/*
			 * Not armed (misses kept being reported): it stays hot,
			 * and tries again after another cold_ns, not at every
			 * iteration (64 arms each).
			 */
			m->t_work = now;
			i++;
			continue;
		}
		if (r < 0) {
			if (cqpoll_group_isolate(g, m, r) != 0)
				return r;
			continue;
		}
		if (r == 0) {
			empty++;
			cold++;
			/* Cold from now: the safety net's clock starts here. */
			m->t_work = now;
			/* The last active member moves to i: look at it next. */
			cqpoll_group_deactivate(g, m);
			continue;
		}
		m->t_work = now;
		cqpoll_group_deliver(g, m, r);
		total += r;
		i++;
	}
	cqpoll_stat_add(&g->stats.polls, polls);
	if (polls != empty)
		cqpoll_group_count_found(g, polls - empty);
	if (cold != 0)
		cqpoll_stat_add(&g->stats.cold_arms, cold);
	return total;
}

static void
apply_mode(struct cqpoll_group *g)
{
	int req = __atomic_load_n(&g->mode_req, __ATOMIC_ACQUIRE);

	if (req == (int)g->mode)
		return;
	CQPOLL_LOG_LIB(DEBUG, "group %p: mode %s -> %s", (void *)g,
		       cqpoll_group_mode_name(g->mode),
		       cqpoll_group_mode_name((enum cqpoll_group_mode)req));
	CQPOLL_TRACE(mode_change, g, g->mode, (enum cqpoll_group_mode)req);
	g->mode = (enum cqpoll_group_mode)req;
	cqpoll_stat_add(&g->stats.mode_changes, 1);
}

/* A request from another thread is pending: do not arm and sleep now. */
static bool
request_pending(struct cqpoll_group *g)
{
	return __atomic_load_n(&g->stop, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&g->mode_req, __ATOMIC_ACQUIRE) != (int)g->mode;
}

/* What the mode, or the adaptive policy, says to do after an iteration. */
static enum cqpoll_policy_action
decide(struct cqpoll_group *g, int found, uint64_t now)
{
	enum cqpoll_policy_action a = CQPOLL_POLICY_SLEEP;

	if (g->mode == CQPOLL_GROUP_MODE_ADAPTIVE) {
		a = g->policy->decide(g->policy_state, (unsigned int)found, now);
		/* Once per sleep; every decision is the fast path. */
		if (a == CQPOLL_POLICY_SLEEP)
			CQPOLL_TRACE(policy_decision, g, (uint32_t)found, a);
		else
			CQPOLL_TRACE_FP(policy_decision, g, (uint32_t)found, a);
	}
	if (found != 0 || g->mode == CQPOLL_GROUP_MODE_BUSY)
		return CQPOLL_POLICY_KEEP_POLLING;
	return a;
}

/*
 * A bounded power-monitor wait on every CQ's next completion, then back to
 * polling; nothing is armed. Where the tier is off, or a CQ already has
 * work, it returns at once and the group polls on.
 */
static void
monitor_wait(struct cqpoll_group *g)
{
	struct cqpoll_cq *cqs[CQPOLL_MONITOR_MAX];
	unsigned int i;

	if (g->n == 0 || g->n > CQPOLL_MONITOR_MAX)
		return;
	for (i = 0; i < g->n; i++)
		cqs[i] = g->members[i]->cq;
	if (cqpoll_monitor_wait_cqs(cqs, g->n) == 0)
		CQPOLL_TRACE(policy_decision, g, 0, CQPOLL_POLICY_MONITOR);
}

/*
 * Busy time since the end of the last iteration: one clock read per
 * iteration, which a busy loop pays millions of times a second. Time the
 * thread spent between iterations counts as busy: awake, not asleep.
 */
static void
count_busy(struct cqpoll_group *g, uint64_t now, uint64_t slept)
{
	if (g->t_mark != 0 && now - g->t_mark > slept)
		cqpoll_stat_add(&g->stats.busy_ns, now - g->t_mark - slept);
	g->t_mark = now;
}

int
cqpoll_group_run_once(struct cqpoll_group *g)
{
	struct cqpoll_group_member *lone;
	enum cqpoll_policy_action a;
	uint64_t t1, slept;
	bool unarmed, woken;
	int r;

	if (g == NULL)
		return -EINVAL;
	if (!cqpoll_group_owned(g))
		return -EPERM;
	if (g->in_callback || g->sleeping)
		return -EBUSY;
	cqpoll_stat_add(&g->stats.iterations, 1);
	g->pass++;
	apply_mode(g);
	/*
	 * Interrupt mode sleeps as soon as an iteration finds nothing, so it
	 * polls only the active CQs: an armed one announces its work with an
	 * event, and the sleep that follows returns at once for it. The cost of
	 * a wake-up then follows the CQs with work, not the size of the group.
	 * Busy and adaptive modes poll the active CQs too, and arm those idle
	 * for cold_us; since they do not sleep, they look for the events of
	 * those cold CQs without sleeping (cqpoll_group_check_cold()). With
	 * cold CQs off (CQPOLL_GROUP_COLD_NEVER) they poll every CQ.
	 */
	woken = g->mode != CQPOLL_GROUP_MODE_BUSY;
	if (g->mode == CQPOLL_GROUP_MODE_INTERRUPT)
		r = poll_list(g, g->active, g->nactive, woken);
	else if (g->cold_ns == 0)
		r = poll_list(g, g->members, g->n, woken);
	else
		r = poll_hot(g, woken);
	if (r < 0)
		return r;
	t1 = cqpoll_now_ns();
	if (g->mode != CQPOLL_GROUP_MODE_INTERRUPT && g->cold_ns != 0 &&
	    cqpoll_group_cold_check_due(g, t1)) {
		int c = cqpoll_group_check_cold(g, t1);

		if (c < 0)
			return c;
		r += c;
	}
	/* Due once per period: one compare per iteration, nothing per poll. */
	if (t1 >= g->t_health) {
		int c = cqpoll_group_health_check(g, t1);

		if (c < 0)
			return c;
		r += c;
	}
	if (g->failed != NULL && cqpoll_group_reap(g))
		return cqpoll_group_free_deferred(g);
	a = decide(g, r, t1);
	if (a != CQPOLL_POLICY_SLEEP || request_pending(g)) {
		/* Awake in a low-power state: busy time, not asleep. */
		if (a == CQPOLL_POLICY_MONITOR && !request_pending(g))
			monitor_wait(g);
		count_busy(g, t1, 0);
		return r;
	}
	cqpoll_group_sleep_cpu_start(g);
	r = cqpoll_group_transition(g, &unarmed, t1);
	/* Before the sleep: a dead CQ's fd must not stay in the epoll set. */
	if (g->failed != NULL && cqpoll_group_reap(g))
		return cqpoll_group_free_deferred(g);
	if (r == 0 && !unarmed) {
		slept = __atomic_load_n(&g->stats.asleep_ns, __ATOMIC_RELAXED);
		lone = cqpoll_group_lone_member(g);
		cqpoll_group_begin_sleep(g, g->wait_timeout_ms);
		if (lone != NULL)
			r = cqpoll_group_lone_wait_and_wake(g, lone,
							    cqpoll_now_ns(),
							    g->wait_timeout_ms);
		else
			r = cqpoll_group_wait_and_wake(g, cqpoll_now_ns(),
						       g->wait_timeout_ms);
		/* Woken by a timeout or another thread: no callback ended it. */
		if (g->sleep_cpu_t0 != 0)
			cqpoll_group_sleep_cpu_end(g);
		slept = __atomic_load_n(&g->stats.asleep_ns, __ATOMIC_RELAXED) - slept;
		if (g->failed != NULL && cqpoll_group_reap(g))
			return cqpoll_group_free_deferred(g);
		/* Read at the wake-up: its callbacks count as the next iteration's. */
		t1 = g->t_woke;
	} else {
		/* No sleep: nothing to time. */
		g->sleep_cpu_t0 = 0;
		slept = 0;
		t1 = cqpoll_now_ns();
	}
	/* Tell the policy work arrived, so it polls on (hysteresis). */
	if (r > 0 && g->mode == CQPOLL_GROUP_MODE_ADAPTIVE)
		g->policy->decide(g->policy_state, (unsigned int)r, t1);
	count_busy(g, t1, slept);
	return r;
}

int
cqpoll_group_run(struct cqpoll_group *g)
{
	int r = 0;

	if (g == NULL)
		return -EINVAL;
	if (!cqpoll_group_owned(g))
		return -EPERM;
	if (g->in_callback)
		return -EBUSY;
	while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
		/* Between iterations: the safe point of a move. */
		if (__atomic_load_n(&g->move_req, __ATOMIC_ACQUIRE)) {
			r = cqpoll_group_release(g);
			return r < 0 ? r : CQPOLL_GROUP_RUN_RELEASED;
		}
		r = cqpoll_group_run_once(g);
		/* Destroyed by its failure callback: gone, and stopped. */
		if (r == -ECANCELED)
			return 0;
		if (r < 0)
			return r;
	}
	__atomic_store_n(&g->stop, 0, __ATOMIC_RELEASE);
	return 0;
}

int
cqpoll_group_event_fd(const struct cqpoll_group *g)
{
	if (g == NULL)
		return -EINVAL;
	return g->epfd;
}

int
cqpoll_group_sleep_prepare(struct cqpoll_group *g)
{
	bool unarmed;
	int r;

	if (g == NULL)
		return -EINVAL;
	if (!cqpoll_group_owned(g))
		return -EPERM;
	if (g->in_callback)
		return -EBUSY;
	if (g->sleeping)
		return -EALREADY;
	/* Not the end of a pass: the caller may have run since its polls. */
	g->pass++;
	r = cqpoll_group_transition(g, &unarmed, cqpoll_now_ns());
	if (g->failed != NULL && cqpoll_group_reap(g))
		return cqpoll_group_free_deferred(g);
	if (r != 0)
		return r;
	if (unarmed)
		return -EAGAIN;
	cqpoll_group_begin_sleep(g, -1);
	g->sleeping = true;
	g->t_sleep = cqpoll_now_ns();
	/* An external wait with no timeout of its own still ends by T. */
	cqpoll_group_alarm_cover(g, g->wait_timeout_ms, g->t_sleep);
	return 0;
}

int
cqpoll_group_sleep_finish(struct cqpoll_group *g)
{
	int r;

	if (g == NULL)
		return -EINVAL;
	if (!cqpoll_group_owned(g))
		return -EPERM;
	if (g->in_callback)
		return -EBUSY;
	if (!g->sleeping)
		return -EINVAL;
	g->sleeping = false;
	r = cqpoll_group_wait_and_wake(g, g->t_sleep, 0);
	if (g->failed != NULL && cqpoll_group_reap(g))
		return cqpoll_group_free_deferred(g);
	/* The external wait was counted asleep: busy time starts again now. */
	g->t_mark = cqpoll_now_ns();
	return r;
}
