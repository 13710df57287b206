/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive policy's burst rule: on on/off traffic, where the last
 * bursts lasted alike and so did the silences between them, the group
 * sleeps once the current burst has lasted as long as the longest of them
 * (doc/guides/policies.md).
 */

#include "cqpoll_policy_adaptive_private.h"

/*
 * The values agree within a factor of two, but for one (a burst whose
 * last gaps happened to be short); the largest in @hi.
 */
static int
alike(const uint64_t *v, uint64_t *hi)
{
	unsigned int i, low = 0;

	*hi = 0;
	for (i = 0; i < BURSTS; i++)
		if (v[i] > *hi)
			*hi = v[i];
	for (i = 0; i < BURSTS; i++)
		low += 2 * v[i] < *hi;
	return *hi != 0 && low <= 1;
}

/*
 * A silence of BURST_GAPS mean gaps ended a burst at @last (its last
 * arrival); the next began at @first.
 */
void
cqpoll_adaptive_burst_seen(struct adaptive_state *s, uint64_t last, uint64_t first)
{
	uint64_t hi, gap;

	if (s->burst_ns != 0 && last >= s->burst_ns) {
		s->burst_len[s->bursts % BURSTS] = last - s->burst_ns;
		s->burst_gap[s->bursts % BURSTS] = first > last ? first - last : 0;
		s->bursts++;
		/* alike() says hi != 0 when it holds. */
		s->burst_hi = alike(s->burst_gap, &gap) &&
			      alike(s->burst_len, &hi) ? hi : 0;
	}
	s->burst_ns = first;
}
