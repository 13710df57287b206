/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_MIXED_REAL_H
#define TEST_MIXED_REAL_H

/*
 * One CQ of each kind, for a poll group that mixes queues written by others
 * with emulated ones: a software CQ, an io_uring CQ (NOPs completed by the
 * running kernel), a libfabric tcp CQ (messages between two loopback
 * endpoints, ofi_test.h), a UCX worker (tagged messages between two workers
 * over posix shared memory, ucx_test.h) and, where built, an emulated mlx5
 * CQ. Each member
 * opens, takes posts from a producer thread, and closes the same way, so the
 * test walks them without knowing which is which. A kind that does not run
 * here is left out with the reason.
 *
 * Its negative control, in test code only: the io_uring CQ behind a handle
 * that declares the arm level. cqpoll_poll_and_arm() then does what naive
 * code does on io_uring: poll, clear IORING_CQ_EVENTFD_DISABLED, sleep, with
 * no poll after the arm, so a CQE posted in between raises no event. The
 * arm can be made to sleep first (a thread preempted between its last poll
 * and its arm), as stress-naive-uring does.
 */

#include <stddef.h>
#include <stdint.h>

#include "cqpoll.h"

enum mr_kind { MR_SW, MR_URING, MR_OFI, MR_MLX5, MR_UCX, MR_KINDS };

/* The kinds' names, as the tests print them. */
extern const char *const mr_kind_names[MR_KINDS];

struct mr_member {
	enum mr_kind kind;
	struct cqpoll_cq *cq;   /* what the group polls */
	struct cqpoll_cq *real; /* what the device posts to: cq, or under the wrapper */
	void *dev;              /* uring: the ring; ofi: struct test_ofi; ucx: struct test_ucx */
};

/*
 * Open member @p m of kind @p kind; 0, or -ENOTSUP with the reason in @p why
 * (not built, or not available here), or another -errno.
 */
int mr_open(struct mr_member *m, enum mr_kind kind, int naive, uint64_t naive_delay_ns,
	char *why, size_t len);

/* Post one completion with @p wr_id as the device of @p m (producer thread). */
int mr_post(struct mr_member *m, uint64_t wr_id);

void mr_close(struct mr_member *m);

/*
 * Consumer side, after @p delivered completions of @p m (group thread): a
 * UCX member's receives for the tags its device may send next, tag = wr_id
 * = @p tag_base | sequence number.
 */
int mr_consumed(struct mr_member *m, uint64_t tag_base, uint64_t delivered);

#endif /* TEST_MIXED_REAL_H */
