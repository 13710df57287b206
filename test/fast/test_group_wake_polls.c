/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What one sleep-and-wake costs in polls of the CQ, counted by the CQ itself
 * (cqpoll_cq_stats::polls). A blocking wait pays one poll that finds the
 * completion and, on an edge device, one look after its arm. Each of CYCLES
 * completions is posted only once the consumer sleeps, so that every cycle
 * is one sleep and one wake-up.
 *
 * An interrupt-mode group pays the same: the wake-up's poll, which left the
 * CQ empty, serves as the next pass's poll and as the first poll of its
 * poll-and-arm. Expected polls a cycle: 1 (level: the arm fires for what is
 * there, no look after it), 2 (edge: the look after the arm). A group that
 * polls its woken CQ again before arming it, or polls it a second time
 * inside the transition, pays 2 and 3 or more: caught.
 *
 * The CQ API's loop (cqpoll_poll_and_arm() until 0, cqpoll_cq_wait()), with
 * --api=cq alone: its poll after the wake-up returns the completion; on an
 * edge device the next cqpoll_poll_and_arm() starts at the arm, that poll
 * having drained the CQ: 2 a cycle, the look after the arm included. Level
 * pays 2 as well: the transition polls first there, to return what is
 * there. The control (group-wake-polls-control, a library whose
 * poll-and-arm always polls first) pays 3 on edge: caught.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

#define CYCLES 200
/* Polls of the start (the first pass) and of the stop's wake-up. */
#define SLACK 4

/* A group's run (g set) or the CQ API's loop's (g NULL). */
struct run {
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	uint64_t got;
	int stop;             /* the CQ API's loop: end at the next wake-up */
};

static void
on_comp(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
	void *arg)
{
	struct run *r = arg;

	(void)cq;
	(void)c;
	__atomic_fetch_add(&r->got, n, __ATOMIC_RELEASE);
}

static void *
consumer(void *arg)
{
	struct run *r = arg;

	return (void *)(intptr_t)cqpoll_group_run(r->g);
}

/* The CQ API's consumer: poll-and-arm until 0, then sleep. */
static void *
cq_consumer(void *arg)
{
	struct run *r = arg;
	struct cqpoll_completion comps[32];
	int n;

	for (;;) {
		while ((n = cqpoll_poll_and_arm(r->cq, comps, 32)) > 0)
			__atomic_fetch_add(&r->got, (uint64_t)n, __ATOMIC_RELEASE);
		if (n < 0)
			return (void *)(intptr_t)n;
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			return NULL;
		n = cqpoll_cq_wait(r->cq, 10000);
		if (n < 0)
			return (void *)(intptr_t)n;
	}
}

/* The consumer's sleeps so far: the group's, or the CQ's waits. */
static uint64_t
sleeps_of(const struct run *r)
{
	struct cqpoll_group_stats gs;
	struct cqpoll_cq_stats cs;

	if (r->g != NULL) {
		cqpoll_group_stats_get(r->g, &gs);
		return gs.sleeps;
	}
	cqpoll_cq_stats_get(r->cq, &cs);
	return cs.waits;
}

/*
 * CYCLES completions, each posted once the consumer sleeps: every cycle is
 * one sleep and one wake-up. The polls they cost in @p polls.
 */
static int
feed(struct run *r, uint64_t *polls)
{
	struct cqpoll_completion c = { .byte_len = 8 };
	struct cqpoll_cq_stats st;
	uint64_t i, sleeps, polls0;

	while (sleeps_of(r) == 0)
		test_spin_ns(10000);
	cqpoll_cq_stats_get(r->cq, &st);
	polls0 = st.polls;
	for (i = 0; i < CYCLES; i++) {
		sleeps = sleeps_of(r);
		c.wr_id = i;
		if (cqpoll_sw_post(r->cq, &c) != 0) {
			fprintf(stderr, "post %" PRIu64 " failed\n", i);
			return 1;
		}
		/* Delivered, and asleep again: the next post wakes it. */
		while (__atomic_load_n(&r->got, __ATOMIC_ACQUIRE) <= i ||
		       sleeps_of(r) == sleeps)
			test_spin_ns(2000);
	}
	cqpoll_cq_stats_get(r->cq, &st);
	*polls = st.polls - polls0;
	return 0;
}

/* @p polls over CYCLES cycles against @p per_cycle a cycle: 0, or 1 (over). */
static int
judge_polls(const char *api, enum cqpoll_arm_semantics arm, uint64_t polls,
	    uint64_t per_cycle)
{
	printf("%s, %s arm: %" PRIu64 " polls for %d sleep-and-wake cycles "
	       "(%.2f a cycle, want %" PRIu64 ")\n", api,
	       cqpoll_arm_semantics_name(arm), polls, CYCLES,
	       (double)polls / CYCLES, per_cycle);
	if (polls > CYCLES * per_cycle + SLACK) {
		fprintf(stderr, "FAIL: %s, %s: more than %" PRIu64 " polls a cycle\n",
			api, cqpoll_arm_semantics_name(arm), per_cycle);
		return 1;
	}
	return 0;
}

/* An interrupt-mode group of one sw CQ (@p cq_api false), or the CQ API's loop. */
static int
run_case(bool cq_api, enum cqpoll_arm_semantics arm, uint64_t per_cycle)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					.wait_timeout_ms = 10000 };
	struct cqpoll_sw_conf sc = { .size = 64, .arm = arm };
	struct cqpoll_completion c = { .byte_len = 8, .wr_id = CYCLES };
	struct run r = { 0 };
	uint64_t polls = 0;
	pthread_t t;
	void *ret;
	int rc;

	r.cq = cqpoll_sw_cq_create(&sc);
	if (!cq_api) {
		r.g = cqpoll_group_create(&gc);
		if (r.g == NULL || r.cq == NULL ||
		    cqpoll_group_add(r.g, r.cq, on_comp, &r) != 0) {
			fprintf(stderr, "set-up: %s\n", strerror(errno));
			return 1;
		}
	} else if (r.cq == NULL) {
		fprintf(stderr, "set-up: %s\n", strerror(errno));
		return 1;
	}
	if (pthread_create(&t, NULL, cq_api ? cq_consumer : consumer, &r) != 0)
		return 1;
	rc = feed(&r, &polls);
	if (cq_api) {
		/* One more completion wakes the loop, which then ends. */
		__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
		if (cqpoll_sw_post(r.cq, &c) != 0)
			abort();
	} else {
		cqpoll_group_stop(r.g);
	}
	pthread_join(t, &ret);
	if (ret != NULL) {
		fprintf(stderr, "%s: %s\n", cq_api ? "cq loop" : "group run",
			strerror((int)-(intptr_t)ret));
		rc = 1;
	}
	if (rc == 0)
		rc = judge_polls(cq_api ? "cq api" : "group", arm, polls, per_cycle);
	cqpoll_group_destroy(r.g);
	cqpoll_cq_destroy(r.cq);
	return rc;
}

int
main(int argc, char **argv)
{
	bool cq_only = argc > 1 && strcmp(argv[1], "--api=cq") == 0;
	int rc = 0;

	if (argc > 1 && !cq_only) {
		fprintf(stderr, "usage: %s [--api=cq]\n", argv[0]);
		return 2;
	}
	if (!cq_only) {
		rc |= run_case(false, CQPOLL_ARM_LEVEL, 1);
		rc |= run_case(false, CQPOLL_ARM_EDGE, 2);
	}
	rc |= run_case(true, CQPOLL_ARM_LEVEL, 2);
	rc |= run_case(true, CQPOLL_ARM_EDGE, 2);
	if (rc == 0)
		printf("PASS\n");
	return rc;
}
