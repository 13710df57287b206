/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's cost model: what the machine costs the poller, given
 * (--sim-cost) or derived from the floors measured now (--sim --floors).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "lab.h"
#include "clock.h"
#include "floors.h"

int
tpcq_lab_cost_parse(const char *s, struct tpcq_lab_cost *c, char *why,
		    size_t len)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "poll_ns", offsetof(struct tpcq_lab_cost, poll_ns) },
		{ "arm_ns", offsetof(struct tpcq_lab_cost, arm_ns) },
		{ "wake_ns", offsetof(struct tpcq_lab_cost, wake_ns) },
		{ "wake_p99_ns", offsetof(struct tpcq_lab_cost, wake_p99_ns) },
		{ "wake_cpu_ns", offsetof(struct tpcq_lab_cost, wake_cpu_ns) },
	};
	unsigned long long v;
	unsigned int seen = 0;
	const char *p = s;
	size_t i, klen;
	char *end;

	while (*p != '\0') {
		klen = strcspn(p, "=");
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strlen(keys[i].key) == klen &&
			    strncmp(keys[i].key, p, klen) == 0)
				break;
		if (i == sizeof(keys) / sizeof(keys[0]) || p[klen] != '=')
			goto bad;
		errno = 0;
		v = strtoull(p + klen + 1, &end, 10);
		if (errno != 0 || end == p + klen + 1 || v == 0 ||
		    v > 10ULL * TPCQ_NS_PER_S || (*end != ',' && *end != '\0'))
			goto bad;
		memcpy((char *)c + keys[i].off, &(uint64_t){ v }, sizeof(uint64_t));
		seen |= 1u << i;
		p = *end == ',' ? end + 1 : end;
	}
	if (seen != (1u << (sizeof(keys) / sizeof(keys[0]))) - 1)
		goto bad;
	if (c->wake_p99_ns < c->wake_ns) {
		snprintf(why, len, "--sim-cost: wake_p99_ns below wake_ns");
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(why, len, "--sim-cost: expected poll_ns=N,arm_ns=N,wake_ns=N,"
		 "wake_p99_ns=N,wake_cpu_ns=N (each 1..10^10 ns), got '%s'", s);
	return -EINVAL;
}

/*
 * From the floors: a wake-up as the eventfd -> epoll_wait one, its CPU as the
 * sleeper's CPU time per wake-up there, an iteration as the hand-off's p50
 * (an empty poll is a cache-line read), arming as two iterations (a
 * doorbell store and a re-poll). Medians and CPU time, not the hand-off's
 * p99: on a busy machine that is the scheduler's, tens of microseconds.
 * Two significant digits, so that the printed --sim-cost reproduces the
 * run.
 */
static uint64_t
sig2(uint64_t v)
{
	uint64_t m = 1;

	while (v / m >= 100)
		m *= 10;
	return v < 1 ? 1 : (v + m / 2) / m * m;
}

void
tpcq_lab_cost_from_floors(const struct tpcq_floors *f,
			  struct tpcq_lab_cost *c)
{
	c->poll_ns = sig2(f->handoff.p50_ns);
	c->arm_ns = sig2(2 * f->handoff.p50_ns);
	c->wake_ns = sig2(f->wakeup.p50_ns);
	c->wake_p99_ns = sig2(f->wakeup.p99_ns);
	c->wake_cpu_ns = sig2(f->wake_cpu_ns);
}
