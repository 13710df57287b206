/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_POLICY_ADAPTIVE_PRIVATE_H
#define CQPOLL_POLICY_ADAPTIVE_PRIVATE_H

/*
 * The adaptive policy's state and what its rules share, one file a rule:
 *   cqpoll_policy_adaptive.c            parameters, arrivals, the decision
 *   cqpoll_policy_adaptive_threshold.c  the cost of a sleep, the threshold
 *   cqpoll_policy_adaptive_burst.c      the burst rule (on/off traffic)
 *   cqpoll_policy_adaptive_rate.h       the rate rule and the two experts
 * Design: doc/guides/policies.md.
 */

#include <stdint.h>

#include "cqpoll_policy_gaps_private.h"
#include "cqpoll_policy_private.h"

/* Break-even: a gap longer than a wake-up saves CPU for the same latency. */
#define MULT_DEFAULT 1
#define WAKE_US_DEFAULT 30
/* A ns of latency weighs as much as a ns of CPU, as in the policy lab. */
#define PENALTY_DEFAULT 1
#define PENALTY_MAX 1000000
/* 0: at low rates, sleep at the first empty poll, as interrupt mode does. */
#define MIN_SPIN_US_DEFAULT 0
#define MAX_SPIN_US_DEFAULT 1000
#define PROBE_MS_DEFAULT 100
#define PARAM_MAX 10000000
/* Longer gaps are no longer "traffic": cap them so the EWMA recovers fast. */
#define GAP_CAP_NS 1000000000ull
/* The silences' histogram halves once it holds this many. */
#define SILENCE_MEM 1024
/* A silence counts this much, so that halving by time keeps fractions. */
#define WEIGHT 16
#define MEMORY_US_DEFAULT 20000
#define FORGET_MIN 128
/* Fewer silences than this say too little: the threshold is the sleep's cost. */
#define SILENCE_MIN 1
/* Silences between two choices of the threshold, at most. */
#define RECHOOSE 16
/* A sample of a sleep's delay counts at most this many times the mean. */
#define DELAY_CLAMP 8
/* Sleeping at once wins unless the best threshold is cheaper by 1/8. */
#define TIE_NUM 9
#define TIE_DEN 8
/* A silence this many mean gaps long ends a burst. */
#define BURST_GAPS 32
/* Bursts whose lengths say when the next one ends. */
#define BURSTS 8
/* The recent rate: arrivals in RATE_SLOTS slots of RATE_SLOT_NS, 2 ms. */
#define RATE_SLOT_NS 100000ull
#define RATE_SLOTS 20
/* The rate rule's budget, in mean gaps at the recent rate. */
#define RATE_GAPS 5
/* Weight of a silence in the two rules' running cost difference: 2^-3. */
#define EXPERT_SHIFT 3
/* Two silences in a row this many mean gaps long: the rate fell. */
#define JUMP_DEFAULT 4

struct adaptive_state {
	uint64_t mult;
	uint64_t min_spin_ns;
	uint64_t max_spin_ns;
	uint64_t wake_ns;     /* Wake-up cost EWMA. */
	uint64_t gap_ns;      /* Inter-arrival EWMA; 0 until two arrivals. */
	uint64_t last_ns;     /* Last iteration with completions; 0: none. */
	uint64_t probe_ns;    /* Longest time without a wake-up measurement. */
	uint64_t probed_ns;   /* Last wake-up measured; 0: none yet, so the first idle probes. */
	uint64_t monitor_ns;  /* Wake-up cost of a monitor wait; 0: never monitor. */
	uint64_t sleep_cpu_ns; /* CPU a sleep and its wake-up cost. */
	uint64_t penalty;     /* CPU ns a ns of added latency is worth. */
	uint64_t spin_ns;     /* The threshold: sleep once idle this long. */
	uint64_t chosen;      /* Silences counted since it was chosen. */
	uint64_t memory_ns;   /* The silences' half-life; 0: by count alone. */
	uint64_t jump;        /* Mean gaps two silences last when the rate fell; 0: off. */
	uint64_t halved_ns;   /* When they were last halved by time. */
	uint64_t woke_ns;     /* Wake-up reported for the current sleep. */
	uint64_t lead_ns;     /* The last arrival came this long before last_ns. */
	uint64_t delay_ns;    /* Latency a sleep adds to its batch (EWMA). */
	uint64_t spread_ns;   /* From a sleep batch's first arrival to its last (EWMA). */
	uint64_t burst_ns;    /* First arrival of the current burst; 0: none. */
	uint64_t burst_len[BURSTS]; /* The last bursts' lengths; 0: unknown. */
	uint64_t burst_gap[BURSTS]; /* The silences before them. */
	unsigned int bursts;  /* Bursts measured, modulo BURSTS. */
	/*
	 * The longest of the last BURSTS bursts when they and the silences
	 * before them are alike (alike()), else 0: what burst_end() needs,
	 * set when a burst ends, not weighed again at every decision.
	 */
	uint64_t burst_hi;
	uint32_t rate_n[RATE_SLOTS]; /* Arrivals per slot of the last 2 ms. */
	uint64_t rate_sum;    /* The sum of rate_n[]. */
	uint64_t rate_slot;   /* The slot of rate_n[rate_slot % RATE_SLOTS]. */
	uint64_t first_ns;    /* First arrival; 0: none. */
	uint64_t rate_b;      /* The rate rule's budget at the last arrival. */
	uint64_t own_b;       /* The threshold's budget at the last arrival. */
	int64_t diff;         /* Rate rule's cost minus the threshold's (EWMA). */
	int use_rate;         /* The rate rule has been the cheaper. */
	int rate_jump;        /* The last two silences were over jump mean gaps. */
	uint64_t prev_sil;    /* The silence before the last. */
	/*
	 * An empty iteration from poll_from to before poll_until keeps
	 * polling (set_poll_until()); 0: decide in full. Whatever changes a
	 * value the empty iterations' rules read must set them again.
	 */
	uint64_t poll_from;
	uint64_t poll_until;
	int measured;         /* wake_ns holds a measurement, not the guess. */
	int cpu_given;        /* sleep_cpu_us was given: measurements are ignored. */
	int cpu_measured;     /* sleep_cpu_ns holds a measurement. */
	int woke;             /* woke_ns holds one. */
	struct cqpoll_policy_gaps silences; /* Idle time before each batch. */
};

/* cqpoll_policy_adaptive_threshold.c */
uint64_t cqpoll_adaptive_sleep_worth_wide(const struct adaptive_state *s);
void cqpoll_adaptive_choose(struct adaptive_state *s);
void cqpoll_adaptive_halve(struct adaptive_state *s, uint64_t now_ns);
/* cqpoll_policy_adaptive_burst.c */
void cqpoll_adaptive_burst_seen(struct adaptive_state *s, uint64_t last, uint64_t first);

/*
 * The same value, asked twice a completion: a wake-up under 4.3 s squares
 * within 64 bits, and a step that overflows 64 bits can only grow (mult is
 * at least 1), so the answer saturates; no 128-bit division, which is a
 * library call.
 */
static inline uint64_t
adaptive_sleep_worth(const struct adaptive_state *s)
{
	uint64_t w = s->wake_ns, r;

	if (s->wake_ns > UINT32_MAX)
		return cqpoll_adaptive_sleep_worth_wide(s);
	if (s->gap_ns != 0 && s->wake_ns > s->gap_ns)
		w = s->wake_ns * s->wake_ns / s->gap_ns;
	if (s->delay_ns > w)
		w = s->delay_ns;
	if (__builtin_mul_overflow(w, s->penalty, &r) ||
	    __builtin_add_overflow(r, s->sleep_cpu_ns, &r) ||
	    __builtin_mul_overflow(r, s->mult, &r))
		return UINT64_MAX;
	return r;
}

/*
 * When the current burst ends: once it has lasted as long as the longest of
 * the last BURSTS, if their lengths agree (alike()), and so do
 * the silences between them (on/off traffic; on heavy-tailed gaps some
 * bursts last alike by chance, the silences between them do not); 0 when
 * they do not, or are not known yet.
 */
static inline uint64_t
adaptive_burst_end(const struct adaptive_state *s)
{
	if (s->bursts < BURSTS || s->burst_ns == 0 || s->burst_hi == 0)
		return 0;
	return s->burst_ns + s->burst_hi;
}

/*
 * The silences of a rate that changed say little of the next: once per
 * memory_us the histogram halves, so that it weighs the last few
 * milliseconds (at least half of what it holds came in the last two
 * half-lives), and the threshold is chosen again at once. At every
 * arrival: the check inline, the halving (cqpoll_adaptive_halve()) not.
 */
static inline void
adaptive_forget(struct adaptive_state *s, uint64_t now_ns)
{
	if (s->memory_ns == 0)
		return;
	if (s->halved_ns == 0) {
		s->halved_ns = now_ns;
		return;
	}
	/* Fewer silences than FORGET_MIN are too few to forget any. */
	if (now_ns - s->halved_ns < s->memory_ns ||
	    s->silences.total < FORGET_MIN * WEIGHT)
		return;
	cqpoll_adaptive_halve(s, now_ns);
}

#endif /* CQPOLL_POLICY_ADAPTIVE_PRIVATE_H */
