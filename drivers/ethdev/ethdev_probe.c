/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which Rx queues can sleep, and how they arm, found by asking the PMD to do
 * it: intr_conf.rxq = 1 is accepted by every PMD and proves nothing. A queue
 * can sleep when the PMD gives an interrupt fd for it
 * (rte_eth_dev_rx_intr_ctl_q_get_fd()) and DPDK registers it in an epoll set
 * (rte_eth_dev_rx_intr_ctl_q()); the enable then says whether it needs
 * arming (virtio, vhost) or is always armed (tap: -ENOTSUP).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "ethdev_private.h"

RTE_LOG_REGISTER(cqpoll_ethdev_logtype, pmd.cqpoll.ethdev, NOTICE);

int
cqpoll_ethdev_err(int err)
{
	rte_errno = err;
	errno = err;
	return -err;
}

const char *
cqpoll_ethdev_arm_name(enum cqpoll_ethdev_arm arm)
{
	switch (arm) {
	case CQPOLL_ETHDEV_ARM_NONE:
		return "none";
	case CQPOLL_ETHDEV_ARM_ENABLE:
		return "enable";
	case CQPOLL_ETHDEV_ARM_ALWAYS:
		return "always";
	}
	return "unknown";
}

#define WHY(pr, ...) snprintf((pr)->reason, sizeof((pr)->reason), __VA_ARGS__)

int
cqpoll_ethdev_probe_keep(uint16_t port, uint16_t queue,
			 struct cqpoll_ethdev_probe *pr, int *epfd_out)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	int epfd = -1, fl, r;

	if (pr == NULL)
		return cqpoll_ethdev_err(EINVAL);
	memset(pr, 0, sizeof(*pr));
	pr->fd = -1;
	if (!rte_eth_dev_is_valid_port(port)) {
		WHY(pr, "port %u does not exist", port);
		return cqpoll_ethdev_err(EINVAL);
	}
	r = rte_eth_dev_info_get(port, &info);
	if (r != 0) {
		WHY(pr, "port %u: rte_eth_dev_info_get: %s", port, strerror(-r));
		return cqpoll_ethdev_err(-r);
	}
	snprintf(pr->driver, sizeof(pr->driver), "%s",
		 info.driver_name != NULL ? info.driver_name : "?");
	if (queue >= info.nb_rx_queues) {
		WHY(pr, "port %u (%s) has %u Rx queues, no queue %u", port,
		    pr->driver, info.nb_rx_queues, queue);
		return cqpoll_ethdev_err(EINVAL);
	}
	r = rte_eth_dev_conf_get(port, &conf);
	if (r == 0 && conf.intr_conf.rxq == 0) {
		WHY(pr, "port %u (%s): Rx interrupts not configured "
		    "(intr_conf.rxq = 0 at rte_eth_dev_configure())", port, pr->driver);
		return cqpoll_ethdev_err(ENOTSUP);
	}
	pr->fd = rte_eth_dev_rx_intr_ctl_q_get_fd(port, queue);
	if (pr->fd < 0) {
		pr->fd = -1;
		WHY(pr, "%s has no Rx interrupt: no interrupt fd for port %u "
		    "rxq %u (rte_eth_dev_rx_intr_ctl_q_get_fd)", pr->driver, port,
		    queue);
		return cqpoll_ethdev_err(ENOTSUP);
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0) {
		r = errno;
		WHY(pr, "epoll_create1: %s", strerror(r));
		return cqpoll_ethdev_err(r);
	}
	r = rte_eth_dev_rx_intr_ctl_q(port, queue, epfd, RTE_INTR_EVENT_ADD, NULL);
	if (r != 0) {
		close(epfd);
		if (r == -EEXIST) {
			WHY(pr, "port %u rxq %u: its Rx interrupt is already in "
			    "another epoll set (rte_eth_dev_rx_intr_ctl_q ADD by the "
			    "application?)", port, queue);
			return cqpoll_ethdev_err(EBUSY);
		}
		WHY(pr, "%s has no Rx interrupt: rte_eth_dev_rx_intr_ctl_q() "
		    "refuses port %u rxq %u (%s)", pr->driver, port, queue,
		    strerror(r < 0 ? -r : r));
		return cqpoll_ethdev_err(ENOTSUP);
	}
	r = rte_eth_dev_rx_intr_enable(port, queue);
	if (r == 0) {
		rte_eth_dev_rx_intr_disable(port, queue);
		pr->arm = CQPOLL_ETHDEV_ARM_ENABLE;
	} else if (r == -ENOTSUP) {
		pr->arm = CQPOLL_ETHDEV_ARM_ALWAYS;
	} else {
		rte_eth_dev_rx_intr_ctl_q(port, queue, epfd, RTE_INTR_EVENT_DEL, NULL);
		close(epfd);
		WHY(pr, "port %u (%s) rxq %u: rte_eth_dev_rx_intr_enable: %s "
		    "(is the port started, its peer connected?)", port, pr->driver,
		    queue, strerror(r < 0 ? -r : EIO));
		return cqpoll_ethdev_err(r < 0 ? -r : EIO);
	}
	fl = fcntl(pr->fd, F_GETFL);
	pr->signal_driven = fl >= 0 && (fl & O_ASYNC) != 0;
	if (pr->arm == CQPOLL_ETHDEV_ARM_ENABLE)
		WHY(pr, "%s port %u rxq %u: edge, armed by "
		    "rte_eth_dev_rx_intr_enable()%s", pr->driver, port, queue,
		    pr->signal_driven ? "; signal-driven fd" : "");
	else
		WHY(pr, "%s port %u rxq %u: always armed (the interrupt fd is "
		    "the queue, no enable)%s", pr->driver, port, queue,
		    pr->signal_driven ? "; signal-driven fd, owned by the "
		    "polling thread" : "");
	if (epfd_out != NULL) {
		*epfd_out = epfd;
	} else {
		rte_eth_dev_rx_intr_ctl_q(port, queue, epfd, RTE_INTR_EVENT_DEL, NULL);
		close(epfd);
	}
	return 0;
}

int
cqpoll_ethdev_probe(uint16_t port_id, uint16_t queue_id,
		    struct cqpoll_ethdev_probe *pr)
{
	return cqpoll_ethdev_probe_keep(port_id, queue_id, pr, NULL);
}
