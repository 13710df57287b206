/* SPDX-License-Identifier: BSD-3-Clause */
/* Registration of cqpoll's trace points, by constructors (DPDK's way). */

#include <rte_trace_point_register.h>

#include "cqpoll_dpdk_trace.h"

RTE_TRACE_POINT_REGISTER(cqpoll_dpdk_trace_arm, cqpoll.cq.arm)
RTE_TRACE_POINT_REGISTER(cqpoll_dpdk_trace_transition, cqpoll.group.transition)
RTE_TRACE_POINT_REGISTER(cqpoll_dpdk_trace_sleep, cqpoll.sleep)
RTE_TRACE_POINT_REGISTER(cqpoll_dpdk_trace_wake, cqpoll.wake)
RTE_TRACE_POINT_REGISTER(cqpoll_dpdk_trace_mode_change, cqpoll.group.mode_change)
RTE_TRACE_POINT_REGISTER(cqpoll_dpdk_trace_policy_decision,
			 cqpoll.group.policy_decision)
RTE_TRACE_POINT_REGISTER(cqpoll_dpdk_trace_cq_state, cqpoll.cq.state)
