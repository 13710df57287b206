/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A busy group's housekeeping (the health check and the safety net it runs
 * on its own clock) walks its slice a few members per loop iteration: no
 * iteration polls more than GROUP_STEP (8) cold CQs, and each period still
 * looks at a whole slice. A group of 1024 sw CQs on one shared channel, in
 * busy mode, every CQ cold (armed, no longer polled by the loop), runs
 * iterations for several periods; the most CQ polls of one iteration is the
 * most housekeeping it paid for.
 *
 * The whole process runs on a virtual clock (clock_gettime() below is the
 * library's too): every read advances it by 100 ns, so the loop is never
 * behind its pace and the counts repeat exactly whatever the machine's
 * load. Linked against a test-only library whose slices are walked at
 * once (CQPOLL_MUTANT_HOUSEKEEPING_AT_ONCE: group-spread-control), the same
 * checks must fail (256 or more polls in one iteration).
 */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"

#define NCQ 1024u
/* The library's GROUP_STEP: what one iteration may poll. */
#define STEP 8u
/* Members each period's health check and net look at (GROUP_SLICE). */
#define SLICE 256u
#define PERIODS 6u

static uint64_t vclock_ns = 1000000;

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	(void)id;
	vclock_ns += 100;
	ts->tv_sec = (time_t)(vclock_ns / 1000000000u);
	ts->tv_nsec = (long)(vclock_ns % 1000000000u);
	return 0;
}

static void
on_comps(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	 unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	(void)n;
	(void)arg;
	fprintf(stderr, "group-spread: an idle CQ got a completion\n");
	abort();
}

int
main(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY,
					  .wait_timeout_ms = 1, .cold_us = 20 };
	struct cqpoll_sw_conf sc = { .size = 16 };
	struct cqpoll_group_stats st;
	struct cqpoll_sw_channel *ch;
	struct cqpoll_cq **cq = calloc(NCQ, sizeof(*cq));
	struct cqpoll_group *g;
	uint64_t t_end, polls, max = 0, total = 0;
	unsigned int i;
	int r = 0, fail = 0;

	ch = cqpoll_sw_channel_create();
	g = cqpoll_group_create(&conf);
	if (cq == NULL || ch == NULL || g == NULL) {
		fprintf(stderr, "group-spread: set-up failed\n");
		return 1;
	}
	for (i = 0; i < NCQ; i++) {
		cq[i] = cqpoll_sw_cq_create_on(&sc, ch);
		if (cq[i] == NULL || cqpoll_group_add(g, cq[i], on_comps, NULL) != 0) {
			fprintf(stderr, "group-spread: CQ %u: set-up failed\n", i);
			return 1;
		}
	}
	/* Every CQ cold: idle for cold_us, then armed. */
	t_end = vclock_ns + 2000000;
	while (r >= 0 && vclock_ns < t_end)
		r = cqpoll_group_run_once(g);
	cqpoll_group_stats_get(g, &st);
	if (r < 0 || st.cold_arms < NCQ) {
		fprintf(stderr, "group-spread: %" PRIu64 " cold arms of %u (%d)\n",
			st.cold_arms, NCQ, r);
		return 1;
	}
	polls = st.polls;
	t_end = vclock_ns + PERIODS * 1000000u;
	while (r >= 0 && vclock_ns < t_end) {
		r = cqpoll_group_run_once(g);
		cqpoll_group_stats_get(g, &st);
		if (st.polls - polls > max)
			max = st.polls - polls;
		total += st.polls - polls;
		polls = st.polls;
	}
	printf("group-spread: %u cold CQs, %u periods: %" PRIu64
	       " polls, at most %" PRIu64 " in one iteration\n",
	       NCQ, PERIODS, total, max);
	if (r < 0) {
		fprintf(stderr, "group-spread: run: %d\n", r);
		fail = 1;
	}
	if (max > STEP) {
		fprintf(stderr, "group-spread: an iteration polled %" PRIu64
			" CQs, more than %u\n", max, STEP);
		fail = 1;
	}
	/* Each period's health check and net: a slice each, whole. */
	if (total < 2 * (PERIODS - 1) * SLICE) {
		fprintf(stderr, "group-spread: %" PRIu64 " polls in %u periods, "
			"fewer than two slices a period\n", total, PERIODS);
		fail = 1;
	}
	cqpoll_group_destroy(g);
	for (i = 0; i < NCQ; i++)
		cqpoll_cq_destroy(cq[i]);
	cqpoll_sw_channel_destroy(ch);
	free(cq);
	return fail;
}
