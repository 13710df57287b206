/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' io_uring helpers: see uring_test.h. */
#include "uring_test.h"

int
test_uring_nop(struct io_uring *ring, uint64_t user_data, int32_t res,
	       bool inject, unsigned int sqe_flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int r;

	if (sqe == NULL)
		return -ENOSPC;
	io_uring_prep_nop(sqe);
	if (inject) {
		sqe->rw_flags = (int)TEST_URING_NOP_INJECT_RESULT;
		sqe->len = (uint32_t)res;
	}
	sqe->flags |= (uint8_t)sqe_flags;
	io_uring_sqe_set_data64(sqe, user_data);
	/* With SQPOLL the kernel thread may have taken it already: 0 is fine. */
	r = io_uring_submit(ring);
	return r < 0 ? r : 0;
}

int
test_uring_probe(char *why, size_t len)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int r, inject;

	r = io_uring_queue_init(4, &ring, 0);
	if (r < 0) {
		snprintf(why, len, "io_uring_setup: %s (io_uring disabled by the "
			 "kernel.io_uring_disabled sysctl, seccomp, or the kernel)",
			 strerror(-r));
		return r;
	}
	r = test_uring_nop(&ring, 1, 7, true, 0);
	if (r == 0)
		r = io_uring_wait_cqe(&ring, &cqe);
	if (r < 0) {
		io_uring_queue_exit(&ring);
		snprintf(why, len, "io_uring NOP: %s", strerror(-r));
		return r;
	}
	inject = cqe->res == 7;
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	return inject;
}
