/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs arm: ibv_req_notify_cq(). User-space verbs has no "report missed
 * events" flag, so the arm promises an event only for completions added after
 * it: the handle is CQPOLL_ARM_EDGE and the core polls again after arming.
 */

#include <errno.h>

#include "verbs_private.h"

int
cqpoll_verbs_arm(void *priv)
{
	struct cqpoll_verbs_cq *q = priv;
	int r;

	errno = 0;
	r = ibv_req_notify_cq(q->cq, q->solicited_only);
	if (r == 0)
		return 0;
	/* Providers return an errno value, some -1 with errno: never > 0 here. */
	if (r > 0)
		return -r;
	return errno != 0 ? -errno : -EIO;
}
