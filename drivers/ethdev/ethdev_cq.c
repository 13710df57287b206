/* SPDX-License-Identifier: BSD-3-Clause */
/* ethdev driver: creating a CQ over an Rx queue, the ops table, destruction. */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "ethdev_private.h"

/* Entries a CQ reports when the PMD does not say how deep its ring is. */
#define ETHDEV_SIZE_DEFAULT 1024u

/*
 * The queues that have a CQ: DPDK lets a queue's interrupt be registered in
 * a second epoll set and then forgets the first, so a second CQ on a queue
 * would silently take the first one's events. Few CQs per process: a list.
 */
static pthread_mutex_t queues_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cqpoll_ethdev_cq *queues;

/* Take the queue for q; false if another CQ has it. */
static bool
queue_take(struct cqpoll_ethdev_cq *q)
{
	struct cqpoll_ethdev_cq *o;
	bool ok = true;

	pthread_mutex_lock(&queues_lock);
	for (o = queues; o != NULL; o = o->next)
		if (o->port == q->port && o->queue == q->queue)
			ok = false;
	if (ok) {
		q->next = queues;
		queues = q;
	}
	pthread_mutex_unlock(&queues_lock);
	return ok;
}

static void
queue_give(struct cqpoll_ethdev_cq *q)
{
	struct cqpoll_ethdev_cq **p;

	pthread_mutex_lock(&queues_lock);
	for (p = &queues; *p != NULL; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			break;
		}
	pthread_mutex_unlock(&queues_lock);
}

static void
ethdev_free(struct cqpoll_ethdev_cq *q)
{
	struct f_owner_ex o = { .type = q->owner_type, .pid = q->owner_pid };

	if (rte_eth_dev_is_valid_port(q->port)) {
		cqpoll_ethdev_disarm(q);
		rte_eth_dev_rx_intr_ctl_q(q->port, q->queue, q->epfd,
					  RTE_INTR_EVENT_DEL, NULL);
		/* Signals to whom they went before, as the PMD set them up. */
		if (q->signal_driven && q->owner_pid != 0)
			fcntl(q->fd, F_SETOWN_EX, &o);
	}
	cqpoll_alarm_close(&q->alarm);
	if (q->wake_fd >= 0)
		close(q->wake_fd);
	close(q->epfd);
	queue_give(q);
	free(q);
}

static void
ethdev_destroy(void *priv)
{
	ethdev_free(priv);
}

const struct cqpoll_driver_ops cqpoll_ethdev_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "ethdev",
	.arm = cqpoll_ethdev_arm,
	.event_fd = cqpoll_ethdev_event_fd,
	.event_get = cqpoll_ethdev_event_get,
	.destroy = ethdev_destroy,
	.wait = cqpoll_ethdev_wait,
	.wake = cqpoll_ethdev_wake,
};

struct cqpoll_cq *
cqpoll_ethdev_cq_create(uint16_t port_id, uint16_t queue_id,
			const struct cqpoll_ethdev_conf *conf)
{
	struct cqpoll_cq_params params;
	struct cqpoll_ethdev_probe pr;
	struct rte_eth_rxq_info qinfo;
	struct cqpoll_ethdev_cq *q;
	struct f_owner_ex o;
	struct cqpoll_cq *cq;
	int epfd = -1, r;

	if (conf != NULL && conf->reserved != 0) {
		cqpoll_ethdev_err(EINVAL);
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		cqpoll_ethdev_err(ENOMEM);
		return NULL;
	}
	q->port = port_id;
	q->queue = queue_id;
	q->wake_fd = -1;
	if (!queue_take(q)) {
		ETHDEV_LOG(ERR, "port %u rxq %u has a CQ already", port_id, queue_id);
		free(q);
		cqpoll_ethdev_err(EBUSY);
		return NULL;
	}
	r = cqpoll_ethdev_probe_keep(port_id, queue_id, &pr, &epfd);
	if (r < 0) {
		queue_give(q);
		free(q);
		ETHDEV_LOG(ERR, "cannot make a CQ of port %u rxq %u: %s", port_id,
			   queue_id, pr.reason);
		cqpoll_ethdev_err(-r);
		return NULL;
	}
	/*
	 * Adding a readable fd to an epoll set reports it at once, and
	 * virtio's eventfd stays readable for good after its first signal:
	 * start with no event, as a CQ starts unarmed. Nothing is lost, since
	 * the first poll-and-arm polls before it arms.
	 */
	{
		struct epoll_event ev;

		while (epoll_wait(epfd, &ev, 1, 0) > 0)
			;
	}
	q->arm = pr.arm;
	q->fd = pr.fd;
	q->epfd = epfd;
	q->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->wake_fd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, q->wake_fd,
					&(struct epoll_event){ .events = EPOLLIN,
							       .data.ptr = &q->wake_fd }) != 0) {
		r = errno;
		ETHDEV_LOG(ERR, "port %u rxq %u: its wake-up eventfd: %s", port_id,
			   queue_id, strerror(r));
		ethdev_free(q);
		cqpoll_ethdev_err(r);
		return NULL;
	}
	q->signal_driven = pr.signal_driven;
	if (q->signal_driven && fcntl(q->fd, F_GETOWN_EX, &o) == 0) {
		q->owner_type = o.type;
		q->owner_pid = o.pid;
	}
	memset(&params, 0, sizeof(params));
	params.arm = CQPOLL_ARM_EDGE;
	params.size = ETHDEV_SIZE_DEFAULT;
	if (rte_eth_rx_queue_info_get(port_id, queue_id, &qinfo) == 0 &&
	    qinfo.nb_desc != 0)
		params.size = qinfo.nb_desc;
	params.event_ack_batch = conf != NULL ? conf->event_ack_batch : 0;
	cq = cqpoll_cq_alloc(&cqpoll_ethdev_ops, cqpoll_ethdev_poll, q, &params);
	if (cq == NULL) {
		r = errno != 0 ? errno : ENOMEM;
		ethdev_free(q);
		cqpoll_ethdev_err(r);
		return NULL;
	}
	ETHDEV_LOG(DEBUG, "CQ over %s", pr.reason);
	return cq;
}

int
cqpoll_ethdev_cq_queue(const struct cqpoll_cq *cq, uint16_t *port_id,
		       uint16_t *queue_id, enum cqpoll_ethdev_arm *arm)
{
	const struct cqpoll_ethdev_cq *q;

	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_ethdev_ops)
		return cqpoll_ethdev_err(EINVAL);
	q = cqpoll_cq_priv(cq);
	if (port_id != NULL)
		*port_id = q->port;
	if (queue_id != NULL)
		*queue_id = q->queue;
	if (arm != NULL)
		*arm = q->arm;
	return 0;
}
