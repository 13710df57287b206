/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ETHDEV_TEST_H
#define ETHDEV_TEST_H

/*
 * DPDK's virtual ports for the ethdev driver's tests, in one process under
 * an EAL without hugepages (--no-huge -m 256 --no-pci): a vhost port and a
 * virtio_user port connected over a vhost-user socket (the test transmits
 * on vhost and the CQ receives on virtio_user), and ports of PMDs without
 * Rx interrupts. virtio_user is hot-plugged after vhost started: vhost
 * creates its socket only at port start.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "cqpoll_test.h"
#include "cqpoll_vhost_wake.h"

#define TE_RING 256
#define TE_PKT_LEN 64
/* A local experimental EtherType: nothing else in the kernel wants these. */
#define TE_ETHER_TYPE 0x88b5
#define TE_SEQ_OFF 14

struct te_pair {
	uint16_t vhost, virtio;
	struct rte_mempool *mp;
	char sock[108];
};

static inline int
te_eal_init(const char *argv0)
{
	char prefix[64];
	char *eal[] = { (char *)(uintptr_t)argv0, "-l", "0", "--no-huge", "-m", "256",
			"--no-pci", "--no-shconf", "--no-telemetry", prefix,
			"--log-level=lib.eal:error", "--log-level=pmd.net.*:error",
			"--log-level=lib.vhost.*:error", "--log-level=lib.ethdev:crit" };

	snprintf(prefix, sizeof(prefix), "--file-prefix=cqpeth%ld", (long)getpid());
	/* A vhost peer gone at teardown must not kill the process. */
	signal(SIGPIPE, SIG_IGN);
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])), eal) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

static inline struct rte_mempool *
te_pool(void)
{
	return rte_pktmbuf_pool_create("te_pool", 4095, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
}

/* One Rx and one Tx queue; Rx interrupts asked for with @p intr. */
static inline int
te_port_start(uint16_t port, struct rte_mempool *mp, int intr)
{
	struct rte_eth_conf conf;
	int r;

	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = intr ? 1 : 0;
	r = rte_eth_dev_configure(port, 1, 1, &conf);
	if (r == 0)
		r = rte_eth_rx_queue_setup(port, 0, TE_RING, SOCKET_ID_ANY, NULL, mp);
	if (r == 0)
		r = rte_eth_tx_queue_setup(port, 0, TE_RING, SOCKET_ID_ANY, NULL);
	if (r == 0)
		r = rte_eth_dev_start(port);
	return r;
}

/* A vdev and its port: 0, or -errno with the reason in why. */
static inline int
te_vdev(const char *name, const char *args, uint16_t *port, char *why, size_t len)
{
	char devargs[200];
	int r;

	snprintf(devargs, sizeof(devargs), "%s%s%s", name, args[0] ? "," : "", args);
	r = rte_dev_probe(devargs);
	if (r != 0) {
		snprintf(why, len, "rte_dev_probe(%.160s): %s", devargs,
			 strerror(r < 0 ? -r : r));
		return r < 0 ? r : -r;
	}
	r = rte_eth_dev_get_port_by_name(name, port);
	if (r != 0)
		snprintf(why, len, "%s: no port", name);
	return r;
}

/* One packet carrying @p seq, on @p port's Tx queue 0: 1 sent, 0 not. */
static inline int
te_send(uint16_t port, struct rte_mempool *mp, uint64_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *p;
	uint16_t type = rte_cpu_to_be_16(TE_ETHER_TYPE);

	if (m == NULL)
		return 0;
	p = (uint8_t *)rte_pktmbuf_append(m, TE_PKT_LEN);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return 0;
	}
	memset(p, 0, TE_PKT_LEN);
	memset(p, 0xff, 6);
	p[6] = 0x02;
	memcpy(p + 12, &type, 2);
	memcpy(p + TE_SEQ_OFF, &seq, sizeof(seq));
	if (rte_eth_tx_burst(port, 0, &m, 1) == 1)
		return 1;
	rte_pktmbuf_free(m);
	return 0;
}

/* The sequence number te_send() put in a packet; UINT64_MAX if none. */
static inline uint64_t
te_seq(const struct rte_mbuf *m)
{
	uint64_t seq;
	uint16_t type;

	if (m->pkt_len < TE_PKT_LEN || m->data_len < TE_PKT_LEN)
		return UINT64_MAX;
	memcpy(&type, rte_pktmbuf_mtod_offset(m, const uint8_t *, 12), 2);
	if (type != rte_cpu_to_be_16(TE_ETHER_TYPE))
		return UINT64_MAX;
	memcpy(&seq, rte_pktmbuf_mtod_offset(m, const uint8_t *, TE_SEQ_OFF),
	       sizeof(seq));
	return seq;
}

static inline void
te_drain(uint16_t port)
{
	struct rte_mbuf *m[32];
	uint16_t i, n;

	while ((n = rte_eth_rx_burst(port, 0, m, 32)) > 0)
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(m[i]);
}

/*
 * vhost, started, then virtio_user hot-plugged onto its socket with Rx
 * interrupts; returns once a packet went through. 0, or -errno with why.
 */
static inline int
te_pair_open(struct te_pair *tp, struct rte_mempool *mp, char *why, size_t len)
{
	char path[sizeof(tp->sock)];
	char args[160];
	uint64_t end;
	int r;

	tp->mp = mp;
	snprintf(tp->sock, sizeof(tp->sock), "/tmp/cqpoll-vhost-%ld.sock",
		 (long)getpid());
	unlink(tp->sock);
	snprintf(args, sizeof(args), "iface=%s,queues=1", tp->sock);
	r = te_vdev("net_vhost0", args, &tp->vhost, why, len);
	if (r != 0)
		return r;
	r = te_port_start(tp->vhost, mp, 0);
	if (r != 0) {
		snprintf(why, len, "vhost port: %s", strerror(-r));
		return r;
	}
	/* Else virtio_user's probe waits up to a second for vhost's answer. */
	snprintf(path, sizeof(path), "/tmp/cqpoll-vhost-%ld.wake", (long)getpid());
	r = cqpoll_vhost_events_wake(path);
	if (r != 0) {
		snprintf(why, len, "vhost-user wake-up on %s: %s", path, strerror(-r));
		return r;
	}
	snprintf(args, sizeof(args), "path=%s,queues=1,queue_size=%u", tp->sock,
		 TE_RING);
	r = te_vdev("net_virtio_user0", args, &tp->virtio, why, len);
	if (r != 0)
		return r;
	r = te_port_start(tp->virtio, mp, 1);
	if (r != 0) {
		snprintf(why, len, "virtio_user port: %s", strerror(-r));
		return r;
	}
	/* vhost queues only once its vhost-user thread saw the device. */
	end = test_now_ns() + 5000000000ull;
	while (te_send(tp->vhost, mp, UINT64_MAX - 1) == 0) {
		if (test_now_ns() > end) {
			snprintf(why, len, "vhost never connected to virtio_user");
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
	usleep(1000);
	te_drain(tp->virtio);
	return 0;
}

/* Stop, close and unplug a port. */
static inline void
te_port_remove(uint16_t port)
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

static inline void
te_pair_close(struct te_pair *tp)
{
	te_port_remove(tp->virtio);
	te_port_remove(tp->vhost);
	unlink(tp->sock);
}

#endif /* ETHDEV_TEST_H */
