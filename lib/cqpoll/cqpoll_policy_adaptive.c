/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive policy (its manual and design history:
 * doc/guides/policies.md). Its one decision is a threshold: how long the
 * group polls after the last arrival before it sleeps. It learns the
 * silences (a histogram of the time from one arrival to the next) and picks
 * the threshold B of least expected cost per unit of time: a silence s <= B
 * costs s of polling; a longer one costs B plus a sleep, the sleep's CPU C
 * and the latency D it adds, weighed by penalty. Beside the threshold:
 *  - the burst rule: on on/off traffic whose bursts and the silences
 *    between them last alike, sleep once the current burst has lasted as
 *    long as the longest of the last ones;
 *  - the rate rule: a budget from the arrivals of the last 2 ms, which
 *    decides while it has been the cheaper, or at once after two long
 *    silences in a row (the rate fell);
 *  - the probe: a sleep to measure the wake-up cost W when none was
 *    measured for probe_ms;
 *  - the monitor wait, for a silence too short for a sleep.
 * W, D, C and the mean gap are moving averages of clamped samples, so that
 * one outlier cannot lock the policy into polling. An arrival sets until
 * when the empty polls are sure to keep polling: those cost two compares.
 */

#include <errno.h>
#include <string.h>

#include "cqpoll_mutant.h"
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

static int
set_param(void *ctx, const char *key, size_t klen, const char *val,
	  size_t vlen)
{
	struct adaptive_state *s = ctx;
	uint64_t v;

	if (cqpoll_policy_parse_u64(val, vlen, PARAM_MAX, &v) < 0)
		return -EINVAL;
	if (cqpoll_policy_key_is(key, klen, "mult") && v > 0)
		s->mult = v;
	else if (cqpoll_policy_key_is(key, klen, "wake_us") && v > 0)
		s->wake_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "min_spin_us"))
		s->min_spin_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "max_spin_us"))
		s->max_spin_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "probe_ms"))
		s->probe_ns = v * 1000000;
	else if (cqpoll_policy_key_is(key, klen, "monitor_us"))
		s->monitor_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "sleep_cpu_us")) {
		s->sleep_cpu_ns = v * 1000;
		s->cpu_given = 1;
	}
	else if (cqpoll_policy_key_is(key, klen, "memory_us"))
		s->memory_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "jump") && v <= 1000)
		s->jump = v;
	else if (cqpoll_policy_key_is(key, klen, "penalty") && v <= PENALTY_MAX)
		s->penalty = v;
	else
		return -EINVAL;
	return 0;
}

/*
 * The cost of a sleep, in ns of CPU: mult x (penalty x D + C), D the
 * latency it adds to the completions it delays, C its CPU. D is the larger
 * of W x max(1, W / gap) (the first arrival and, when wake-ups outlast
 * gaps, those during the wake-up) and what sleeps were measured to add;
 * before two arrivals, W. Saturates.
 */
static uint64_t
sleep_worth_wide(const struct adaptive_state *s)
{
	unsigned __int128 w = s->wake_ns;

	if (s->gap_ns != 0 && s->wake_ns > s->gap_ns)
		w = w * s->wake_ns / s->gap_ns;
	if (s->delay_ns > w)
		w = s->delay_ns;
	w = (w * s->penalty + s->sleep_cpu_ns) * s->mult;
	return w > UINT64_MAX ? UINT64_MAX : (uint64_t)w;
}

/*
 * The same value, asked twice a completion: a wake-up under 4.3 s squares
 * within 64 bits, and a step that overflows 64 bits can only grow (mult is
 * at least 1), so the answer saturates; no 128-bit division, which is a
 * library call.
 */
static uint64_t
sleep_worth(const struct adaptive_state *s)
{
	uint64_t w = s->wake_ns, r;

	if (s->wake_ns > UINT32_MAX)
		return sleep_worth_wide(s);
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
 * The threshold of least expected cost per unit of time over the silences
 * seen, measured from the last arrival: with threshold B, a silence s <= B
 * costs s of polling and lasts s; a longer one costs B and a sleep, and
 * lasts s plus the spread of the arrivals the sleep batches. Candidates: 0,
 * each bucket's lower bound up to max_spin_us, and polling through all; a
 * silence counts at its bucket's middle. Costs are compared as cross
 * products, exact in 128 bits.
 *
 * Only the buckets that hold silences are visited (a few on most
 * traffic, of 256): the candidates from one such bucket's end to the
 * next one's lower bound have the same silences below and above them, so
 * the same span, and cost more the later they are; the first of them
 * wins against every other, so it alone is weighed. The choice is the one
 * of weighing every bucket: with all 256 weighed every 16 silences, at
 * UCX shared-memory ping-pong this cost some 1700 instructions a
 * completion and a few microseconds' stall every 16th.
 */
static void
choose(struct adaptive_state *s)
{
	const struct cqpoll_policy_gaps *h = &s->silences;
	unsigned __int128 time = 0, below = 0, cost, span, best_cost, best_span;
	unsigned __int128 now_cost, now_span;
	uint64_t above = h->total, sleep = sleep_worth(s), lo;
	unsigned int i, j;

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
	best_cost = now_cost;
	best_span = now_span;
	s->spin_ns = 0;
#if CQPOLL_MUTANT(ADAPTIVE_FULL)
	/* Test build only: every bucket weighed, the reference. */
	for (i = 0; i < CQPOLL_POLICY_GAP_BUCKETS && above != 0; i++) {
		lo = cqpoll_policy_gap_lower(i);
		if (lo > s->max_spin_ns)
			break;
		cost = below + (unsigned __int128)above * (lo + sleep);
		span = time + (unsigned __int128)above * s->spread_ns;
		if (cost * best_span < best_cost * span) {
			best_cost = cost;
			best_span = span;
			s->spin_ns = lo;
		}
		below += (unsigned __int128)h->n[i] * cqpoll_policy_gap_mid(i);
		above -= h->n[i];
	}
	(void)j;
#else
	/* i: the candidate, the first bound past the last bucket weighed. */
	i = 0;
	for (j = cqpoll_policy_gap_next(h, 0);
	     j < CQPOLL_POLICY_GAP_BUCKETS && above != 0;
	     j = cqpoll_policy_gap_next(h, j + 1)) {
		lo = cqpoll_policy_gap_lower(i);
		if (lo > s->max_spin_ns)
			break;
		cost = below + (unsigned __int128)above * (lo + sleep);
		span = time + (unsigned __int128)above * s->spread_ns;
		if (cost * best_span < best_cost * span) {
			best_cost = cost;
			best_span = span;
			s->spin_ns = lo;
		}
		/* Bucket j's own bound is past max_spin_us: no B covers it. */
		if (cqpoll_policy_gap_lower(j) > s->max_spin_ns)
			break;
		below += (unsigned __int128)h->n[j] * cqpoll_policy_gap_mid(j);
		above -= h->n[j];
		i = j + 1;
	}
#endif
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

/*
 * The silences of a rate that changed say little of the next: once per
 * memory_us the histogram halves, so that it weighs the last few
 * milliseconds (at least half of what it holds came in the last two
 * half-lives), and the threshold is chosen again at once.
 */
static void
forget(struct adaptive_state *s, uint64_t now_ns)
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
	/* Several half-lives at once when the gap was long. */
	while (now_ns - s->halved_ns >= s->memory_ns &&
	       s->silences.total >= FORGET_MIN * WEIGHT) {
		cqpoll_policy_gap_halve(&s->silences);
		s->halved_ns += s->memory_ns;
	}
	s->halved_ns = now_ns;
	s->chosen = RECHOOSE;
}

static int
adaptive_init(void *state, const char *args)
{
	struct adaptive_state *s = state;

	memset(s, 0, sizeof(*s));
	s->mult = MULT_DEFAULT;
	s->penalty = PENALTY_DEFAULT;
	s->wake_ns = WAKE_US_DEFAULT * 1000;
	s->min_spin_ns = MIN_SPIN_US_DEFAULT * 1000;
	s->max_spin_ns = MAX_SPIN_US_DEFAULT * 1000;
	s->probe_ns = PROBE_MS_DEFAULT * 1000000ull;
	s->memory_ns = MEMORY_US_DEFAULT * 1000ull;
	s->jump = JUMP_DEFAULT;
	if (cqpoll_policy_parse_kv(args, set_param, s) < 0 ||
	    s->min_spin_ns > s->max_spin_ns)
		return -EINVAL;
	choose(s);
	return 0;
}

/*
 * A sleep ended with @k completions after a wake-up of woke_ns: the first
 * waited all of it, the others arrived during it, half of it each on
 * average. The samples are heavy-tailed (a long wake-up gathers more
 * arrivals), so each counts at most DELAY_CLAMP times the mean, with
 * weight 1/16.
 */
static void
delay_seen(struct adaptive_state *s, unsigned int k)
{
	uint64_t d = s->woke_ns * ((uint64_t)k + 1) / 2;
	uint64_t x = k == 1 ? 0 : s->woke_ns - s->woke_ns / ((uint64_t)k + 1);

	if (s->delay_ns == 0) {
		s->delay_ns = d;
		s->spread_ns = x;
		return;
	}
	s->spread_ns = cqpoll_policy_ewma(s->spread_ns, x, 4);
	if (d / DELAY_CLAMP > s->delay_ns)
		d = DELAY_CLAMP * s->delay_ns;
	s->delay_ns = cqpoll_policy_ewma(s->delay_ns, d, 4);
}

/*
 * A silence of BURST_GAPS mean gaps ended a burst at @last (its last
 * arrival); the next began at @first.
 */
static int alike(const uint64_t *v, uint64_t *hi);

static void
burst_seen(struct adaptive_state *s, uint64_t last, uint64_t first)
{
	uint64_t hi, gap;

	if (s->burst_ns != 0 && last >= s->burst_ns) {
		s->burst_len[s->bursts % BURSTS] = last - s->burst_ns;
		s->burst_gap[s->bursts % BURSTS] = first > last ? first - last : 0;
		s->bursts++;
		/* alike() says hi != 0 when it holds. */
		s->burst_hi = alike(s->burst_gap, &gap) &&
			      alike(s->burst_len, &hi) ? hi : 0;
	}
	s->burst_ns = first;
}

/*
 * The values agree within a factor of two, but for one (a burst whose
 * last gaps happened to be short); the largest in @hi.
 */
static int
alike(const uint64_t *v, uint64_t *hi)
{
	unsigned int i, low = 0;

	*hi = 0;
	for (i = 0; i < BURSTS; i++)
		if (v[i] > *hi)
			*hi = v[i];
	for (i = 0; i < BURSTS; i++)
		low += 2 * v[i] < *hi;
	return *hi != 0 && low <= 1;
}

/*
 * When the current burst ends: once it has lasted as long as the longest of
 * the last BURSTS, if their lengths agree (alike()), and so do
 * the silences between them (on/off traffic; on heavy-tailed gaps some
 * bursts last alike by chance, the silences between them do not); 0 when
 * they do not, or are not known yet.
 */
static uint64_t
burst_end(const struct adaptive_state *s)
{
	if (s->bursts < BURSTS || s->burst_ns == 0 || s->burst_hi == 0)
		return 0;
	return s->burst_ns + s->burst_hi;
}

/*
 * The rate rule: the arrivals of the last 2 ms (since the first arrival,
 * before 2 ms); a budget of RATE_GAPS mean gaps when the rate x a sleep's
 * cost is over 1 (a sleep costs more than the polling to the next arrival,
 * on average), else 0. It follows a change of rate within 2 ms, where the
 * silences' histogram takes tens.
 */
static uint64_t
rate_budget(struct adaptive_state *s, unsigned int k, uint64_t now)
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
	worth = (unsigned __int128)n * sleep_worth(s);
	return worth > span ? RATE_GAPS * span / n : 0;
}

/*
 * A silence of @g ns ended: what each rule would have paid for it (polling
 * up to its budget, then a sleep), into the running difference; the rule
 * that has cost less lately decides the next silences.
 */
static void
experts_seen(struct adaptive_state *s, uint64_t g)
{
	uint64_t sleep = sleep_worth(s);
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

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * Until when an empty iteration is sure to keep polling by the rules of
 * adaptive_decide(), which read only what an arrival sets (and the probe's
 * clock): before max_spin_us, the threshold (or the rate rule's budget)
 * and the burst's end, and the next probe. In a ping-pong a dozen empty
 * polls come between arrivals, and each weighed every rule again: some 60
 * instructions a poll, half of what adaptive added to busy polling
 * (bench/run_group_iter.sh). With a monitor wait in play
 * (monitor_us) every empty iteration is decided in full.
 */
static void
set_poll_until(struct adaptive_state *s)
{
	uint64_t until, end, budget;

	s->poll_until = 0;
	if (s->monitor_ns != 0 || s->last_ns == 0)
		return;
	s->poll_from = s->last_ns > s->probed_ns ? s->last_ns : s->probed_ns;
	until = add_sat(s->last_ns, s->max_spin_ns);
	end = burst_end(s);
	if ((s->use_rate || s->rate_jump) && end == 0) {
		budget = s->rate_b;
	} else {
		budget = s->spin_ns;
		/* Past the burst's end it sleeps. */
		if (end != 0 && add_sat(end, 1) < until)
			until = add_sat(end, 1);
	}
	/* Asleep at the first empty poll: nothing to keep. */
	if (budget <= s->lead_ns)
		return;
	if (add_sat(s->last_ns, budget - s->lead_ns) < until)
		until = add_sat(s->last_ns, budget - s->lead_ns);
#if !CQPOLL_MUTANT(POLL_UNTIL_NO_PROBE)
	if (s->probe_ns != 0 && add_sat(s->probed_ns, s->probe_ns) < until)
		until = add_sat(s->probed_ns, s->probe_ns);
#endif
	s->poll_until = until;
}

/*
 * An iteration found @p completions (> 0) at @p now_ns: the silence it
 * ended is learnt, and the rules of the empty iterations to come are set.
 * Out of line, as is idle_decide(): adaptive_decide() is mostly the empty polls'
 * bound, which must not pay the frame of the rest.
 */
static __attribute__((noinline)) void
arrival(struct adaptive_state *s, unsigned int completions, uint64_t now_ns)
{
	uint64_t idle, gap, end;
	int ends, counted;

	if (s->last_ns != 0) {
		/*
		 * The silence the threshold judges: from the last
		 * arrival (lead_ns before the last batch was seen) to
		 * the one that ended it, which a sleep saw a wake-up
		 * late.
		 */
		idle = now_ns - s->last_ns;
		if (s->woke) {
			idle = idle > s->woke_ns ? idle - s->woke_ns : 0;
			delay_seen(s, completions);
			/* A wake-up measured: no probe is due. */
			s->probed_ns = now_ns;
		}
		ends = s->gap_ns != 0 &&
		       idle + s->lead_ns >= BURST_GAPS * s->gap_ns;
		/*
		 * A silence between bursts that burst_end() foresaw
		 * was slept in at the burst's end, whatever the
		 * threshold: it says nothing of the threshold, and
		 * counted, it would charge the threshold with polling
		 * into it.
		 */
		counted = !ends || burst_end(s) == 0;
		if (ends)
			burst_seen(s, s->last_ns - s->lead_ns,
				   now_ns - (s->woke ? s->woke_ns : 0));

		experts_seen(s, idle + s->lead_ns);
		s->rate_jump = s->jump != 0 && s->gap_ns != 0 &&
			       idle + s->lead_ns > s->jump * s->gap_ns &&
			       s->prev_sil > s->jump * s->gap_ns;
		s->prev_sil = idle + s->lead_ns;
		forget(s, now_ns);
		if (counted)
			cqpoll_policy_gap_add(&s->silences,
					      idle + s->lead_ns, WEIGHT,
					      SILENCE_MEM * WEIGHT);
		if (++s->chosen >= RECHOOSE ||
		    s->silences.total <= SILENCE_MIN * WEIGHT)
			choose(s);
		/* An iteration that found k completions saw k gaps. */
		gap = (now_ns - s->last_ns) / completions;
		if (gap > GAP_CAP_NS)
			gap = GAP_CAP_NS;
		/*
		 * The silence before a burst is not its spacing: a
		 * sample counts at most double, as a wake-up's does.
		 */
		if (s->gap_ns != 0 && gap > 2 * s->gap_ns)
			gap = 2 * s->gap_ns;
		s->gap_ns = s->gap_ns == 0 ? gap : cqpoll_policy_ewma(s->gap_ns, gap, 3);
	}
	s->last_ns = now_ns;
	s->rate_b = rate_budget(s, completions, now_ns);
	s->own_b = s->spin_ns;
	end = burst_end(s);
	if (end != 0)
		s->own_b = end > now_ns ? end - now_ns < s->own_b ?
			   end - now_ns : s->own_b : 0;
	/*
	 * After a sleep the batch's last arrival came before the
	 * wake-up ended: a lone one a whole wake-up before, the last
	 * of k spread over it about a (k+1)-th of it before. Silences
	 * are measured from there, as polling would have seen them:
	 * measured from the wake-up, those after sleeps would be
	 * shorter by it, polling would look cheaper than it is, and
	 * the policy would flip between the two on regular gaps.
	 */
	s->lead_ns = !s->woke ? 0 : completions == 1 ? s->woke_ns :
		     s->woke_ns / ((uint64_t)completions + 1);
	s->woke = 0;
	set_poll_until(s);
}

/* An empty iteration at @p now_ns, past the bound of set_poll_until(). */
static __attribute__((noinline)) enum cqpoll_policy_action
idle_decide(struct adaptive_state *s, uint64_t now_ns)
{
	uint64_t idle, expected, end;

	idle = now_ns - s->last_ns;
	if (idle < s->min_spin_ns)
		return CQPOLL_POLICY_KEEP_POLLING;
	if (idle >= s->max_spin_ns)
		return CQPOLL_POLICY_SLEEP;
	end = burst_end(s);
	/* Bursts that last alike: the burst rule knows when they end. */
	if ((s->use_rate || s->rate_jump) && end == 0) {
		if (idle + s->lead_ns >= s->rate_b)
			return CQPOLL_POLICY_SLEEP;
	} else {
		if (idle + s->lead_ns >= s->spin_ns || (end != 0 && now_ns > end))
			return CQPOLL_POLICY_SLEEP;
	}
	expected = idle < 2 * s->gap_ns ? s->gap_ns : idle;
	/* probe_ms = 0 turns probing off. */
	if (s->probe_ns != 0 && now_ns - s->probed_ns >= s->probe_ns) {
		s->probed_ns = now_ns;
		/* The probe's clock restarts: the next arrival sets the bound. */
		s->poll_until = 0;
		return CQPOLL_POLICY_SLEEP;
	}
	/* Too short for a sleep, long enough to wake from a monitor wait. */
	if (s->monitor_ns != 0 && expected > s->monitor_ns)
		return CQPOLL_POLICY_MONITOR;
	return CQPOLL_POLICY_KEEP_POLLING;
}

static enum cqpoll_policy_action
adaptive_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct adaptive_state *s = state;

	if (completions > 0) {
		arrival(s, completions, now_ns);
		return CQPOLL_POLICY_KEEP_POLLING;
	}
#if !CQPOLL_MUTANT(ADAPTIVE_FULL)
	if (now_ns < s->poll_until && now_ns >= s->poll_from)
		return CQPOLL_POLICY_KEEP_POLLING;
#endif
	return idle_decide(s, now_ns);
}

static void
adaptive_wake_cost(void *state, uint64_t cost_ns)
{
	struct adaptive_state *s = state;

	/* A wake delayed by seconds (a stopped VM) says nothing of the next. */
	if (cost_ns > GAP_CAP_NS)
		cost_ns = GAP_CAP_NS;
	s->woke_ns = cost_ns;
	s->woke = 1;
	/*
	 * One descheduled device or safety-net timeout must not teach the
	 * policy that wake-ups cost milliseconds: it would then never sleep
	 * again and never unlearn it. A sample counts at most double.
	 */
	if (cost_ns > 2 * s->wake_ns)
		cost_ns = 2 * s->wake_ns;
	s->wake_ns = s->measured ? cqpoll_policy_ewma(s->wake_ns, cost_ns, 3) : cost_ns;
	s->measured = 1;
}

/*
 * The thread CPU of a sleep, measured by the group (cqpoll_policy_sleep_cpu()):
 * the first sample replaces the default 0 outright, later ones count at most
 * twice the estimate (a sleep that was descheduled mid-way on a loaded
 * machine must not teach that sleeps cost milliseconds), weight 1/8.
 * sleep_cpu_us, when given, wins.
 */
void
cqpoll_policy_adaptive_sleep_cpu(void *state, uint64_t cpu_ns)
{
	struct adaptive_state *s = state;

	if (s->cpu_given)
		return;
	if (cpu_ns > GAP_CAP_NS)
		cpu_ns = GAP_CAP_NS;
	if (!s->cpu_measured) {
		s->sleep_cpu_ns = cpu_ns;
		s->cpu_measured = 1;
		/* Weigh the threshold again with the cost now known. */
		s->chosen = RECHOOSE;
		return;
	}
	if (cpu_ns > 2 * s->sleep_cpu_ns)
		cpu_ns = 2 * s->sleep_cpu_ns;
	s->sleep_cpu_ns = cqpoll_policy_ewma(s->sleep_cpu_ns, cpu_ns, 3);
}

static const struct cqpoll_policy_ops adaptive_ops = {
	.name = "adaptive",
	.state_size = sizeof(struct adaptive_state),
	.init = adaptive_init,
	.decide = adaptive_decide,
	.wake_cost = adaptive_wake_cost,
};

const struct cqpoll_policy_ops *
cqpoll_policy_adaptive(void)
{
	return &adaptive_ops;
}
