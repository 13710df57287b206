/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll_vhost_events_wake(): a vhost-user server socket started while
 * DPDK's vhost event thread sleeps in poll() answers a front end's first
 * request at once, not when that poll() times out (DPDK 22.11: 1000 ms).
 *
 * A first server socket starts the event thread; 100 ms later, the thread
 * is inside a poll() that does not cover the second server socket, started
 * then. A raw vhost-user client sends VHOST_USER_GET_FEATURES (request 1,
 * version flag 0x1, no payload: the vhost-user protocol) to the second
 * socket and must have the reply within REPLY_MS.
 *
 * --naive skips the wake-up: the reply waits for the poll() timeout, about
 * 900 ms, and the test must fail (test vhost-wake-control).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_vhost.h>

#include "ethdev_test.h"

#define REPLY_MS 400
#define GET_FEATURES 1u
#define VERSION_1 0x1u

static const struct rte_vhost_device_ops no_ops;

static int
server_start(const char *path)
{
	unlink(path);
	if (rte_vhost_driver_register(path, 0) != 0)
		return -1;
	if (rte_vhost_driver_callback_register(path, &no_ops) != 0 ||
	    rte_vhost_driver_start(path) != 0) {
		rte_vhost_driver_unregister(path);
		return -1;
	}
	return 0;
}

/* Milliseconds from the request to the reply's header; -1 if none in 2 s. */
static long
get_features_ms(const char *path)
{
	uint32_t hdr[3] = { GET_FEATURES, VERSION_1, 0 };
	uint32_t reply[3];
	struct sockaddr_un un;
	struct pollfd pfd;
	uint64_t t0;
	long ms = -1;
	int fd;

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	t0 = test_now_ns();
	if (connect(fd, (struct sockaddr *)&un, sizeof(un)) == 0 &&
	    write(fd, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr)) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 2000) == 1 &&
		    read(fd, reply, sizeof(reply)) == (ssize_t)sizeof(reply) &&
		    reply[0] == GET_FEATURES)
			ms = (long)((test_now_ns() - t0) / 1000000);
	}
	close(fd);
	return ms;
}

int
main(int argc, char **argv)
{
	int naive = argc > 1 && strcmp(argv[1], "--naive") == 0;
	char first[108], second[108], wake[108];
	long ms;
	int r;

	if (te_eal_init(argv[0]) != 0) {
		printf("SKIP: no EAL here\n");
		return 77;
	}
	snprintf(first, sizeof(first), "/tmp/cqpoll-vw-%ld-1.sock", (long)getpid());
	snprintf(second, sizeof(second), "/tmp/cqpoll-vw-%ld-2.sock", (long)getpid());
	snprintf(wake, sizeof(wake), "/tmp/cqpoll-vw-%ld.wake", (long)getpid());
	if (server_start(first) != 0) {
		printf("SKIP: no vhost-user server socket here\n");
		rte_eal_cleanup();
		return 77;
	}
	usleep(100000);
	r = server_start(second);
	if (r == 0 && !naive)
		r = cqpoll_vhost_events_wake(wake);
	ms = r == 0 ? get_features_ms(second) : -1;
	rte_vhost_driver_unregister(second);
	rte_vhost_driver_unregister(first);
	rte_eal_cleanup();
	if (r != 0 || ms < 0) {
		printf("FAIL: %s\n", r != 0 ? "server start or wake-up failed" :
		       "no VHOST_USER_GET_FEATURES reply in 2 s");
		return 1;
	}
	printf("%s: GET_FEATURES answered in %ld ms (at most %d)\n",
	       ms <= REPLY_MS ? "ok" : "FAIL", ms, REPLY_MS);
	return ms <= REPLY_MS ? 0 : 1;
}
