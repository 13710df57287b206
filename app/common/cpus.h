/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_CPUS_H
#define TPCQ_CPUS_H

#include <stddef.h>

/*
 * The default lcores, as an EAL -l list in buf: two CPUs this process may
 * use, those of NUMA node @p node first (node < 0: any).
 */
void tpcq_default_lcores(int node, char *buf, size_t len);

#endif /* TPCQ_CPUS_H */
