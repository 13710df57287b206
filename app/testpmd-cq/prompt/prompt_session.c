/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs of the interactive session: start one with no end of its own, read its
 * counters while it runs, switch its mode, stop it and report it as a normal
 * run would be reported.
 *
 * Threads. The prompt owns the main lcore, as in DPDK's testpmd, and only
 * reads stdin and answers commands. The generator runs on the first worker
 * lcore, exactly as in a run without -i. The poller runs on a DPDK control
 * thread: the EAL places control threads on the CPUs it gave no lcore or,
 * when the lcores take them all (the default two lcores on a two-CPU
 * machine), on the main lcore's CPU. There the poller shares a CPU with the
 * prompt only, which sleeps in poll() while a run lasts: the measurement sees
 * the same two busy CPUs as a run without -i, and the prompt is never the
 * poller, so a command never waits for a busy loop nor stalls it for long.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_launch.h>
#include <rte_lcore.h>

#include "prompt.h"

/* How often "start" looks whether the poller polls yet. */
#define START_WAIT_NS 100000

int
tpcq_settings_init(struct tpcq_settings *s, const struct tpcq_params *p)
{
	s->p = *p;
	if (p->policy == NULL)
		return 0;
	if (strlen(p->policy) >= sizeof(s->policy))
		return -ENAMETOOLONG;
	strcpy(s->policy, p->policy);
	s->p.policy = s->policy;
	if (p->policy_args != NULL)
		s->p.policy_args = s->policy + (p->policy_args - p->policy);
	return 0;
}

void
tpcq_settings_copy(struct tpcq_settings *dst, const struct tpcq_settings *src)
{
	/* src->p.policy is NULL or src->policy: it always fits. */
	tpcq_settings_init(dst, &src->p);
}

static int
sample_alloc(struct tpcq_sample *m)
{
	memset(m, 0, sizeof(*m));
	m->latency = tpcq_hist_create();
	return m->latency != NULL ? 0 : -ENOMEM;
}

void
tpcq_sample_copy(struct tpcq_sample *dst, const struct tpcq_sample *src)
{
	struct tpcq_hist *h = dst->latency;

	memcpy(h, src->latency, sizeof(*h));
	*dst = *src;
	dst->latency = h;
}

int
tpcq_session_init(struct tpcq_session *s, const struct tpcq_params *p,
		  struct tpcq_devctx *dcs)
{
	char why[512];
	int r;

	memset(s, 0, sizeof(*s));
	s->dcs = dcs;
	if (rte_lcore_count() < 2) {
		fprintf(stderr, TPCQ_PROG ": needs 2 lcores (main: prompt, worker: "
			"generator), the EAL has %u; give at least two, e.g. -l 0-1 "
			"before '--'\n", rte_lcore_count());
		return -EINVAL;
	}
	s->worker = rte_get_next_lcore(-1, 1, 0);
	if (tpcq_settings_init(&s->next, p) != 0) {
		fprintf(stderr, TPCQ_PROG ": --policy: longer than the prompt's %d "
			"bytes\n", TPCQ_PROMPT_POLICY_MAX - 1);
		return -ENAMETOOLONG;
	}
	/*
	 * A policy in every mode: "set mode adaptive" may then switch a running
	 * poll group, which got its policy when it was created.
	 */
	if (s->next.p.policy == NULL) {
		strcpy(s->next.policy, TPCQ_POLICY_DEFAULT);
		r = tpcq_params_policy(&s->next.p, s->next.policy, why, sizeof(why));
		if (r != 0) {
			fprintf(stderr, TPCQ_PROG ": %s\n", why);
			return r;
		}
	}
	if (sample_alloc(&s->base) != 0 || sample_alloc(&s->last) != 0 ||
	    sample_alloc(&s->now) != 0) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		tpcq_session_fini(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->group_lock, NULL);
	s->ready = true;
	return 0;
}

void
tpcq_session_fini(struct tpcq_session *s)
{
	if (s->running)
		tpcq_session_stop(s);
	if (s->have_run)
		tpcq_run_release(&s->tr, &s->res);
	if (s->ready)
		pthread_mutex_destroy(&s->group_lock);
	s->ready = false;
	tpcq_hist_free(s->base.latency);
	tpcq_hist_free(s->last.latency);
	tpcq_hist_free(s->now.latency);
	s->base.latency = s->last.latency = s->now.latency = NULL;
}

static void *
poller_main(void *arg)
{
	struct tpcq_session *s = arg;

	if (pthread_getcpuclockid(pthread_self(), &s->poller_clock) != 0)
		s->poller_clock = CLOCK_THREAD_CPUTIME_ID;
	s->poller_start_ns = tpcq_now_ns(CLOCK_MONOTONIC);
	s->poller_start_cpu_ns = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID);
	tpcq_poller_run(&s->tr, &s->res);
	s->poller_end_cpu_ns = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID);
	s->poller_end_ns = tpcq_now_ns(CLOCK_MONOTONIC);
	__atomic_store_n(&s->poller_done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The run's generator stops; the poller drains what was posted and returns. */
static void
run_join(struct tpcq_session *s)
{
	__atomic_store_n(&s->tr.stop, true, __ATOMIC_RELAXED);
	pthread_join(s->poller, NULL);
	rte_eal_wait_lcore(s->worker);
	s->running = false;
}

int
tpcq_session_start(struct tpcq_session *s)
{
	const struct timespec pause = { .tv_nsec = START_WAIT_NS };
	unsigned int k;
	int r;

	if (s->running) {
		printf("a run is going: 'stop' it first\n");
		return -EBUSY;
	}
	if (s->have_run)
		tpcq_run_release(&s->tr, &s->res);
	s->have_run = false;
	tpcq_settings_copy(&s->cur, &s->next);
	/* The CQs live as long as the session: each run counts from zero. */
	for (k = 0; k < s->cur.p.cqs; k++)
		cqpoll_cq_stats_reset(s->dcs[k].cq);
	/* No end of its own: the run ends at "stop". */
	if (tpcq_run_prepare(&s->tr, &s->res, &s->cur.p, s->dcs, UINT64_MAX) != 0)
		return -ENOMEM;
	s->tr.group_lock = &s->group_lock;
	s->poller_done = false;
	s->mode_changes = 0;
	s->start_ns = tpcq_now_ns(CLOCK_MONOTONIC);

	r = rte_eal_remote_launch(tpcq_gen_main, &s->tr, s->worker);
	if (r != 0) {
		printf("cannot launch the generator on lcore %u: %s\n", s->worker,
		       strerror(-r));
		tpcq_run_release(&s->tr, &s->res);
		return r;
	}
	r = rte_ctrl_thread_create(&s->poller, "tpcq-poller", NULL, poller_main, s);
	if (r != 0) {
		printf("cannot create the poller thread: %s\n", strerror(-r));
		__atomic_store_n(&s->tr.stop, true, __ATOMIC_RELAXED);
		rte_eal_wait_lcore(s->worker);
		tpcq_run_release(&s->tr, &s->res);
		return r;
	}
	s->running = true;
	s->have_run = true;
	/*
	 * Until the poller polls or failed: a "set mode" right after "start"
	 * then finds the run's group, and the counters their clock.
	 */
	while (!__atomic_load_n(&s->tr.start, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&s->poller_done, __ATOMIC_ACQUIRE))
		nanosleep(&pause, NULL);

	memset(s->base.latency, 0, sizeof(*s->base.latency));
	s->base.ns = s->poller_start_ns;
	s->base.cpu_ns = s->poller_start_cpu_ns;
	s->base.completions = 0;
	s->base.events = 0;
	s->base.spurious_events = 0;
	s->base.lost_wakeups = 0;
	s->base.wait_timeouts = 0;
	tpcq_sample_copy(&s->last, &s->base);
	s->cleared = false;
	return 0;
}

/* The poller returned by itself: an error, or a signal. */
bool
tpcq_session_ended(const struct tpcq_session *s)
{
	return s->running && __atomic_load_n(&s->poller_done, __ATOMIC_ACQUIRE);
}

int
tpcq_session_stop(struct tpcq_session *s)
{
	int r;

	if (!s->running) {
		printf("no run is going: 'start' begins one\n");
		return -EINVAL;
	}
	run_join(s);
	tpcq_run_collect(&s->tr, &s->res);
	/* The table's duration: from "start" to the end of the poller's drain. */
	s->cur.p.duration_s = (double)(s->poller_end_ns - s->start_ns) /
		(double)TPCQ_NS_PER_S;
	if (s->mode_changes > 0)
		printf("mode changed %u time%s during the run; the table shows the "
		       "last mode\n", s->mode_changes, s->mode_changes > 1 ? "s" : "");
	r = tpcq_run_report(&s->cur.p, &s->tr, &s->res);
	if (r > s->status)
		s->status = r;
	return r;
}

/*
 * The group's lost wake-ups: from the group while it exists, else from the
 * result the poller wrote before clearing tr.groups[0] under the same lock.
 */
static uint64_t
group_lost_wakeups(struct tpcq_session *s)
{
	struct cqpoll_group_stats gs;
	struct cqpoll_group *g;
	uint64_t n = 0;

	pthread_mutex_lock(&s->group_lock);
	g = __atomic_load_n(&s->tr.groups[0], __ATOMIC_SEQ_CST);
	if (g != NULL) {
		if (cqpoll_group_stats_get(g, &gs) == 0)
			n = gs.lost_wakeups;
	} else if (s->res.grouped) {
		n = s->res.group.lost_wakeups;
	}
	pthread_mutex_unlock(&s->group_lock);
	return n;
}

void
tpcq_session_sample(struct tpcq_session *s, struct tpcq_sample *m)
{
	struct cqpoll_cq_stats cq;
	struct timespec ts;
	bool done;

	done = !s->running || __atomic_load_n(&s->poller_done, __ATOMIC_ACQUIRE);
	/* A thread's CPU clock goes with the thread: then it had finished. */
	if (!done && clock_gettime(s->poller_clock, &ts) != 0)
		done = __atomic_load_n(&s->poller_done, __ATOMIC_ACQUIRE);
	if (done) {
		m->ns = s->poller_end_ns;
		m->cpu_ns = s->poller_end_cpu_ns;
	} else {
		m->ns = tpcq_now_ns(CLOCK_MONOTONIC);
		m->cpu_ns = (uint64_t)ts.tv_sec * TPCQ_NS_PER_S + (uint64_t)ts.tv_nsec;
	}
	m->completions = __atomic_load_n(&s->tr.consumed, __ATOMIC_ACQUIRE);
	tpcq_cq_stats_sum(&s->tr, &cq);
	m->events = cq.events;
	m->spurious_events = cq.spurious_events;
	m->wait_timeouts = cq.wait_timeouts;
	m->lost_wakeups = cq.lost_wakeups + group_lost_wakeups(s);
	tpcq_hist_snapshot(m->latency, s->res.latency);
}

/*
 * Returns 1 when the running poll group switched to mode, 0 when no run can
 * switch (none runs, or it polls one CQ in its own loop), -EBUSY when the
 * run is ending, or the -errno of cqpoll_group_set_mode().
 */
int
tpcq_session_mode_live(struct tpcq_session *s, enum tpcq_mode mode)
{
	struct cqpoll_group *g;
	int r = -EBUSY;

	if (!s->running || !s->res.grouped)
		return 0;
	pthread_mutex_lock(&s->group_lock);
	g = __atomic_load_n(&s->tr.groups[0], __ATOMIC_SEQ_CST);
	/* After the generator stopped the group drains busy: leave it. */
	if (g != NULL && !__atomic_load_n(&s->tr.gen_done, __ATOMIC_ACQUIRE)) {
		r = cqpoll_group_set_mode(g, tpcq_group_mode(mode));
		if (r == 0)
			r = 1;
	}
	pthread_mutex_unlock(&s->group_lock);
	if (r == 1) {
		s->cur.p.mode = mode;
		s->mode_changes++;
	}
	return r;
}
