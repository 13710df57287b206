/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_IBV_H
#define CQPOLL_IBV_H

/**
 * @file
 * Driver selection for an existing verbs CQ: the generic verbs driver, or,
 * when the caller accepts WQE counters instead of wr_ids, the mlx5
 * device-direct driver where the device and the CQ allow it.
 *
 * What a completion identifies is the caller's choice, never a side effect
 * of the hardware (doc/guides/contract.md, "What a completion means"): the
 * verbs driver sets CQPOLL_COMPLETION_F_WR_ID and the caller's wr_id; the
 * direct mlx5 path reads CQEs, which carry no wr_id, and sets
 * CQPOLL_COMPLETION_F_WQE_COUNTER and wqe_counter instead.
 *
 * Rules, in order (doc/guides/verbs-driver.md):
 *  1. Without CQPOLL_IBV_F_WQE_COUNTER: verbs.
 *  2. With it: mlx5 if the mlx5 driver is in this build, the CQ is not on an
 *     emulated (verbs-emu) context, mlx5dv_is_supported() holds for its
 *     device and it is not extended (CQPOLL_IBV_F_CQ_EX), unless the mlx5
 *     attach refuses the CQ with EOPNOTSUPP. Otherwise verbs.
 *
 * CQs of both drivers may share one completion channel: every event goes to
 * the CQ it names (drivers/common/ibv).
 */

#include <stdint.h>

#include <infiniband/verbs.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @name Flags of struct cqpoll_ibv_conf */
/**@{*/
/** The CQ was made by ibv_create_cq_ex() with wc_flags: poll it so (verbs). */
#define CQPOLL_IBV_F_CQ_EX         (1u << 1)
/** Arm for solicited and failed completions only. */
#define CQPOLL_IBV_F_SOLICITED_ONLY (1u << 2)
/**
 * The caller accepts completions that identify the work by its WQE index
 * (CQPOLL_COMPLETION_F_WQE_COUNTER, wqe_counter) instead of its wr_id: the
 * direct mlx5 path may be taken. Without it the verbs driver always is.
 */
#define CQPOLL_IBV_F_WQE_COUNTER   (1u << 3)
/**@}*/

/** Configuration of cqpoll_cq_from_ibv(). Zero means defaults. */
struct cqpoll_ibv_conf {
	uint32_t flags;           /**< CQPOLL_IBV_F_* bits. */
	uint32_t event_ack_batch; /**< 0: the build-time default. */
	uint64_t wc_flags;        /**< With CQPOLL_IBV_F_CQ_EX: the CQ's wc_flags. */
};

/**
 * Wrap an existing CQ with the best driver for it. The CQ and the channel
 * stay the caller's; destroy them after cqpoll_cq_destroy(). The CQ must not
 * have been polled or armed yet. cqpoll_cq_info_get() tells which driver was
 * chosen ("mlx5" or "verbs").
 *
 * @param cq
 *   The CQ, created on @p ch (for CQPOLL_IBV_F_CQ_EX, ibv_cq_ex_to_cq() of it).
 * @param ch
 *   Its completion channel.
 * @param conf
 *   Configuration; NULL for defaults.
 * @return
 *   The handle, or NULL with errno set as by the chosen driver's attach
 *   (EINVAL for NULL arguments, a CQ not on @p ch, or unknown flags;
 *   EBUSY if @p cq is already wrapped by a live handle: two handles would
 *   be two owners of one consumer index).
 *
 * Thread safety: safe from any thread.
 */
struct cqpoll_cq *cqpoll_cq_from_ibv(struct ibv_cq *cq, struct ibv_comp_channel *ch,
				     const struct cqpoll_ibv_conf *conf);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_IBV_H */
