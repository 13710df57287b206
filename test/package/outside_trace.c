/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An application outside the tree, linked by test/package/check-install.sh
 * against the installed static libraries through pkg-config --static: after
 * rte_eal_init() it counts cqpoll's trace points that DPDK knows, and checks
 * that telemetry registration, which lives in libcqpoll_dpdk.a, links and
 * runs. Prints "trace points: N of M" and exits 0 only when all M are
 * registered.
 */

#include <stdio.h>

#include <rte_eal.h>
#include <rte_trace_point.h>

#include <cqpoll.h>
#include <cqpoll_dpdk.h>
#include <cqpoll_sw.h>

/* The trace points doc/guides/dpdk.md documents. */
static const char *const names[] = {
	"cqpoll.cq.arm",
	"cqpoll.group.transition",
	"cqpoll.sleep",
	"cqpoll.wake",
	"cqpoll.group.mode_change",
	"cqpoll.group.policy_decision",
};

int
main(int argc, char **argv)
{
	unsigned int i, found = 0, n = sizeof(names) / sizeof(names[0]);
	struct cqpoll_cq *cq;
	int rc;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "outside_trace: rte_eal_init failed\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		if (rte_trace_point_lookup(names[i]) != NULL)
			found++;
		else
			printf("missing: %s\n", names[i]);
	}
	printf("trace points: %u of %u\n", found, n);

	/* An application uses the library: that alone must not be what keeps
	 * the constructors (it pulls only the objects it refers to). */
	cq = cqpoll_sw_cq_create(NULL);
	if (cq == NULL) {
		fprintf(stderr, "outside_trace: cqpoll_sw_cq_create failed\n");
		return 2;
	}
	rc = cqpoll_dpdk_telemetry_register_cq("outside", cq);
	if (rc != 0) {
		fprintf(stderr, "outside_trace: telemetry register: %d\n", rc);
		return 2;
	}
	cqpoll_dpdk_telemetry_unregister_cq("outside");
	cqpoll_cq_destroy(cq);
	rte_eal_cleanup();
	return found == n ? 0 : 1;
}
