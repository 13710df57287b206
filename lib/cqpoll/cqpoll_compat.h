/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_COMPAT_H
#define CQPOLL_COMPAT_H

/**
 * @file
 * Markers of the API's stability, as DPDK's rte_compat.h.
 *
 * A function of the EXPERIMENTAL version node (doc/guides/abi.md) is
 * declared with __cqpoll_experimental: a program that calls it gets a
 * compiler warning (an error with -Werror) unless it says it accepts an API
 * that may change in any release, by defining CQPOLL_ALLOW_EXPERIMENTAL_API
 * before the first cqpoll header (-DCQPOLL_ALLOW_EXPERIMENTAL_API).
 * devtools/check-experimental.py holds the marker, the "@warning
 * EXPERIMENTAL" of the function's documentation and its version node to one
 * another.
 */

#ifndef CQPOLL_ALLOW_EXPERIMENTAL_API
/** Marks an EXPERIMENTAL declaration: a use warns without the opt-in. */
#define __cqpoll_experimental \
	__attribute__((deprecated("EXPERIMENTAL cqpoll API: it may change in any release; define CQPOLL_ALLOW_EXPERIMENTAL_API to use it")))
#else
/** Marks an EXPERIMENTAL declaration; the program opted in. */
#define __cqpoll_experimental
#endif

#endif /* CQPOLL_COMPAT_H */
