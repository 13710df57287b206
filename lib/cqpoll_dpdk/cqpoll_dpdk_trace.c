/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core's trace hook, connected to the cqpoll.* trace points at start-up.
 * Each trace point tests its own enable bit first, so with tracing off an
 * event costs the hook's indirect call and that test.
 */

#include <rte_common.h>

#include "cqpoll_dpdk_trace.h"
#include "cqpoll_group.h"
#include "cqpoll_trace.h"

static void
on_arm(void *arg, const struct cqpoll_cq *cq, int missed)
{
	(void)arg;
	cqpoll_dpdk_trace_arm(cq, (uint8_t)(missed != 0));
}

static void
on_transition(void *arg, const struct cqpoll_group *g, uint32_t active,
	      uint32_t n, uint32_t found)
{
	(void)arg;
	cqpoll_dpdk_trace_transition(g, active, n, found);
}

static void
on_sleep(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	 int timeout_ms)
{
	(void)arg;
	cqpoll_dpdk_trace_sleep(g, cq, timeout_ms);
}

static void
on_wake(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	enum cqpoll_trace_wake why, uint64_t asleep_ns, uint32_t completions)
{
	(void)arg;
	cqpoll_dpdk_trace_wake(g, cq, (int)why, asleep_ns, completions);
}

static void
on_mode_change(void *arg, const struct cqpoll_group *g,
	       enum cqpoll_group_mode from, enum cqpoll_group_mode to)
{
	(void)arg;
	cqpoll_dpdk_trace_mode_change(g, cqpoll_group_mode_name(from),
				      cqpoll_group_mode_name(to));
}

static void
on_policy_decision(void *arg, const struct cqpoll_group *g,
		   uint32_t completions, enum cqpoll_policy_action action)
{
	(void)arg;
	cqpoll_dpdk_trace_policy_decision(g, completions,
		action == CQPOLL_POLICY_SLEEP ? "sleep" :
		action == CQPOLL_POLICY_MONITOR ? "monitor" : "keep-polling");
}

static void
on_cq_state(void *arg, const struct cqpoll_group *g, const struct cqpoll_cq *cq,
	    enum cqpoll_cq_state state, int error)
{
	(void)arg;
	cqpoll_dpdk_trace_cq_state(g, cq, cqpoll_cq_state_name(state), error);
}

static const struct cqpoll_trace_hook dpdk_trace_hook = {
	.cq_state = on_cq_state,
	.arm = on_arm,
	.transition = on_transition,
	.sleep = on_sleep,
	.wake = on_wake,
	.mode_change = on_mode_change,
	.policy_decision = on_policy_decision,
};

RTE_INIT(cqpoll_dpdk_trace_init)
{
	/* An application's own hook, installed earlier, is left in place. */
	if (cqpoll_trace_get_hook() == NULL)
		cqpoll_trace_set_hook(&dpdk_trace_hook);
}
