/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Arrival times of the open-loop rate engine (--pattern): when completion seq
 * is due, counted from the start of the run. Each time is computed from the
 * start, never from the previous post, so a late post does not delay the rest.
 *
 *   const    every 1/rate
 *   poisson  exponential gaps of mean 1/rate, from a seeded generator: the
 *            same --seed gives the same schedule
 *   onoff    every 1/rate during ON_US, then nothing for OFF_US, repeated
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "params.h"
#include "prng.h"
#include "testpmd_cq.h"

#define ONOFF_PREFIX "onoff:"

static const char *const pattern_names[] = {
	[TPCQ_PATTERN_CONST] = "const",
	[TPCQ_PATTERN_POISSON] = "poisson",
	[TPCQ_PATTERN_ONOFF] = "onoff",
};

const char *
tpcq_pattern_name(enum tpcq_pattern pattern)
{
	if ((unsigned int)pattern >= sizeof(pattern_names) / sizeof(pattern_names[0]))
		return "unknown";
	return pattern_names[pattern];
}

void
tpcq_pattern_describe(const struct tpcq_params *p, char *buf, size_t len)
{
	if (p->pattern == TPCQ_PATTERN_ONOFF)
		snprintf(buf, len, ONOFF_PREFIX "%" PRIu32 ":%" PRIu32, p->on_us,
			 p->off_us);
	else
		snprintf(buf, len, "%s", tpcq_pattern_name(p->pattern));
}

/* A duration in microseconds, 1..TPCQ_ONOFF_US_MAX, ended by @p stop. */
static int
parse_us(const char *s, char stop, uint32_t *v, const char **end)
{
	unsigned long long x;
	char *e;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &e, 10);
	if (*e != stop || errno == ERANGE || x < 1 || x > TPCQ_ONOFF_US_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	*end = e;
	return 0;
}

int
tpcq_pattern_parse(const char *s, struct tpcq_params *p, char *why, size_t len)
{
	const char *e;

	if (strcmp(s, "const") == 0) {
		p->pattern = TPCQ_PATTERN_CONST;
		return 0;
	}
	if (strcmp(s, "poisson") == 0) {
		p->pattern = TPCQ_PATTERN_POISSON;
		return 0;
	}
	if (strncmp(s, ONOFF_PREFIX, strlen(ONOFF_PREFIX)) != 0) {
		snprintf(why, len, "--pattern: unknown pattern '%s' (const, "
			 "poisson or onoff:ON_US:OFF_US)", s);
		return -EINVAL;
	}
	s += strlen(ONOFF_PREFIX);
	if (parse_us(s, ':', &p->on_us, &e) != 0 ||
	    parse_us(e + 1, '\0', &p->off_us, &e) != 0) {
		snprintf(why, len, "--pattern=onoff:%s: expected onoff:ON_US:OFF_US, "
			 "two whole numbers of microseconds in 1..%u", s,
			 TPCQ_ONOFF_US_MAX);
		return -EINVAL;
	}
	p->pattern = TPCQ_PATTERN_ONOFF;
	return 0;
}

uint64_t
tpcq_arrival_total(const struct tpcq_params *p)
{
	double on, cycle, full, rest;

	if (p->pattern != TPCQ_PATTERN_ONOFF)
		return (uint64_t)((double)p->rate * p->duration_s + 0.5);
	/* The ON time within the duration, then one arrival per 1/rate of it. */
	on = (double)p->on_us / 1e6;
	cycle = on + (double)p->off_us / 1e6;
	full = floor(p->duration_s / cycle);
	rest = p->duration_s - full * cycle;
	return (uint64_t)ceil((full * on + fmin(rest, on)) * (double)p->rate);
}

void
tpcq_arrival_init(struct tpcq_arrival *a, const struct tpcq_params *p,
		  double units_per_s)
{
	memset(a, 0, sizeof(*a));
	a->pattern = p->pattern;
	a->period = units_per_s / (double)p->rate;
	a->on = (double)p->on_us * units_per_s / 1e6;
	a->off = (double)p->off_us * units_per_s / 1e6;
	a->rng = p->faults.seed;
}

double
tpcq_arrival_at(struct tpcq_arrival *a, uint64_t seq)
{
	double active, u;

	switch (a->pattern) {
	case TPCQ_PATTERN_POISSON:
		if (seq == 0)
			return 0.0;
		u = tpcq_prng_unit(&a->rng);
		a->t += -log(u) * a->period;
		return a->t;
	case TPCQ_PATTERN_ONOFF:
		/* Arrivals on a clock that only runs during ON periods. */
		active = (double)seq * a->period;
		return active + floor(active / a->on) * a->off;
	case TPCQ_PATTERN_CONST:
	default:
		return (double)seq * a->period;
	}
}
