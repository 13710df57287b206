/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_IBV_H
#define CQPOLL_IBV_H

/**
 * @file
 * Driver selection for an existing verbs CQ: the mlx5 device-direct driver
 * where the device and the CQ allow it, else the generic verbs driver.
 *
 * Rules, in order (doc/guides/verbs-driver.md):
 *  1. CQPOLL_IBV_F_FORCE_VERBS: verbs.
 *  2. A verbs-emu CQ: verbs.
 *  3. The mlx5 driver is built, mlx5dv_is_supported() holds for the CQ's
 *     device, the CQ is not extended (CQPOLL_IBV_F_CQ_EX), and no verbs
 *     handle already reads @p ch (mlx5 needs the channel to itself): mlx5,
 *     unless its attach refuses the CQ with EOPNOTSUPP.
 *  4. Otherwise: verbs.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @name Flags of struct cqpoll_ibv_conf */
/**@{*/
/** Always the verbs driver, e.g. to compare it with the direct one. */
#define CQPOLL_IBV_F_FORCE_VERBS   (1u << 0)
/** The CQ was made by ibv_create_cq_ex() with wc_flags: poll it so (verbs). */
#define CQPOLL_IBV_F_CQ_EX         (1u << 1)
/** Arm for solicited and failed completions only. */
#define CQPOLL_IBV_F_SOLICITED_ONLY (1u << 2)
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
 *   (EINVAL for NULL arguments or a CQ not on @p ch).
 *
 * Thread safety: safe from any thread.
 */
struct cqpoll_cq *cqpoll_cq_from_ibv(struct ibv_cq *cq, struct ibv_comp_channel *ch,
				     const struct cqpoll_ibv_conf *conf);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_IBV_H */
