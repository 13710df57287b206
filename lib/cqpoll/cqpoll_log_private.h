/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_LOG_PRIVATE_H
#define CQPOLL_LOG_PRIVATE_H

/*
 * Log points of the library and its drivers: CQPOLL_LOG() of the driver SDK
 * (cqpoll_driver.h), the core's CQPOLL_LOG_LIB(), and CQPOLL_LOG_FP() for
 * the per-poll fast path, compiled in only with -Ddebug_fastpath=true.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cqpoll_config.h"
#include "cqpoll_driver.h"
#include "cqpoll_log.h"

/* The core's own messages (logtype lib.cqpoll under DPDK). */
#define CQPOLL_LOG_LIB(level, ...) CQPOLL_LOG(level, CQPOLL_LOG_CORE, __VA_ARGS__)

/*
 * Whether the core's DEBUG messages would be written, for the sleep paths:
 * asked of the hook at most once per CQPOLL_LOG_RECHECK_NS (@p now:
 * CLOCK_MONOTONIC ns) and at once after cqpoll_log_set_hook(). A
 * sleep-and-wake runs cold after the sleep, and the question crosses into
 * the hook's library (DPDK: the logtype's lookup, rte_log_can_log()) for
 * messages that are almost always off. A level raised at run time reaches
 * those messages within the period.
 */
#define CQPOLL_LOG_RECHECK_NS 100000000u
bool cqpoll_log_lib_debug(uint64_t now);

#if CQPOLL_DEBUG_FASTPATH
#define CQPOLL_LOG_FP(level, component, ...) CQPOLL_LOG(level, component, __VA_ARGS__)
#else
#define CQPOLL_LOG_FP(level, component, ...) do { } while (0)
#endif

#endif /* CQPOLL_LOG_PRIVATE_H */
