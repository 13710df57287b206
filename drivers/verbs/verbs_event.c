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
