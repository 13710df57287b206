/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The default EAL arguments of testpmd-cq and tpcq-peer: no device to probe,
 * no state to share with secondary processes, quiet unless wrong.
 */
#include <stdio.h>
#include <unistd.h>

#include "eal_args.h"

/* HugePages_Free from /proc/meminfo; 0 if it cannot be read. */
static unsigned long
free_hugepages(void)
{
	unsigned long n = 0;
	char line[256];
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %lu", &n) == 1)
			break;
	fclose(f);
	return n;
}

int
tpcq_eal_args_add(struct tpcq_eal_args *ea, char **argv, int argc)
{
	if (ea->dpdk_port) {
		snprintf(ea->lcores, sizeof(ea->lcores), "(0-2)@(%s)", ea->cpus);
		argv[argc++] = "--lcores";
		argv[argc++] = ea->lcores;
		/* vhost logs every vhost-user message at INFO. */
		argv[argc++] = "--log-level=lib.vhost.*:warning";
	} else {
		snprintf(ea->lcores, sizeof(ea->lcores), "%s", ea->cpus);
		argv[argc++] = "-l";
		argv[argc++] = ea->lcores;
	}
	argv[argc++] = "--no-pci";
	/* A prefix of its own: the telemetry socket's directory. */
	snprintf(ea->file_prefix, sizeof(ea->file_prefix), "--file-prefix=%s%ld",
		 ea->prefix, (long)getpid());
	argv[argc++] = ea->file_prefix;
	if (!ea->telemetry)
		argv[argc++] = "--no-telemetry";
	argv[argc++] = "--log-level=lib.eal:error";
	/* --no-huge implies legacy memory, which --in-memory refuses. */
	ea->no_huge = free_hugepages() == 0;
	if (ea->no_huge) {
		argv[argc++] = "--no-huge";
		argv[argc++] = "--no-shconf";
		/* Room for the mbufs of a DPDK port (64 MB by default). */
		if (ea->dpdk_port) {
			argv[argc++] = "-m";
			argv[argc++] = "256";
		}
	} else {
		argv[argc++] = "--in-memory";
	}
	return argc;
}
