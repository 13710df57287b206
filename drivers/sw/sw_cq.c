/* SPDX-License-Identifier: BSD-3-Clause */
/* Software CQ: creation, destruction, and the driver's ops table. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cqpoll_alloc_private.h"
#include "cqpoll_config.h"
#include "cqpoll_log_private.h"
#include "sw_private.h"

/* Largest ring: indices compare by 32-bit difference, and mlx5 caps at 2^24. */
#define SW_CQ_SIZE_MAX (1u << 24)
#define SW_SEED_DEFAULT 0x9e3779b97f4a7c15ull

static void
sw_cq_free(struct cqpoll_sw_cq *q)
{
	if (q->epfd >= 0)
		close(q->epfd);
	if (q->tfd >= 0)
		close(q->tfd);
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

const struct cqpoll_driver_ops cqpoll_sw_ops = {
	.name = "sw",
	.arm = cqpoll_sw_arm,
	.event_fd = cqpoll_sw_event_fd,
	.event_get = cqpoll_sw_event_get,
	.stranded = cqpoll_sw_stranded,
	.get_monitor_addr = cqpoll_sw_get_monitor_addr,
	.destroy = sw_destroy,
};

static int
faults_valid(const struct cqpoll_sw_faults *f)
{
	return f->visibility_delay_pct <= 100 && f->spurious_event_pct <= 100 &&
	       f->duplicate_event_pct <= 100 && f->arm_delay_pct <= 100;
}

static int
sw_event_fds(struct cqpoll_sw_cq *q)
{
	struct epoll_event ev = { .events = EPOLLIN };

	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd < 0)
		return -errno;
	if (q->faults.event_delay_us == 0)
		return 0;
	q->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (q->tfd < 0)
		return -errno;
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->epfd < 0)
		return -errno;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->efd, &ev) < 0 ||
	    epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->tfd, &ev) < 0)
		return -errno;
	return 0;
}

struct cqpoll_cq *
cqpoll_sw_cq_create(const struct cqpoll_sw_conf *conf)
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
	    size > SW_CQ_SIZE_MAX || !faults_valid(&conf->faults)) {
		CQPOLL_LOG(ERR, "sw", "cq create: %s",
			   (unsigned int)conf->arm > CQPOLL_ARM_REPORT_MISSED ?
			   "bad arm semantics" : size > SW_CQ_SIZE_MAX ?
			   "size over 2^24 entries" :
			   "a fault percentage over 100");
		errno = EINVAL;
		return NULL;
	}
	q = cqpoll_mem_alloc(sizeof(*q), socket_id);
	if (q == NULL) {
		CQPOLL_LOG(ERR, "sw", "cq create: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	q->efd = q->tfd = q->epfd = -1;
	q->log2_size = 1;
	while ((1u << q->log2_size) < size)
		q->log2_size++;
	size = 1u << q->log2_size;
	q->mask = size - 1;
	q->arm = conf->arm;
	q->faults = conf->faults;
	q->device_rng = conf->faults.seed != 0 ? conf->faults.seed : SW_SEED_DEFAULT;
	q->consumer_rng = q->device_rng ^ 0x5bd1e9955bd1e995ull;
	q->ring = cqpoll_mem_alloc((size_t)size * sizeof(*q->ring), socket_id);
	if (q->ring == NULL) {
		sw_cq_free(q);
		errno = ENOMEM;
		return NULL;
	}
	/* Owner 1 everywhere: the first lap writes phase 0, so nothing is valid yet. */
	for (i = 0; i < size; i++)
		q->ring[i].owner = 1;
	r = sw_event_fds(q);
	if (r < 0) {
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
	cq = cqpoll_cq_alloc(&cqpoll_sw_ops, cqpoll_sw_poll, q, &params);
	if (cq == NULL) {
		r = errno;
		sw_cq_free(q);
		errno = r;
	}
	return cq;
}

int
cqpoll_sw_set_hook(struct cqpoll_cq *cq, enum cqpoll_sw_hook_point point,
		   void (*fn)(void *arg), void *arg)
{
	struct cqpoll_sw_cq *q;

	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_sw_ops ||
	    (unsigned int)point >= CQPOLL_SW_HOOK_COUNT)
		return -EINVAL;
	q = cqpoll_cq_priv(cq);
	q->hook[point] = fn;
	q->hook_arg[point] = arg;
	return 0;
}
