/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_EAL_ARGS_H
#define TPCQ_EAL_ARGS_H

/*
 * The EAL arguments testpmd-cq gives when the user gave it none, and that
 * tpcq-peer gives its ethdev peers, so that a peer point and a cqpoll point
 * run on the same lcores, memory and logs.
 */

#include <stdbool.h>

/* Upper bound of the arguments tpcq_eal_args_add() appends. */
#define TPCQ_EAL_ARGS_MAX 11

struct tpcq_eal_args {
	/* In: the lcores' CPUs ("0,1") and the file prefix's stem. */
	const char *cpus;
	const char *prefix;
	/*
	 * In: a DPDK port is made, so three lcores on the two CPUs (a poller
	 * on a worker leaves the main lcore idle), vhost's INFO log quiet,
	 * and 256 MB without hugepages for the mbufs.
	 */
	bool dpdk_port;
	bool telemetry;
	/* Out: no free hugepage, the EAL runs with --no-huge. */
	bool no_huge;
	/* The arguments' text: the EAL keeps pointers into it. */
	char lcores[80];
	char file_prefix[64];
};

/*
 * Append the default EAL arguments to @p argv after its first @p argc and
 * return the new count. @p argv has room for TPCQ_EAL_ARGS_MAX more; it is
 * not NULL-terminated here. @p ea must live as long as the EAL.
 */
int tpcq_eal_args_add(struct tpcq_eal_args *ea, char **argv, int argc);

#endif /* TPCQ_EAL_ARGS_H */
