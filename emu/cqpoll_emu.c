/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The oracle over every emulated device, registered as libcqpoll's sleep
 * check when the library loads, and the naive arm. Both look inside
 * libcqpoll's private CQ handle: libcqpoll_emu is built from the same tree,
 * for the same version, and is never a production dependency.
 */

#include <errno.h>

#include "cqpoll_emu.h"
#include "cqpoll_private.h"
#include "emu_config.h"
#include "sw_emu.h"
#if CQPOLL_EMU_HAVE_MLX5
#include "mlx5_emu_private.h"
#endif
#if CQPOLL_EMU_HAVE_VERBS
#include "verbs_emu_private.h"
#include "verbs_private.h"
#endif

#if CQPOLL_EMU_HAVE_VERBS
/* A verbs handle on an emulated context. */
static int
verbs_stranded(struct cqpoll_cq *cq)
{
	struct ibv_cq *ibcq = cqpoll_verbs_cq_ibv(cq);
	struct cqpoll_verbs_cq *q;
	int r;

	if (ibcq == NULL || !cqpoll_verbs_emu_is_context(ibcq->context))
		return -ENOTSUP;
	q = cqpoll_cq_priv(cq);
	r = cqpoll_verbs_emu_ibv_stranded(ibcq);
	/*
	 * An event another member read for us is pending just the same. Read
	 * after the device's answer: an event routed in between was queued
	 * before it, so one of the two reads sees it.
	 */
	if (r == 1 && cqpoll_ibv_channel_routed(&q->ev) != 0)
		r = 0;
	return r;
}
#endif

int
cqpoll_cq_stranded(struct cqpoll_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	if (sw_emu_of(cq) != NULL)
		return sw_emu_stranded(cq);
#if CQPOLL_EMU_HAVE_MLX5
	/* Any handle over an emulated CQ's state: tests wrap them too. */
	if (cqpoll_cq_driver(cq)->arm == cqpoll_mlx5_arm) {
		int r = cqpoll_mlx5_emu_stranded(cqpoll_cq_priv(cq));

		if (r != -ENOTSUP)
			return r;
	}
#endif
#if CQPOLL_EMU_HAVE_VERBS
	return verbs_stranded(cq);
#else
	return -ENOTSUP;
#endif
}

static int
oracle_check(struct cqpoll_cq *cq, void *arg)
{
	(void)arg;
	return cqpoll_cq_stranded(cq);
}

static const struct cqpoll_sleep_check oracle = { .check = oracle_check };

/* Loaded with a program that uses emulated devices: judge its every sleep. */
__attribute__((constructor)) static void
oracle_register(void)
{
	cqpoll_sleep_check_register(&oracle);
}

int
cqpoll_cq_arm_naive(struct cqpoll_cq *cq)
{
	int r;

	if (cq == NULL)
		return -EINVAL;
	/*
	 * Naive code sleeps on the event fd, where the arm's edge matters: a
	 * driver's own wait (io_uring: on the ring, which compares the CQ's
	 * tail with its head itself) cannot lose this wake-up, so the naive
	 * transition would go uncaught there (issue 36).
	 */
	cq->wait = NULL;
	r = cq->ops.arm(cq->fp.priv);
	if (r < 0)
		return r;
	cqpoll_stat_add(&cq->counters.arms, 1);
	if (r > 0)
		cqpoll_stat_add(&cq->counters.missed_reports, 1);
	/* Deliberately wrong: believes any arm, as naive code does. */
	cq->armed = true;
	return 0;
}
