/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DPDK application driven by check_telemetry.py through stdin: it starts
 * the EAL with telemetry under a given file prefix and no cqpoll object
 * (so "/" must already list /cqpoll/...), then on "create" makes a group,
 * a CQ and a handoff, moves completions through them, and on "exit" ends.
 *
 * Usage: telemetry_app PREFIX N   (N completions through the handoff)
 */

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "cqpoll.h"
#include "cqpoll_dpdk.h"
#include "cqpoll_dpdk_handoff.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"

static int
wait_line(const char *want)
{
	char line[64];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, want) == 0)
			return 0;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_BUSY };
	struct cqpoll_dpdk_handoff_conf hc = { .name = "tel-handoff", .size = 4096 };
	char prefix[128], lcore[32] = "0@0";
	char *eal[] = { argv[0], "--lcores", lcore, "--no-huge", "--no-pci",
			"--no-shconf", "-m", "64", prefix,
			"--log-level=lib.eal:error" };
	struct cqpoll_dpdk_handoff *h;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	unsigned long n, i;
	cpu_set_t set;
	int c;

	if (argc != 3) {
		fprintf(stderr, "usage: %s PREFIX N\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", argv[1]);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				snprintf(lcore, sizeof(lcore), "0@%d", c);
				break;
			}
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])), eal) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	if (wait_line("create") != 0)
		return 1;

	cq = cqpoll_sw_cq_create(NULL);
	g = cqpoll_group_create(&gc);
	h = cqpoll_dpdk_handoff_create(&hc, -1);
	if (cq == NULL || g == NULL || h == NULL ||
	    cqpoll_group_add(g, cq, cqpoll_dpdk_handoff_cb, h) != 0 ||
	    cqpoll_dpdk_telemetry_register_group("tel-group", g) != 0 ||
	    cqpoll_dpdk_telemetry_register_cq("tel-cq", cq) != 0) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct cqpoll_completion comp = { .wr_id = i, .byte_len = 8 };

		if (cqpoll_sw_post(cq, &comp) != 0 ||
		    cqpoll_group_run_once(g) < 0) {
			fprintf(stderr, "post or run failed at %lu\n", i);
			return 1;
		}
	}
	printf("created\n");
	fflush(stdout);
	wait_line("exit");

	cqpoll_dpdk_telemetry_unregister_cq("tel-cq");
	cqpoll_dpdk_telemetry_unregister_group("tel-group");
	cqpoll_group_destroy(g);
	cqpoll_dpdk_handoff_destroy(h);
	cqpoll_cq_destroy(cq);
	rte_eal_cleanup();
	return 0;
}
