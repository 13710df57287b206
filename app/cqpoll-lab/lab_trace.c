/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's arrival traces (--sim --trace=NAME): arrival times in ns
 * from 0, made from --rate, --duration and --seed with a PRNG of its own, so
 * that the same command makes the same trace on any machine; or read from a
 * file of one timestamp per line (--trace=file:PATH, what --record writes).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

/* On/off: ON_US of arrivals at --rate, then OFF_US of none (the defaults). */
#define ONOFF_ON_US_DEFAULT 1000U
#define ONOFF_OFF_US_DEFAULT 9000U
/* Pareto shape: a finite mean, an infinite variance: heavy-tailed gaps. */
#define PARETO_ALPHA 1.5
/* Periodic: each arrival moved by up to this fraction of the period. */
#define PERIODIC_JITTER 0.1
/* Diurnal: the rate ramps from this fraction of --rate up to it and back. */
#define DIURNAL_LOW 0.1
/*
 * Regime: the rate jumps between --rate and --rate / F, F drawn from 10 to
 * 100 (log-uniform) at each switch, after a stretch of exponential length
 * with this mean.
 */
#define REGIME_MEAN_NS 20e6
/* Longest trace the lab holds: 64 MiB of timestamps. */
#define TRACE_MAX (1U << 23)

static int
push(struct tpcq_lab_trace *t, double at_ns)
{
	uint64_t *a;
	size_t cap;

	if (t->n == t->cap) {
		if (t->cap >= TRACE_MAX)
			return -E2BIG;
		cap = t->cap != 0 ? t->cap * 2 : 4096;
		a = realloc(t->at, cap * sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		t->at = a;
		t->cap = cap;
	}
	t->at[t->n++] = (uint64_t)at_ns;
	return 0;
}

static int
read_file(struct tpcq_lab_trace *t, const char *path, char *why, size_t len)
{
	unsigned long long v, first = 0, last = 0;
	char line[128];
	unsigned long lineno = 0;
	FILE *f;
	int r = 0;

	f = fopen(path, "r");
	if (f == NULL) {
		snprintf(why, len, "--trace=file:%s: %s", path, strerror(errno));
		return -errno;
	}
	while (r == 0 && fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (line[0] == '#') {
			t->untold |= strstr(line, "host timestamps: no") != NULL;
			continue;
		}
		if (line[0] == '\n')
			continue;
		if (sscanf(line, "%llu", &v) != 1 || (t->n > 0 && v < last)) {
			snprintf(why, len, "--trace=file:%s: line %lu: expected a "
				 "timestamp in ns, not before the one above", path,
				 lineno);
			r = -EINVAL;
			break;
		}
		if (t->n == 0)
			first = v;
		last = v;
		r = push(t, (double)(v - first));
		if (r != 0)
			snprintf(why, len, "--trace=file:%s: more than %u "
				 "timestamps", path, TRACE_MAX);
	}
	fclose(f);
	if (r == 0 && t->n < 2) {
		snprintf(why, len, "--trace=file:%s: fewer than two timestamps",
			 path);
		r = -EINVAL;
	}
	return r;
}

int
tpcq_lab_trace_make(struct tpcq_lab_trace *t, const char *spec, double rate,
		    double duration_s, uint64_t seed, char *why, size_t len)
{
	double end = duration_s * 1e9, mean = 1e9 / rate, at = 0, u, r_t;
	unsigned int on_us = ONOFF_ON_US_DEFAULT, off_us = ONOFF_OFF_US_DEFAULT;
	uint64_t s = seed, k;
	char name[16];
	int r = 0;

	memset(t, 0, sizeof(*t));
	if (strncmp(spec, "file:", 5) == 0) {
		snprintf(t->name, sizeof(t->name), "file");
		return read_file(t, spec + 5, why, len);
	}
	if (sscanf(spec, "onoff:%u:%u", &on_us, &off_us) == 2 && on_us > 0)
		snprintf(name, sizeof(name), "onoff");
	else
		snprintf(name, sizeof(name), "%.15s", spec);
	snprintf(t->name, sizeof(t->name), "%s", spec);
	if (strcmp(name, "poisson") == 0) {
		while (r == 0 && (at += -mean * log(tpcq_prng_unit(&s))) < end)
			r = push(t, at);
	} else if (strcmp(name, "onoff") == 0) {
		double cycle = (on_us + off_us) * 1e3;

		while (r == 0 && (at += -mean * log(tpcq_prng_unit(&s))) < end) {
			/* Arrivals that fall in OFF move to the next ON. */
			if (fmod(at, cycle) >= on_us * 1e3)
				at = (floor(at / cycle) + 1) * cycle;
			if (at < end)
				r = push(t, at);
		}
	} else if (strcmp(name, "pareto") == 0) {
		double xm = mean * (PARETO_ALPHA - 1) / PARETO_ALPHA;

		while (r == 0 && (at += xm / pow(tpcq_prng_unit(&s),
						 1.0 / PARETO_ALPHA)) < end)
			r = push(t, at);
	} else if (strcmp(name, "diurnal") == 0) {
		/* One day in the duration: low, up to --rate, low again. */
		for (;;) {
			r_t = rate * (DIURNAL_LOW + (1 - DIURNAL_LOW) *
				      0.5 * (1 - cos(2 * M_PI * at / end)));
			at += -1e9 / r_t * log(tpcq_prng_unit(&s));
			if (at >= end || r != 0)
				break;
			r = push(t, at);
		}
	} else if (strcmp(name, "regime") == 0) {
		double until = 0, cur = rate;
		bool fast = false;

		for (;;) {
			if (at >= until) {
				/* A switch: the next stretch and its rate. */
				fast = !fast;
				cur = fast ? rate : rate / pow(10.0, 1.0 +
						tpcq_prng_unit(&s));
				until = at - REGIME_MEAN_NS * log(tpcq_prng_unit(&s));
			}
			at += -1e9 / cur * log(tpcq_prng_unit(&s));
			if (at >= end || r != 0)
				break;
			r = push(t, at);
		}
	} else if (strcmp(name, "periodic") == 0) {
		for (k = 1; r == 0 && k * mean < end; k++) {
			u = tpcq_prng_unit(&s);
			r = push(t, (double)k * mean + (2 * u - 1) * PERIODIC_JITTER * mean);
		}
	} else {
		snprintf(why, len, "--trace: unknown trace '%s' (%s)", spec,
			 TPCQ_LAB_TRACES);
		return -EINVAL;
	}
	if (r != 0) {
		snprintf(why, len, "--trace=%s: %s", spec, r == -E2BIG ?
			 "too many arrivals: lower --rate or --duration" :
			 "out of memory");
		return r;
	}
	if (t->n < 2) {
		snprintf(why, len, "--trace=%s: --rate x --duration gives fewer "
			 "than two arrivals", spec);
		return -EINVAL;
	}
	return 0;
}

void
tpcq_lab_trace_free(struct tpcq_lab_trace *t)
{
	free(t->at);
	t->at = NULL;
	t->n = t->cap = 0;
}
