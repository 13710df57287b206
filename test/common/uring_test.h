/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_URING_TEST_H
#define CQPOLL_URING_TEST_H

/*
 * The tests' io_uring "device": NOPs submitted on the CQ's ring complete in
 * the kernel, which writes their CQEs as for any other operation. A NOP can
 * carry the result the kernel reports (IORING_NOP_INJECT_RESULT, Linux
 * 6.12), which stands for a byte count or an error.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <liburing.h>

#include "cqpoll_uring.h"

/* include/uapi/linux/io_uring.h: sqe->nop_flags (the rw_flags word). */
#define TEST_URING_NOP_INJECT_RESULT (1u << 0)

/* Submit one NOP with user_data; inject @p res if @p inject. */
int test_uring_nop(struct io_uring *ring, uint64_t user_data, int32_t res,
	       bool inject, unsigned int sqe_flags);

/*
 * Whether io_uring runs here, and whether NOPs inject results: 1 if they
 * do, 0 if not, < 0 (-errno, with the reason in @p why) if io_uring is
 * unavailable (not built, kernel.io_uring_disabled, seccomp).
 */
int test_uring_probe(char *why, size_t len);

#endif /* CQPOLL_URING_TEST_H */
