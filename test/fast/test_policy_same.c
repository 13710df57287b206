/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive policy's decisions on synthetic traces, on a virtual clock,
 * printed as one digest line per trace and policy spec. Built against
 * libcqpoll and against the test-only build without the policy's
 * shortcuts (CQPOLL_MUTANT_ADAPTIVE_FULL: every histogram bucket weighed,
 * every empty poll decided in full); check_same_output.py compares the two
 * (policy-same-decisions): the shortcuts must change no decision. Its
 * control is the build whose empty-poll bound forgets the probe's clock
 * (CQPOLL_MUTANT_POLL_UNTIL_NO_PROBE), which the comparison must catch.
 *
 * A sleep is simulated: the wake-up comes a drawn latency after the next
 * arrival (or at once, past it), the policy hears it (wake_cost) and is
 * told the arrivals found.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll_group.h"

#define ARRIVALS 10000u

enum trace { PINGPONG, UNIFORM, ONOFF, REGIME, HEAVY, TRACES };

static const char *const trace_name[TRACES] = {
	"pingpong", "uniform", "onoff", "regime", "heavy",
};

static uint64_t rng;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The gap before arrival @p i of trace @p t, ns. */
static uint64_t
gap_ns(enum trace t, unsigned int i)
{
	switch (t) {
	case PINGPONG: /* ~1.2 us round trips, a stalled sender now and then */
		return 900 + rnd() % 600 + (rnd() % 2000 == 0 ? 20000 : 0);
	case UNIFORM: /* 20000/s */
		return rnd() % 100000;
	case ONOFF: /* bursts of 200 at 2 us, 500 us apart */
		return i % 200 == 0 ? 500000 : 1500 + rnd() % 1000;
	case REGIME: /* 10 us or 200 us mean gaps, switching every 1000 */
		return (i / 1000) % 2 ? rnd() % 20000 : rnd() % 400000;
	case HEAVY: /* octaves of 1 us to 512 us */
		return 1000ull << (rnd() % 10);
	default:
		abort();
	}
}

static uint64_t
fnv(uint64_t h, uint64_t v)
{
	unsigned int b;

	for (b = 0; b < 8; b++) {
		h ^= (v >> (8 * b)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int
run(enum trace t, const char *spec)
{
	const struct cqpoll_policy_ops *ops;
	const char *args;
	enum cqpoll_policy_action a;
	uint64_t now = 1000000, next, h = 0xcbf29ce484222325ull;
	uint64_t decisions = 0, sleeps = 0, lat;
	unsigned int i = 0, k;
	void *state;

	ops = cqpoll_policy_find(spec, &args);
	if (ops == NULL) {
		fprintf(stderr, "no policy %s\n", spec);
		return -1;
	}
	state = calloc(1, ops->state_size);
	if (state == NULL || ops->init(state, args) != 0) {
		fprintf(stderr, "%s: init failed\n", spec);
		free(state);
		return -1;
	}
	rng = 88172645463325252ull + (uint64_t)t;
	next = now + gap_ns(t, i);
	while (i < ARRIVALS) {
		/* One iteration: 80-140 ns. */
		now += 80 + rnd() % 61;
		for (k = 0; i < ARRIVALS && next <= now; k++)
			next += gap_ns(t, ++i);
		a = ops->decide(state, k, now);
		h = fnv(h, (uint64_t)a);
		decisions++;
		if (k != 0 || a != CQPOLL_POLICY_SLEEP)
			continue;
		sleeps++;
		lat = 5000 + rnd() % 35000;
		now = (next > now ? next : now) + lat;
		if (ops->wake_cost != NULL)
			ops->wake_cost(state, lat);
		for (k = 0; i < ARRIVALS && next <= now; k++)
			next += gap_ns(t, ++i);
		h = fnv(h, (uint64_t)ops->decide(state, k, now));
		decisions++;
	}
	printf("%-9s %-40s decisions %" PRIu64 " sleeps %" PRIu64 " digest %016" PRIx64 "\n",
	       trace_name[t], spec, decisions, sleeps, h);
	free(state);
	return 0;
}

int
main(void)
{
	static const char *const specs[] = {
		"adaptive",
		"adaptive:penalty=10",
		"adaptive:probe_ms=5",
		"adaptive:max_spin_us=20,sleep_cpu_us=5",
		"adaptive:memory_us=0,jump=0",
	};
	unsigned int s;
	int t;

	for (t = 0; t < TRACES; t++)
		for (s = 0; s < sizeof(specs) / sizeof(specs[0]); s++)
			if (run((enum trace)t, specs[s]) != 0)
				return 1;
	return 0;
}
