/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SPDK's rule, a yardstick of the consolidating scheduler: the placement
 * rule of SPDK's dynamic scheduler (lib/scheduler/scheduler_dynamic.c),
 * with a poll group in the place of an SPDK thread and an lcore in the
 * place of a reactor. Its facts, written anew here:
 * - a thread under 20 % busy (load limit) goes to the main core, whatever
 *   that core holds;
 * - a busier thread goes to the main core, else to a lower core than its
 *   own, if that core stays under 80 % busy with it (core limit); a core
 *   with no thread takes any;
 * - a core of more than one thread at or above 80 % sheds: its threads go
 *   to any core they fit on, else to the least busy core;
 * - a core that was at least 95 % busy (core busy) and falls under 80 % by
 *   a move is counted at 80 % for the rest of the period, so that nothing
 *   moves onto it;
 * - a core left with no thread goes to interrupt mode (parked).
 * Threads are visited core by core, in the order they sit on their core.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "lab_sched.h"

#define SPDK_LOAD_LIMIT 0.20
#define SPDK_CORE_LIMIT 0.80
#define SPDK_CORE_BUSY 0.95
/* Its main core: where idle threads gather. */
#define SPDK_MAIN_LCORE 0U

struct spdk_state {
	const double *load;
	uint32_t *lcore_of;
	double busy[TPCQ_LAB_SCHED_LCORES_MAX];
	uint32_t count[TPCQ_LAB_SCHED_LCORES_MAX];
	uint32_t nb_lcores;
};

static void
spdk_move(struct spdk_state *st, uint32_t g, uint32_t dst)
{
	uint32_t src = st->lcore_of[g];
	double was = st->busy[src];

	if (src == dst)
		return;
	st->busy[dst] += st->load[g];
	st->busy[src] -= st->load[g];
	if (st->busy[src] < 0)
		st->busy[src] = 0;
	if (was >= SPDK_CORE_BUSY && st->busy[src] < SPDK_CORE_LIMIT)
		st->busy[src] = SPDK_CORE_LIMIT;
	st->count[dst]++;
	st->count[src]--;
	st->lcore_of[g] = dst;
}

static bool
spdk_at_limit(const struct spdk_state *st, uint32_t c)
{
	return st->count[c] > 1 && st->busy[c] >= SPDK_CORE_LIMIT;
}

static bool
spdk_fits(const struct spdk_state *st, uint32_t g, uint32_t c)
{
	if (st->lcore_of[g] == c || st->count[c] == 0 || st->busy[c] == 0)
		return true;
	if (st->busy[c] + st->load[g] > 1)
		return false;
	return st->busy[c] + st->load[g] < SPDK_CORE_LIMIT;
}

static uint32_t
spdk_best(const struct spdk_state *st, uint32_t g)
{
	uint32_t cur = st->lcore_of[g], least = cur, i;
	bool at_limit = spdk_at_limit(st, cur);

	for (i = 0; i < st->nb_lcores; i++) {
		if (st->busy[i] < st->busy[least])
			least = i;
		if (i == cur || !spdk_fits(st, g, i))
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
tpcq_lab_spdk_step(uint32_t nb_lcores, uint32_t nb_groups, const double *load,
		   uint32_t *lcore_of)
{
	static uint32_t order[TPCQ_LAB_SCHED_GROUPS_MAX];
	struct spdk_state st = { .load = load, .lcore_of = lcore_of,
				 .nb_lcores = nb_lcores };
	uint32_t g, c, n = 0;

	for (g = 0; g < nb_groups; g++) {
		st.busy[lcore_of[g]] += load[g];
		st.count[lcore_of[g]]++;
	}
	/* Core by core, as its walk over each core's threads. */
	for (c = 0; c < nb_lcores; c++)
		for (g = 0; g < nb_groups; g++)
			if (lcore_of[g] == c)
				order[n++] = g;
	for (g = 0; g < n; g++)
		if (load[order[g]] < SPDK_LOAD_LIMIT)
			spdk_move(&st, order[g], SPDK_MAIN_LCORE);
	for (g = 0; g < n; g++)
		if (load[order[g]] >= SPDK_LOAD_LIMIT)
			spdk_move(&st, order[g], spdk_best(&st, order[g]));
}
