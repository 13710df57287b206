/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_CLOCK_H
#define CQPOLL_CLOCK_H

/* Internal to the library: its clock. Not installed. */

#include <stdint.h>

#include "cqpoll_driver.h"

/* cqpoll_now_ns() is the driver SDK's (cqpoll_driver.h). */

/*
 * The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID): a system
 * call on Linux, not the vDSO, so callers sample it.
 */
uint64_t cqpoll_thread_cpu_ns(void);

#endif /* CQPOLL_CLOCK_H */
