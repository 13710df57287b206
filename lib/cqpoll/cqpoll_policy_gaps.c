/* SPDX-License-Identifier: BSD-3-Clause */
/* The gap histogram of the latency-target and adaptive policies; the share a p99 over few samples leaves. */

#include "cqpoll_policy_gaps_private.h"

unsigned int
cqpoll_policy_gap_bucket(uint64_t g)
{
	unsigned int e, i;

	if (g < 16)
		return (unsigned int)g;
	e = 63u - (unsigned int)__builtin_clzll(g);
	i = (e - 2) * 8 + (unsigned int)((g >> (e - 3)) & 7);
	return i < CQPOLL_POLICY_GAP_BUCKETS ? i : CQPOLL_POLICY_GAP_BUCKETS - 1;
}

uint64_t
cqpoll_policy_gap_lower(unsigned int i)
{
	if (i < 16)
		return i;
	return (uint64_t)(8 + i % 8) << (i / 8 - 1);
}

uint64_t
cqpoll_policy_gap_mid(unsigned int i)
{
	uint64_t lo = cqpoll_policy_gap_lower(i);

	return lo + (cqpoll_policy_gap_lower(i + 1) - lo) / 2;
}

void
cqpoll_policy_gap_add(struct cqpoll_policy_gaps *h, uint64_t g, unsigned int k,
		      uint64_t mem)
{
	unsigned int i;

	h->n[cqpoll_policy_gap_bucket(g)] += k;
	h->total += k;
	if (h->total < mem)
		return;
	h->total = 0;
	for (i = 0; i < CQPOLL_POLICY_GAP_BUCKETS; i++) {
		h->n[i] >>= 1;
		h->total += h->n[i];
	}
}

/* sqrt(v), v >= 1, by Newton's method: the library does not link libm. */
static double
root(double v)
{
	double r = v;
	unsigned int i;

	for (i = 0; i < 64 && r * r - v > 1e-9 * v; i++)
		r = (r + v / r) / 2;
	return r;
}

double
cqpoll_policy_count_share(double n)
{
	/* sqrt(x) = sqrt(9 / 4 + n / 100) - 3 / 2 */
	double r = root(9.0 / 4.0 + n / 100.0) - 3.0 / 2.0;

	return r * r / n;
}
