/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_DRIVER_PRIVATE_H
#define CQPOLL_DRIVER_PRIVATE_H

/*
 * What the drivers of this tree (in libcqpoll and in the driver libraries
 * beside it) may do to a handle beyond the public driver SDK
 * (cqpoll_driver.h). In the INTERNAL version node, with no header
 * installed: never for applications.
 */

#include "cqpoll_driver.h"

/*
 * Replace the burst poll of @p cq, chosen at cqpoll_cq_alloc(), by @p poll,
 * the one it had going to *@p old (if @p old is not NULL): a driver whose
 * CQ's completions need more decoding from now on (the mlx5 driver, once it
 * posts a QP's work itself) changes it without costing CQs that do not.
 * 0; -EINVAL (NULL argument); -EBUSY (the CQ failed: its poll returns the
 * failure and stays). Not concurrently with a poll of @p cq.
 */
int cqpoll_cq_poll_swap(struct cqpoll_cq *cq, cqpoll_poll_burst_t poll,
			cqpoll_poll_burst_t *old);

/*
 * A driver object that keeps a pointer to @p cq (the mlx5 driver's QPs:
 * their CQs' polls hand back their wr_ids) takes it with cqpoll_cq_hold()
 * and lets go with cqpoll_cq_release(); cqpoll_cq_destroy() refuses a CQ
 * still held with -EBUSY, so the object never reads a freed one. Control
 * path: not concurrently with cqpoll_cq_destroy() of @p cq.
 */
void cqpoll_cq_hold(struct cqpoll_cq *cq);
void cqpoll_cq_release(struct cqpoll_cq *cq);

#endif /* CQPOLL_DRIVER_PRIVATE_H */
