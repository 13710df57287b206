/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_SW_H
#define CQPOLL_SW_H

/**
 * @file
 * The software CQ: a real in-memory CQ and the device that fills it.
 *
 * The reference driver, always built. Its ring is a lock-free single-producer
 * single-consumer array whose entries carry an owner (phase) bit, like a
 * hardware CQ. The "device" is whichever thread calls cqpoll_sw_post(); the
 * consumer uses the generic API in cqpoll.h. Its arm can follow each of the
 * three semantics. An emulated variant with fault injection, arm hooks and a
 * ground-truth oracle is part of libcqpoll_emu (cqpoll_sw_emu.h).
 */

#include <stdint.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Configuration of a software CQ. */
struct cqpoll_sw_conf {
	uint32_t size;                   /**< Entries, rounded up to a power of 2 (1 stays 1); 0: default. */
	enum cqpoll_arm_semantics arm;   /**< What the arm guarantees. */
	uint32_t event_ack_batch;        /**< 0: the build-time default. */
	uint32_t flags;                  /**< CQPOLL_SW_F_* flags. */
	/**
	 * NUMA socket of the ring, the device state and the handle, with
	 * CQPOLL_SW_F_SOCKET_ID (cqpoll_alloc.h); without it, the C library's
	 * allocator (first touch).
	 */
	int socket_id;
};

/** cqpoll_sw_conf::socket_id is set. */
#define CQPOLL_SW_F_SOCKET_ID (1u << 0)

/**
 * Create a software CQ and its device.
 *
 * @param conf
 *   Configuration; NULL for defaults (edge arm, default size).
 * @return
 *   The CQ, or NULL with errno set: EINVAL (bad arm semantics, size over
 *   2^24, unknown flags or a socket that does not exist), ENOMEM, or an
 *   errno from eventfd(2). The reason is logged.
 *
 * Thread safety: safe from any thread.
 */
struct cqpoll_cq *cqpoll_sw_cq_create(const struct cqpoll_sw_conf *conf);

/**
 * Post one completion, as the device would write it: the entry is written,
 * made visible, stamped with CLOCK_MONOTONIC ns in
 * cqpoll_completion::timestamp, and an event is raised if the CQ is armed.
 *
 * @param cq
 *   A software CQ.
 * @param comp
 *   The completion; its timestamp and CQPOLL_COMPLETION_F_TIMESTAMP are set by
 *   the device.
 * @return
 *   - 0: posted.
 *   - -ENOSPC: the CQ is full; nothing was written (no entry is ever
 *     overwritten).
 *   - -EINVAL: NULL argument, or @p cq is not a software CQ.
 *   - other < 0: -errno from raising the event.
 *
 * Thread safety: one producer thread per CQ, concurrently with the consumer.
 */
int cqpoll_sw_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp);

/**
 * A shared event channel: one event fd for many software CQs, as one verbs
 * completion channel (ibv_create_comp_channel()) serves many CQs. A CQ
 * created on it (cqpoll_sw_cq_create_on()) has no eventfd of its own: its
 * arm, when it fires, puts the CQ on the channel's fired list (once per
 * arm) and makes the channel's fd readable; a poll group that holds the
 * channel's CQs polls those that fired, O(fired), not every CQ of the
 * channel. So 65536 CQs need one descriptor, not 65536.
 *
 * Every CQ of a channel belongs in one poll group (or none): the group that
 * takes the channel's fired list takes it for all of them, so a CQ of the
 * channel is destroyed on that group's thread (after it left the group),
 * never by another thread while the group runs. The library holds to it:
 * while a group holds CQs of the channel, adding one of its CQs to another
 * group returns -EBUSY, and so do cqpoll_poll_and_arm() and
 * cqpoll_cq_wait() on one outside the group (its event would be taken by
 * the group and its sleep would last to the timeout). cqpoll_cq_wait()
 * on one CQ of a busy channel returns 0 ("a shared channel's event") while
 * other CQs' events are pending: a channel is meant for groups.
 */
struct cqpoll_sw_channel;

/**
 * Create a shared event channel.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @return
 *   The channel, or NULL with errno set (ENOMEM, or an errno of
 *   eventfd(2)). The reason is logged.
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
struct cqpoll_sw_channel *cqpoll_sw_channel_create(void);

/**
 * Destroy a channel that no CQ uses any more.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param ch
 *   The channel.
 * @return
 *   - 0: destroyed.
 *   - -EBUSY: CQs created on it still exist (destroy them first); logged.
 *   - -EINVAL: @p ch is NULL.
 *
 * Thread safety: one thread, once no other uses the channel.
 */
__cqpoll_experimental
int cqpoll_sw_channel_destroy(struct cqpoll_sw_channel *ch);

/**
 * The channel's event fd: the one fd its CQs' cqpoll_cq_event_fd() return.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param ch
 *   The channel.
 * @return
 *   The fd, or -EINVAL if @p ch is NULL.
 *
 * Thread safety: safe from any thread while the channel exists.
 */
__cqpoll_experimental
int cqpoll_sw_channel_event_fd(const struct cqpoll_sw_channel *ch);

/**
 * Create a software CQ whose events go to a shared channel.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param conf
 *   Configuration, as for cqpoll_sw_cq_create(); NULL for defaults.
 * @param ch
 *   The channel, or NULL for the CQ's own eventfd (cqpoll_sw_cq_create()).
 *   It must outlive the CQ.
 * @return
 *   The CQ, or NULL with errno set, as cqpoll_sw_cq_create().
 *
 * Thread safety: safe from any thread.
 */
__cqpoll_experimental
struct cqpoll_cq *cqpoll_sw_cq_create_on(const struct cqpoll_sw_conf *conf,
					 struct cqpoll_sw_channel *ch);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_SW_H */
