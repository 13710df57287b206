/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive policy. Its one decision is a threshold: how long the group
 * polls after the last arrival before it sleeps. For arrivals with
 * independent gaps, the best any rule that knows only the idle time can do
 * is one threshold B for every gap, so the policy learns the silences (a
 * histogram of the time from the last arrival to the next, 8 buckets an
 * octave, halved once it holds 1024, as latency-target keeps its gaps) and
 * picks the B of least expected cost per unit of time: a silence s <= B
 * costs s of polling; a longer one costs B, plus a sleep: its CPU C
 * (sleep_cpu_us) and the latency D it adds to the completions it delays,
 * latency weighing as much as CPU, as in the policy lab's competitive ratio.
 * The candidates are 0, each bucket's lower bound up to max_spin_us, and
 * polling through all; they are weighed again every 16 silences.
 *
 * The rule before this one slept when the expected silence passed
 * W x max(1, W / gap), the expected silence being the mean gap while the
 * silence was shorter than twice it (work keeps arriving, as NAPI IRQ
 * suspension assumes). On heavy-tailed gaps (the lab's pareto trace: the
 * longer a silence has lasted, the longer it will last) that polled up to
 * twice the mean into every long gap: at 20000/s 25.1% CPU for a p99 that
 * thresholds knowing every gap reach with 7.4%, 3.37x (issue 12's goal at
 * adaptive's own p99 is 1.3x); now 7.7% and 1.06x, competitive ratio 1.28
 * to 1.19.
 *
 * D is the larger of W x max(1, W / gap) (the arrival that ends the sleep,
 * and those during a wake-up that outlasts the gaps) and what sleeps were
 * seen to add: a sleep that found k completions after a wake-up w delayed
 * the first by w and the others, spread over it, by w / 2 each. Such
 * samples are heavy-tailed (a long wake-up gathers more arrivals), so each
 * counts at most 8 times the mean, with weight 1/16. Measuring D is what
 * keeps the policy polling where wake-ups are long and tailed: with this
 * machine's costs (40 us median, 540 us p99) the lab's worst competitive
 * ratio over its rates went from 1.75 to 1.24.
 *
 * A sleep also lengthens the time its silence covers by the spread of the
 * arrivals it batches (from the first to the last), measured likewise; and
 * silences after a sleep are counted from the batch's last arrival (a lone
 * one a wake-up before the wake-up ended), not from the wake-up. Counted
 * from the wake-up, every silence after a sleep looks shorter by one, so
 * polling looks cheaper than it is, and on regular gaps the policy flips
 * between sleeping and polling (test_policy's test_adaptive_sleep_cpu:
 * 416 sleeps in 1000 gaps where every sleep pays). And where sleeping at
 * once costs within 1/8 of the best threshold it is chosen: near a tie the
 * noisy estimates decide, and a policy that flips between the two pays for
 * both and gets the p99 of the sleeps.
 *
 * The histogram also forgets by time: once it holds 128 silences, it halves
 * every memory_us (20 ms), so that on traffic whose rate changes (the lab's
 * diurnal and regime traces) the threshold is chosen from the last tens of
 * milliseconds, not from the last thousand silences, which at a high rate
 * are a tenth of a second and at a low one seconds. With fewer it keeps
 * them: a dozen silences choose a noisy threshold, and on on/off traffic
 * the silence between bursts would halve the burst's gaps away. In the
 * lab at penalty 10 this took diurnal at 5000/s from 1.19x to 1.08x the
 * best budget per 10 ms window in hindsight.
 *
 * On/off traffic (bursts that last alike, silences between them far longer
 * than the gaps within) asks two answers of the one threshold: poll through
 * a burst's gaps, sleep at once in the silence after it. So the policy
 * learns when bursts end: a silence of BURST_GAPS mean gaps ends one, and
 * once the last BURSTS lasted alike and so did the silences between them
 * (all but one within a factor of two of the longest), the group sleeps as
 * soon as the current burst has lasted as long as the longest of them;
 * those silences then stay out of the histogram, which judges the
 * threshold by the gaps within bursts. On memoryless gaps such a silence
 * never comes (e^-32), and bursts of irregular length turn the rule off:
 * with a silence of 16 gaps and the bursts' lengths alone, pareto at
 * 50000-100000/s went from 1.010-1.012x the best fixed budget to
 * 1.018-1.033x. All but one: a burst whose last gaps happened to be short
 * ends early, and with four bursts, all alike, the rule was off for a
 * quarter of the bursts at 5000/s. In the lab (onoff, penalty 10,
 * 5000-100000/s) this took adaptive from 1.040-1.057x the best fixed
 * budget in hindsight to 0.90-0.98x.
 *
 * The histogram follows a change of rate in tens of milliseconds (it
 * halves every memory_us, and only once it holds 128 silences); traffic
 * whose rate jumps 10-100x every few tens of ms (the lab's regime trace)
 * is gone by then. So the policy also runs, as a second expert, the rate
 * rule: the arrival rate over the last 2 ms; a budget of 5 mean gaps when
 * rate x the cost of a sleep is over 1, else 0. For each silence it
 * charges both rules what they would have paid (polling up to the budget,
 * then a sleep), keeps the difference as a moving average (weight 1/8),
 * and lets the rate rule decide while it has been the cheaper by half a
 * sleep a silence (on steady traffic the two differ by noise, and a policy
 * that flips pays for both), until it is no longer; never while the burst
 * rule below knows when bursts end. In the lab at penalty 10 this took
 * regime traffic at 5000, 10000 and 20000/s from 1.056, 1.035 and 1.013x
 * the rate rule's cost to 1.029, 1.025 and 0.999x (1.149, 1.116, 1.097x
 * the best per-window budget to 1.126, 1.099, 1.087x); pareto, poisson
 * and onoff unchanged.
 *
 * The running difference still takes a few silences of a slow stretch to
 * cross its margin, each polled at the fast stretch's threshold. Two
 * silences in a row over `jump` (4) mean gaps say the rate fell (on Poisson
 * gaps one in 3000 pairs, e^-8; after an on/off burst the first gap of the
 * next is short again), so the rate rule decides the next silence at
 * once, as it does while it has been the cheaper. One long silence is not
 * enough: the silence before an on/off burst would hand the burst's first
 * gaps to the rate rule, which sleeps until the rate builds up (onoff
 * 5000/s, penalty 10: 1.197x the best per-window budget, from 1.153x). In
 * the lab at penalty 10 this took regime traffic at 5000 and 10000/s from
 * 1.029 and 1.025x the rate rule's cost to 1.014 and 1.005x (1.126, 1.099x
 * the best per-window budget to 1.109, 1.078x).
 *
 * Until the first silence the threshold is the cost of a sleep, as in ski
 * rental. The mean gap (EWMA, weight 1/8) still serves W / gap: an
 * iteration that found k completions after an interval saw k gaps of a
 * k-th of it, and a sample counts at most double the mean, since the
 * silence before a burst is not its spacing.
 *
 * W learns slowly because its errors do not mend alike: one too low makes
 * the policy sleep, and every sleep measures W again; one too high makes it
 * poll, and polling measures nothing until the next probe. With weight 1/4,
 * a few long wake-ups (log-normal, 30 us median, 80 us p99) had it poll
 * through whole stretches of 50 us gaps it should sleep in.
 *
 * The wake-up cost is only learnt by sleeping, so a policy that starts with a
 * pessimistic guess would poll forever. Hence a probe: if no wake-up was
 * measured for probe_ms, the next idle decision sleeps once to measure one
 * (every sleep's wake-up counts: the rule before this one probed every
 * probe_ms however many sleeps measured one, in the lab's onoff trace at
 * 100000/s a tenth of its wake-ups, 2.6% of its cost at penalty 10),
 * and the first measurement replaces the guess outright. A sample counts at
 * most twice the current estimate, so one outlier cannot lock the policy
 * into polling.
 *
 * With monitor_us set, a silence not worth a sleep but expected longer than
 * a monitor wake-up (the mean gap while the silence is shorter than twice
 * it, then the silence so far) is spent in a power-monitor wait rather than
 * polling.
 *
 * A sleep's own CPU (arming, epoll_wait, the scheduler, reading the event,
 * the driver's calls) cannot be seen from here, so the group measures it on
 * a sample of its sleeps (thread CPU, cqpoll_group_sleep_cpu_get()) and
 * tells the policy (cqpoll_policy_sleep_cpu()): C is the moving average of
 * those samples (weight 1/8, the first replacing the start value 0, each
 * counting at most double), unless sleep_cpu_us was given. The policy
 * believed C = 0 before, and on UCX tcp ping-pong (round trips of about
 * 12 us, wake-ups of 6-10 us) it slept between nearly every round trip
 * (67399 wake-ups/s) where a sleep cost about ten system calls of CPU
 * (issue 36). In the lab a sleep is told arm_ns + wake_cpu_ns (6 us in
 * check-lab-goals.py's cost model).
 *
 * It runs after every iteration of a loop that polls millions of times a
 * second, so what it does there is kept small without changing a decision
 * (issue 36, test policy-same-decisions): an arrival sets until when the
 * empty polls are sure to keep polling, and those before it cost two
 * compares; the threshold is weighed over the histogram's filled buckets
 * only. At UCX shared-memory ping-pong the full walk every 16 silences was
 * a 1700-instruction-a-completion cost and a p99 of stalls.
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
 * completion and a few microseconds' stall every 16th (issue 36).
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
 * (issue 36; bench/run_group_iter.sh). With a monitor wait in play
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
