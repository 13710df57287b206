/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_FLOORS_PACED_H
#define TPCQ_FLOORS_PACED_H

/*
 * The floors at a load (floors_paced.c): paced as the generator paces its
 * posts, at the rates of a run or a sweep, and how a point is held against
 * them.
 */

#include "floors.h"
#include "params.h"

/*
 * The hand-off and wake-up floors, then a paced hand-off at each of the
 * nrates rates (stores spaced by p's --pattern and --seed), secs each.
 * Returns 0 or -errno; f->valid tells whether the floors can be used.
 */
int tpcq_floors_measure(const struct tpcq_params *p, const uint64_t *rates,
			unsigned int nrates, double secs, struct tpcq_floors *f);

/* floors_paced.c: the floors at one more load, on f's CPUs; 0 or -errno. */
int tpcq_floors_measure_paced(const struct tpcq_params *p, uint64_t rate,
			      double secs, struct tpcq_floors *f);

#endif /* TPCQ_FLOORS_PACED_H */
