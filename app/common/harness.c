/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <time.h>

#include "clock.h"
#include "harness.h"

int
tpcq_harness_parse(const char *s, enum tpcq_harness_work *w)
{
	if (strcmp(s, "full") == 0)
		*w = TPCQ_HARNESS_FULL;
	else if (strcmp(s, "count") == 0)
		*w = TPCQ_HARNESS_COUNT;
	else
		return -1;
	return 0;
}

const char *
tpcq_harness_name(enum tpcq_harness_work w)
{
	return w == TPCQ_HARNESS_COUNT ? "count" : "full";
}

uint64_t
tpcq_harness_now(const struct tpcq_harness *h)
{
	return tpcq_harness_counting(h) ? 0 : tpcq_now_ns(CLOCK_MONOTONIC);
}

void
tpcq_harness_got(struct tpcq_harness *h, uint64_t seq, uint64_t now,
		 const uint64_t *post_ns)
{
	uint64_t t;

	if (seq != h->expected)
		(*h->order_errors)++;
	h->expected = seq + 1;
	if (post_ns != NULL) {
		/* Acquire: the poster's stamp, written before its post. */
		t = __atomic_load_n(post_ns, __ATOMIC_ACQUIRE);
		tpcq_hist_add(h->latency, now > t ? now - t : 0);
	}
	(*h->completions)++;
}
