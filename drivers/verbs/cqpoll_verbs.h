/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_VERBS_H
#define CQPOLL_VERBS_H

/**
 * @file
 * The generic verbs driver: any libibverbs CQ (iWARP, RoCE NICs, EFA,
 * soft-RoCE, mlx5 through verbs).
 *
 * Polls with the extended CQ API (ibv_start_poll() / ibv_next_poll() /
 * ibv_end_poll()) when the CQ is a struct ibv_cq_ex, else with ibv_poll_cq();
 * the variant is chosen once, when the handle is made. Arms with
 * ibv_req_notify_cq(), whose only guarantee is an event for completions added
 * after the arm: the CQ follows CQPOLL_ARM_EDGE, so cqpoll_poll_and_arm()
 * polls, arms and polls again. Events come from a completion channel that
 * several CQs of one thread may share; they are acknowledged with
 * ibv_ack_cq_events() in batches, and all of them before a CQ is destroyed.
 *
 * See doc/guides/verbs-driver.md.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @name Flags of struct cqpoll_verbs_conf */
/**@{*/
/** Arm for the next solicited or failed completion only (solicited_only = 1). */
#define CQPOLL_VERBS_F_SOLICITED_ONLY (1u << 0)
/** cqpoll_verbs_cq_create(): create with ibv_create_cq(), poll with ibv_poll_cq(). */
#define CQPOLL_VERBS_F_NO_CQ_EX       (1u << 1)
/** cqpoll_verbs_cq_create(): do not ask for completion timestamps. */
#define CQPOLL_VERBS_F_NO_TIMESTAMP   (1u << 2)
/**@}*/

/** Configuration of a verbs CQ handle. Zero everywhere means defaults. */
struct cqpoll_verbs_conf {
	uint32_t flags;            /**< CQPOLL_VERBS_F_* bits. */
	uint32_t event_ack_batch;  /**< 0: the build-time default. */
	/** cqpoll_verbs_cq_create(): minimum entries; 0: 4096. */
	uint32_t size;
	/** cqpoll_verbs_cq_create(): completion vector. */
	int comp_vector;
	/**
	 * cqpoll_verbs_cq_create(): the channel to create the CQ on, shared with
	 * the other CQs created on it; NULL: a channel owned by this CQ.
	 */
	struct ibv_comp_channel *channel;
	/**
	 * cqpoll_verbs_cq_attach_ex(): the wc_flags the CQ was created with. They
	 * must include IBV_WC_EX_WITH_BYTE_LEN, IBV_WC_EX_WITH_QP_NUM and
	 * IBV_WC_EX_WITH_IMM; IBV_WC_EX_WITH_COMPLETION_TIMESTAMP adds timestamps.
	 */
	uint64_t wc_flags;
};

/**
 * Wrap an existing CQ, polled with ibv_poll_cq().
 *
 * The CQ stays the caller's: cqpoll_cq_destroy() acknowledges the events it
 * consumed but does not destroy it. The channel's fd is switched to
 * non-blocking mode. Every CQ on @p ch must be attached to cqpoll: an event
 * read for a CQ that is not is acknowledged and dropped.
 *
 * @param cq
 *   The CQ, created on @p ch.
 * @param ch
 *   Its completion channel; several CQs of one thread may share it.
 * @param conf
 *   Configuration; NULL for defaults. Only flags and event_ack_batch are used.
 * @return
 *   The handle, or NULL with errno set: EINVAL (NULL @p cq or @p ch, or @p cq
 *   not created on @p ch), ENOMEM, or an errno from fcntl(2), eventfd(2) or
 *   epoll_create1(2).
 *
 * Thread safety: safe from any thread. CQs sharing a channel may be attached
 * and destroyed from any thread; their consumer calls belong to one thread.
 */
struct cqpoll_cq *cqpoll_verbs_cq_attach(struct ibv_cq *cq,
					 struct ibv_comp_channel *ch,
					 const struct cqpoll_verbs_conf *conf);

/**
 * Wrap an existing extended CQ, polled with ibv_start_poll() and friends.
 *
 * As cqpoll_verbs_cq_attach(), and @p conf is mandatory: conf->wc_flags says
 * which fields the CQ was created to report.
 *
 * @param cq
 *   The extended CQ, created on @p ch.
 * @param ch
 *   Its completion channel; several CQs of one thread may share it.
 * @param conf
 *   Configuration, mandatory: wc_flags, flags and event_ack_batch are used.
 * @return
 *   The handle, or NULL with errno set: EINVAL also when @p cq or @p conf is
 *   NULL or conf->wc_flags lacks a mandatory field (attach such a CQ with cqpoll_verbs_cq_attach(),
 *   passing ibv_cq_ex_to_cq(cq)); other errors as cqpoll_verbs_cq_attach().
 *
 * Thread safety: as cqpoll_verbs_cq_attach().
 */
struct cqpoll_cq *cqpoll_verbs_cq_attach_ex(struct ibv_cq_ex *cq,
					    struct ibv_comp_channel *ch,
					    const struct cqpoll_verbs_conf *conf);

/**
 * Create a CQ (and, unless conf->channel is given, its completion channel)
 * and wrap it; both belong to the handle and are destroyed with it.
 *
 * Tries, in order: ibv_create_cq_ex() with completion timestamps when
 * ibv_query_device_ex() reports a timestamp mask; ibv_create_cq_ex() without
 * them; ibv_create_cq(). CQPOLL_VERBS_F_NO_CQ_EX and CQPOLL_VERBS_F_NO_TIMESTAMP
 * skip steps. Works on real devices and on verbs-emu contexts.
 *
 * @param ctx
 *   The device context.
 * @param conf
 *   Configuration; NULL for defaults.
 * @return
 *   The handle, or NULL with errno set: EINVAL (NULL @p ctx), ENOMEM, or the
 *   errno of the failed verbs call.
 *
 * Thread safety: as cqpoll_verbs_cq_attach().
 */
struct cqpoll_cq *cqpoll_verbs_cq_create(struct ibv_context *ctx,
					 const struct cqpoll_verbs_conf *conf);

/**
 * The verbs CQ under a handle of this driver: to create QPs on it.
 *
 * @param cq
 *   A handle of this driver (attached or created).
 * @return
 *   The CQ (an ibv_cq_ex cast with ibv_cq_ex_to_cq() for extended CQs), or
 *   NULL (errno EINVAL) if @p cq is NULL or not a verbs handle.
 *
 * Thread safety: safe from any thread while the handle exists.
 */
struct ibv_cq *cqpoll_verbs_cq_ibv(const struct cqpoll_cq *cq);

/**
 * Whether a handle polls with the extended CQ API.
 *
 * @param cq
 *   A handle of this driver (attached or created).
 * @return
 *   1 for the extended API, 0 for ibv_poll_cq(), -EINVAL if @p cq is NULL or
 *   not a verbs handle.
 *
 * Thread safety: safe from any thread while the handle exists.
 */
int cqpoll_verbs_cq_is_ex(const struct cqpoll_cq *cq);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_VERBS_H */
