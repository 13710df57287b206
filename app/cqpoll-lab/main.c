/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll-lab: the policy lab as a program of its own, with no EAL and no
 * device (testpmd-cq --sim runs the same code).
 */
#include "lab.h"

int
main(int argc, char **argv)
{
	return tpcq_lab_main(TPCQ_LAB_PROG, argc, argv);
}
