/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_vhost.h>

#include "cqpoll_vhost_wake.h"

int
cqpoll_vhost_events_wake(const char *path)
{
	/* vhost calls a socket's ops unchecked; none is called before unregister. */
	static const struct rte_vhost_device_ops no_ops;
	struct sockaddr_un un;
	int fd, r = -1, e;

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	if (snprintf(un.sun_path, sizeof(un.sun_path), "%s", path) >=
	    (int)sizeof(un.sun_path))
		return -ENAMETOOLONG;
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&un, sizeof(un)) != 0 ||
	    listen(fd, 1) != 0) {
		e = errno;
		close(fd);
		unlink(path);
		return -e;
	}
	/*
	 * The connection is made by the start, in this thread, and sits
	 * unaccepted in the listener's backlog: no vhost-user message is ever
	 * exchanged on it. Unregistering before the listener closes keeps the
	 * event thread from reading a hang-up on it.
	 */
	if (rte_vhost_driver_register(path, RTE_VHOST_USER_CLIENT |
				      RTE_VHOST_USER_NO_RECONNECT) == 0) {
		if (rte_vhost_driver_callback_register(path, &no_ops) == 0)
			r = rte_vhost_driver_start(path);
		rte_vhost_driver_unregister(path);
	}
	close(fd);
	unlink(path);
	return r == 0 ? 0 : -EIO;
}
