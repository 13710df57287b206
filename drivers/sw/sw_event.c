/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software CQ events: raising them through the CQ's eventfd or its shared
 * channel (sw_channel.c), and consuming them.
 */

#include <errno.h>
#include <unistd.h>

#include "sw_private.h"

int
cqpoll_sw_deliver(struct cqpoll_sw_cq *q, uint64_t count)
{
	int r = sw_dev_deliver(q, count);

	if (r <= 0)
		return r;
	/* One entry on the channel's list, however many events were asked. */
	if (q->ch != NULL)
		return cqpoll_sw_channel_raise(q);
	if (write(q->efd, &count, sizeof(count)) != sizeof(count))
		return -errno;
	return 0;
}

/* After cqpoll_sw_claim(): the cover is in place, the event follows. */
int
cqpoll_sw_raise(struct cqpoll_sw_cq *q, int consumer)
{
	return cqpoll_sw_deliver(q, sw_dev_raise_count(q, consumer));
}

int
cqpoll_sw_event_fd(void *priv)
{
	struct cqpoll_sw_cq *q = priv;

	int fd;

	if (q->ch != NULL)
		return cqpoll_sw_channel_fd(q);
	fd = sw_dev_event_fd(q);
	return fd >= 0 ? fd : q->efd;
}

static int
drain_fd(int fd, uint64_t *events)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) == sizeof(v)) {
		*events += v;
		return 0;
	}
	return errno == EAGAIN ? 0 : -errno;
}

int
cqpoll_sw_event_get(void *priv)
{
	struct cqpoll_sw_cq *q = priv;
	uint64_t events = 0;
	int r;

	if (q->ch != NULL)
		return cqpoll_sw_channel_event_get(q);
	r = drain_fd(q->efd, &events);
	if (r == 0)
		r = sw_dev_event_get(q, &events);
	if (r < 0)
		return r;
	return events > 0x7fffffff ? 0x7fffffff : (int)events;
}
