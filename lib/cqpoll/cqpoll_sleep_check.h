/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_SLEEP_CHECK_H
#define CQPOLL_SLEEP_CHECK_H

/**
 * @file
 * Sleep check: a judge of every sleep on a CQ, for verification layers.
 *
 * Right before a consumer blocks on an armed CQ (cqpoll_cq_wait(), and the
 * sleep of a poll group on each member, up to 64 per sleep in turns), the
 * library asks the registered check whether the sleep would lose a wake-up:
 * a completion visible with no event pending or due for it. Failed checks are
 * counted in cqpoll_cq_stats::lost_wakeups and cqpoll_group_stats::lost_wakeups.
 *
 * Real devices cannot answer that question, so production programs register
 * nothing, and then a sleep costs one load and one branch more. A device that
 * knows its own state can: libcqpoll_emu registers the ground truth of its
 * emulated devices when it is loaded (see doc/guides/architecture.md); an
 * application may register a debug check of its own instead.
 */

#include "cqpoll_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cqpoll_cq;

/** A sleep check, registered with cqpoll_sleep_check_register(). */
struct cqpoll_sleep_check {
	/**
	 * Judge a sleep on @p cq, on the consumer thread, right before it blocks.
	 * Must not poll, arm or consume events of @p cq.
	 * @return 1 if a wake-up would be lost, 0 if the sleep is safe, -ENOTSUP
	 *   if this check cannot judge @p cq (its device is not known to it).
	 */
	int (*check)(struct cqpoll_cq *cq, void *arg);
	void *arg; /**< Passed to check(). */
};

/**
 * Register the process-wide sleep check, replacing any previous one.
 *
 * @warning EXPERIMENTAL: this API may change without notice.
 *
 * @param check
 *   The check, which must stay valid until replaced; NULL removes it.
 * @return
 *   0, or -EINVAL if @p check has no function.
 *
 * Thread safety: safe from any thread; sleeps already being judged may still
 * use the previous check, so a replaced check must stay callable.
 */
__cqpoll_experimental
int cqpoll_sleep_check_register(const struct cqpoll_sleep_check *check);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_SLEEP_CHECK_H */
