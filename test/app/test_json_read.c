/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The JSON reader of testpmd-cq's sweep (app/testpmd-cq/sweep/json_read.c): it
 * decides whether a child's report is taken or the point fails, so it must
 * take what report.c writes and refuse what JSON refuses.
 */
#include <errno.h>
#include <stdio.h>

#include "json_read.h"

static int failures;

#define CHECK(cond) do { \
		if (!(cond)) { \
			printf("FAIL line %d: %s\n", __LINE__, #cond); \
			failures++; \
		} \
	} while (0)

static void
test_numbers(void)
{
	const char *r = "{\n  \"dev\": \"mlx5-emu\",\n  \"rate\": 20000,\n"
		"  \"latency_ns\": {\"p50\": 35583, \"p99\": 177151},\n"
		"  \"cpu_pct\": 26.300,\n  \"group\": null,\n"
		"  \"esc\": \"a\\\"}b\",\n  \"list\": [1, {\"p99\": 5}],\n"
		"  \"neg\": -2.5e3\n}\n";
	double v = 0;

	CHECK(tpcq_json_number(r, "rate", &v) == 0 && v == 20000);
	CHECK(tpcq_json_number(r, "latency_ns.p99", &v) == 0 && v == 177151);
	CHECK(tpcq_json_number(r, "cpu_pct", &v) == 0 && v == 26.3);
	CHECK(tpcq_json_number(r, "neg", &v) == 0 && v == -2500);
	/* After a string with an escaped quote and brace, and an array. */
	CHECK(tpcq_json_number(r, "neg", &v) == 0);
	CHECK(tpcq_json_number(r, "group.lost_wakeups", &v) == -ENOENT);
	CHECK(tpcq_json_number(r, "group", &v) == -ENODATA);
	CHECK(tpcq_json_number(r, "dev", &v) == -EINVAL);
	CHECK(tpcq_json_number(r, "missing", &v) == -ENOENT);
	CHECK(tpcq_json_number(r, "rate.x", &v) == -ENOENT);
	/* Only top-level keys and paths match: p99 inside the array does not. */
	CHECK(tpcq_json_number(r, "p99", &v) == -ENOENT);
	CHECK(tpcq_json_number("{\"a\": 1,}", "a", &v) == -EINVAL);
}

static void
test_check(void)
{
	static const char *const good[] = {
		"{}", " [ ] ", "{\"a\": [true, false, null, 0, -0.5, 1e5, 2E-3]}",
		"\"\\u00e9\\n\"", "{\"a\": {\"b\": {\"c\": []}}}",
	};
	static const char *const bad[] = {
		"", "{", "}", "{\"a\"}", "{\"a\": }", "{\"a\": 1,}", "[1 2]",
		"{\"a\": 0x1}", "{\"a\": nan}", "{\"a\": inf}", "{\"a\": 01}",
		"{\"a\": 1.}", "{\"a\": -}", "{\"a\": 1} x", "\"\\q\"",
		"\"tab\there\"", "{'a': 1}", "tru",
		/* Well formed, but deeper than the reader goes. */
		("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
		 "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"),
	};
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (tpcq_json_check(good[i]) != 0) {
			printf("FAIL: refused %s\n", good[i]);
			failures++;
		}
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tpcq_json_check(bad[i]) != -EINVAL) {
			printf("FAIL: took %s\n", bad[i]);
			failures++;
		}
	}
}

int
main(void)
{
	test_numbers();
	test_check();
	if (failures != 0)
		return 1;
	printf("ok\n");
	return 0;
}
