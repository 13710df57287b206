/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A CQ's or a poll group's event fd in an rte_epoll instance. DPDK keeps a pointer to the
 * rte_epoll_event as the epoll data, so it lives in a registration of its
 * own until the fd is removed.
 */

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include <rte_epoll.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "cqpoll_dpdk_epoll.h"
#include "cqpoll_dpdk_private.h"

struct cqpoll_dpdk_epoll_cq {
	struct rte_epoll_event ev;
	int epfd; /* Resolved: a per-thread instance stays reachable. */
	int fd;
};

/* @p fd: an event fd, or -errno from the call that should have given it. */
static struct cqpoll_dpdk_epoll_cq *
add_fd(int epfd, int fd, void *data)
{
	struct cqpoll_dpdk_epoll_cq *e;
	int err;

	if (fd < 0) {
		CQPOLL_DPDK_LOG(ERR, "epoll add: no event fd: %s", strerror(-fd));
		cqpoll_dpdk_err(-fd);
		return NULL;
	}
	e = rte_zmalloc_socket("cqpoll_dpdk_epoll_cq", sizeof(*e), 0,
			       (int)rte_socket_id());
	if (e == NULL) {
		CQPOLL_DPDK_LOG(ERR, "epoll add: out of memory");
		cqpoll_dpdk_err(ENOMEM);
		return NULL;
	}
	e->fd = fd;
	e->ev.epdata.event = EPOLLIN;
	e->ev.epdata.data = data;
	errno = 0;
	if (rte_epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e->ev) < 0) {
		err = errno != 0 ? errno : EINVAL;
		rte_free(e);
		CQPOLL_DPDK_LOG(ERR, "epoll add: fd %d: rte_epoll_ctl: %s", fd,
				strerror(err));
		cqpoll_dpdk_err(err);
		return NULL;
	}
	/* rte_epoll_ctl() reports the instance it resolved -1 to. */
	e->epfd = e->ev.epfd;
	return e;
}

struct cqpoll_dpdk_epoll_cq *
cqpoll_dpdk_epoll_add_cq(int epfd, struct cqpoll_cq *cq, void *data)
{
	if (cq == NULL) {
		CQPOLL_DPDK_LOG(ERR, "epoll add: NULL cq");
		cqpoll_dpdk_err(EINVAL);
		return NULL;
	}
	return add_fd(epfd, cqpoll_cq_event_fd(cq), data);
}

struct cqpoll_dpdk_epoll_cq *
cqpoll_dpdk_epoll_add_group(int epfd, struct cqpoll_group *g, void *data)
{
	if (g == NULL) {
		CQPOLL_DPDK_LOG(ERR, "epoll add: NULL group");
		cqpoll_dpdk_err(EINVAL);
		return NULL;
	}
	return add_fd(epfd, cqpoll_group_event_fd(g), data);
}

int
cqpoll_dpdk_epoll_del_cq(struct cqpoll_dpdk_epoll_cq *e)
{
	int r = 0;

	if (e == NULL)
		return 0;
	errno = 0;
	if (rte_epoll_ctl(e->epfd, EPOLL_CTL_DEL, e->fd, &e->ev) < 0) {
		r = cqpoll_dpdk_err(errno != 0 ? errno : EINVAL);
		CQPOLL_DPDK_LOG(ERR, "epoll del: fd %d: rte_epoll_ctl: %s", e->fd,
				strerror(-r));
	}
	rte_free(e);
	return r;
}
