/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The consolidating scheduler: pack groups onto few lcores at low load,
 * spread them at high load, with a gap between the two limits and a hold
 * so that a load near a limit does not move groups back and forth.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cqpoll_group.h"
#include "cqpoll_log_private.h"
#include "cqpoll_sched.h"

#define SCHED_PACK_PCT_DEFAULT 40
#define SCHED_SPREAD_PCT_DEFAULT 70
#define SCHED_HOLD_DEFAULT 3

struct sched_rank {
	double load;
	uint32_t g;
};

struct cqpoll_sched {
	uint32_t nb_lcores, nb_groups;
	double pack, spread;       /* fractions of an lcore */
	uint32_t hold;
	uint32_t calm;             /* steps in a row an lcore could be emptied */
	uint32_t *lcore_of;        /* by group */
	uint32_t *count;           /* groups by lcore */
	double *load;              /* by group, the last given */
	double *lsum;              /* by lcore, during a step */
	uint32_t *order;           /* groups by load, largest first (a step's) */
	double *trial;             /* lsum while a pack is tried */
	uint32_t *trial_to;        /* by group of the emptied lcore */
	struct sched_rank *rank;   /* sort_groups()'s room */
};

struct cqpoll_sched *
cqpoll_sched_create(const struct cqpoll_sched_conf *conf)
{
	struct cqpoll_sched *s;
	uint32_t pack, spread, i;

	if (conf == NULL || conf->nb_lcores == 0 || conf->nb_groups == 0 ||
	    conf->nb_lcores > CQPOLL_SCHED_LCORES_MAX ||
	    conf->nb_groups > CQPOLL_SCHED_GROUPS_MAX) {
		CQPOLL_LOG_LIB(ERR, "sched create: %s", conf == NULL ?
			       "NULL configuration" :
			       "lcores must be 1..1024 and groups 1..65536");
		errno = EINVAL;
		return NULL;
	}
	pack = conf->pack_pct != 0 ? conf->pack_pct : SCHED_PACK_PCT_DEFAULT;
	spread = conf->spread_pct != 0 ? conf->spread_pct :
		 SCHED_SPREAD_PCT_DEFAULT;
	if (pack > 100 || spread > 100 || pack > spread) {
		CQPOLL_LOG_LIB(ERR, "sched create: pack_pct %u and spread_pct %u: "
			       "each at most 100, pack_pct at most spread_pct",
			       pack, spread);
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	s->nb_lcores = conf->nb_lcores;
	s->nb_groups = conf->nb_groups;
	s->pack = pack / 100.0;
	s->spread = spread / 100.0;
	s->hold = conf->hold == 0 ? SCHED_HOLD_DEFAULT :
		  conf->hold == CQPOLL_SCHED_HOLD_NONE ? 0 : conf->hold;
	s->lcore_of = calloc(s->nb_groups, sizeof(*s->lcore_of));
	s->load = calloc(s->nb_groups, sizeof(*s->load));
	s->order = calloc(s->nb_groups, sizeof(*s->order));
	s->trial_to = calloc(s->nb_groups, sizeof(*s->trial_to));
	s->rank = calloc(s->nb_groups, sizeof(*s->rank));
	s->count = calloc(s->nb_lcores, sizeof(*s->count));
	s->lsum = calloc(s->nb_lcores, sizeof(*s->lsum));
	s->trial = calloc(s->nb_lcores, sizeof(*s->trial));
	if (s->lcore_of == NULL || s->load == NULL || s->order == NULL ||
	    s->trial_to == NULL || s->rank == NULL || s->count == NULL ||
	    s->lsum == NULL || s->trial == NULL) {
		cqpoll_sched_destroy(s);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < s->nb_groups; i++) {
		s->lcore_of[i] = i % s->nb_lcores;
		s->count[i % s->nb_lcores]++;
	}
	return s;
}

void
cqpoll_sched_destroy(struct cqpoll_sched *s)
{
	if (s == NULL)
		return;
	free(s->lcore_of);
	free(s->load);
	free(s->order);
	free(s->trial_to);
	free(s->rank);
	free(s->count);
	free(s->lsum);
	free(s->trial);
	free(s);
}

int
cqpoll_sched_load_set(struct cqpoll_sched *s, uint32_t group, double busy)
{
	if (s == NULL || group >= s->nb_groups || !(busy >= 0 && busy <= 1)) {
		CQPOLL_LOG_LIB(ERR, "sched load set: %s", s == NULL ?
			       "NULL scheduler" : group >= s->nb_groups ?
			       "no such group" : "load must be 0 to 1");
		return -EINVAL;
	}
	s->load[group] = busy;
	return 0;
}

int
cqpoll_sched_load_from_stats(const struct cqpoll_group_stats *prev,
			     const struct cqpoll_group_stats *cur,
			     uint64_t interval_ns, double *busy)
{
	uint64_t polls, found, busy_ns;
	double b;

	if (prev == NULL || cur == NULL || busy == NULL || interval_ns == 0 ||
	    cur->polls < prev->polls || cur->busy_ns < prev->busy_ns) {
		CQPOLL_LOG_LIB(ERR, "sched load from stats: %s",
			       interval_ns == 0 ? "empty interval" :
			       "NULL argument, or counters reset in between");
		return -EINVAL;
	}
	polls = cur->polls - prev->polls;
	/*
	 * A snapshot's empty polls are its polls less the polls that found
	 * work, read before them: empty polls may step back between two
	 * snapshots, but this difference, taken modulo 2^64, is the found
	 * polls' own and never wraps. A snapshot that caught an iteration
	 * between its two counts may find more than it polled: at most all.
	 */
	found = polls - (cur->empty_polls - prev->empty_polls);
	if (found > polls)
		found = polls;
	busy_ns = cur->busy_ns - prev->busy_ns;
	b = polls == 0 ? 0 : (double)busy_ns * ((double)found / polls) /
			     (double)interval_ns;
	*busy = b > 1 ? 1 : b;
	return 0;
}

static int
by_load_desc(const void *a, const void *b)
{
	const struct sched_rank *x = a, *y = b;

	if (x->load != y->load)
		return x->load > y->load ? -1 : 1;
	return x->g < y->g ? -1 : x->g > y->g;
}

/* The groups by load, largest first, ties by number: deterministic. */
static void
sort_groups(struct cqpoll_sched *s)
{
	uint32_t g;

	for (g = 0; g < s->nb_groups; g++)
		s->rank[g] = (struct sched_rank){ s->load[g], g };
	qsort(s->rank, s->nb_groups, sizeof(*s->rank), by_load_desc);
	for (g = 0; g < s->nb_groups; g++)
		s->order[g] = s->rank[g].g;
}

static void
move(struct cqpoll_sched *s, uint32_t g, uint32_t to,
     struct cqpoll_sched_move *moves, uint32_t *n)
{
	uint32_t from = s->lcore_of[g];

	moves[*n] = (struct cqpoll_sched_move){ g, from, to };
	(*n)++;
	s->count[from]--;
	s->count[to]++;
	s->lsum[from] -= s->load[g];
	s->lsum[to] += s->load[g];
	s->lcore_of[g] = to;
}

/*
 * Where a group shed by lcore c goes: the least loaded active lcore that
 * stays within the pack limit with it, else the lowest parked lcore, else
 * the least loaded lcore if it stays at most as loaded as the old one with
 * it. -1: nowhere.
 */
static int
spread_target(const struct cqpoll_sched *s, uint32_t c, uint32_t g)
{
	int best = -1, parked = -1, least = -1;
	uint32_t t;

	for (t = 0; t < s->nb_lcores; t++) {
		if (t == c)
			continue;
		if (s->count[t] == 0) {
			if (parked < 0)
				parked = (int)t;
			continue;
		}
		if (s->lsum[t] + s->load[g] <= s->pack &&
		    (best < 0 || s->lsum[t] < s->lsum[best]))
			best = (int)t;
		if (least < 0 || s->lsum[t] < s->lsum[least])
			least = (int)t;
	}
	if (best >= 0)
		return best;
	if (parked >= 0)
		return parked;
	/* Only if the new lcore stays below the old: no swap back next step. */
	if (least >= 0 && s->lsum[least] + s->load[g] <= s->lsum[c] - s->load[g])
		return least;
	return -1;
}

/* Shed groups of every lcore above the spread limit; true if any moved. */
static bool
spread(struct cqpoll_sched *s, struct cqpoll_sched_move *moves, uint32_t max,
       uint32_t *n)
{
	uint32_t c, i, g;
	bool moved = false;
	int t;

	for (c = 0; c < s->nb_lcores; c++) {
		if (s->lsum[c] <= s->spread)
			continue;
		/* Largest first: fewest moves to get back under the limit. */
		for (i = 0; i < s->nb_groups && *n < max; i++) {
			g = s->order[i];
			if (s->lcore_of[g] != c || s->load[g] == 0)
				continue;
			if (s->lsum[c] <= s->pack || s->count[c] <= 1)
				break;
			t = spread_target(s, c, g);
			if (t < 0)
				continue;
			move(s, g, (uint32_t)t, moves, n);
			moved = true;
		}
	}
	return moved;
}

/*
 * Whether lcore c's groups fit on the other active lcores within the pack
 * limit (best fit, largest first): then trial_to says where each goes.
 */
static bool
can_empty(struct cqpoll_sched *s, uint32_t c)
{
	uint32_t t, i, g;
	int best;

	for (t = 0; t < s->nb_lcores; t++)
		s->trial[t] = s->lsum[t];
	for (i = 0; i < s->nb_groups; i++) {
		g = s->order[i];
		if (s->lcore_of[g] != c)
			continue;
		best = -1;
		for (t = 0; t < s->nb_lcores; t++) {
			if (t == c || s->count[t] == 0 ||
			    s->trial[t] + s->load[g] > s->pack)
				continue;
			/* Best fit: the fullest that takes it keeps the rest free. */
			if (best < 0 || s->trial[t] > s->trial[best])
				best = (int)t;
		}
		if (best < 0)
			return false;
		s->trial[best] += s->load[g];
		s->trial_to[g] = (uint32_t)best;
	}
	return true;
}

/*
 * The active lcore with the least load; -1: one or none. Loads within 1 %
 * of an lcore count as equal, and ties go to the highest: groups gather on
 * the lowest lcores, as SPDK's scheduler gathers threads on its main core
 * and lower ones, so that at low load the lcore that runs the scheduler
 * (lcore 0, say) keeps the groups and the others sleep.
 */
static int
least_loaded(const struct cqpoll_sched *s)
{
	uint32_t c, active = 0;
	uint64_t pct, best = 0;
	int least = -1;

	for (c = 0; c < s->nb_lcores; c++) {
		if (s->count[c] == 0)
			continue;
		active++;
		pct = (uint64_t)(s->lsum[c] * 100);
		if (least < 0 || pct <= best) {
			least = (int)c;
			best = pct;
		}
	}
	return active > 1 ? least : -1;
}

/*
 * Once the least loaded lcore could be emptied for hold steps in a row,
 * empty it, then the next least loaded, while they can be: at low load the
 * placement goes to its fewest lcores in one step.
 */
static void
pack(struct cqpoll_sched *s, struct cqpoll_sched_move *moves, uint32_t max,
     uint32_t *n)
{
	uint32_t i, g;
	int least = least_loaded(s);

	if (least < 0 || !can_empty(s, (uint32_t)least)) {
		s->calm = 0;
		return;
	}
	if (s->calm < s->hold) {
		s->calm++;
		return;
	}
	s->calm = 0;
	do {
		if (max - *n < s->count[least])
			return;
		for (i = 0; i < s->nb_groups; i++) {
			g = s->order[i];
			if (s->lcore_of[g] == (uint32_t)least)
				move(s, g, s->trial_to[g], moves, n);
		}
		least = least_loaded(s);
	} while (least >= 0 && can_empty(s, (uint32_t)least));
}

int
cqpoll_sched_step(struct cqpoll_sched *s, struct cqpoll_sched_move *moves,
		  uint32_t max)
{
	uint32_t c, g, n = 0;

	if (s == NULL || (moves == NULL && max > 0)) {
		CQPOLL_LOG_LIB(ERR, "sched step: %s", s == NULL ?
			       "NULL scheduler" : "NULL moves");
		return -EINVAL;
	}
	for (c = 0; c < s->nb_lcores; c++)
		s->lsum[c] = 0;
	for (g = 0; g < s->nb_groups; g++)
		s->lsum[s->lcore_of[g]] += s->load[g];
	sort_groups(s);
	if (spread(s, moves, max, &n))
		s->calm = 0;
	else
		pack(s, moves, max, &n);
	return (int)n;
}

int
cqpoll_sched_lcore(const struct cqpoll_sched *s, uint32_t group)
{
	if (s == NULL || group >= s->nb_groups)
		return -EINVAL;
	return (int)s->lcore_of[group];
}

int
cqpoll_sched_parked(const struct cqpoll_sched *s, uint32_t lcore)
{
	if (s == NULL || lcore >= s->nb_lcores)
		return -EINVAL;
	return s->count[lcore] == 0;
}
