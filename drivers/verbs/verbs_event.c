/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event side of a verbs CQ: everything goes through the channel demux
 * (drivers/common/ibv), which hands each event to the CQ it names.
 */

#include <errno.h>

#include "verbs_private.h"

int
cqpoll_verbs_event_fd(void *priv)
{
	struct cqpoll_verbs_cq *q = priv;

	return cqpoll_ibv_channel_fd(&q->ev);
}

int
cqpoll_verbs_event_get(void *priv)
{
	struct cqpoll_verbs_cq *q = priv;

	return cqpoll_ibv_channel_get(&q->ev);
}

int
cqpoll_verbs_event_ack(void *priv, unsigned int n)
{
	struct cqpoll_verbs_cq *q = priv;

	cqpoll_ibv_channel_ack(&q->ev, n);
	return 0;
}

int
cqpoll_verbs_stranded(void *priv)
{
	struct cqpoll_verbs_cq *q = priv;
	int r;

	if (q->be->stranded == NULL)
		return -ENOTSUP;
	r = q->be->stranded(q->cq);
	/*
	 * An event another member read for us is pending just the same. Read
	 * after the device's answer: an event routed in between was queued
	 * before it, so one of the two reads sees it.
	 */
	if (r == 1 && cqpoll_ibv_channel_routed(&q->ev) != 0)
		r = 0;
	return r;
}
