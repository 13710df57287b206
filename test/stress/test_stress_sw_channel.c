/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sw shared event channel under the poll-and-arm guarantee: --cqs sw CQs
 * on ONE channel (cqpoll_sw_cq_create_on()), in one interrupt-mode group
 * whose safety net is --timeout-ms (1 s: far beyond any wake-up), and
 * --producers device threads, each owning a share of the CQs, posting one
 * completion at a time to each of its CQs in turn, with up to --window in
 * flight, so that raises land while the group takes the channel's list.
 *
 * Checked: every completion delivered exactly once and in order per CQ; no
 * lost wake-up: the group's timeout_recoveries (a sleep that ended by its
 * timeout with work visible before it began, found by the net) stays 0, and
 * nothing is left undelivered at the end. The group sleeps between bursts
 * (its sleeps are counted and must be many). The producers stop once
 * --posts completions were delivered and the group slept MIN_SLEEPS times
 * (a sanitizer build's slow consumer sleeps less often per completion: it
 * takes longer, not fewer sleeps), or at a 40 s deadline, then what is in
 * flight must arrive.
 *
 * Negative control (--expect-lost): the same test linked with a test-only
 * build whose channel drains its fd after taking its fired list
 * (CQPOLL_MUTANT_CHANNEL_NAIVE): a raise that finds the list emptied in
 * between has its fd write eaten, its CQ stays listed with the fd silent,
 * and the group sleeps through it until the net: a recovery, caught. The
 * run stops at the first one (about 1 s here); it posts until then or the
 * deadline, whatever --posts says.
 *
 * Usage: test_stress_sw_channel [--cqs=N] [--producers=N] [--posts=N]
 *                               [--window=N] [--timeout-ms=MS] [--expect-lost]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

#define MAX_CQS 4096
#define MAX_PRODUCERS 8
/*
 * Well inside meson's timeout on a loaded 2-core machine (or under TSan):
 * the producers stop there, and what they posted must still arrive.
 */
#define DEADLINE_NS (40ull * 1000000000ull)
/* What a run must have exercised to judge anything. */
#define MIN_COMPLETIONS 10000u
#define MIN_SLEEPS 1000u

struct cq_state {
	struct cqpoll_cq *cq;
	uint64_t posted;    /* producer stores, the others load */
	uint64_t delivered; /* consumer stores, producer loads */
	uint64_t bad;       /* out of order or duplicated */
};

static struct cq_state cqs[MAX_CQS];
static unsigned int ncqs = 64, nprod = 2, window = 4;
static uint64_t posts = 200000;
static unsigned int timeout_ms = 1000;
static int stop;

static void
on_comp(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	unsigned int n, void *arg)
{
	struct cq_state *s = arg;
	uint64_t d = __atomic_load_n(&s->delivered, __ATOMIC_RELAXED);
	unsigned int i;

	(void)cq;
	for (i = 0; i < n; i++) {
		if (c[i].wr_id != d + 1)
			s->bad++;
		d = c[i].wr_id;
	}
	__atomic_store_n(&s->delivered, d, __ATOMIC_RELEASE);
}

static void *
producer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, k = 0, mine, i;
	uint64_t rnd = id + 1;
	struct cqpoll_completion comp;
	struct cq_state *s;

	mine = ncqs / nprod;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		s = &cqs[id * mine + k];
		k = (k + 1) % mine;
		/* At most --window in flight per CQ: the group sleeps often. */
		if (s->posted - __atomic_load_n(&s->delivered, __ATOMIC_ACQUIRE) >=
		    window)
			continue;
		memset(&comp, 0, sizeof(comp));
		comp.wr_id = s->posted + 1;
		if (cqpoll_sw_post(s->cq, &comp) != 0)
			continue;
		__atomic_store_n(&s->posted, s->posted + 1, __ATOMIC_RELEASE);
		/* Gaps of 0-2 µs: raises land anywhere in the group's wake. */
		i = (unsigned int)(test_rnd(&rnd) % 3);
		if (i != 0)
			test_spin_ns(i * 1000u);
	}
	return NULL;
}

static uint64_t
undelivered(void)
{
	uint64_t u = 0;
	unsigned int i;

	for (i = 0; i < ncqs; i++)
		u += __atomic_load_n(&cqs[i].posted, __ATOMIC_ACQUIRE) -
		     __atomic_load_n(&cqs[i].delivered, __ATOMIC_ACQUIRE);
	return u;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "cqs", required_argument, NULL, 'c' },
		{ "producers", required_argument, NULL, 'p' },
		{ "posts", required_argument, NULL, 'n' },
		{ "window", required_argument, NULL, 'w' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "expect-lost", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_INTERRUPT };
	struct cqpoll_sw_conf sc = { .size = 64, .arm = CQPOLL_ARM_EDGE };
	pthread_t th[MAX_PRODUCERS];
	struct cqpoll_group_stats st;
	struct cqpoll_sw_channel *ch;
	struct cqpoll_group *g;
	uint64_t t0, bad = 0, left, drain_until;
	int expect_lost = 0, o, r, fail = 0;
	unsigned int i;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'c': ncqs = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': nprod = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'n': posts = strtoull(optarg, NULL, 0); break;
		case 'w': window = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 't': timeout_ms = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'x': expect_lost = 1; break;
		default:
			fprintf(stderr, "usage: see the header of %s\n", __FILE__);
			return 2;
		}
	}
	/* The control runs until its race is caught (or the deadline). */
	if (expect_lost)
		posts = UINT64_MAX / 2;
	if (ncqs == 0 || ncqs > MAX_CQS || nprod == 0 || nprod > MAX_PRODUCERS ||
	    ncqs % nprod != 0 || window == 0 || window > 32 || timeout_ms == 0) {
		fprintf(stderr, "bad arguments: --cqs 1..%u, a multiple of --producers 1..%u; --window 1..32; --timeout-ms > 0\n",
			MAX_CQS, MAX_PRODUCERS);
		return 2;
	}
	ch = cqpoll_sw_channel_create();
	if (ch == NULL) {
		perror("channel create");
		return 1;
	}
	gc.wait_timeout_ms = timeout_ms;
	g = cqpoll_group_create(&gc);
	if (g == NULL) {
		perror("group create");
		return 1;
	}
	for (i = 0; i < ncqs; i++) {
		cqs[i].cq = cqpoll_sw_cq_create_on(&sc, ch);
		if (cqs[i].cq == NULL ||
		    cqpoll_cq_event_fd(cqs[i].cq) != cqpoll_sw_channel_event_fd(ch) ||
		    cqpoll_group_add(g, cqs[i].cq, on_comp, &cqs[i]) != 0) {
			fprintf(stderr, "cq %u: create, fd or add failed\n", i);
			return 1;
		}
	}
	for (i = 0; i < nprod; i++)
		pthread_create(&th[i], NULL, producer, (void *)(uintptr_t)i);
	t0 = test_now_ns();
	for (;;) {
		r = cqpoll_group_run_once(g);
		if (r < 0) {
			fprintf(stderr, "run_once: %s\n", strerror(-r));
			fail = 1;
			break;
		}
		cqpoll_group_stats_get(g, &st);
		if (expect_lost && st.timeout_recoveries != 0)
			break;
		if (test_now_ns() - t0 > DEADLINE_NS)
			break;
		if (!expect_lost && st.completions >= posts &&
		    st.sleeps >= MIN_SLEEPS)
			break;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nprod; i++)
		pthread_join(th[i], NULL);
	/* Whatever is still in flight gets two nets to arrive. */
	drain_until = test_now_ns() + 2ull * timeout_ms * 1000000u;
	while (undelivered() != 0 && test_now_ns() < drain_until)
		if (cqpoll_group_run_once(g) < 0)
			break;
	cqpoll_group_stats_get(g, &st);
	left = undelivered();
	for (i = 0; i < ncqs; i++)
		bad += cqs[i].bad;
	printf("sw channel: %u cqs, %u producers, %" PRIu64 " delivered, %" PRIu64
	       " sleeps, %" PRIu64 " event wake-ups, %" PRIu64 " timeouts, %" PRIu64
	       " recoveries, %" PRIu64 " undelivered, %" PRIu64 " out of order, %.1f s\n",
	       ncqs, nprod, st.completions, st.sleeps, st.wakeups_event,
	       st.wakeups_timeout, st.timeout_recoveries, left, bad,
	       (double)(test_now_ns() - t0) / 1e9);
	if (bad != 0) {
		fprintf(stderr, "FAIL: %" PRIu64 " completions out of order or duplicated\n", bad);
		fail = 1;
	}
	if (expect_lost) {
		if (st.timeout_recoveries == 0 && left == 0) {
			fprintf(stderr, "FAIL: the naive channel lost no wake-up in %" PRIu64 " completions\n",
				st.completions);
			fail = 1;
		} else {
			printf("negative control caught: %" PRIu64 " recoveries, %" PRIu64 " undelivered\n",
			       st.timeout_recoveries, left);
		}
	} else {
		if (st.timeout_recoveries != 0 || left != 0) {
			fprintf(stderr, "FAIL: lost wake-ups: %" PRIu64 " recoveries, %" PRIu64 " undelivered\n",
				st.timeout_recoveries, left);
			fail = 1;
		}
		if (st.completions < MIN_COMPLETIONS || st.sleeps < MIN_SLEEPS) {
			fprintf(stderr, "FAIL: %" PRIu64 " completions in %" PRIu64 " sleeps (want %u, %u): the run did not happen as designed\n",
				st.completions, st.sleeps, MIN_COMPLETIONS, MIN_SLEEPS);
			fail = 1;
		}
	}
	cqpoll_group_destroy(g);
	for (i = 0; i < ncqs; i++)
		cqpoll_cq_destroy(cqs[i].cq);
	if (cqpoll_sw_channel_destroy(ch) != 0) {
		fprintf(stderr, "FAIL: channel destroy\n");
		fail = 1;
	}
	return fail;
}
