/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_LAB_SCHED_H
#define TPCQ_LAB_SCHED_H

/*
 * The lab's placement of poll groups on lcores (cqpoll-lab --sim-sched):
 * groups with their own arrival traces on a virtual clock, placed by static
 * placement, by the library's consolidating scheduler (cqpoll_sched.h) or
 * by SPDK's dynamic scheduler (lab_sched_spdk.c), with the lab's cost model.
 */

#include <stdint.h>

#define TPCQ_LAB_SCHED_LCORES 16
#define TPCQ_LAB_SCHED_GROUPS 64
#define TPCQ_LAB_SCHED_LCORES_MAX 64
#define TPCQ_LAB_SCHED_GROUPS_MAX 256

/*
 * One balance step of SPDK's dynamic scheduler (lab_sched_spdk.c): the
 * groups' busy and idle time in the last period as SPDK counts a thread's
 * (ns standing for TSC), their lcores' busy and idle (0 and 0: parked), the
 * groups in the order its walk visits them (core by core, each core's in
 * the order they sit there). It updates lcore_of.
 */
struct tpcq_lab_spdk_in {
	uint32_t nb_lcores, nb_groups;
	const uint64_t *busy, *idle;           /* by group */
	const uint64_t *core_busy, *core_idle; /* by lcore */
	const uint32_t *order;
};
void tpcq_lab_spdk_balance(const struct tpcq_lab_spdk_in *in,
			   uint32_t *lcore_of);

struct tpcq_lab_opts;
/* The comparison: its table and goals; an exit status. */
int tpcq_lab_sched_run(const struct tpcq_lab_opts *o);

#endif /* TPCQ_LAB_SCHED_H */
