/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_HIST_H
#define TPCQ_HIST_H

/*
 * Log-linear latency histogram. Values below 2^TPCQ_HIST_SUB_BITS are counted
 * exactly; above, every power-of-two range [2^k, 2^(k+1)) is cut into
 * 2^TPCQ_HIST_SUB_BITS equal buckets, so a bucket is at most 1/64 (1.6%) of the
 * values it holds, whatever their magnitude, and a percentile reported at the
 * bucket's middle is within 0.8% of the true one. The whole 64-bit range fits
 * in a few thousand counters, so recording never allocates or saturates.
 * Minimum and maximum are tracked exactly: tail latency is what this tool is
 * for, and a bucketed maximum would hide the worst case.
 */

#include <stdint.h>

#define TPCQ_HIST_SUB_BITS 6
#define TPCQ_HIST_SUB (1U << TPCQ_HIST_SUB_BITS)
/*
 * Exact buckets for [0, 2 * SUB), then SUB buckets for each of the powers of
 * two from 2^(SUB_BITS + 1) to 2^63.
 */
#define TPCQ_HIST_BUCKETS ((64 - TPCQ_HIST_SUB_BITS + 1) * TPCQ_HIST_SUB)

struct tpcq_hist {
	uint64_t count;
	uint64_t min;
	uint64_t max;
	uint64_t buckets[TPCQ_HIST_BUCKETS];
};

/* Returns a zeroed histogram, or NULL with errno set. */
struct tpcq_hist *tpcq_hist_create(void);
void tpcq_hist_free(struct tpcq_hist *h);

/* Adds @p src's samples to @p dst, as if they had been added there. */
void tpcq_hist_merge(struct tpcq_hist *dst, const struct tpcq_hist *src);

/* Copy @p src, which its one writer may be adding to meanwhile, into @p dst. */
void tpcq_hist_snapshot(struct tpcq_hist *dst, const struct tpcq_hist *src);

/*
 * Remove from @p h the samples of @p base, an earlier snapshot of it: what
 * was added since. Minimum and maximum stay those of @p h, which bound it.
 */
void tpcq_hist_sub(struct tpcq_hist *h, const struct tpcq_hist *base);

/* Value at quantile @p q in [0, 1]; 0 for an empty histogram. */
uint64_t tpcq_hist_quantile(const struct tpcq_hist *h, double q);

static inline unsigned int
tpcq_hist_index(uint64_t v)
{
	unsigned int shift;

	if (v < 2 * TPCQ_HIST_SUB)
		return (unsigned int)v;
	/* v has k + 1 significant bits; keep the top SUB_BITS + 1 of them. */
	shift = (unsigned int)(63 - __builtin_clzll(v)) - TPCQ_HIST_SUB_BITS;
	return (shift << TPCQ_HIST_SUB_BITS) + (unsigned int)(v >> shift);
}

/*
 * One writer; its relaxed stores let another thread take a snapshot while it
 * records (the interactive prompt's "show stats"), at no cost on x86.
 */
static inline void
tpcq_hist_add(struct tpcq_hist *h, uint64_t v)
{
	unsigned int i = tpcq_hist_index(v);

	if (h->count == 0 || v < h->min)
		__atomic_store_n(&h->min, v, __ATOMIC_RELAXED);
	if (v > h->max)
		__atomic_store_n(&h->max, v, __ATOMIC_RELAXED);
	__atomic_store_n(&h->buckets[i], h->buckets[i] + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->count, h->count + 1, __ATOMIC_RELAXED);
}

#endif /* TPCQ_HIST_H */
