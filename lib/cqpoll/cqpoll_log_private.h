/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_LOG_PRIVATE_H
#define CQPOLL_LOG_PRIVATE_H

/*
 * Log points of the library and its drivers. A message is formatted only
 * when a hook is installed and wants its level, so a log point on a path
 * that runs once per sleep costs a load and a branch when nobody listens.
 * CQPOLL_LOG_FP() is for the per-poll fast path: compiled in only with
 * -Ddebug_fastpath=true.
 */

#include "cqpoll_config.h"
#include "cqpoll_log.h"

/* The installed hook; NULL: none. */
extern const struct cqpoll_log_hook *cqpoll_log_hook_cur;

bool cqpoll_log_wanted(const struct cqpoll_log_hook *h,
		       enum cqpoll_log_level level, const char *component);

__attribute__((format(printf, 4, 5)))
void cqpoll_log_emit(const struct cqpoll_log_hook *h,
		     enum cqpoll_log_level level, const char *component,
		     const char *fmt, ...);

#define CQPOLL_LOG(level, component, ...) do { \
	const struct cqpoll_log_hook *cqpoll_log_h_ = \
		__atomic_load_n(&cqpoll_log_hook_cur, __ATOMIC_ACQUIRE); \
	if (cqpoll_log_h_ != NULL && \
	    cqpoll_log_wanted(cqpoll_log_h_, CQPOLL_LOG_##level, (component))) \
		cqpoll_log_emit(cqpoll_log_h_, CQPOLL_LOG_##level, \
				(component), __VA_ARGS__); \
} while (0)

/* The core's own messages (logtype lib.cqpoll under DPDK). */
#define CQPOLL_LOG_LIB(level, ...) CQPOLL_LOG(level, CQPOLL_LOG_CORE, __VA_ARGS__)

#if CQPOLL_DEBUG_FASTPATH
#define CQPOLL_LOG_FP(level, component, ...) CQPOLL_LOG(level, component, __VA_ARGS__)
#else
#define CQPOLL_LOG_FP(level, component, ...) do { } while (0)
#endif

#endif /* CQPOLL_LOG_PRIVATE_H */
