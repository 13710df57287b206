/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_DPDK_TRACE_H
#define CQPOLL_DPDK_TRACE_H

/*
 * DPDK trace points of cqpoll (cqpoll.*), one per event of the core's trace
 * hook (cqpoll_trace.h). Private to libcqpoll_dpdk: the points are fired by
 * the hook it installs, never by applications. Field names are those of the
 * emitted variables, as babeltrace2 shows them.
 */

#include <stdint.h>

#include <rte_trace_point.h>

#include "cqpoll_trace.h"

RTE_TRACE_POINT(
	cqpoll_dpdk_trace_arm,
	RTE_TRACE_POINT_ARGS(const void *cq, uint8_t missed),
	rte_trace_point_emit_ptr(cq);
	rte_trace_point_emit_u8(missed);
)

RTE_TRACE_POINT(
	cqpoll_dpdk_trace_transition,
	RTE_TRACE_POINT_ARGS(const void *group, uint32_t active, uint32_t cqs,
			     uint32_t found),
	rte_trace_point_emit_ptr(group);
	rte_trace_point_emit_u32(active);
	rte_trace_point_emit_u32(cqs);
	rte_trace_point_emit_u32(found);
)

RTE_TRACE_POINT(
	cqpoll_dpdk_trace_sleep,
	RTE_TRACE_POINT_ARGS(const void *group, const void *cq,
			     int32_t timeout_ms),
	rte_trace_point_emit_ptr(group);
	rte_trace_point_emit_ptr(cq);
	rte_trace_point_emit_i32(timeout_ms);
)

/*
 * The reason's name is looked up past the enable check, not by the caller:
 * a wake-up runs cold, and with the point off the lookup (a call into
 * libcqpoll) was most of the hook's cost.
 */
RTE_TRACE_POINT(
	cqpoll_dpdk_trace_wake,
	RTE_TRACE_POINT_ARGS(const void *group, const void *cq, int why,
			     uint64_t asleep_ns, uint32_t completions),
	const char *reason = cqpoll_trace_wake_name((enum cqpoll_trace_wake)why);
	rte_trace_point_emit_ptr(group);
	rte_trace_point_emit_ptr(cq);
	rte_trace_point_emit_string(reason);
	rte_trace_point_emit_u64(asleep_ns);
	rte_trace_point_emit_u32(completions);
)

RTE_TRACE_POINT(
	cqpoll_dpdk_trace_mode_change,
	RTE_TRACE_POINT_ARGS(const void *group, const char *from, const char *to),
	rte_trace_point_emit_ptr(group);
	rte_trace_point_emit_string(from);
	rte_trace_point_emit_string(to);
)

RTE_TRACE_POINT(
	cqpoll_dpdk_trace_policy_decision,
	RTE_TRACE_POINT_ARGS(const void *group, uint32_t completions,
			     const char *action),
	rte_trace_point_emit_ptr(group);
	rte_trace_point_emit_u32(completions);
	rte_trace_point_emit_string(action);
)

RTE_TRACE_POINT(
	cqpoll_dpdk_trace_cq_state,
	RTE_TRACE_POINT_ARGS(const void *group, const void *cq,
			     const char *state, int error),
	rte_trace_point_emit_ptr(group);
	rte_trace_point_emit_ptr(cq);
	rte_trace_point_emit_string(state);
	rte_trace_point_emit_int(error);
)

#endif /* CQPOLL_DPDK_TRACE_H */
