/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_EMU_H
#define CQPOLL_EMU_H

/**
 * @file
 * libcqpoll_emu: the verification kit of cqpoll. Never linked into production
 * programs; tests, benchmarks and testpmd-cq link it.
 *
 * It holds the emulated devices (cqpoll_sw_emu.h, cqpoll_mlx5_emu.h,
 * cqpoll_verbs_emu.h), their fault injection and hooks, the lost-wake-up
 * oracle, and the deliberately naive arm that negative controls use. When the
 * library is loaded it registers the oracle as libcqpoll's sleep check
 * (cqpoll_sleep_check.h), so that cqpoll_cq_stats::lost_wakeups and
 * cqpoll_group_stats::lost_wakeups count the sleeps on emulated devices that
 * lose a wake-up. See doc/guides/architecture.md.
 */

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Arm the CQ without polling it again: UNSAFE.
 *
 * This is "arm, then sleep", the transition that loses wake-ups on edge and
 * report-missed devices. It exists only as the negative control of tests and
 * for testpmd-cq's --transition=naive experiments. Marks the CQ armed, so that
 * cqpoll_cq_wait() accepts to sleep, and takes away the driver's own wait
 * (cqpoll_driver_ops::wait), so that it sleeps on the event fd as naive code
 * does: a wait on the queue itself (io_uring's) has no edge to miss.
 *
 * @param cq
 *   The CQ, of any driver.
 * @return
 *   0, or -EINVAL if @p cq is NULL, or -errno from the driver. A report-missed
 *   arm's positive return is ignored, as naive code does.
 *
 * Thread safety: consumer thread only.
 */
int cqpoll_cq_arm_naive(struct cqpoll_cq *cq);

/**
 * Ask the emulated device's oracle whether a completion is stranded: visible,
 * with no event pending or due for it.
 *
 * @param cq
 *   The CQ.
 * @return
 *   1 or 0; -ENOTSUP if @p cq is not on an emulated device; -EINVAL if @p cq
 *   is NULL.
 *
 * Thread safety: consumer thread only.
 */
int cqpoll_cq_stranded(struct cqpoll_cq *cq);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_EMU_H */
