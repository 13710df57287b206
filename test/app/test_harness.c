/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The work testpmd-cq and tpcq-peer do on each completion (app/common/
 * harness.c): each completion counted once; one out of sequence counted
 * once, the sequence resuming from it; a latency sample only with a post
 * time, as the age since it (0 for a post time after the read); the count
 * mode counting only; the names the option takes.
 */
#include <stdio.h>

#include "harness.h"
#include "hist.h"

static int fails;

#define CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "test_harness: %s:%d: %s\n", __FILE__, __LINE__, #c); \
		fails++; \
	} \
} while (0)

int
main(void)
{
	uint64_t completions = 0, order_errors = 0, post = 1000;
	struct tpcq_hist *lat = tpcq_hist_create();
	struct tpcq_harness h = { .work = TPCQ_HARNESS_FULL, .latency = lat,
				  .completions = &completions,
				  .order_errors = &order_errors };
	enum tpcq_harness_work w;
	uint64_t seq;

	if (lat == NULL)
		return 1;
	for (seq = 0; seq < 10; seq++)
		tpcq_harness_got(&h, seq, 1500, &post);
	CHECK(completions == 10 && order_errors == 0 && h.expected == 10);
	CHECK(lat->count == 10 && lat->min == 500 && lat->max == 500);
	/* 10 lost: one error, then in sequence again from 11. */
	tpcq_harness_got(&h, 11, 1500, &post);
	tpcq_harness_got(&h, 12, 1500, &post);
	CHECK(order_errors == 1 && h.expected == 13 && completions == 12);
	/* A duplicate is out of sequence too. */
	tpcq_harness_got(&h, 12, 1500, &post);
	CHECK(order_errors == 2 && h.expected == 13);
	/* No post time: counted and checked, no sample. */
	tpcq_harness_got(&h, 13, 1500, NULL);
	CHECK(completions == 14 && lat->count == 13);
	/* A stamp older than the post (another CPU's clock): age 0. */
	tpcq_harness_got(&h, 14, 900, &post);
	CHECK(lat->count == 14 && lat->min == 0);
	CHECK(tpcq_harness_now(&h) > 0);

	h.work = TPCQ_HARNESS_COUNT;
	CHECK(tpcq_harness_counting(&h) && tpcq_harness_now(&h) == 0);
	tpcq_harness_count(&h, 5);
	CHECK(completions == 20 && order_errors == 2 && lat->count == 14);

	CHECK(tpcq_harness_parse("full", &w) == 0 && w == TPCQ_HARNESS_FULL);
	CHECK(tpcq_harness_parse("count", &w) == 0 && w == TPCQ_HARNESS_COUNT);
	CHECK(tpcq_harness_parse("stamp", &w) == -1);
	CHECK(tpcq_harness_parse("", &w) == -1);
	CHECK(tpcq_harness_name(TPCQ_HARNESS_COUNT)[0] == 'c' &&
	      tpcq_harness_name(TPCQ_HARNESS_FULL)[0] == 'f');
	tpcq_hist_free(lat);
	if (fails == 0)
		printf("test_harness: ok\n");
	return fails != 0;
}
