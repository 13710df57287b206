/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's cost model: what the machine costs the poller, given
 * (--sim-cost) or derived from the floors measured now (--sim --floors).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "lab.h"
#include "clock.h"
#include "floors.h"

static const struct {
	const char *key;
	size_t off;
	bool optional;
} cost_keys[] = {
	{ "poll_ns", offsetof(struct tpcq_lab_cost, poll_ns), false },
	{ "arm_ns", offsetof(struct tpcq_lab_cost, arm_ns), false },
	{ "wake_ns", offsetof(struct tpcq_lab_cost, wake_ns), false },
	{ "wake_p99_ns", offsetof(struct tpcq_lab_cost, wake_p99_ns), false },
	{ "wake_cpu_ns", offsetof(struct tpcq_lab_cost, wake_cpu_ns), false },
	{ "nap_ns", offsetof(struct tpcq_lab_cost, nap_ns), true },
	{ "nap_p99_ns", offsetof(struct tpcq_lab_cost, nap_p99_ns), true },
	{ "instr_ps", offsetof(struct tpcq_lab_cost, instr_ps), true },
};
#define COST_KEYS (sizeof(cost_keys) / sizeof(cost_keys[0]))

static int
cost_list_parse(const char *s, struct tpcq_lab_cost *c, char *why, size_t len)
{
	unsigned long long v;
	unsigned int seen = 0, i;
	const char *p = s;
	size_t klen;
	char *end;

	while (*p != '\0') {
		klen = strcspn(p, "=");
		for (i = 0; i < COST_KEYS; i++)
			if (strlen(cost_keys[i].key) == klen &&
			    strncmp(cost_keys[i].key, p, klen) == 0)
				break;
		if (i == COST_KEYS || p[klen] != '=')
			goto bad;
		errno = 0;
		v = strtoull(p + klen + 1, &end, 10);
		if (errno != 0 || end == p + klen + 1 || v == 0 ||
		    v > 10ULL * TPCQ_NS_PER_S || (*end != ',' && *end != '\0'))
			goto bad;
		memcpy((char *)c + cost_keys[i].off, &(uint64_t){ v },
		       sizeof(uint64_t));
		seen |= 1u << i;
		p = *end == ',' ? end + 1 : end;
	}
	for (i = 0; i < COST_KEYS; i++)
		if (!cost_keys[i].optional && !(seen & (1u << i)))
			goto bad;
	if ((c->nap_ns != 0) != (c->nap_p99_ns != 0)) {
		snprintf(why, len, "--sim-cost: nap_ns and nap_p99_ns go together");
		return -EINVAL;
	}
	if (c->wake_p99_ns < c->wake_ns || c->nap_p99_ns < c->nap_ns) {
		snprintf(why, len, "--sim-cost: a p99 below its median");
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(why, len, "--sim-cost: expected poll_ns=N,arm_ns=N,wake_ns=N,"
		 "wake_p99_ns=N,wake_cpu_ns=N[,nap_ns=N,nap_p99_ns=N][,instr_ps=N] "
		 "(each 1..10^10) or measured:PATH, got '%s'", s);
	return -EINVAL;
}

/*
 * A cost profile: key=value lines of the --sim-cost keys, '#' comments,
 * and one measured=TEXT line (where and when it was measured), which a
 * profile must have: a number without its machine and date is not a
 * measurement.
 */
static int
cost_profile_read(const char *path, struct tpcq_lab_cost *c, char *why,
		  size_t len)
{
	char line[512], list[512] = "";
	size_t n, used = 0;
	FILE *f;
	int r;

	f = fopen(path, "r");
	if (f == NULL) {
		snprintf(why, len, "--sim-cost=measured:%s: %s", path,
			 strerror(errno));
		return -EINVAL;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		n = strcspn(line, "\r\n");
		line[n] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (strncmp(line, "measured=", 9) == 0) {
			snprintf(c->measured, sizeof(c->measured), "%.*s",
				 (int)sizeof(c->measured) - 1, line + 9);
			continue;
		}
		if (used + n + 2 > sizeof(list)) {
			fclose(f);
			snprintf(why, len, "--sim-cost=measured:%s: too long", path);
			return -EINVAL;
		}
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 used != 0 ? "," : "", line);
	}
	fclose(f);
	if (c->measured[0] == '\0') {
		snprintf(why, len, "--sim-cost=measured:%s: no measured= line "
			 "(where and when it was measured)", path);
		return -EINVAL;
	}
	r = cost_list_parse(list, c, why, len);
	if (r != 0)
		snprintf(why, len, "--sim-cost=measured:%s: expected key=value "
			 "lines of the --sim-cost keys, got '%s'", path, list);
	return r;
}

int
tpcq_lab_cost_parse(const char *s, struct tpcq_lab_cost *c, char *why,
		    size_t len)
{
	int r;

	memset(c, 0, sizeof(*c));
	if (strncmp(s, "measured:", 9) == 0)
		r = cost_profile_read(s + 9, c, why, len);
	else
		r = cost_list_parse(s, c, why, len);
	if (r == 0 && c->nap_ns == 0) {
		c->nap_ns = c->wake_ns;
		c->nap_p99_ns = c->wake_p99_ns;
	}
	return r;
}

void
tpcq_lab_cost_format(const struct tpcq_lab_cost *c, char *buf, size_t len)
{
	int n;

	n = snprintf(buf, len, "poll_ns=%" PRIu64 ",arm_ns=%" PRIu64 ",wake_ns=%"
		     PRIu64 ",wake_p99_ns=%" PRIu64 ",wake_cpu_ns=%" PRIu64,
		     c->poll_ns, c->arm_ns, c->wake_ns, c->wake_p99_ns,
		     c->wake_cpu_ns);
	if (n > 0 && (size_t)n < len &&
	    (c->nap_ns != c->wake_ns || c->nap_p99_ns != c->wake_p99_ns))
		n += snprintf(buf + n, len - (size_t)n, ",nap_ns=%" PRIu64
			      ",nap_p99_ns=%" PRIu64, c->nap_ns, c->nap_p99_ns);
	if (n > 0 && (size_t)n < len && c->instr_ps != 0)
		snprintf(buf + n, len - (size_t)n, ",instr_ps=%" PRIu64,
			 c->instr_ps);
}

/*
 * From the floors: a wake-up as the eventfd -> epoll_wait one, its CPU as the
 * sleeper's CPU time per wake-up there, a nap's overshoot as the timer's,
 * an iteration as the hand-off's p50 (an empty poll is a cache-line read),
 * arming as two iterations (a doorbell store and a re-poll). Medians and CPU time, not the hand-off's
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
	/* A nap as the timer floor's; a floor without one, as a wake-up. */
	c->nap_ns = f->timer.samples != 0 ? sig2(f->timer.p50_ns) : c->wake_ns;
	c->nap_p99_ns = f->timer.samples != 0 ?
		sig2(f->timer.p99_ns > f->timer.p50_ns ? f->timer.p99_ns :
		     f->timer.p50_ns) : c->wake_p99_ns;
	c->instr_ps = 0;
	c->measured[0] = '\0';
}
