/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_LAB_SCHED_H
#define TPCQ_LAB_SCHED_H

/*
 * The lab's placement of poll groups on lcores (cqpoll-lab --sim-sched):
 * groups with their own arrival traces on a virtual clock, placed by static
 * placement, by the library's consolidating scheduler (cqpoll_sched.h) or
 * by SPDK's rule (lab_sched_spdk.c), with the lab's cost model.
 */

#include <stdint.h>

#define TPCQ_LAB_SCHED_LCORES 16
#define TPCQ_LAB_SCHED_GROUPS 64
#define TPCQ_LAB_SCHED_LCORES_MAX 64
#define TPCQ_LAB_SCHED_GROUPS_MAX 256

/*
 * One step of SPDK's rule: groups of load[g] (fraction of an lcore in the
 * last period) placed by lcore_of[g], which it updates.
 */
void tpcq_lab_spdk_step(uint32_t nb_lcores, uint32_t nb_groups,
			const double *load, uint32_t *lcore_of);

struct tpcq_lab_opts;
/* The comparison: its table and goals; an exit status. */
int tpcq_lab_sched_run(const struct tpcq_lab_opts *o);

#endif /* TPCQ_LAB_SCHED_H */
