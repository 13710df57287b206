/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive policy. It learns online the mean gap between arrivals (EWMA,
 * weight 1/8) and the cost of a wake-up W (EWMA, weight 1/8, reported by the
 * group), and sleeps only when the expected silence is
 * worth a wake-up: longer than mult x W x max(1, W / gap). A sleep delays
 * the arrival that ends it, and when a wake-up lasts longer than the gap
 * between arrivals, every arrival during it: about W / gap of them. So at
 * rates where gaps are longer than a wake-up the policy sleeps through any
 * gap longer than a wake-up; where wake-ups would overlap arrivals it takes
 * a silence of W / gap wake-ups before sleeping pays, so a hiccup of the
 * sender does not cost every completion behind it a wake-up.
 *
 * An iteration that found k completions after an interval saw k gaps of a
 * k-th of it: taking the interval for one gap, a policy that sleeps learns
 * the gap its own wake-ups make (each gathers the arrivals of a wake-up) and
 * goes on sleeping where polling had become cheaper. And a sample counts at
 * most double the mean: the silence before a burst is not its spacing, and
 * let in whole it would have the policy sleep through the first tens of
 * gaps of every burst (test_policy: 1040 sleeps in 80 bursts of 50, where
 * 80 are due; the policy lab's onoff trace at 100000/s: a competitive ratio
 * of 2.15, now 1.11).
 *
 * W learns slowly because its errors do not mend alike: one too low makes
 * the policy sleep, and every sleep measures W again; one too high makes it
 * poll, and polling measures nothing until the next probe. With weight 1/4,
 * a few long wake-ups (log-normal, 30 us median, 80 us p99) had it poll
 * through whole stretches of 50 us gaps it should sleep in: a competitive
 * ratio of 1.52 on the lab's periodic trace at 20000/s, 1.22 with 1/8.
 *
 * The expected gap is the learnt mean while the current silence is shorter
 * than twice that mean (work keeps arriving: keep polling, as NAPI IRQ
 * suspension does while epoll keeps returning events); past that the burst
 * has ended, and the silence so far is the best guess of what remains.
 *
 * The wake-up cost is only learnt by sleeping, so a policy that starts with a
 * pessimistic guess would poll forever. Hence a probe: if no wake-up was
 * measured for probe_ms, the next idle decision sleeps once to measure one,
 * and the first measurement replaces the guess outright. A sample counts at
 * most twice the current estimate, so one outlier cannot lock the policy
 * into polling.
 *
 * With monitor_us set, a silence not worth a sleep but longer than a
 * monitor wake-up is spent in a power-monitor wait rather than polling.
 *
 * A sleep also costs CPU of its own (arming, epoll_wait, the scheduler),
 * which the group cannot see from here: the policy hears of wake-ups only
 * through their latency. sleep_cpu_us says it, and the silence must save
 * it too. It matters where it rivals W: on the VMs here (19 us of CPU, 40 us
 * wake-ups) the policy lab's competitive ratio at 20000/s went from 1.47,
 * 1.75, 1.28, 1.44 to 1.20, 1.40, 1.16, 1.29 on poisson, onoff, pareto,
 * diurnal; with the lab's reference cost (5 us a sleep) they move by at
 * most 0.1, either way. The default is 0, as the cost is the machine's.
 */

#include <errno.h>
#include <string.h>

#include "cqpoll_policy_private.h"

/* Break-even: a gap longer than a wake-up saves CPU for the same latency. */
#define MULT_DEFAULT 1
#define WAKE_US_DEFAULT 30
/* 0: at low rates, sleep at the first empty poll, as interrupt mode does. */
#define MIN_SPIN_US_DEFAULT 0
#define MAX_SPIN_US_DEFAULT 1000
#define PROBE_MS_DEFAULT 100
#define PARAM_MAX 10000000
/* Longer gaps are no longer "traffic": cap them so the EWMA recovers fast. */
#define GAP_CAP_NS 1000000000ull

struct adaptive_state {
	uint64_t mult;
	uint64_t min_spin_ns;
	uint64_t max_spin_ns;
	uint64_t wake_ns;     /* Wake-up cost EWMA. */
	uint64_t gap_ns;      /* Inter-arrival EWMA; 0 until two arrivals. */
	uint64_t last_ns;     /* Last iteration with completions; 0: none. */
	uint64_t probe_ns;    /* Longest time without a wake-up measurement. */
	uint64_t probed_ns;   /* Last probe; 0: none yet, so the first idle probes. */
	uint64_t monitor_ns;  /* Wake-up cost of a monitor wait; 0: never monitor. */
	uint64_t sleep_cpu_ns; /* CPU a sleep and its wake-up cost. */
	int measured;         /* wake_ns holds a measurement, not the guess. */
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
	else if (cqpoll_policy_key_is(key, klen, "sleep_cpu_us"))
		s->sleep_cpu_ns = v * 1000;
	else
		return -EINVAL;
	return 0;
}

static int
adaptive_init(void *state, const char *args)
{
	struct adaptive_state *s = state;

	memset(s, 0, sizeof(*s));
	s->mult = MULT_DEFAULT;
	s->wake_ns = WAKE_US_DEFAULT * 1000;
	s->min_spin_ns = MIN_SPIN_US_DEFAULT * 1000;
	s->max_spin_ns = MAX_SPIN_US_DEFAULT * 1000;
	s->probe_ns = PROBE_MS_DEFAULT * 1000000ull;
	if (cqpoll_policy_parse_kv(args, set_param, s) < 0 ||
	    s->min_spin_ns > s->max_spin_ns)
		return -EINVAL;
	return 0;
}

/*
 * The silence that pays for a sleep: mult x (W x max(1, W / gap) + C), W
 * times the arrivals one wake-up delays, plus the sleep's CPU; before two
 * arrivals, mult x (W + C). Saturates.
 */
static uint64_t
sleep_worth(const struct adaptive_state *s)
{
	unsigned __int128 w = (unsigned __int128)s->mult * s->wake_ns;

	if (s->gap_ns != 0 && s->wake_ns > s->gap_ns)
		w = w * s->wake_ns / s->gap_ns;
	w += (unsigned __int128)s->mult * s->sleep_cpu_ns;
	return w > UINT64_MAX ? UINT64_MAX : (uint64_t)w;
}

static enum cqpoll_policy_action
adaptive_decide(void *state, unsigned int completions, uint64_t now_ns)
{
	struct adaptive_state *s = state;
	uint64_t idle, gap, expected;

	if (completions > 0) {
		if (s->last_ns != 0) {
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
		return CQPOLL_POLICY_KEEP_POLLING;
	}
	idle = now_ns - s->last_ns;
	if (idle < s->min_spin_ns)
		return CQPOLL_POLICY_KEEP_POLLING;
	if (idle >= s->max_spin_ns)
		return CQPOLL_POLICY_SLEEP;
	expected = idle < 2 * s->gap_ns ? s->gap_ns : idle;
	if (expected > sleep_worth(s))
		return CQPOLL_POLICY_SLEEP;
	/* probe_ms = 0 turns probing off. */
	if (s->probe_ns != 0 && now_ns - s->probed_ns >= s->probe_ns) {
		s->probed_ns = now_ns;
		return CQPOLL_POLICY_SLEEP;
	}
	/* Too short for a sleep, long enough to wake from a monitor wait. */
	if (s->monitor_ns != 0 && expected > s->monitor_ns)
		return CQPOLL_POLICY_MONITOR;
	return CQPOLL_POLICY_KEEP_POLLING;
}

static void
adaptive_wake_cost(void *state, uint64_t cost_ns)
{
	struct adaptive_state *s = state;

	/* A wake delayed by seconds (a stopped VM) says nothing of the next. */
	if (cost_ns > GAP_CAP_NS)
		cost_ns = GAP_CAP_NS;
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
