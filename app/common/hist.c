/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>

#include "hist.h"

struct tpcq_hist *
tpcq_hist_create(void)
{
	return calloc(1, sizeof(struct tpcq_hist));
}

void
tpcq_hist_free(struct tpcq_hist *h)
{
	free(h);
}

void
tpcq_hist_merge(struct tpcq_hist *dst, const struct tpcq_hist *src)
{
	unsigned int i;

	if (src->count == 0)
		return;
	if (dst->count == 0 || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	for (i = 0; i < TPCQ_HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
}

void
tpcq_hist_snapshot(struct tpcq_hist *dst, const struct tpcq_hist *src)
{
	uint64_t count = 0;
	unsigned int i;

	for (i = 0; i < TPCQ_HIST_BUCKETS; i++) {
		dst->buckets[i] = __atomic_load_n(&src->buckets[i], __ATOMIC_RELAXED);
		count += dst->buckets[i];
	}
	/* The sum, not src->count: the copy must agree with its own buckets. */
	dst->count = count;
	dst->min = __atomic_load_n(&src->min, __ATOMIC_RELAXED);
	dst->max = __atomic_load_n(&src->max, __ATOMIC_RELAXED);
}

void
tpcq_hist_sub(struct tpcq_hist *h, const struct tpcq_hist *base)
{
	unsigned int i;

	for (i = 0; i < TPCQ_HIST_BUCKETS; i++)
		h->buckets[i] -= base->buckets[i];
	h->count -= base->count;
}

/* Middle of bucket @p idx: the inverse of tpcq_hist_index(). */
static uint64_t
bucket_mid(unsigned int idx)
{
	unsigned int shift;
	uint64_t low;

	if (idx < 2 * TPCQ_HIST_SUB)
		return idx;
	shift = (idx >> TPCQ_HIST_SUB_BITS) - 1;
	low = (uint64_t)(idx - (shift << TPCQ_HIST_SUB_BITS)) << shift;
	return low + (((uint64_t)1 << shift) - 1) / 2;
}

uint64_t
tpcq_hist_quantile(const struct tpcq_hist *h, double q)
{
	uint64_t rank, seen = 0, v;
	double want;
	unsigned int i;

	if (h->count == 0)
		return 0;
	if (!(q > 0.0))
		return h->min;
	if (q >= 1.0)
		return h->max;
	/* Smallest value with at least q * count samples at or below it. */
	want = q * (double)h->count;
	rank = (uint64_t)want;
	if ((double)rank < want || rank == 0)
		rank++;
	for (i = 0; i < TPCQ_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	v = bucket_mid(i);
	/* The exact extremes bound any bucket estimate. */
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}
