/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two CPUs a run uses by default: testpmd-cq's EAL lcores, and the CPUs
 * the floors are measured on (by testpmd-cq and by the lab).
 */
#include <sched.h>
#include <stdio.h>

#include <numa.h>

#include "cpus.h"

/* Append up to *left CPUs of @p set (on @p node, or any with node < 0). */
static void
take_cpus(cpu_set_t *set, int node, char *buf, size_t len, size_t *n,
	  int *left)
{
	int cpu;

	for (cpu = 0; cpu < CPU_SETSIZE && *left > 0; cpu++) {
		if (!CPU_ISSET(cpu, set) ||
		    (node >= 0 && numa_node_of_cpu(cpu) != node))
			continue;
		CPU_CLR(cpu, set);
		*n += (size_t)snprintf(buf + *n, len - *n, "%s%d", *n ? "," : "",
				       cpu);
		(*left)--;
	}
}

void
tpcq_default_lcores(int node, char *buf, size_t len)
{
	int left = 2;
	size_t n = 0;
	cpu_set_t set;

	buf[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		snprintf(buf, len, "0-1");
		return;
	}
	/* The device's node first, then any CPU this process may use. */
	if (node >= 0 && numa_available() >= 0)
		take_cpus(&set, node, buf, len, &n, &left);
	take_cpus(&set, -1, buf, len, &n, &left);
}

