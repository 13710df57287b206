/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NUMA placement of the pollers, as testpmd does for ports: the device's node
 * (sysfs for a real device, or --dev-numa-node), default lcores taken from
 * that node's CPUs, and a warning for each poller on another socket, whose
 * every completion would cross the interconnect.
 */
#include <sched.h>
#include <stdio.h>

#include <numa.h>
#include <rte_lcore.h>

#include "dev.h"
#include "params.h"
#include "run.h"
#include "testpmd_cq.h"

int
tpcq_dev_numa_node(const struct tpcq_params *p)
{
	char path[160];
	FILE *f;
	int node = -1;

	if (p->numa_node >= 0)
		return p->numa_node;
	/* Emulated devices live in this process's memory: no node of their own. */
	if (p->ibdev == NULL)
		return -1;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/numa_node",
		 p->ibdev);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	/* The kernel says -1 when the platform does not tell. */
	return node >= 0 ? node : -1;
}

static unsigned int
warn_remote(const struct tpcq_params *p, unsigned int k, unsigned int lc,
	    int node)
{
	unsigned int socket = rte_lcore_to_socket_id(lc);

	if (socket == (unsigned int)node)
		return 0;
	fprintf(stderr, TPCQ_PROG ": warning: poller %u on lcore %u (socket %u) "
		"serves %s on NUMA node %d: every completion crosses sockets; "
		"give lcores of node %d with -l or --lcores\n",
		k, lc, socket, p->dev_name, node, node);
	return 1;
}

unsigned int
tpcq_numa_check(const struct tpcq_params *p, const struct tpcq_run *run,
		int node)
{
	unsigned int k, lc = (unsigned int)-1, remote;

	if (node < 0)
		return 0;
	/* Where the pollers run: the main lcore, then the workers in order but the generator's. */
	remote = warn_remote(p, 0, rte_get_main_lcore(), node);
	for (k = 1; k < p->pollers; k++) {
		do
			lc = rte_get_next_lcore(lc, 1, 0);
		while (lc == run->gen_lcore);
		remote += warn_remote(p, k, lc, node);
	}
	return remote;
}
