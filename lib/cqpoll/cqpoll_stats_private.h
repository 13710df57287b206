/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_STATS_PRIVATE_H
#define CQPOLL_STATS_PRIVATE_H

/*
 * Reading and clearing a block of counters (struct cqpoll_cq_stats, struct
 * cqpoll_group_stats) from any thread while its owner adds to them: the
 * structs are only uint64_t counters, so word by word, each word atomically.
 */

#include <stddef.h>
#include <stdint.h>

static inline void
cqpoll_stats_copy(void *dst, const void *src, size_t bytes)
{
	const uint64_t *s = src;
	uint64_t *d = dst;
	size_t i;

	for (i = 0; i < bytes / sizeof(uint64_t); i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

static inline void
cqpoll_stats_zero(void *dst, size_t bytes)
{
	uint64_t *d = dst;
	size_t i;

	for (i = 0; i < bytes / sizeof(uint64_t); i++)
		__atomic_store_n(&d[i], 0, __ATOMIC_RELAXED);
}

#endif /* CQPOLL_STATS_PRIVATE_H */
