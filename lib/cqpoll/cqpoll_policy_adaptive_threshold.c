/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive policy's threshold: the cost of a sleep, and the threshold B
 * of least expected cost per unit of time over the silences of its
 * histogram, which forgets by time (doc/guides/policies.md).
 */

#include "cqpoll_mutant.h"
#include "cqpoll_policy_adaptive_private.h"

/*
 * The cost of a sleep, in ns of CPU: mult x (penalty x D + C), D the
 * latency it adds to the completions it delays, C its CPU. D is the larger
 * of W x max(1, W / gap) (the first arrival and, when wake-ups outlast
 * gaps, those during the wake-up) and what sleeps were measured to add;
 * before two arrivals, W. Saturates.
 */
uint64_t
cqpoll_adaptive_sleep_worth_wide(const struct adaptive_state *s)
{
	unsigned __int128 w = s->wake_ns;

	if (s->gap_ns != 0 && s->wake_ns > s->gap_ns)
		w = w * s->wake_ns / s->gap_ns;
	if (s->delay_ns > w)
		w = s->delay_ns;
	w = (w * s->penalty + s->sleep_cpu_ns) * s->mult;
	return w > UINT64_MAX ? UINT64_MAX : (uint64_t)w;
}

/* The running sums of cqpoll_adaptive_choose() and its best candidate. */
struct weighing {
	unsigned __int128 time;      /* All silences' time (their spans). */
	unsigned __int128 below;     /* Time of the silences below the candidate. */
	uint64_t above;              /* Weight of the silences above it. */
	unsigned __int128 best_cost; /* The best candidate's cost and span. */
	unsigned __int128 best_span;
};

/* Candidate B = @p lo against the best so far (s->spin_ns, its cost in @p w). */
static inline void
weigh_one(struct adaptive_state *s, uint64_t sleep, uint64_t lo,
	  struct weighing *w)
{
	unsigned __int128 cost, span;

	cost = w->below + (unsigned __int128)w->above * (lo + sleep);
	span = w->time + (unsigned __int128)w->above * s->spread_ns;
	if (cost * w->best_span < w->best_cost * span) {
		w->best_cost = cost;
		w->best_span = span;
		s->spin_ns = lo;
	}
}

/*
 * Weigh the candidates B of the histogram against the best so far: s->spin_ns
 * is set to the best one found; @p w's sums end past the last one weighed.
 */
#if CQPOLL_MUTANT(ADAPTIVE_FULL)
/* Test build only: every bucket weighed, the reference. */
static void
weigh(struct adaptive_state *s, uint64_t sleep, struct weighing *w)
{
	const struct cqpoll_policy_gaps *h = &s->silences;
	unsigned int i;
	uint64_t lo;

	for (i = 0; i < CQPOLL_POLICY_GAP_BUCKETS && w->above != 0; i++) {
		lo = cqpoll_policy_gap_lower(i);
		if (lo > s->max_spin_ns)
			break;
		weigh_one(s, sleep, lo, w);
		w->below += (unsigned __int128)h->n[i] * cqpoll_policy_gap_mid(i);
		w->above -= h->n[i];
	}
}
#else
/*
 * Only the buckets that hold silences are visited (a few on most
 * traffic, of 256): the candidates from one such bucket's end to the
 * next one's lower bound have the same silences below and above them, so
 * the same span, and cost more the later they are; the first of them
 * wins against every other, so it alone is weighed. The choice is the one
 * of weighing every bucket: with all 256 weighed every 16 silences, at
 * UCX shared-memory ping-pong this cost some 1700 instructions a
 * completion and a few microseconds' stall every 16th.
 */
static inline void
weigh(struct adaptive_state *s, uint64_t sleep, struct weighing *w)
{
	const struct cqpoll_policy_gaps *h = &s->silences;
	unsigned int i, j;
	uint64_t lo;

	/* i: the candidate, the first bound past the last bucket weighed. */
	i = 0;
	for (j = cqpoll_policy_gap_next(h, 0);
	     j < CQPOLL_POLICY_GAP_BUCKETS && w->above != 0;
	     j = cqpoll_policy_gap_next(h, j + 1)) {
		lo = cqpoll_policy_gap_lower(i);
		if (lo > s->max_spin_ns)
			break;
		weigh_one(s, sleep, lo, w);
		/* Bucket j's own bound is past max_spin_us: no B covers it. */
		if (cqpoll_policy_gap_lower(j) > s->max_spin_ns)
			break;
		w->below += (unsigned __int128)h->n[j] * cqpoll_policy_gap_mid(j);
		w->above -= h->n[j];
		i = j + 1;
	}
}
#endif

/*
 * The threshold of least expected cost per unit of time over the silences
 * seen, measured from the last arrival: with threshold B, a silence s <= B
 * costs s of polling and lasts s; a longer one costs B and a sleep, and
 * lasts s plus the spread of the arrivals the sleep batches. Candidates: 0,
 * each bucket's lower bound up to max_spin_us, and polling through all; a
 * silence counts at its bucket's middle. Costs are compared as cross
 * products, exact in 128 bits.
 */
void
cqpoll_adaptive_choose(struct adaptive_state *s)
{
	const struct cqpoll_policy_gaps *h = &s->silences;
	unsigned __int128 time = 0, below, best_cost, best_span;
	unsigned __int128 now_cost, now_span;
	uint64_t above = h->total, sleep = adaptive_sleep_worth(s);
	struct weighing w;
	unsigned int j;

	s->chosen = 0;
	if (h->total < SILENCE_MIN * WEIGHT) {
		s->spin_ns = sleep;
		return;
	}
	for (j = cqpoll_policy_gap_next(h, 0); j < CQPOLL_POLICY_GAP_BUCKETS;
	     j = cqpoll_policy_gap_next(h, j + 1))
		time += (unsigned __int128)h->n[j] * cqpoll_policy_gap_mid(j);
	now_cost = (unsigned __int128)above * sleep;
	now_span = time + (unsigned __int128)above * s->spread_ns;
	w.time = time;
	w.below = 0;
	w.above = above;
	w.best_cost = now_cost;
	w.best_span = now_span;
	s->spin_ns = 0;
	weigh(s, sleep, &w);
	below = w.below;
	above = w.above;
	best_cost = w.best_cost;
	best_span = w.best_span;
	if (above == 0 && below * best_span < best_cost * time) {
		s->spin_ns = s->max_spin_ns;
		best_cost = below;
		best_span = time;
	}
	/*
	 * Near a tie the estimates decide, and they are noisy: a policy that
	 * flips between sleeping at once and polling pays for both and gets
	 * the p99 of the sleeps. Sleeping at once costs the least CPU.
	 */
	if (now_cost * best_span * TIE_DEN <= best_cost * TIE_NUM * now_span)
		s->spin_ns = 0;
}

/* adaptive_forget() found a half-life due: halve, maybe several times. */
void
cqpoll_adaptive_halve(struct adaptive_state *s, uint64_t now_ns)
{
	/* Several half-lives at once when the gap was long. */
	while (now_ns - s->halved_ns >= s->memory_ns &&
	       s->silences.total >= FORGET_MIN * WEIGHT) {
		cqpoll_policy_gap_halve(&s->silences);
		s->halved_ns += s->memory_ns;
	}
	s->halved_ns = now_ns;
	s->chosen = RECHOOSE;
}
