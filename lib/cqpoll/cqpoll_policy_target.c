/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The latency-target policy: the user gives a p99 target for the latency of
 * a completion (visible to handled); the policy spins as little as meets it.
 * Its one knob is the spin budget, the least b for which (share of
 * completions after gaps over b) x (share over the target after a sleep)
 * stays within the aim (3/4 of the 1 %, less where a second holds few
 * completions), plus the balance of an account of the misses seen. The
 * gaps are a histogram that forgets by halving, the share over is counted
 * per completion, and the budget is recomputed every window and at each
 * miss, leaping at once to what the aim asks for and growing past it at
 * most by doubling. A probe sleep every eight windows without one keeps
 * the wake-ups measured. Design and measurements: doc/guides/policies.md.
 */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cqpoll_policy_gaps_private.h"
#include "cqpoll_policy_private.h"

#define P99_US_DEFAULT 100
#define MIN_SPIN_US_DEFAULT 0
/* A p99 is judged over a second: a longer gap holds no second's p99. */
#define MAX_SPIN_US_DEFAULT 1000000
/* The fewest samples in which a p99 means anything: 1 may be over. */
#define WINDOW_MIN 100
#define WINDOW_DEFAULT WINDOW_MIN
#define WAKE_US_DEFAULT 30
#define PARAM_MAX 10000000
#define GROW_MIN_NS 1000
/* A wake delayed by seconds (a stopped VM) must not skew the estimate. */
#define WAKE_CAP_NS 1000000000ull
/* The aim: the share of completions over the target, AIM_NUM / AIM_DEN. */
#define AIM_NUM 3
#define AIM_DEN 400
/* A completion in the counts of sleeps: one over in part counts in 1/16. */
#define UNIT 16
/* Windows without a sleep before one is taken to measure a wake-up. */
#define PROBE_WINDOWS 8
/* The account's bound either way, in windows' aim. */
#define CREDIT_WINDOWS 8
/* The gap histogram halves once it holds this many windows. */
#define GAP_MEM_WINDOWS 64
/* Completions after a sleep the share over is counted in, at most. */
#define WAKE_MEM 1024
/* Overs the clean probes since the last should have seen: wake-ups changed. */
#define DOUBT 3
/* The p99 is judged over a second's completions ... */
#define SECOND_NS 1000000000ull

struct target_state {
	uint64_t target_ns;
	uint64_t min_spin_ns;
	uint64_t max_spin_ns;
	uint64_t window;
	uint64_t spin_ns;   /* The budget. */
	uint64_t wake_ns;   /* Wake-up cost estimate (EWMA). */
	uint64_t last_ns;   /* Last iteration with completions. */
	uint64_t woke_ns;   /* Cost reported for the current sleep. */
	uint64_t samples;   /* In this window. */
	uint64_t dry;       /* Windows since the last sleep. */
	uint64_t wake_n;    /* Completions after a sleep, in UNITs ... */
	uint64_t wake_over; /* ... and of them, over the target. */
	uint64_t doubt;     /* Overs the clean probes since the last should have seen ... */
	uint64_t clean;     /* ... and their completions, in UNITs. */
	int64_t credit;     /* The account, in 1 / (UNIT x AIM_DEN) misses. */
	uint64_t sec_ns;    /* This second began; 0: no completion yet. */
	uint64_t sec_n;     /* Completions in it ... */
	uint64_t last_n;    /* ... and in the one before; 0: none. */
	bool probe;         /* Sleep at the next idle iteration, to measure. */
	bool sleeping;      /* Said sleep; no work seen since. */
	bool probing;       /* That sleep is a probe. */
	bool woke;          /* woke_ns holds a measurement of this sleep. */
	bool measured;      /* wake_ns holds a measurement, not the guess. */
	bool leap;          /* The budget may reach the aim's at once. */
	struct cqpoll_policy_gaps gaps; /* Completions by the gap before them. */
};

static int
set_param(void *ctx, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct target_state *s = ctx;
	uint64_t v;

	if (cqpoll_policy_parse_u64(val, vlen, PARAM_MAX, &v) < 0)
		return -EINVAL;
	if (cqpoll_policy_key_is(key, klen, "p99_us") && v > 0)
		s->target_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "min_spin_us"))
		s->min_spin_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "max_spin_us"))
		s->max_spin_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "window") && v >= WINDOW_MIN)
		s->window = v;
	else if (cqpoll_policy_key_is(key, klen, "wake_us") && v > 0)
		s->wake_ns = v * 1000;
	else if (cqpoll_policy_key_is(key, klen, "leap") && v <= 1)
		s->leap = v == 1;
	else
		return -EINVAL;
	return 0;
}

static void
defaults(struct target_state *s)
{
	memset(s, 0, sizeof(*s));
	s->target_ns = P99_US_DEFAULT * 1000;
	s->min_spin_ns = MIN_SPIN_US_DEFAULT * 1000;
	s->max_spin_ns = MAX_SPIN_US_DEFAULT * 1000;
	s->window = WINDOW_DEFAULT;
	s->wake_ns = WAKE_US_DEFAULT * 1000;
	s->leap = true;
}

/* Start from the least CPU: the target says when more is needed. */
static int
finish(struct target_state *s)
{
	if (s->min_spin_ns > s->max_spin_ns)
		return -EINVAL;
	s->spin_ns = s->min_spin_ns;
	/* Until a wake-up is seen, the estimate is one. */
	s->wake_n = UNIT;
	s->wake_over = s->wake_ns > s->target_ns ? UNIT : 0;
	return 0;
}

static int
target_init(void *state, const char *args)
{
	struct target_state *s = state;

	defaults(s);
	if (cqpoll_policy_parse_kv(args, set_param, s) < 0)
		return -EINVAL;
	return finish(s);
}

/* "target-p99:US": the target alone, required; the rest take defaults. */
static int
target_p99_init(void *state, const char *args)
{
	struct target_state *s = state;
	uint64_t us;

	defaults(s);
	if (args == NULL ||
	    cqpoll_policy_parse_u64(args, strlen(args), PARAM_MAX, &us) < 0 ||
	    us == 0)
		return -EINVAL;
	s->target_ns = us * 1000;
	return finish(s);
}

/* The least gap of the bucket that holds the median of h; 0 if empty. */
static uint64_t
median_gap(const struct cqpoll_policy_gaps *h)
{
	uint64_t below = 0;
	unsigned int i;

	for (i = 0; i < CQPOLL_POLICY_GAP_BUCKETS; i++) {
		below += h->n[i];
		if (2 * below >= h->total && below != 0)
			return cqpoll_policy_gap_lower(i);
	}
	return 0;
}

/*
 * The aim, in AIM_DEN-ths: AIM_NUM, less where a second holds too few
 * completions for the count over the target to stay near its mean
 * (cqpoll_policy_count_share()), the second's count taken from the last
 * whole one or, in the first, extrapolated.
 */
static double
aim(const struct target_state *s, uint64_t now_ns)
{
	double n = (double)s->last_n, r;

	if (s->last_n == 0 && s->sec_ns != 0 && now_ns > s->sec_ns)
		n = (double)s->sec_n * (double)SECOND_NS /
		    (double)(now_ns - s->sec_ns);
	if (n <= 0)
		return AIM_NUM;
	r = cqpoll_policy_count_share(n) * AIM_DEN;
	return r < AIM_NUM ? r : AIM_NUM;
}

/*
 * The least budget whose sleeps, each over the target as often as those
 * seen, leave @room of the completions of the histogram over it. Both sides
 * are scaled by AIM_DEN x wake_n.
 */
static uint64_t
model_budget(const struct target_state *s, uint64_t room)
{
	uint64_t tail = 0, lo, hi, h, unit = AIM_DEN * s->wake_over;
	unsigned int i;

	for (i = CQPOLL_POLICY_GAP_BUCKETS; i-- > 0;) {
		h = s->gaps.n[i];
		if ((tail + h) * unit > room) {
			/* The room left sleeps through part of the bucket. */
			lo = cqpoll_policy_gap_lower(i);
			hi = cqpoll_policy_gap_lower(i + 1);
			return hi - (uint64_t)((double)(hi - lo) *
					       (double)(room - tail * unit) /
					       (double)(h * unit));
		}
		tail += h;
	}
	return 0;
}

/*
 * The budget: the model's with the aim and the account's balance. It may
 * reach at once the model's with the aim alone (with leap), which rests on
 * every gap and wake-up seen; growth past it rests on the account's debt,
 * a few misses and mostly noise, so it at most doubles a step.
 */
static void
budget(struct target_state *s, uint64_t now_ns)
{
	uint64_t b = 0, aimed = 0, room, owe, lim;

	if (s->wake_over != 0) {
		room = (uint64_t)(aim(s, now_ns) * (double)s->gaps.total *
				  (double)s->wake_n);
		aimed = model_budget(s, room);
		if (s->credit >= 0) {
			room += (uint64_t)s->credit * s->wake_n / UNIT;
		} else {
			owe = (uint64_t)(-s->credit) * s->wake_n / UNIT;
			room = owe < room ? room - owe : 0;
		}
		b = model_budget(s, room);
	}
	lim = median_gap(&s->gaps) / 2;
	if (lim < GROW_MIN_NS)
		lim = GROW_MIN_NS;
	lim += 2 * s->spin_ns;
	if (s->leap && aimed > lim)
		lim = aimed;
	if (b > lim)
		b = lim;
	if (b < s->min_spin_ns)
		b = s->min_spin_ns;
	if (b > s->max_spin_ns)
		b = s->max_spin_ns;
	s->spin_ns = b;
}

static void
control(struct target_state *s, uint64_t now_ns)
{
	budget(s, now_ns);
	if (++s->dry >= PROBE_WINDOWS)
		s->probe = true;
	s->samples = 0;
}

/* A sleep ended: @k completions found after a wake-up of @lat. */
static void
sleep_seen(struct target_state *s, unsigned int k, uint64_t lat)
{
	uint64_t over = 0;

	if (lat > s->target_ns) {
		over = UNIT + (k - 1) * UNIT * (lat - s->target_ns) / lat;
		s->doubt = 0;
		s->clean = 0;
	} else if (s->probing && s->wake_n != 0) {
		s->doubt += UNIT * (uint64_t)k * s->wake_over / s->wake_n;
		s->clean += UNIT * (uint64_t)k;
		if (s->doubt > UNIT * DOUBT) {
			s->wake_over = 0;
			s->wake_n = s->clean;
			s->doubt = 0;
			s->clean = 0;
		}
	}
	s->wake_n += UNIT * (uint64_t)k;
	s->wake_over += over;
	if (s->wake_n >= UNIT * WAKE_MEM) {
		s->wake_n >>= 1;
		s->wake_over >>= 1;
	}
	s->credit -= AIM_DEN * (int64_t)over;
	s->dry = 0;
	s->probe = false;
}

static void
account(struct target_state *s, unsigned int k)
{
	int64_t cap = (int64_t)(UNIT * AIM_NUM * CREDIT_WINDOWS * s->window);

	s->credit += UNIT * AIM_NUM * (int64_t)k;
	if (s->credit > cap)
		s->credit = cap;
	else if (s->credit < -cap)
		s->credit = -cap;
}

static enum cqpoll_policy_action
target_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct target_state *s = state;
	uint64_t lat = 0, idle;

	if (completions > 0) {
		idle = now_ns - s->last_ns;
		if (s->sleeping) {
			lat = s->woke ? s->woke_ns : s->wake_ns;
			sleep_seen(s, completions, lat);
			/*
			 * It came gap after the last: a budget of gap spares
			 * it. Without a measurement, all of idle (the longer).
			 */
			if (s->woke)
				idle = idle > lat ? idle - lat : 0;
		}
		/* The first completion has no gap before it. */
		if (s->last_ns != 0)
			cqpoll_policy_gap_add(&s->gaps, idle, completions,
					      GAP_MEM_WINDOWS * s->window);
		account(s, completions);
		if (s->sec_ns == 0 || now_ns - s->sec_ns >= SECOND_NS) {
			s->last_n = s->sec_ns == 0 ? 0 : s->sec_n;
			s->sec_ns = now_ns;
			s->sec_n = 0;
		}
		s->sec_n += completions;
		if (s->sleeping && lat > s->target_ns)
			budget(s, now_ns);
		s->sleeping = false;
		s->woke = false;
		s->samples += completions;
		if (s->samples >= s->window)
			control(s, now_ns);
		s->last_ns = now_ns;
		return CQPOLL_POLICY_KEEP_POLLING;
	}
	idle = now_ns - s->last_ns;
	if (idle < s->spin_ns && !(s->probe && idle >= s->min_spin_ns))
		return CQPOLL_POLICY_KEEP_POLLING;
	s->sleeping = true;
	s->probing = idle < s->spin_ns;
	return CQPOLL_POLICY_SLEEP;
}

static void
target_wake_cost(void *state, uint64_t cost_ns)
{
	struct target_state *s = state;

	/* The sample itself is what the target judges, however large. */
	s->woke_ns = cost_ns;
	s->woke = true;
	if (cost_ns > WAKE_CAP_NS)
		cost_ns = WAKE_CAP_NS;
	s->wake_ns = s->measured ? cqpoll_policy_ewma(s->wake_ns, cost_ns, 2) :
				   cost_ns;
	s->measured = true;
}

static const struct cqpoll_policy_ops target_ops = {
	.size = sizeof(struct cqpoll_policy_ops),
	.name = "latency-target",
	.state_size = sizeof(struct target_state),
	.init = target_init,
	.decide = target_decide,
	.wake_cost = target_wake_cost,
};

static const struct cqpoll_policy_ops target_p99_ops = {
	.size = sizeof(struct cqpoll_policy_ops),
	.name = "target-p99",
	.state_size = sizeof(struct target_state),
	.init = target_p99_init,
	.decide = target_decide,
	.wake_cost = target_wake_cost,
};

const struct cqpoll_policy_ops *
cqpoll_policy_latency_target(void)
{
	return &target_ops;
}

const struct cqpoll_policy_ops *
cqpoll_policy_target_p99(void)
{
	return &target_p99_ops;
}
