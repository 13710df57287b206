/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_HARNESS_H
#define TPCQ_HARNESS_H

/*
 * The harness work on each completion, one function for testpmd-cq's pollers
 * and tpcq-peer's receivers: the latency stamp, the order check and the
 * count. A comparison of cqpoll's CPU per completion with a peer's is a
 * comparison of their waits only if this work is the same on both sides; one
 * definition in one object (tpcq_harness, linked into both programs) makes it
 * so, and the control run (--harness=count on both) takes it out.
 *
 * tpcq_harness_got() stays out of line so that callgrind counts it as a
 * function of its own in either program: its instructions per call are then
 * read off both profiles and compared (doc/guides/testpmd-cq.md). A call
 * costs a few instructions against the microseconds of a wake-up, the same on
 * both sides.
 */

#include <stdbool.h>
#include <stdint.h>

#include "hist.h"

/* What a consumer does with each completion. */
enum tpcq_harness_work {
	TPCQ_HARNESS_FULL,  /* latency stamp, order check, count */
	TPCQ_HARNESS_COUNT, /* the control: count only */
};

/*
 * One stream of completions in sequence (a CQ of testpmd-cq, a peer's
 * receiver) and where its consumer thread keeps its tallies; the tallies may
 * be shared by the streams of one thread.
 */
struct tpcq_harness {
	enum tpcq_harness_work work;
	uint64_t expected;        /* sequence number of the next completion */
	struct tpcq_hist *latency; /* one-way latency, ns (FULL) */
	uint64_t *completions;
	uint64_t *order_errors;   /* completions out of sequence (FULL) */
};

/* "full" or "count" into @p w; 0, or -1 for another name. */
int tpcq_harness_parse(const char *s, enum tpcq_harness_work *w);
const char *tpcq_harness_name(enum tpcq_harness_work w);

/* The time stamp a burst of completions read at once shares (FULL: the clock). */
uint64_t tpcq_harness_now(const struct tpcq_harness *h);

/*
 * FULL: completion @p seq read at @p now (tpcq_harness_now()), posted at
 * *@p post_ns (NULL: no post time, no latency sample); it is counted, and
 * out of sequence if not the one expected, after which the sequence resumes
 * from it so that one lost completion counts once.
 */
void tpcq_harness_got(struct tpcq_harness *h, uint64_t seq, uint64_t now,
		      const uint64_t *post_ns);

/* COUNT: @p n completions read, counted and nothing else. */
static inline void
tpcq_harness_count(struct tpcq_harness *h, unsigned int n)
{
	*h->completions += n;
}

static inline bool
tpcq_harness_counting(const struct tpcq_harness *h)
{
	return h->work == TPCQ_HARNESS_COUNT;
}

#endif /* TPCQ_HARNESS_H */
