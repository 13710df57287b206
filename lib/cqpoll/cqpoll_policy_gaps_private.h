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

#define CQPOLL_POLICY_GAP_WORDS (CQPOLL_POLICY_GAP_BUCKETS / 64)

/*
 * Written only through cqpoll_policy_gap_add() and cqpoll_policy_gap_halve(),
 * which keep used[] in step with n[].
 */
struct cqpoll_policy_gaps {
	uint64_t total; /* Samples in n[]. */
	/*
	 * Bit i set: n[i] != 0. A walk over the buckets that hold samples
	 * (cqpoll_policy_gap_next()) visits the few a traffic fills, not all
	 * 256: the adaptive policy weighs its threshold every 16 silences,
	 * and a walk over every bucket there cost more than the rest of a
	 * completion's work.
	 */
	uint64_t used[CQPOLL_POLICY_GAP_WORDS];
	uint32_t n[CQPOLL_POLICY_GAP_BUCKETS];
};

/* The bucket of a gap of @g ns. */
unsigned int cqpoll_policy_gap_bucket(uint64_t g);

/*
 * The least gap in bucket @i (@i may be CQPOLL_POLICY_GAP_BUCKETS: the end).
 * Inline: the threshold's choice asks it of every bucket it weighs.
 */
static inline uint64_t
cqpoll_policy_gap_lower(unsigned int i)
{
	if (i < 16)
		return i;
	return (uint64_t)(8 + i % 8) << (i / 8 - 1);
}

/* The middle of bucket @i: what a gap counted there stands for. */
static inline uint64_t
cqpoll_policy_gap_mid(unsigned int i)
{
	uint64_t lo = cqpoll_policy_gap_lower(i);

	return lo + (cqpoll_policy_gap_lower(i + 1) - lo) / 2;
}

/*
 * The first bucket from @i on that holds samples, or
 * CQPOLL_POLICY_GAP_BUCKETS when none does.
 */
static inline unsigned int
cqpoll_policy_gap_next(const struct cqpoll_policy_gaps *h, unsigned int i)
{
	unsigned int w;
	uint64_t bits;

	if (i >= CQPOLL_POLICY_GAP_BUCKETS)
		return CQPOLL_POLICY_GAP_BUCKETS;
	w = i / 64;
	bits = h->used[w] & (~0ull << (i % 64));
	while (bits == 0) {
		if (++w == CQPOLL_POLICY_GAP_WORDS)
			return CQPOLL_POLICY_GAP_BUCKETS;
		bits = h->used[w];
	}
	return w * 64 + (unsigned int)__builtin_ctzll(bits);
}

/*
 * Count @k samples of gap @g; once @mem samples are held, halve every
 * bucket, so the histogram remembers @mem / 2 to @mem of the latest.
 */
void cqpoll_policy_gap_add(struct cqpoll_policy_gaps *h, uint64_t g,
			   unsigned int k, uint64_t mem);

/* Halve every bucket (rounding down); total follows. */
void cqpoll_policy_gap_halve(struct cqpoll_policy_gaps *h);

/*
 * The share x / @n of @n samples (a second's completions, @n >= 1) that
 * may be expected over a bound so that, the count over being about Poisson,
 * it stays within 1 % of them with 3 standard deviations to spare:
 * x + 3 sqrt(x) = @n / 100. 0.4 % at 1000, 0.66 % at 5000, 0.75 % at
 * 10800. For the p99 that latency-target keeps at low rates.
 */
double cqpoll_policy_count_share(double n);

#endif /* CQPOLL_POLICY_GAPS_PRIVATE_H */
