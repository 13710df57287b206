/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SPDK's dynamic scheduler, a yardstick of the consolidating scheduler: its
 * balance step (module/scheduler/dynamic/scheduler_dynamic.c), with a poll
 * group in the place of an SPDK thread and an lcore in the place of a
 * reactor, on the busy and idle time of the last period as SPDK counts it.
 * Its facts, written anew here:
 * - a thread's load is busy / (busy + idle) in whole percent, busy and idle
 *   being the time of its own polls that did and did not find work;
 * - a core's busy and idle are its reactor's over the period; a reactor in
 *   interrupt mode counts neither;
 * - pass 1: a thread under 20 % (load limit) goes to the main core, whatever
 *   that core holds;
 * - pass 2: a busier thread goes to the first core that fits it, in core
 *   order: the main core, else a lower core than its own (unless it is on
 *   the main core), else, when its own core is at its limit (more than one
 *   thread and at least 80 % busy), any; a core at its limit that finds
 *   none sends the thread to the least busy core;
 * - a core fits a thread if it is the thread's own, counts no time
 *   (interrupt mode), holds no thread, or has the thread's busy time idle
 *   and stays under 80 % (core limit) with it;
 * - a move carries the thread's busy time from its core's busy to its idle
 *   and the other way on the new core; a core that was at least 95 % busy
 *   (core busy) and falls under 80 % by a move is counted at 80 %, so that
 *   nothing moves onto it in this period;
 * - threads are visited core by core, in the order they sit on their core.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "lab_sched.h"

#define SPDK_LOAD_LIMIT 20
#define SPDK_CORE_LIMIT 80
#define SPDK_CORE_BUSY 95
/* Its main core (the scheduling reactor's): where idle threads gather. */
#define SPDK_MAIN_LCORE 0U

struct spdk_core {
	uint64_t busy, idle;
	uint32_t count;
};

struct spdk_state {
	const struct tpcq_lab_spdk_in *in;
	uint32_t *lcore_of;
	struct spdk_core core[TPCQ_LAB_SCHED_LCORES_MAX];
};

static uint32_t
busy_pct(uint64_t busy, uint64_t idle)
{
	return busy + idle == 0 ? 0 : (uint32_t)(busy * 100 / (busy + idle));
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void
spdk_move(struct spdk_state *st, uint32_t g, uint32_t dst)
{
	struct spdk_core *d = &st->core[dst], *s = &st->core[st->lcore_of[g]];
	uint64_t b = st->in->busy[g], total;
	uint32_t was = busy_pct(s->busy, s->idle);

	if (d == s)
		return;
	d->busy += b;
	d->idle -= min_u64(d->idle, b);
	d->count++;
	s->busy -= min_u64(s->busy, b);
	s->idle += b;
	if (was >= SPDK_CORE_BUSY && busy_pct(s->busy, s->idle) < SPDK_CORE_LIMIT) {
		total = s->busy + s->idle;
		s->busy = total * SPDK_CORE_LIMIT / 100;
		s->idle = total - s->busy;
	}
	s->count--;
	st->lcore_of[g] = dst;
}

static bool
spdk_at_limit(const struct spdk_state *st, uint32_t c)
{
	const struct spdk_core *k = &st->core[c];

	return k->count > 1 && k->busy != 0 &&
	       busy_pct(k->busy, k->idle) >= SPDK_CORE_LIMIT;
}

static bool
spdk_fits(const struct spdk_state *st, uint32_t g, uint32_t c)
{
	const struct spdk_core *k = &st->core[c];
	uint64_t b = st->in->busy[g];

	if (st->lcore_of[g] == c || k->busy + k->idle == 0 || k->count == 0)
		return true;
	if (k->idle < b)
		return false;
	return busy_pct(k->busy + b, k->idle - b) < SPDK_CORE_LIMIT;
}

static uint32_t
spdk_best(const struct spdk_state *st, uint32_t g)
{
	uint32_t cur = st->lcore_of[g], least = cur, i;
	bool at_limit = spdk_at_limit(st, cur);

	for (i = 0; i < st->in->nb_lcores; i++) {
		if (st->core[i].busy < st->core[least].busy)
			least = i;
		if (!spdk_fits(st, g, i) || i == cur)
			continue;
		if (i == SPDK_MAIN_LCORE)
			return i;
		if (i < cur && cur != SPDK_MAIN_LCORE)
			return i;
		if (at_limit)
			return i;
	}
	return at_limit ? least : cur;
}

void
tpcq_lab_spdk_balance(const struct tpcq_lab_spdk_in *in, uint32_t *lcore_of)
{
	struct spdk_state st = { .in = in, .lcore_of = lcore_of };
	uint32_t i, c, g;

	for (c = 0; c < in->nb_lcores; c++) {
		st.core[c].busy = in->core_busy[c];
		st.core[c].idle = in->core_idle[c];
	}
	for (g = 0; g < in->nb_groups; g++)
		st.core[lcore_of[g]].count++;
	/*
	 * Both passes visit the threads as they sat when the step began (its
	 * list of each core's threads is taken before the passes).
	 */
	for (i = 0; i < in->nb_groups; i++) {
		g = in->order[i];
		if (busy_pct(in->busy[g], in->idle[g]) < SPDK_LOAD_LIMIT)
			spdk_move(&st, g, SPDK_MAIN_LCORE);
	}
	for (i = 0; i < in->nb_groups; i++) {
		g = in->order[i];
		if (busy_pct(in->busy[g], in->idle[g]) >= SPDK_LOAD_LIMIT)
			spdk_move(&st, g, spdk_best(&st, g));
	}
}
