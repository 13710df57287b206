/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_TRACE_PRIVATE_H
#define CQPOLL_TRACE_PRIVATE_H

/*
 * Trace points of the core: each loads the hook once and calls its member
 * if set, so an unset hook costs a load and a branch.
 */

#include "cqpoll_config.h"
#include "cqpoll_trace.h"

extern const struct cqpoll_trace_hook *cqpoll_trace_hook_cur;

#define CQPOLL_TRACE(member, ...) do { \
	const struct cqpoll_trace_hook *cqpoll_trace_h_ = \
		__atomic_load_n(&cqpoll_trace_hook_cur, __ATOMIC_ACQUIRE); \
	if (cqpoll_trace_h_ != NULL && cqpoll_trace_h_->member != NULL) \
		cqpoll_trace_h_->member(cqpoll_trace_h_->arg, __VA_ARGS__); \
} while (0)

/* Fast-path trace points: compiled in only with -Ddebug_fastpath=true. */
#if CQPOLL_DEBUG_FASTPATH
#define CQPOLL_TRACE_FP(member, ...) CQPOLL_TRACE(member, __VA_ARGS__)
#else
#define CQPOLL_TRACE_FP(member, ...) do { } while (0)
#endif

#endif /* CQPOLL_TRACE_PRIVATE_H */
