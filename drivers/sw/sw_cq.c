/* SPDX-License-Identifier: BSD-3-Clause */
/* Software CQ: creation, destruction, and the driver's ops table. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cqpoll_alloc_private.h"
#include "cqpoll_config.h"
#include "cqpoll_log_private.h"
#include "sw_private.h"

/* Largest ring: indices compare by 32-bit difference, and mlx5 caps at 2^24. */
#define SW_CQ_SIZE_MAX (1u << 24)

static void
sw_cq_free(struct cqpoll_sw_cq *q)
{
	if (q->dev != NULL)
		q->dev->fini(q->dev_arg);
	cqpoll_sw_channel_leave(q);
	if (q->efd >= 0)
		close(q->efd);
	cqpoll_mem_free(q->ring);
	cqpoll_mem_free(q);
}

static void
sw_destroy(void *priv)
{
	sw_cq_free(priv);
}

/* A failure reported from any thread wakes whoever sleeps on the CQ. */
static int
sw_wake(void *priv)
{
	struct cqpoll_sw_cq *q = priv;
	const uint64_t one = 1;

	if (q->ch != NULL)
		return cqpoll_sw_channel_raise(q);
	/* EAGAIN: the counter is saturated, a wake-up is pending anyway. */
	if (write(q->efd, &one, sizeof(one)) != sizeof(one) && errno != EAGAIN)
		return -errno;
	return 0;
}

const struct cqpoll_driver_ops cqpoll_sw_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "sw",
	.arm = cqpoll_sw_arm,
	.event_fd = cqpoll_sw_event_fd,
	.event_get = cqpoll_sw_event_get,
	.get_monitor_addr = cqpoll_sw_get_monitor_addr,
	.destroy = sw_destroy,
	.wake = sw_wake,
	.fired = cqpoll_sw_channel_fired,
};

struct cqpoll_cq *
cqpoll_sw_cq_create(const struct cqpoll_sw_conf *conf)
{
	return cqpoll_sw_cq_create_on(conf, NULL);
}

struct cqpoll_cq *
cqpoll_sw_cq_create_on(const struct cqpoll_sw_conf *conf,
		       struct cqpoll_sw_channel *ch)
{
	static const struct cqpoll_sw_conf defaults = { .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_cq_params params = { .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_sw_cq *q;
	struct cqpoll_cq *cq;
	uint32_t size, i;
	int r, socket_id;

	if (conf == NULL)
		conf = &defaults;
	socket_id = (conf->flags & CQPOLL_SW_F_SOCKET_ID) ? conf->socket_id :
		CQPOLL_SOCKET_ANY;
	if ((conf->flags & ~CQPOLL_SW_F_SOCKET_ID) != 0) {
		CQPOLL_LOG(ERR, "sw", "cq create: unknown flags 0x%x",
			   conf->flags & ~CQPOLL_SW_F_SOCKET_ID);
		errno = EINVAL;
		return NULL;
	}
	if (cqpoll_socket_check(socket_id, "sw cq create") != 0) {
		errno = EINVAL;
		return NULL;
	}
	size = conf->size != 0 ? conf->size : CQPOLL_SW_CQ_SIZE_DEFAULT;
	if ((unsigned int)conf->arm > CQPOLL_ARM_REPORT_MISSED ||
	    size > SW_CQ_SIZE_MAX) {
		CQPOLL_LOG(ERR, "sw", "cq create: %s",
			   (unsigned int)conf->arm > CQPOLL_ARM_REPORT_MISSED ?
			   "bad arm semantics" : "size over 2^24 entries");
		errno = EINVAL;
		return NULL;
	}
	q = cqpoll_mem_alloc(sizeof(*q), socket_id);
	if (q == NULL) {
		CQPOLL_LOG(ERR, "sw", "cq create: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	q->efd = -1;
	q->dev = NULL;
	q->ch = NULL;
	q->ch_fired = 0;
	q->ch_queued = false;
	q->ch_prev = NULL;
	q->ch_next = NULL;
	/* A power of two, 1 included: the phase bit is then the index's own. */
	q->log2_size = 0;
	while ((1u << q->log2_size) < size)
		q->log2_size++;
	size = 1u << q->log2_size;
	q->mask = size - 1;
	q->arm = conf->arm;
	q->ring = cqpoll_mem_alloc((size_t)size * sizeof(*q->ring), socket_id);
	if (q->ring == NULL) {
		sw_cq_free(q);
		errno = ENOMEM;
		return NULL;
	}
	/* Owner 1 everywhere: the first lap writes phase 0, so nothing is valid yet. */
	for (i = 0; i < size; i++)
		q->ring[i].owner = 1;
	/* On a channel, its fd is the channel's: no descriptor of its own. */
	if (ch != NULL)
		cqpoll_sw_channel_join(ch, q);
	else
		q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ch == NULL && q->efd < 0) {
		r = -errno;
		CQPOLL_LOG(ERR, "sw", "cq create: event fds: %s", strerror(-r));
		sw_cq_free(q);
		errno = -r;
		return NULL;
	}
	params.arm = conf->arm;
	params.size = size;
	params.event_ack_batch = conf->event_ack_batch;
	if (socket_id != CQPOLL_SOCKET_ANY) {
		params.flags = CQPOLL_CQ_PARAMS_F_SOCKET_ID;
		params.socket_id = socket_id;
	}
	if (ch == NULL)
		params.flags |= CQPOLL_CQ_PARAMS_F_NO_FIRED;
	cq = cqpoll_cq_alloc(&cqpoll_sw_ops, cqpoll_sw_poll, q, &params);
	if (cq == NULL) {
		r = errno;
		sw_cq_free(q);
		errno = r;
		return NULL;
	}
	q->handle = cq;
	return cq;
}

struct cqpoll_sw_cq *
cqpoll_sw_cq_of(const struct cqpoll_cq *cq)
{
	return cq != NULL && cqpoll_cq_driver(cq) == &cqpoll_sw_ops ?
		cqpoll_cq_priv(cq) : NULL;
}

int
cqpoll_sw_set_dev_ops(struct cqpoll_cq *cq, const struct cqpoll_sw_dev_ops *ops, void *f)
{
	struct cqpoll_sw_cq *q = cqpoll_sw_cq_of(cq);

	/* Complete or refused: a missing point would crash the fast path. */
	if (q == NULL || ops == NULL || ops->fini == NULL || ops->arm_begin == NULL ||
	    ops->arm_end == NULL || ops->keeps_armed == NULL ||
	    ops->post_begin == NULL || ops->post_visible == NULL ||
	    ops->post_end == NULL || ops->raise_count == NULL || ops->deliver == NULL ||
	    ops->event_fd == NULL || ops->event_get == NULL || ops->error == NULL)
		return -EINVAL;
	if (q->dev != NULL)
		return -EBUSY;
	/* The kit's events go through its own fds: not a channel's. */
	if (q->ch != NULL)
		return -EINVAL;
	q->dev_arg = f;
	q->dev = ops;
	return 0;
}
