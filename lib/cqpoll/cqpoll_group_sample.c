/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the group measures of its sleeps: the thread CPU a sampled sleep
 * costs (cqpoll_group_sleep_cpu_get(), and the policy's sleep-CPU hook),
 * the wake-up latency of the first completion seen after a sleep (the
 * histogram of the group's counters, and the policy's wake_cost), and the
 * sleep check of emulated devices: is a completion stranded as the group
 * goes to sleep? Nothing here decides anything.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "cqpoll_clock.h"
#include "cqpoll_group_run_private.h"
#include "cqpoll_private.h"
#include "cqpoll_sleep_check.h"
#include "cqpoll_mutant.h"

/* Members the sleep check judges per sleep (see cqpoll_sleep_check.h). */
#define GROUP_ORACLE_CHECKS 64

/*
 * Ground truth of emulated devices: is a completion stranded right now? A
 * sleep checks at most GROUP_ORACLE_CHECKS members, taking turns, so that the
 * check does not make a wake-up cost grow with the size of a large group;
 * groups up to that size are checked whole at every sleep.
 */
void
cqpoll_group_check_oracle(struct cqpoll_group *g)
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
 * learns the cost at once) and then one in SLEEP_CPU_EVERY: 1/32 of a call
 * per sleep, below what a peer's own wait would notice (strace -c counts in
 * doc/guides/poll-group.md), and still a sample every 64 ms at 1000 sleeps
 * a second. A sampled transition that finds work and does not sleep is not
 * timed.
 */
#define SLEEP_CPU_FIRST 8
#define SLEEP_CPU_EVERY 64

/* A transition begins: start the CPU clock if this one is sampled. */
void
cqpoll_group_sleep_cpu_start(struct cqpoll_group *g)
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
void
cqpoll_group_sleep_cpu_end(struct cqpoll_group *g)
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
static inline bool
host_timestamp(const struct cqpoll_completion *c)
{
	return (c->flags & (CQPOLL_COMPLETION_F_TIMESTAMP |
			    CQPOLL_COMPLETION_F_TIMESTAMP_RAW)) != 0;
}
#else
static inline bool
host_timestamp(const struct cqpoll_completion *c)
{
	return (c->flags & CQPOLL_COMPLETION_F_TIMESTAMP) != 0;
}
#endif


/*
 * @p c is the first completion a woken member gave: if a host clock stamped
 * it during the sleep that began at @p t_sleep, it measures the wake-up.
 */
void
cqpoll_group_wake_seen(struct cqpoll_group *g, const struct cqpoll_completion *c,
		       uint64_t t_sleep, bool *measured)
{
	uint64_t now;

	if (!host_timestamp(c) || c->timestamp < t_sleep)
		return;
	now = cqpoll_now_ns();
	*measured = true;
	record_wake_latency(g, now > c->timestamp ? now - c->timestamp : 0);
}

int
cqpoll_group_sleep_cpu_get(const struct cqpoll_group *g, uint64_t *cpu_ns,
			   uint64_t *sleeps_timed)
{
	if (g == NULL)
		return -EINVAL;
	if (cpu_ns != NULL)
		*cpu_ns = __atomic_load_n(&g->sleep_cpu_ns, __ATOMIC_RELAXED);
	if (sleeps_timed != NULL)
		*sleeps_timed = __atomic_load_n(&g->sleeps_timed, __ATOMIC_RELAXED);
	return 0;
}
