/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ports testpmd-cq and tpcq-peer make, so that a peer point and a cqpoll
 * point wait on the same queue of the same PMD.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "clock.h"
#include "cqpoll_vhost_wake.h"
#include "ethdev_frame.h"
#include "ethdev_port.h"

/* vhost's first packet: how long vhost-user may take to see the device. */
#define CONNECT_NS (5 * TPCQ_NS_PER_S)
#define DRAIN_BURST 32

int
tpcq_eth_port_start(uint16_t port, struct rte_mempool *mp, bool rxq_intr)
{
	struct rte_eth_conf conf;
	int r;

	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = rxq_intr ? 1 : 0;
	r = rte_eth_dev_configure(port, 1, 1, &conf);
	if (r == 0)
		r = rte_eth_rx_queue_setup(port, 0, TPCQ_ETH_RING, SOCKET_ID_ANY, NULL, mp);
	if (r == 0)
		r = rte_eth_tx_queue_setup(port, 0, TPCQ_ETH_RING, SOCKET_ID_ANY, NULL);
	if (r == 0)
		r = rte_eth_dev_start(port);
	return r < 0 ? r : -r;
}

int
tpcq_eth_vdev_make(const char *prog, const char *name, const char *args,
		   uint16_t *port)
{
	char devargs[256];
	int r;

	snprintf(devargs, sizeof(devargs), "%s%s%s", name, args[0] ? "," : "", args);
	r = rte_dev_probe(devargs);
	if (r == 0)
		r = rte_eth_dev_get_port_by_name(name, port);
	if (r != 0)
		fprintf(stderr, "%s: ethdev: cannot create %s: %s\n", prog, devargs,
			strerror(r < 0 ? -r : r));
	return r < 0 ? r : -r;
}

static int
port_start_said(const char *prog, uint16_t port, struct rte_mempool *mp,
		bool rxq_intr)
{
	int r = tpcq_eth_port_start(port, mp, rxq_intr);

	if (r != 0)
		fprintf(stderr, "%s: ethdev: port %u: cannot start: %s\n", prog, port,
			strerror(-r));
	return r;
}

/* vhost queues only once its vhost-user thread saw the device. */
static int
vhost_connected(struct tpcq_eth_ports *ep, const char *prog,
		struct rte_mempool *mp, const uint8_t *frame, uint16_t len)
{
	uint64_t end = tpcq_now_ns(CLOCK_MONOTONIC) + CONNECT_NS;
	struct rte_mbuf *m;

	for (;;) {
		m = tpcq_eth_frame_mbuf(mp, frame, len, TPCQ_ETH_NO_SEQ);
		if (m != NULL && rte_eth_tx_burst(ep->tx_port, 0, &m, 1) == 1)
			return 0;
		rte_pktmbuf_free(m);
		if (tpcq_now_ns(CLOCK_MONOTONIC) > end) {
			fprintf(stderr, "%s: ethdev:virtio_user: vhost never "
				"connected\n", prog);
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
}

int
tpcq_eth_virtio_user_open(struct tpcq_eth_ports *ep, const char *prog,
			  const char *sock_stem, struct rte_mempool *mp,
			  const uint8_t *frame, uint16_t len)
{
	struct rte_mbuf *m[DRAIN_BURST];
	char path[sizeof(ep->sock)];
	char args[160];
	uint16_t i, n;
	int r;

	snprintf(ep->sock, sizeof(ep->sock), "/tmp/%s-%ld.sock", sock_stem,
		 (long)getpid());
	unlink(ep->sock);
	snprintf(args, sizeof(args), "iface=%s,queues=1", ep->sock);
	r = tpcq_eth_vdev_make(prog, "net_vhost0", args, &ep->tx_port);
	if (r != 0)
		return r;
	ep->tx_made = true;
	r = port_start_said(prog, ep->tx_port, mp, false);
	if (r != 0)
		return r;
	/* Else virtio_user's probe waits up to a second for vhost's answer. */
	snprintf(path, sizeof(path), "/tmp/%s-%ld.wake", sock_stem, (long)getpid());
	r = cqpoll_vhost_events_wake(path);
	if (r != 0) {
		fprintf(stderr, "%s: ethdev: vhost-user wake-up on %s: %s\n", prog,
			path, strerror(-r));
		return r;
	}
	/* vhost made its socket at start: virtio_user can connect now. */
	snprintf(args, sizeof(args), "path=%s,queues=1,queue_size=%u,"
		 "mac=02:00:00:00:00:01", ep->sock, TPCQ_ETH_RING);
	r = tpcq_eth_vdev_make(prog, "net_virtio_user0", args, &ep->rx_port);
	if (r != 0)
		return r;
	ep->rx_made = true;
	r = port_start_said(prog, ep->rx_port, mp, true);
	if (r != 0)
		return r;
	r = vhost_connected(ep, prog, mp, frame, len);
	if (r != 0)
		return r;
	/* The probes that got through: no completion of the run's. */
	usleep(10000);
	while ((n = rte_eth_rx_burst(ep->rx_port, 0, m, DRAIN_BURST)) > 0)
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(m[i]);
	return 0;
}

static void
port_remove(uint16_t port)
{
	struct rte_eth_dev_info info;
	struct rte_device *dev = NULL;

	if (rte_eth_dev_info_get(port, &info) == 0)
		dev = info.device;
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	if (dev != NULL)
		rte_dev_remove(dev);
}

void
tpcq_eth_ports_close(struct tpcq_eth_ports *ep)
{
	if (ep->rx_made)
		port_remove(ep->rx_port);
	if (ep->tx_made)
		port_remove(ep->tx_port);
	ep->rx_made = ep->tx_made = false;
	if (ep->sock[0] != '\0')
		unlink(ep->sock);
}
