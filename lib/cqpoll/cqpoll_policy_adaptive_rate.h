/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_POLICY_ADAPTIVE_RATE_H
#define CQPOLL_POLICY_ADAPTIVE_RATE_H

/*
 * The adaptive policy's rate rule, its second expert: a budget from the
 * arrivals of the last 2 ms, and the running cost of each rule, so that the
 * cheaper of the two decides (doc/guides/policies.md). Inline: both run at
 * every arrival, in cqpoll_policy_adaptive.c alone.
 */

#include <string.h>

#include "cqpoll_policy_adaptive_private.h"

/*
 * The rate rule: the arrivals of the last 2 ms (since the first arrival,
 * before 2 ms); a budget of RATE_GAPS mean gaps when the rate x a sleep's
 * cost is over 1 (a sleep costs more than the polling to the next arrival,
 * on average), else 0. It follows a change of rate within 2 ms, where the
 * silences' histogram takes tens.
 */
static inline uint64_t
adaptive_rate_budget(struct adaptive_state *s, unsigned int k,
		     uint64_t now)
{
	uint64_t cur = now / RATE_SLOT_NS, n, span;
	unsigned __int128 worth;
	uint32_t *slot;

	if (cur - s->rate_slot >= RATE_SLOTS) {
		memset(s->rate_n, 0, sizeof(s->rate_n));
		s->rate_sum = 0;
	} else {
		while (s->rate_slot < cur) {
			slot = &s->rate_n[++s->rate_slot % RATE_SLOTS];
			s->rate_sum -= *slot;
			*slot = 0;
		}
	}
	s->rate_slot = cur;
	/* The sum kept as the slots change, not added up at every arrival. */
	slot = &s->rate_n[cur % RATE_SLOTS];
	s->rate_sum -= *slot;
	*slot += k;
	s->rate_sum += *slot;
	if (s->first_ns == 0)
		s->first_ns = now;
	n = s->rate_sum;
	span = now - s->first_ns;
	if (span > RATE_SLOTS * RATE_SLOT_NS)
		span = RATE_SLOTS * RATE_SLOT_NS;
	if (span < RATE_SLOT_NS)
		span = RATE_SLOT_NS;
	/* rate x cost > 1: n x cost > span. */
	worth = (unsigned __int128)n * adaptive_sleep_worth(s);
	return worth > span ? RATE_GAPS * span / n : 0;
}

/*
 * A silence of @g ns ended: what each rule would have paid for it (polling
 * up to its budget, then a sleep), into the running difference; the rule
 * that has cost less lately decides the next silences.
 */
static inline void
adaptive_experts_seen(struct adaptive_state *s, uint64_t g)
{
	uint64_t sleep = adaptive_sleep_worth(s);
	int64_t own, rate, d;

	own = (int64_t)(g <= s->own_b ? g : s->own_b + sleep);
	rate = (int64_t)(g <= s->rate_b ? g : s->rate_b + sleep);
	d = rate - own;
	s->diff += (d - s->diff) / (1 << EXPERT_SHIFT);
	/*
	 * On steady traffic the two differ by noise: the rate rule takes over
	 * only once it has been cheaper by half a sleep a silence (a quarter
	 * took pareto at 20000/s, penalty 1, from 1.000x the best fixed budget
	 * to 1.053x).
	 */
	if (s->diff < -(int64_t)(sleep / 2))
		s->use_rate = 1;
	else if (s->diff > 0)
		s->use_rate = 0;
}

#endif /* CQPOLL_POLICY_ADAPTIVE_RATE_H */
