/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The group's loop: poll every CQ, ask the mode or policy whether to sleep,
 * and the group transition into sleep: poll-and-arm on every CQ, sleep only
 * when all of them are empty and armed, one bounded epoll_wait, then the CQs
 * whose events fired are polled first. A sleep that ends by timeout runs the
 * safety net: it polls the members, in slices in large groups, for work whose
 * event was lost. A member whose CQ fails, wherever the loop meets it, leaves
 * the active list and every walk at once; between steps the group removes it
 * and tells the failure callback (cqpoll_group_reap()), and runs on.
 */

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cqpoll_clock.h"
#include "cqpoll_group_private.h"
#include "cqpoll_log_private.h"
#include "cqpoll_monitor_private.h"
#include "cqpoll_private.h"
#include "cqpoll_trace_private.h"
#include "cqpoll_mutant.h"

/* Ready fds taken per epoll_wait; more stay ready for the next sleep. */
#define GROUP_EPOLL_EVENTS 64
/* Members the sleep check judges per sleep (see cqpoll_sleep_check.h). */
#define GROUP_ORACLE_CHECKS 64
/* Bursts read from a woken CQ before the normal loop takes over. */
#define GROUP_WAKE_BURSTS 16
/*
 * While some CQs are cold and others hot, how often a polling group looks
 * (epoll_wait, timeout 0) for the events of the cold ones. One look is a
 * system call, ~0.3-1 µs here: every 10 µs it costs a few percent of the
 * loop, and a cold CQ's first completion waits at most that much more than
 * a hot one's. With no hot CQ left the group looks at every iteration.
 */
#define GROUP_COLD_CHECK_NS 10000u
/*
 * Members the safety net and the health check look at per period (a
 * timeout, or a health check): the whole group up to this size, else this
 * many, taking turns (round-robin). Their cost per period is thus bounded
 * (~150 ns per armed member here: ~40 µs of a 10 ms period, where a walk
 * over 16384 members stalled the loop 2 ms), and a full round over N
 * members takes ceil(N / GROUP_SLICE) periods: 256 at 65536 members, 2.56 s
 * at the default 10 ms. The price of a bounded period: a lost event or a
 * silent death in a group of N members is found within that many periods
 * (plus one), not within one.
 */
#define GROUP_SLICE 256u
/*
 * The health check counts work it finds in an armed member as a recovery
 * when its host timestamp is older than the check's own look at the events
 * by this much: an event raised then would have been taken (1 ms is far
 * above an emulated or software device's event latency; devices without
 * host timestamps are never counted by the check).
 */
#define GROUP_HEALTH_EVENT_SLACK_NS 1000000u

static void
deliver(struct cqpoll_group *g, struct cqpoll_group_member *m, int n)
{
	/* Membership must not change under the loops that walk it. */
	g->in_callback = true;
	m->cb(m->cq, g->comps, (unsigned int)n, m->arg);
	g->in_callback = false;
	cqpoll_stat_add(&g->stats.completions, (uint64_t)n);
}

static void
count_poll(struct cqpoll_group *g, int r)
{
	cqpoll_stat_add(&g->stats.polls, 1);
	if (r == 0)
		cqpoll_stat_add(&g->stats.empty_polls, 1);
}

/* Poll one member once and hand what it finds to its callback. */
static int
poll_member(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	int r;

	r = cqpoll_poll_burst(m->cq, g->comps, g->burst);
	count_poll(g, r);
	if (r > 0)
		deliver(g, m, r);
	return r;
}

#if CQPOLL_MUTANT(NO_ISOLATION)
/* Negative control only (test build): a CQ's error stops the whole group. */
#define MEMBER_FAILED(g, m, r) return (r)
#else
#define MEMBER_FAILED(g, m, r) cqpoll_group_member_failed((g), (m), (r))
#endif

/* Poll each member of @p list once: every member, or the active ones. */
static int
poll_list(struct cqpoll_group *g, struct cqpoll_group_member **list,
	  unsigned int n)
{
	struct cqpoll_group_member *m;
	unsigned int i = 0;
	int r, total = 0;

	while (i < n) {
		m = list[i];
		if (m->failed) {
			i++;
			continue;
		}
		r = poll_member(g, m);
		if (r < 0) {
			MEMBER_FAILED(g, m, r);
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

#if CQPOLL_MUTANT(COLD_NAIVE)
int cqpoll_cq_arm_naive(struct cqpoll_cq *cq);
#endif

/*
 * Busy and adaptive modes with cold CQs: poll the active (hot) CQs; one that
 * found nothing for cold_ns goes through poll-and-arm and, empty and armed,
 * goes cold: it leaves the active list and announces its next completion
 * with an event, collected by check_cold(). Counters are written once per
 * call, not per poll.
 */
static int
poll_hot(struct cqpoll_group *g)
{
	struct cqpoll_group_member *m;
	/* End of the last iteration: no clock read of its own. */
	const uint64_t now = g->t_mark != 0 ? g->t_mark : cqpoll_now_ns();
	uint64_t polls = 0, empty = 0, cold = 0;
	unsigned int i = 0;
	int r, total = 0;

	while (i < g->nactive) {
		m = g->active[i];
		r = cqpoll_poll_burst(m->cq, g->comps, g->burst);
		polls++;
		if (r > 0) {
			m->t_work = now;
			deliver(g, m, r);
			total += r;
			i++;
			continue;
		}
		if (r < 0) {
			/* Off the active list: its last member moved to i. */
			MEMBER_FAILED(g, m, r);
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
#if CQPOLL_MUTANT(COLD_NAIVE)
		/*
		 * Negative control only (test build, linked with libcqpoll_emu,
		 * which has the naive arm): arm, no second poll.
		 */
		r = cqpoll_cq_arm_naive(m->cq);
#else
		r = cqpoll_poll_and_arm(m->cq, g->comps, g->burst);
#endif
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
			MEMBER_FAILED(g, m, r);
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
		deliver(g, m, r);
		total += r;
		i++;
	}
	cqpoll_stat_add(&g->stats.polls, polls);
	cqpoll_stat_add(&g->stats.empty_polls, empty);
	if (cold != 0)
		cqpoll_stat_add(&g->stats.cold_arms, cold);
	return total;
}

/*
 * poll-and-arm on every ACTIVE CQ. A CQ that returns 0 is empty and armed,
 * and stays armed until its event is consumed: it leaves the active list,
 * and the group need not look at it again before sleeping, since anything
 * that lands in it raises an event. The group may sleep only if the whole
 * pass found nothing: a CQ that had completions may hold more that no event
 * will announce (edge arms ignore entries older than the arm), so it stays
 * active and the next pass drains it.
 */
static int
transition(struct cqpoll_group *g, bool *unarmed)
{
	struct cqpoll_group_member *m;
	unsigned int i = 0, active;
	int r, total = 0;

#if CQPOLL_MUTANT(ARM_ALL)
	/* Negative control only (test build): every member, at every sleep. */
	for (i = 0; i < g->n; i++)
		if (!g->members[i]->failed)
			cqpoll_group_activate(g, g->members[i]);
	i = 0;
#endif
	active = g->nactive;
	*unarmed = false;
	cqpoll_stat_add(&g->stats.transitions, 1);
	CQPOLL_LOG_LIB(DEBUG, "group %p: transition, poll-and-arm on %u active of %u cqs",
		       (void *)g, g->nactive, g->n);
	while (i < g->nactive) {
		m = g->active[i];
		r = cqpoll_poll_and_arm(m->cq, g->comps, g->burst);
		count_poll(g, r);
		if (r == -EAGAIN) {
			/* Not armed (misses kept being reported): no sleep now. */
			*unarmed = true;
			i++;
			continue;
		}
		if (r < 0) {
			/* A dead CQ needs no arm: the others may sleep. */
			MEMBER_FAILED(g, m, r);
			continue;
		}
		if (r == 0) {
			/* The last active member moves to i: look at it next. */
			cqpoll_group_deactivate(g, m);
			continue;
		}
		deliver(g, m, r);
		total += r;
		i++;
	}
	CQPOLL_TRACE(transition, g, active, g->n, (uint32_t)total);
	return total;
}

/*
 * Ground truth of emulated devices: is a completion stranded right now? A
 * sleep checks at most GROUP_ORACLE_CHECKS members, taking turns, so that the
 * check does not make a wake-up cost grow with the size of a large group;
 * groups up to that size are checked whole at every sleep.
 */
static void
check_oracle(struct cqpoll_group *g)
{
	struct cqpoll_group_member *m;
	unsigned int k, i, n;

	if (g->noracle == 0 || g->n == 0)
		return;
	n = g->n < GROUP_ORACLE_CHECKS ? g->n : GROUP_ORACLE_CHECKS;
	i = g->oracle_next < g->n ? g->oracle_next : 0;
	for (k = 0; k < n; k++) {
		m = g->members[i];
		if (m->oracle && !m->failed &&
		    cqpoll_sleep_check_run(m->cq) == 1) {
			cqpoll_stat_add(&g->stats.lost_wakeups, 1);
			break;
		}
		if (++i == g->n)
			i = 0;
	}
	g->oracle_next = i;
}

/*
 * What a sleep costs the thread in CPU (cqpoll_group_sleep_cpu_get()) is
 * read on CLOCK_THREAD_CPUTIME_ID, which Linux serves by a system call, not
 * the vDSO: two per timed sleep, against the ten or so a sleep makes on UCX
 * tcp and the two of the lightest (io_uring, sw). Timing every sleep would
 * add a tenth to a hundred percent of the calls it measures, so the group
 * samples its transitions into sleep, the first SLEEP_CPU_FIRST (a policy
 * learns the cost at once) and then one in SLEEP_CPU_EVERY: 1/8 of a call
 * per sleep, in the noise of what is measured (strace -c counts in
 * doc/guides/poll-group.md). A sampled transition that finds work and does
 * not sleep is not timed.
 */
#define SLEEP_CPU_FIRST 8
#define SLEEP_CPU_EVERY 16

/* A transition begins: start the CPU clock if this one is sampled. */
static void
sleep_cpu_start(struct cqpoll_group *g)
{
	uint64_t n = g->sleeps_sampled++;

	if (n < SLEEP_CPU_FIRST || n % SLEEP_CPU_EVERY == 0)
		g->sleep_cpu_t0 = cqpoll_thread_cpu_ns();
}

/*
 * The timed sleep's wake-up was handled (the first completion is about to
 * reach its callback, whose work is the application's, not the sleep's):
 * count it and tell the policy, as wake_cost() hears of the latency.
 */
static void
sleep_cpu_end(struct cqpoll_group *g)
{
	uint64_t cpu = cqpoll_thread_cpu_ns() - g->sleep_cpu_t0;

	g->sleep_cpu_t0 = 0;
	cqpoll_stat_add(&g->sleep_cpu_ns, cpu);
	cqpoll_stat_add(&g->sleeps_timed, 1);
	if (g->policy_sleep_cpu != NULL)
		g->policy_sleep_cpu(g->policy_state, cpu);
}

static void
record_wake_latency(struct cqpoll_group *g, uint64_t lat)
{
	unsigned int b = 0;

	if (g->policy->wake_cost != NULL)
		g->policy->wake_cost(g->policy_state, lat);
	if (lat != 0)
		b = 63u - (unsigned int)__builtin_clzll(lat);
	if (b >= CQPOLL_GROUP_WAKE_HIST_BUCKETS)
		b = CQPOLL_GROUP_WAKE_HIST_BUCKETS - 1;
	cqpoll_stat_add(&g->stats.wake_latency_hist[b], 1);
}

/*
 * Only host CLOCK_MONOTONIC timestamps may measure a wake-up: a device clock
 * (CQPOLL_COMPLETION_F_TIMESTAMP_RAW, e.g. mlx5 HCA ticks) subtracted from
 * host time would feed the policy noise.
 */
#if CQPOLL_MUTANT(RAW_TO_POLICY)
/* Negative control only (test build): any timestamp is taken as host time. */
#define WAKE_TIMESTAMP_FLAGS \
	(CQPOLL_COMPLETION_F_TIMESTAMP | CQPOLL_COMPLETION_F_TIMESTAMP_RAW)
#else
#define WAKE_TIMESTAMP_FLAGS CQPOLL_COMPLETION_F_TIMESTAMP
#endif

/*
 * A CQ whose event fired: poll it before anything else, so a wake costs in
 * proportion to the CQs that have work, not to the size of the group. The
 * first completion that became visible during the sleep measures the wake-up.
 */
static int
poll_woken(struct cqpoll_group *g, struct cqpoll_group_member *m,
	   uint64_t t_sleep, bool *measured)
{
	int r, total = 0, i;

	for (i = 0; i < GROUP_WAKE_BURSTS; i++) {
		r = cqpoll_poll_burst(m->cq, g->comps, g->burst);
		count_poll(g, r);
		if (r < 0) {
			MEMBER_FAILED(g, m, r);
			return total;
		}
		if (r == 0)
			return total;
		if (!*measured && (g->comps[0].flags & WAKE_TIMESTAMP_FLAGS) &&
		    g->comps[0].timestamp >= t_sleep) {
			uint64_t now = cqpoll_now_ns();

			*measured = true;
			record_wake_latency(g, now > g->comps[0].timestamp ?
					    now - g->comps[0].timestamp : 0);
		}
		/* t0 is a thread's CPU time after it ran: 0 means none. */
		if (g->sleep_cpu_t0 != 0)
			sleep_cpu_end(g);
		deliver(g, m, r);
		total += r;
		if ((uint32_t)r < g->burst)
			break;
	}
	return total;
}

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
#if !CQPOLL_MUTANT(NO_SAFETY_NET)
static int
check_armed(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	int r = poll_member(g, m);

	if (r == 0) {
#if !CQPOLL_MUTANT(NO_NET_ARM_CHECK)
		r = cqpoll_cq_arm_check(m->cq);
#endif
		if (r > 0)
			cqpoll_group_activate(g, m);
		if (r >= 0)
			return 0;
	}
	if (r < 0) {
		/* Dead, with no event to say so: found here. */
		MEMBER_FAILED(g, m, r);
		return 0;
	}
	cqpoll_group_activate(g, m);
	return r;
}
#endif

static uint64_t
period_ns(const struct cqpoll_group *g)
{
	return (uint64_t)g->wait_timeout_ms * 1000000u;
}

/*
 * The sleep that began at @p t_sleep ended by timeout: poll the next slice of
 * members (GROUP_SLICE, round-robin), each still believed armed, since an event may have been lost (a
 * shared channel read by someone else, a device or driver bug). Work found
 * re-activates its member, whose arm is spent, so the next transition arms it
 * again. Members that went cold after @p cold_before are skipped: a polling
 * group's net looks only at CQs armed for a whole timeout. Returns
 * completions found, or < 0.
 */
static int
safety_net_since(struct cqpoll_group *g, uint64_t t_sleep, uint64_t cold_before)
{
#if CQPOLL_MUTANT(NO_SAFETY_NET)
	/* Negative control only (test build): the timeout recovers nothing. */
	(void)g;
	(void)t_sleep;
	(void)cold_before;
	return 0;
#else
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
#endif
}

/*
 * The sleep that began at @p t_sleep ended by timeout: every member of the
 * next slice counts.
 */
static int
safety_net(struct cqpoll_group *g, uint64_t t_sleep)
{
	/* A net over the whole group is that period's health check too. */
	if (g->n <= GROUP_SLICE)
		g->t_health = cqpoll_now_ns() + period_ns(g);
	return safety_net_since(g, t_sleep, UINT64_MAX);
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
static void
begin_sleep(struct cqpoll_group *g, int timeout_ms)
{
	check_oracle(g);
	cqpoll_stat_add(&g->stats.sleeps, 1);
	CQPOLL_TRACE(sleep, g, NULL, timeout_ms);
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
	cqpoll_group_activate(g, m);
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
 * The @p r ready entries of an epoll_wait(): consume the events of their CQs,
 * put those CQs back on the active list and poll them; drain the cross-thread
 * wake-up fd. Wake-ups are measured from @p t_sleep.
 */
static int
take_ready(struct cqpoll_group *g, const struct epoll_event *evs, int r,
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
				MEMBER_FAILED(g, gfd->members[j], k);
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
 * Busy and adaptive modes: collect, without sleeping, the events of the cold
 * CQs, every GROUP_COLD_CHECK_NS while some CQs are hot and at every call
 * when none is. A cross-thread wake-up seen here is consumed: the group is
 * awake and looks at its requests at every iteration anyway.
 */
static int
check_cold(struct cqpoll_group *g, uint64_t now)
{
	struct epoll_event evs[GROUP_EPOLL_EVENTS];
	bool cq_ready = false, xthread = false;
	int r, total;

	if (g->nactive == g->n ||
	    (g->nactive != 0 && now - g->t_check < GROUP_COLD_CHECK_NS))
		return 0;
	g->t_check = now;
	cqpoll_stat_add(&g->stats.event_checks, 1);
	r = epoll_wait(g->epfd, evs, GROUP_EPOLL_EVENTS, 0);
	if (r < 0)
		return errno != EINTR ? -errno : 0;
	/* No wake-up to measure: the group did not sleep (t_sleep = now). */
	total = r > 0 ? take_ready(g, evs, r, now, &cq_ready, &xthread) : 0;
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
	    now - g->t_net >= (uint64_t)g->wait_timeout_ms * 1000000u) {
		if (g->t_net != 0) {
			uint64_t t0 = now - (uint64_t)g->wait_timeout_ms * 1000000u;

			r = safety_net_since(g, t0, t0);
			if (r < 0)
				return r;
			total += r;
		}
		g->t_net = now;
	}
	return total;
}

#if !CQPOLL_MUTANT(NO_HEALTH_CHECK) && !CQPOLL_MUTANT(NO_SAFETY_NET)
/*
 * The health check (contract.md, section 11), due once per safety-net
 * period on the group's own clock whatever the traffic: a group whose other
 * members keep it awake never has a sleep that times out, so the net alone
 * would never look at an armed member, and a silent death there would wait
 * for the traffic to stop. It first takes the events at hand (one
 * epoll_wait() that does not block), so that members whose event is pending
 * are woken the normal way; then each armed member left in the next slice
 * (GROUP_SLICE members, round-robin: the whole group up to that size) is
 * checked as the net checks it (check_armed()). Active members need nothing: the loop
 * polls them at every iteration. Work found in an armed member is
 * delivered, its arm taken as spent (the next transition arms it again).
 * It counts as a timeout recovery only when a host timestamp says it was
 * visible well before the check took the events at hand
 * (GROUP_HEALTH_EVENT_SLACK_NS); without one, nothing tells a lost event
 * from one on its way (a shared channel's, read by another member's fd), so
 * it is only reported to the trace hook (cqpoll_cq_health_mark()).
 * Cost: one epoll_wait(), and one poll and one arm per armed member of the
 * slice, per period, whatever the group's size; one compare per iteration.
 */
static int
health_check(struct cqpoll_group *g, uint64_t now)
{
	struct epoll_event evs[GROUP_EPOLL_EVENTS];
	bool cq_ready = false, xthread = false;
	struct cqpoll_group_member *m;
	unsigned int i, k, n, checked = 0;
	int r, total = 0;

	g->t_health = now + period_ns(g);
	r = epoll_wait(g->epfd, evs, GROUP_EPOLL_EVENTS, 0);
	if (r < 0)
		return errno != EINTR ? -errno : 0;
	if (r > 0) {
		total = take_ready(g, evs, r, now, &cq_ready, &xthread);
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
static int
timed_out(struct cqpoll_group *g, uint64_t t_sleep, uint64_t asleep)
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

/*
 * Wait on the group's epoll fd for up to @p timeout_ms (0: only take what is
 * ready, after an external wait), then consume the ready CQs' events and
 * poll those CQs. A sleep that nothing ended within the group's timeout,
 * here or in an external wait, runs the safety net.
 */
static int
wait_and_wake(struct cqpoll_group *g, uint64_t t_sleep, int timeout_ms)
{
	struct epoll_event evs[GROUP_EPOLL_EVENTS];
	bool cq_ready = false, xthread = false;
	uint64_t asleep;
	int r, total;

	r = epoll_wait(g->epfd, evs, GROUP_EPOLL_EVENTS, timeout_ms);
	asleep = cqpoll_now_ns() - t_sleep;
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
		return timed_out(g, t_sleep, asleep);
	}
	total = take_ready(g, evs, r, t_sleep, &cq_ready, &xthread);
	if (total < 0)
		return total;
	/* A sleep ended by both a CQ and a cross-thread wake counts as event. */
	if (cq_ready)
		cqpoll_stat_add(&g->stats.wakeups_event, 1);
	else if (xthread)
		cqpoll_stat_add(&g->stats.wakeups_xthread, 1);
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
static struct cqpoll_group_member *
lone_member(struct cqpoll_group *g)
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
 * wait_and_wake() for a lone member (lone_member()): the same sleep, its
 * counters and its safety net, in the member's own wait. Published in
 * lone_cq for the kickers, and taken back before the member can leave:
 * a kicker that saw it is done with it once lone_users drops to 0.
 */
static int
lone_wait_and_wake(struct cqpoll_group *g, struct cqpoll_group_member *m,
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
	asleep = cqpoll_now_ns() - t_sleep;
	cqpoll_stat_add(&g->stats.asleep_ns, asleep);
	/* The kick's eventfd write is taken too, as the epoll's drain takes it. */
	xthread = __atomic_exchange_n(&g->kicked, 0, __ATOMIC_SEQ_CST) != 0;
	if (xthread && read(g->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		CQPOLL_LOG_LIB(ERR, "group %p: read of its wake-up eventfd: %s",
			       (void *)g, strerror(errno));
	if (r == -EINTR)
		return 0;
	if (r < 0) {
		MEMBER_FAILED(g, m, r);
		return 0;
	}
	/* A wait that timed out did so whatever kick came meanwhile. */
	if (r == 0 && waited) {
		return timed_out(g, t_sleep, asleep);
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
	CQPOLL_LOG_LIB(DEBUG, "group %p: woken in its lone cq's wait by %s, %d completions",
		       (void *)g, r > 0 ? "a cq event" : "another thread", total);
	CQPOLL_TRACE(wake, g, NULL, r > 0 ? CQPOLL_TRACE_WAKE_EVENT :
		     CQPOLL_TRACE_WAKE_XTHREAD, asleep, (uint32_t)total);
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
	bool unarmed;
	int r;

	if (g == NULL)
		return -EINVAL;
	if (g->in_callback || g->sleeping)
		return -EBUSY;
	if (!cqpoll_group_owned(g))
		return -EPERM;
	cqpoll_stat_add(&g->stats.iterations, 1);
	apply_mode(g);
	/*
	 * Interrupt mode sleeps as soon as an iteration finds nothing, so it
	 * polls only the active CQs: an armed one announces its work with an
	 * event, and the sleep that follows returns at once for it. The cost of
	 * a wake-up then follows the CQs with work, not the size of the group.
	 * Busy and adaptive modes poll the active CQs too, and arm those idle
	 * for cold_us; since they do not sleep, they look for the events of
	 * those cold CQs without sleeping (check_cold()). With cold CQs off
	 * (CQPOLL_GROUP_COLD_NEVER) they poll every CQ.
	 */
	if (g->mode == CQPOLL_GROUP_MODE_INTERRUPT)
		r = poll_list(g, g->active, g->nactive);
	else if (g->cold_ns == 0)
		r = poll_list(g, g->members, g->n);
	else
		r = poll_hot(g);
	if (r < 0)
		return r;
	t1 = cqpoll_now_ns();
	if (g->mode != CQPOLL_GROUP_MODE_INTERRUPT && g->cold_ns != 0) {
		int c = check_cold(g, t1);

		if (c < 0)
			return c;
		r += c;
	}
#if !CQPOLL_MUTANT(NO_HEALTH_CHECK) && !CQPOLL_MUTANT(NO_SAFETY_NET)
	/* Due once per period: one compare per iteration, nothing per poll. */
	if (t1 >= g->t_health) {
		int c = health_check(g, t1);

		if (c < 0)
			return c;
		r += c;
	}
#endif
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
	sleep_cpu_start(g);
	r = transition(g, &unarmed);
	/* Before the sleep: a dead CQ's fd must not stay in the epoll set. */
	if (g->failed != NULL && cqpoll_group_reap(g))
		return cqpoll_group_free_deferred(g);
	if (r == 0 && !unarmed) {
		slept = __atomic_load_n(&g->stats.asleep_ns, __ATOMIC_RELAXED);
		lone = lone_member(g);
		begin_sleep(g, g->wait_timeout_ms);
		if (lone != NULL)
			r = lone_wait_and_wake(g, lone, cqpoll_now_ns(),
					       g->wait_timeout_ms);
		else
			r = wait_and_wake(g, cqpoll_now_ns(), g->wait_timeout_ms);
		/* Woken by a timeout or another thread: no callback ended it. */
		if (g->sleep_cpu_t0 != 0)
			sleep_cpu_end(g);
		slept = __atomic_load_n(&g->stats.asleep_ns, __ATOMIC_RELAXED) - slept;
		if (g->failed != NULL && cqpoll_group_reap(g))
			return cqpoll_group_free_deferred(g);
	} else {
		/* No sleep: nothing to time. */
		g->sleep_cpu_t0 = 0;
		slept = 0;
	}
	t1 = cqpoll_now_ns();
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
	if (g->in_callback)
		return -EBUSY;
	if (!cqpoll_group_owned(g))
		return -EPERM;
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
	if (g->in_callback)
		return -EBUSY;
	if (!cqpoll_group_owned(g))
		return -EPERM;
	if (g->sleeping)
		return -EALREADY;
	r = transition(g, &unarmed);
	if (g->failed != NULL && cqpoll_group_reap(g))
		return cqpoll_group_free_deferred(g);
	if (r != 0)
		return r;
	if (unarmed)
		return -EAGAIN;
	begin_sleep(g, -1);
	g->sleeping = true;
	g->t_sleep = cqpoll_now_ns();
	return 0;
}

int
cqpoll_group_sleep_finish(struct cqpoll_group *g)
{
	int r;

	if (g == NULL)
		return -EINVAL;
	if (g->in_callback)
		return -EBUSY;
	if (!cqpoll_group_owned(g))
		return -EPERM;
	if (!g->sleeping)
		return -EINVAL;
	g->sleeping = false;
	r = wait_and_wake(g, g->t_sleep, 0);
	if (g->failed != NULL && cqpoll_group_reap(g))
		return cqpoll_group_free_deferred(g);
	/* The external wait was counted asleep: busy time starts again now. */
	g->t_mark = cqpoll_now_ns();
	return r;
}
