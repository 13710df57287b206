/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_EMU_UTIL_H
#define CQPOLL_EMU_UTIL_H

/*
 * Internal to libcqpoll_emu: what the emulated devices share to inject faults,
 * and the library's clock (they stamp completions with it, as libcqpoll's sw
 * driver does). Not installed.
 */

#include <stdint.h>

#include "cqpoll_clock.h"

/* xorshift64*: cheap, and good enough to place delays; one state per thread. */
static inline uint64_t
cqpoll_emu_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* True with probability pct percent. */
static inline int
cqpoll_emu_chance(uint64_t *rng, uint32_t pct)
{
	return pct != 0 && cqpoll_emu_rand(rng) % 100 < pct;
}

/* Bump an index that two threads may advance, never moving it back. */
static inline void
cqpoll_emu_advance(uint32_t *idx, uint32_t to)
{
	uint32_t cur = __atomic_load_n(idx, __ATOMIC_ACQUIRE);

	while ((int32_t)(to - cur) > 0 &&
	       !__atomic_compare_exchange_n(idx, &cur, to, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
}

/* Busy-wait: a sleep is far longer than the race windows it widens. */
void cqpoll_emu_spin_ns(uint64_t ns);

#endif /* CQPOLL_EMU_UTIL_H */
