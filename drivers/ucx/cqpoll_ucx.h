/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_UCX_H
#define CQPOLL_UCX_H

/**
 * @file
 * UCX driver: a UCP worker as a cqpoll CQ.
 *
 * A completion is the completion of a request posted through this driver
 * (cqpoll_ucx_tag_send(), cqpoll_ucx_tag_recv()): the request's callback, or
 * the post itself when UCX completes it at once, pushes {user context,
 * status, length, sender tag} into a ring the driver owns. A poll pops the
 * ring and, while it holds fewer than asked, progresses the worker (which
 * runs the callbacks). Callbacks run only inside progress and post calls, on the
 * consumer's thread, so "ring empty, then arm" has no race of its own.
 *
 * The arm is report-missed (CQPOLL_ARM_REPORT_MISSED): it says "poll again"
 * (> 0) when the ring is not empty, when one more progress made any, or when
 * ucp_worker_arm() returns UCS_ERR_BUSY (events pending on the worker:
 * unread shared-memory FIFO entries, a queued signal, a ucp_worker_signal());
 * 0 only after ucp_worker_arm() returned UCS_OK. The event fd is
 * ucp_worker_get_efd(). See doc/guides/ucx-driver.md.
 *
 * A completion: wr_id is the caller's context (CQPOLL_COMPLETION_F_WR_ID),
 * byte_len the bytes sent or received, opcode CQPOLL_OP_SEND or
 * CQPOLL_OP_RECV, a receive's sender tag with CQPOLL_COMPLETION_F_TAG
 * (cqpoll_completion_tag()), timestamp the host time the driver learned of
 * it (CQPOLL_COMPLETION_F_TIMESTAMP). A failed request has status
 * CQPOLL_STATUS_WR_FLUSH_ERR (UCS_ERR_CANCELED), CQPOLL_STATUS_LOC_LEN_ERR
 * (UCS_ERR_MESSAGE_TRUNCATED) or CQPOLL_STATUS_GENERAL_ERR, and vendor_err =
 * -ucs_status_t.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 */

#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Parameters of cqpoll_ucx_cq_create(). */
struct cqpoll_ucx_conf {
	/**
	 * Requests outstanding at most, posted and not yet polled (rounded up
	 * to a power of two); the ring holds as many completions, so it never
	 * overflows. 0: 4096.
	 */
	uint32_t size;
	uint32_t event_ack_batch; /**< 0: the build-time default. */
};

/**
 * Wrap a UCP worker the caller created.
 *
 * The worker's context must have UCP_FEATURE_WAKEUP (and the worker
 * wake-up events of what it posts, e.g. UCP_WAKEUP_TAG_SEND |
 * UCP_WAKEUP_TAG_RECV, or none for all). From here on the worker belongs to
 * the CQ's consumer thread: progress, arm and wait on it only through
 * cqpoll. Finish the first exchange of every tcp endpoint before the first
 * sleep (doc/guides/ucx-driver.md, "Pitfalls").
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param worker
 *   The worker; it must outlive the CQ.
 * @param conf
 *   Parameters; NULL for the defaults.
 * @return
 *   The CQ, or NULL with errno set: EINVAL (NULL worker, size over 2^24),
 *   EOPNOTSUPP (no wake-up: the context lacks UCP_FEATURE_WAKEUP), EBUSY
 *   (the worker is wrapped by another CQ already, until that CQ is
 *   destroyed: two CQs would each progress it and take the other's
 *   completions), ENOMEM. The reason is logged.
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
struct cqpoll_cq *cqpoll_ucx_cq_create(ucp_worker_h worker,
				       const struct cqpoll_ucx_conf *conf);

/**
 * The worker of a CQ.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   A CQ of this driver.
 * @return
 *   The worker, or NULL (errno EINVAL) if @p cq is NULL or not a UCX CQ.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
__cqpoll_experimental
ucp_worker_h cqpoll_ucx_cq_worker(struct cqpoll_cq *cq);

/**
 * Send a tagged message whose completion the CQ reports (ucp_tag_send_nbx()).
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   A CQ of this driver.
 * @param ep
 *   An endpoint of the CQ's worker.
 * @param buf, len
 *   The message; @p buf must stay valid until the completion.
 * @param tag
 *   Its tag.
 * @param wr_id
 *   The completion's wr_id.
 * @return
 *   0: a completion will come (it may already be in the ring); -ENOBUFS:
 *   @p size requests are outstanding, poll first; -EINVAL: not a UCX CQ;
 *   -ENOMEM, -EAGAIN (UCS_ERR_NO_RESOURCE) or -EIO (another UCX error, no
 *   completion).
 *
 * Thread safety: consumer thread only (the worker's thread).
 */
__cqpoll_experimental
int cqpoll_ucx_tag_send(struct cqpoll_cq *cq, ucp_ep_h ep, const void *buf,
			size_t len, ucp_tag_t tag, uint64_t wr_id);

/**
 * Post a tagged receive whose completion the CQ reports (ucp_tag_recv_nbx()).
 *
 * A message that arrived before the receive completes it at once; its
 * completion is then in the ring when this returns.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   A CQ of this driver.
 * @param buf, len
 *   Where to receive; valid until the completion.
 * @param tag, tag_mask
 *   The tags to match.
 * @param wr_id
 *   The completion's wr_id.
 * @return
 *   As cqpoll_ucx_tag_send().
 *
 * Thread safety: consumer thread only (the worker's thread).
 */
__cqpoll_experimental
int cqpoll_ucx_tag_recv(struct cqpoll_cq *cq, void *buf, size_t len,
			ucp_tag_t tag, ucp_tag_t tag_mask, uint64_t wr_id);

/**
 * Wake the CQ's consumer from another thread (ucp_worker_signal()): a sleep
 * on the CQ ends as if by an event, and the poll after it finds nothing
 * (a spurious event) unless completions came meanwhile.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param cq
 *   A CQ of this driver.
 * @return
 *   0; -EINVAL if @p cq is not a UCX CQ; -EIO if UCX refused.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
__cqpoll_experimental
int cqpoll_ucx_cq_signal(struct cqpoll_cq *cq);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_UCX_H */
