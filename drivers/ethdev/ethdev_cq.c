/* SPDX-License-Identifier: BSD-3-Clause */
/* ethdev driver: creating a CQ over an Rx queue, the ops table, destruction. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "ethdev_private.h"

/* Entries a CQ reports when the PMD does not say how deep its ring is. */
#define ETHDEV_SIZE_DEFAULT 1024u

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
	close(q->epfd);
	free(q);
}

static void
ethdev_destroy(void *priv)
{
	ethdev_free(priv);
}

const struct cqpoll_driver_ops cqpoll_ethdev_ops = {
	.name = "ethdev",
	.arm = cqpoll_ethdev_arm,
	.event_fd = cqpoll_ethdev_event_fd,
	.event_get = cqpoll_ethdev_event_get,
	.destroy = ethdev_destroy,
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
	r = cqpoll_ethdev_probe_keep(port_id, queue_id, &pr, &epfd);
	if (r < 0) {
		ETHDEV_LOG(ERR, "cannot make a CQ of port %u rxq %u: %s", port_id,
			   queue_id, pr.reason);
		cqpoll_ethdev_err(-r);
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		rte_eth_dev_rx_intr_ctl_q(port_id, queue_id, epfd,
					  RTE_INTR_EVENT_DEL, NULL);
		close(epfd);
		cqpoll_ethdev_err(ENOMEM);
		return NULL;
	}
	q->port = port_id;
	q->queue = queue_id;
	q->arm = pr.arm;
	q->fd = pr.fd;
	q->epfd = epfd;
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
