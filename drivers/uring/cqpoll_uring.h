/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_URING_H
#define CQPOLL_URING_H

/**
 * @file
 * io_uring driver: the completion queue ring of an io_uring instance as a
 * cqpoll CQ.
 *
 * The driver reads CQEs straight from the ring the kernel shares with the
 * process (acquire load of the tail, release store of the head, as liburing)
 * and sleeps on an eventfd registered with the ring. While the consumer polls,
 * the ring's IORING_CQ_EVENTFD_DISABLED flag is set, so the kernel does not
 * signal the eventfd per completion; the arm clears it. Clearing the flag is
 * an edge arm (CQPOLL_ARM_EDGE): CQEs posted while it was set raise nothing,
 * so cqpoll_poll_and_arm() polls once more after it. See
 * doc/guides/uring-driver.md.
 *
 * A completion maps a CQE as follows: user_data to wr_id
 * (CQPOLL_COMPLETION_F_WR_ID), res >= 0 to byte_len with
 * CQPOLL_STATUS_SUCCESS, res < 0 to a failed status (CQPOLL_STATUS_WR_FLUSH_ERR
 * for -ECANCELED, else CQPOLL_STATUS_GENERAL_ERR) with vendor_err = -res.
 * A CQE does not say which operation completed: opcode and qp_num are 0, and
 * the application keeps what it needs in user_data.
 *
 * Overflowed completions (IORING_SQ_CQ_OVERFLOW) are flushed into the ring
 * with io_uring_enter(IORING_ENTER_GETEVENTS) when the ring is drained, so
 * none is lost (the kernel keeps them, IORING_FEAT_NODROP).
 *
 * @note This header includes liburing.h first: liburing.h sets the feature
 * macros glibc needs to declare sigset_t, which only take effect before the
 * first system header. A program that includes other system headers before
 * this one needs them itself (_XOPEN_SOURCE or _GNU_SOURCE), as for
 * liburing.h alone.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 */

/* liburing.h first: the note above says why. */
#include <liburing.h>

#include <stdint.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Parameters of cqpoll_uring_cq_create() and cqpoll_uring_cq_attach(). */
struct cqpoll_uring_conf {
	/**
	 * create: CQ ring entries (IORING_SETUP_CQSIZE; the kernel rounds up
	 * to a power of two); the SQ ring gets as many, at most 4096. 0: 4096.
	 * attach: ignored, the ring's own size is used.
	 */
	uint32_t size;
	uint32_t event_ack_batch; /**< 0: the build-time default. */
};

/**
 * Create an io_uring instance and its CQ handle.
 *
 * Submit work through cqpoll_uring_cq_ring(); the CQEs of that work are
 * the CQ's completions.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param conf
 *   Parameters; NULL for the defaults.
 * @return
 *   The CQ, or NULL with errno set: EINVAL (bad size), ENOSYS or EPERM
 *   (io_uring unavailable: not built in, disabled by the
 *   kernel.io_uring_disabled sysctl, or refused by seccomp), ENOMEM, or the
 *   errno of io_uring_setup(2) or eventfd(2).
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
struct cqpoll_cq *cqpoll_uring_cq_create(const struct cqpoll_uring_conf *conf);

/**
 * Wrap an io_uring instance the caller created.
 *
 * The driver registers an eventfd with the ring and sets
 * IORING_CQ_EVENTFD_DISABLED; cqpoll_cq_destroy() unregisters it and
 * restores the flag, and leaves the ring to the caller. From attach until
 * destroy the CQ side of the ring belongs to the cqpoll consumer: the caller
 * must not read CQEs or move the CQ head itself.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param ring
 *   An initialised ring that outlives the CQ.
 * @param conf
 *   Parameters; NULL for the defaults.
 * @return
 *   The CQ, or NULL with errno set: EINVAL (NULL ring, or a ring set up
 *   with IORING_SETUP_IOPOLL or IORING_SETUP_DEFER_TASKRUN, whose completions
 *   only appear when the consumer enters the kernel), EBUSY (an eventfd is
 *   already registered), ENOMEM, or the errno of the registration.
 *
 * Thread safety: safe from any thread; no other thread may use the ring's
 * CQ side meanwhile.
 */
__cqpoll_experimental
struct cqpoll_cq *cqpoll_uring_cq_attach(struct io_uring *ring,
					 const struct cqpoll_uring_conf *conf);

/**
 * The io_uring instance of a CQ, to submit work whose CQEs the CQ reports.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   A CQ of this driver.
 * @return
 *   The ring, or NULL (errno EINVAL) if @p cq is NULL or not an io_uring CQ.
 *
 * Thread safety: safe from any thread. The ring's SQ side may be used by one
 * thread at a time, which need not be the consumer's; its CQ side belongs to
 * the consumer (cqpoll_poll_burst() and friends).
 */
__cqpoll_experimental
struct io_uring *cqpoll_uring_cq_ring(struct cqpoll_cq *cq);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_URING_H */
