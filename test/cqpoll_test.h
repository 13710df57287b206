/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_TEST_H
#define CQPOLL_TEST_H

/*
 * Minimal test harness: each test file is one program made of cases; a case
 * returns TEST_PASS, TEST_FAIL or TEST_SKIP, and every case runs even when an
 * earlier one failed. Exit codes follow meson: 0 pass, 1 fail, 77 skip.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cqpoll_emu.h"
#include "cqpoll_sw_emu.h"

enum test_result { TEST_PASS = 0, TEST_FAIL = 1, TEST_SKIP = 77 };

#define TEST_ASSERT(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s: assertion '%s' failed: ",	\
			__FILE__, __LINE__, __func__, #cond);		\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		return TEST_FAIL;					\
	}								\
} while (0)

/* Each side is evaluated once: tests compare calls with side effects. */
#define TEST_ASSERT_EQ(a, b) do { \
	long long test_a_ = (long long)(a), test_b_ = (long long)(b); \
	TEST_ASSERT(test_a_ == test_b_, "%s == %s: %lld != %lld", #a, #b, \
		    test_a_, test_b_); \
} while (0)

struct test_case {
	const char *name;
	int (*fn)(void);
};

#define TEST_CASE(f) { #f, f }

/* CLOCK_MONOTONIC in ns: the clock the emulated devices timestamp with. */
static inline uint64_t
test_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64: reproducible bursts and gaps from a seed (never 0). */
static inline uint64_t
test_rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Busy-wait: gaps shorter than a sleep can be, and no thread switch. */
static inline void
test_spin_ns(uint64_t ns)
{
	uint64_t end = test_now_ns() + ns;

	while (test_now_ns() < end)
		;
}

static inline int
test_run(const char *suite, const struct test_case *cases, size_t n)
{
	size_t i, failed = 0, skipped = 0;

	for (i = 0; i < n; i++) {
		int r = cases[i].fn();

		printf("%-40s %s\n", cases[i].name,
		       r == TEST_PASS ? "ok" : r == TEST_SKIP ? "skip" : "FAIL");
		if (r == TEST_SKIP)
			skipped++;
		else if (r != TEST_PASS)
			failed++;
	}
	printf("%s: %zu cases, %zu failed, %zu skipped\n", suite, n, failed, skipped);
	if (failed != 0)
		return TEST_FAIL;
	return skipped == n ? TEST_SKIP : TEST_PASS;
}

#define TEST_MAIN(suite, cases)						\
int									\
main(void)								\
{									\
	return test_run(suite, cases, sizeof(cases) / sizeof(cases[0]));\
}

#endif /* CQPOLL_TEST_H */
