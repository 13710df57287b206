/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_POLICY_GAPS_PRIVATE_H
#define CQPOLL_POLICY_GAPS_PRIVATE_H

/*
 * A histogram of silences (ns) that forgets by halving, shared by the
 * policies that learn a distribution of gaps rather than their mean
 * (latency-target, adaptive). Buckets of 1 ns below 16 ns, then 8 an octave
 * (9 % wide at most), up to 8.6 s; longer gaps fall into the last one.
 */

#include <stdint.h>

#define CQPOLL_POLICY_GAP_BUCKETS 256

struct cqpoll_policy_gaps {
	uint64_t total; /* Samples in n[]. */
	uint32_t n[CQPOLL_POLICY_GAP_BUCKETS];
};

/* The bucket of a gap of @g ns. */
unsigned int cqpoll_policy_gap_bucket(uint64_t g);

/* The least gap in bucket @i (@i may be CQPOLL_POLICY_GAP_BUCKETS: the end). */
uint64_t cqpoll_policy_gap_lower(unsigned int i);

/* The middle of bucket @i: what a gap counted there stands for. */
uint64_t cqpoll_policy_gap_mid(unsigned int i);

/*
 * Count @k samples of gap @g; once @mem samples are held, halve every
 * bucket, so the histogram remembers @mem / 2 to @mem of the latest.
 */
void cqpoll_policy_gap_add(struct cqpoll_policy_gaps *h, uint64_t g,
			   unsigned int k, uint64_t mem);

/*
 * The share x / @n of @n samples (a second's completions, @n >= 1) that
 * may be expected over a bound so that, the count over being about Poisson,
 * it stays within 1 % of them with 3 standard deviations to spare:
 * x + 3 sqrt(x) = @n / 100. 0.4 % at 1000, 0.66 % at 5000, 0.75 % at
 * 10800. For the p99 that latency-target keeps at low rates.
 */
double cqpoll_policy_count_share(double n);

#endif /* CQPOLL_POLICY_GAPS_PRIVATE_H */
