/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_PRNG_H
#define TPCQ_PRNG_H

/*
 * The programs' one pseudo-random generator: splitmix64 (Steele, Lea and
 * Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014),
 * whose every seed, 0 included, gives a full-period stream, so that --seed
 * takes any value. Not for anything secret: for reproducible schedules and
 * draws (the same seed, the same bytes).
 */

#include <stdint.h>

/* splitmix64's increment, the golden ratio in 64 bits: also a key mixer. */
#define TPCQ_PRNG_GAMMA 0x9e3779b97f4a7c15ULL

/* The next 64 random bits of the stream in *state. */
static inline uint64_t
tpcq_prng_next(uint64_t *state)
{
	uint64_t z = (*state += TPCQ_PRNG_GAMMA);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1]: 53 random bits, never 0, so that log() of it is finite. */
static inline double
tpcq_prng_unit(uint64_t *state)
{
	return (double)((tpcq_prng_next(state) >> 11) + 1) * 0x1.0p-53;
}

#endif /* TPCQ_PRNG_H */
