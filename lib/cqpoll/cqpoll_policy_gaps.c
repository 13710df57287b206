/* SPDX-License-Identifier: BSD-3-Clause */
/* The gap histogram of the latency-target and adaptive policies; the share a p99 over few samples leaves. */

#include <string.h>

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

void
cqpoll_policy_gap_halve(struct cqpoll_policy_gaps *h)
{
	unsigned int i;

	h->total = 0;
	memset(h->used, 0, sizeof(h->used));
	for (i = 0; i < CQPOLL_POLICY_GAP_BUCKETS; i++) {
		h->n[i] >>= 1;
		h->total += h->n[i];
		if (h->n[i] != 0)
			h->used[i / 64] |= 1ull << (i % 64);
	}
}

void
cqpoll_policy_gap_add(struct cqpoll_policy_gaps *h, uint64_t g, unsigned int k,
		      uint64_t mem)
{
	unsigned int b = cqpoll_policy_gap_bucket(g);

	h->n[b] += k;
	if (h->n[b] != 0)
		h->used[b / 64] |= 1ull << (b % 64);
	h->total += k;
	if (h->total < mem)
		return;
	cqpoll_policy_gap_halve(h);
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
