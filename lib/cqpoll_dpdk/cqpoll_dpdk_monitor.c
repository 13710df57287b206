/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The power-monitor tier on DPDK: the core's monitor hook, filled at
 * start-up with rte_power_monitor() (one CQ) and rte_power_monitor_multi()
 * (several), available where rte_cpu_get_intrinsics_support() says the CPU
 * has them (WAITPKG's UMONITOR/UMWAIT, or AMD's MONITORX/MWAITX; several
 * addresses at once need RTM as well).
 */

#include <rte_common.h>
#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_power_intrinsics.h>

#include "cqpoll_dpdk_private.h"
#include "cqpoll_monitor.h"

enum { OPQ_VAL, OPQ_MASK, OPQ_MATCH };

/* DPDK's callback: -1 aborts the wait, the completion is there. */
static int
cond_clb(const uint64_t val, const uint64_t opaque[RTE_POWER_MONITOR_OPAQUE_SZ])
{
	uint64_t v = val & opaque[OPQ_MASK];

	if (opaque[OPQ_MATCH] == CQPOLL_MONITOR_EQUAL)
		return v == opaque[OPQ_VAL] ? -1 : 0;
	return v != opaque[OPQ_VAL] ? -1 : 0;
}

void
cqpoll_dpdk_monitor_cond(const struct cqpoll_monitor_cond *c,
			 struct rte_power_monitor_cond *pmc)
{
	/* DPDK's type is not const; it only reads the address. */
	pmc->addr = (volatile void *)(uintptr_t)c->addr;
	pmc->fn = cond_clb;
	pmc->opaque[OPQ_VAL] = c->val;
	pmc->opaque[OPQ_MASK] = c->mask;
	pmc->opaque[OPQ_MATCH] = c->match;
	pmc->size = c->size;
}

int
cqpoll_dpdk_monitor_cond_clb(const struct rte_power_monitor_cond *pmc,
			     uint64_t val)
{
	return pmc->fn(val, pmc->opaque);
}

static int
dpdk_available(void *arg, unsigned int n, const char **reason)
{
	struct rte_cpu_intrinsics intr;

	(void)arg;
	rte_cpu_get_intrinsics_support(&intr);
	if (!intr.power_monitor) {
		*reason = "this CPU has neither WAITPKG (UMONITOR/UMWAIT) nor "
			"MONITORX (MONITORX/MWAITX): rte_power_monitor() is not supported";
		return 0;
	}
	if (n > 1 && !intr.power_monitor_multi) {
		*reason = "monitoring several CQs at once needs rte_power_monitor_multi() "
			"(WAITPKG and RTM), which this CPU lacks";
		return 0;
	}
	return 1;
}

static int
dpdk_wait(void *arg, const struct cqpoll_monitor_cond *conds, unsigned int n,
	  uint64_t timeout_ns)
{
	struct rte_power_monitor_cond pmc[CQPOLL_MONITOR_MAX];
	uint64_t deadline;
	unsigned int i;

	(void)arg;
	if (n == 0 || n > CQPOLL_MONITOR_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++)
		cqpoll_dpdk_monitor_cond(&conds[i], &pmc[i]);
	deadline = rte_get_tsc_cycles() + timeout_ns * rte_get_tsc_hz() / 1000000000;
	if (n == 1)
		return rte_power_monitor(&pmc[0], deadline);
	return rte_power_monitor_multi(pmc, n, deadline);
}

static const struct cqpoll_monitor_hook dpdk_monitor_hook = {
	.available = dpdk_available,
	.wait = dpdk_wait,
};

RTE_INIT(cqpoll_dpdk_monitor_init)
{
	cqpoll_monitor_set_hook(&dpdk_monitor_hook);
}
