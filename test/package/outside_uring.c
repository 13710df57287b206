/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An application outside the tree that uses the io_uring driver, linked by
 * test/package/check-install.sh through pkg-config [--static] --libs
 * cqpoll_uring: a NOP submitted on the ring, its CQE read through cqpoll,
 * then the CQ armed and a second NOP's event slept on. Exits 77 where the
 * kernel refuses io_uring (a container's seccomp), 0 when each step gives
 * what the contract says.
 */

/* liburing.h needs AT_FDCWD, which C11 alone does not declare. */
#define _GNU_SOURCE

#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>

#include <cqpoll.h>
#include <cqpoll_uring.h>

static int
nop(struct io_uring *ring, uint64_t id)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (sqe == NULL)
		return -EBUSY;
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, id);
	return io_uring_submit(ring) == 1 ? 0 : -EIO;
}

int
main(void)
{
	struct cqpoll_completion c[4];
	struct io_uring *ring;
	struct cqpoll_cq *cq;
	int n, r;

	cq = cqpoll_uring_cq_create(NULL);
	if (cq == NULL) {
		if (errno == ENOSYS || errno == EPERM) {
			printf("uring: io_uring refused here (%s): skip\n", strerror(errno));
			return 77;
		}
		perror("uring: cqpoll_uring_cq_create");
		return 1;
	}
	ring = cqpoll_uring_cq_ring(cq);
	if (ring == NULL || nop(ring, 7) != 0) {
		fprintf(stderr, "uring: no ring, or the NOP was not submitted\n");
		return 1;
	}
	do
		n = cqpoll_poll_burst(cq, c, 4);
	while (n == 0);
	if (n != 1 || c[0].wr_id != 7) {
		fprintf(stderr, "uring: polled %d completions, expected wr_id 7\n", n);
		return 1;
	}
	while ((n = cqpoll_poll_and_arm(cq, c, 4)) > 0)
		;
	if (n != 0 || nop(ring, 8) != 0) {
		fprintf(stderr, "uring: arm gave %d, or the second NOP failed\n", n);
		return 1;
	}
	r = cqpoll_cq_wait(cq, 5000);
	n = cqpoll_poll_burst(cq, c, 4);
	if (r != 1 || n != 1 || c[0].wr_id != 8) {
		fprintf(stderr, "uring: wait gave %d then %d completions\n", r, n);
		return 1;
	}
	cqpoll_cq_destroy(cq);
	printf("uring: NOP completed, armed, woken\n");
	return 0;
}
