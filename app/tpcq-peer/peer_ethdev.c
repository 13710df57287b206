/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK ethdev peers, on the port pair testpmd-cq's ethdev:virtio_user device
 * makes: a vhost port and a virtio_user port on its socket in this process,
 * the sender transmitting on vhost, the receiver reading virtio_user's Rx
 * queue 0 (intr_conf.rxq = 1, ring 256, 64-byte frames of ethertype 0x88b5
 * with the sequence number at offset 14, an mbuf pool without a cache), and
 * no cqpoll code:
 *   busy         rte_eth_rx_burst() in a loop;
 *   l3fwd-power  examples/l3fwd-power's main_intr_loop(): the queue's Rx
 *                interrupt put in the thread's epoll once
 *                (rte_eth_dev_rx_intr_ctl_q(), RTE_EPOLL_PER_THREAD); after
 *                10 empty polls each empty poll pauses 1 us, and at 300 the
 *                lcore enables the interrupt (return code ignored), waits up
 *                to 10 ms in rte_epoll_wait(), disables it, and polls again.
 *                No poll after the enable: a packet queued between the last
 *                empty poll and the enable raises no event on virtio_user
 *                (peers-and-pmds.md, section 3) and waits for the timeout.
 *   wait         DPDK's blocking wait, at every empty poll: the sequence
 *                l3fwd-power runs once it decided to sleep (enable,
 *                rte_epoll_wait() up to 10 ms, disable), with the poll
 *                after the enable that an edge PMD needs: the pair of
 *                ucp_worker_wait(), fi_cq_sread() and io_uring_wait_cqe().
 * --dev=ethdev:virtio_user,unregistered is the negative control of
 * test/app/check_peers.py: l3fwd-power without its event_register(), so
 * that no Rx interrupt reaches the thread's epoll and every sleep ends by
 * the timeout, which the test must tell from a working peer.
 * --dev=ethdev:virtio_user,norepoll is the wait's: no poll after the
 * enable. ,aimed (either wait variant) holds the enable after an empty poll
 * until the sender's next packet is in the ring (up to 10 ms), so that it
 * lands in the race window whatever the scheduler does: the poll after the
 * enable must find it, and without that poll the sleep strands it until
 * the timeout.
 * The EAL gets testpmd-cq's layout for a DPDK port: the threads are not
 * pinned, both on the two CPUs of --cpus, as testpmd-cq's lcores are
 * ((0-2)@(CPU0,CPU1)), so that a peer point and a cqpoll point differ only
 * in how the queue is waited on.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "peer.h"
#include "peer_ethdev.h"

#define ETH_RING 256           /* as testpmd-cq's ethdev device */
#define ETH_TYPE 0x88b5        /* local experimental: nothing else sends it */
#define ETH_SEQ_OFF 14
#define ETH_BURST 32           /* l3fwd-power's MAX_PKT_BURST, testpmd-cq's --burst */
#define STOP UINT64_MAX
/* A sleep that timed out found a packet posted this long before: it was lost. */
#define LOST_NS 1000000ull
/* A full guest ring: the sender retries this long before it gives up. */
#define TX_RETRY_NS 1000000000ull

static const char *const waits[] = { "busy", "l3fwd-power", "wait", NULL };

static unsigned long
free_hugepages(void)
{
	unsigned long n = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %lu", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* testpmd-cq's EAL arguments for a DPDK port (app/testpmd-cq/main.c). */
static int
eal_start(struct eth_peer *e, const struct peer_run *r)
{
	static char lcores[64], prefix[64];
	static char *argv[16];
	int argc = 0;

	if (r->cpu_rx < 0 || r->cpu_tx < 0) {
		fprintf(stderr, PEER_PROG ": ethdev: --cpus=RX,TX: two CPUs for the "
			"EAL's lcores\n");
		return -EINVAL;
	}
	snprintf(lcores, sizeof(lcores), "--lcores=(0-2)@(%d,%d)", r->cpu_rx, r->cpu_tx);
	snprintf(prefix, sizeof(prefix), "--file-prefix=tpcqpeer%ld", (long)getpid());
	argv[argc++] = PEER_PROG;
	argv[argc++] = lcores;
	argv[argc++] = "--log-level=lib.vhost.*:warning";
	argv[argc++] = "--no-pci";
	argv[argc++] = prefix;
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "--log-level=lib.eal:error";
	if (free_hugepages() == 0) {
		argv[argc++] = "--no-huge";
		argv[argc++] = "--no-shconf";
		argv[argc++] = "-m";
		argv[argc++] = "256";
	} else {
		argv[argc++] = "--in-memory";
	}
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, PEER_PROG ": ethdev: cannot initialise the EAL: %s\n",
			rte_strerror(rte_errno));
		return -EIO;
	}
	e->eal_up = true;
	snprintf(e->runtime_dir, sizeof(e->runtime_dir), "%s", rte_eal_get_runtime_dir());
	return 0;
}

static int
port_start(uint16_t port, struct rte_mempool *mp, bool intr)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = intr ? 1 : 0;
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, ETH_RING, SOCKET_ID_ANY, NULL, mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, ETH_RING, SOCKET_ID_ANY, NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc != 0)
		fprintf(stderr, PEER_PROG ": ethdev: port %u: cannot start: %s\n", port,
			strerror(rc < 0 ? -rc : rc));
	return rc < 0 ? rc : -rc;
}

static int
vdev_make(const char *name, const char *args, uint16_t *port)
{
	char devargs[256];
	int rc;

	snprintf(devargs, sizeof(devargs), "%s,%s", name, args);
	rc = rte_dev_probe(devargs);
	if (rc == 0)
		rc = rte_eth_dev_get_port_by_name(name, port);
	if (rc != 0)
		fprintf(stderr, PEER_PROG ": ethdev: cannot create %s: %s\n", devargs,
			strerror(rc < 0 ? -rc : rc));
	return rc < 0 ? rc : -rc;
}

static struct rte_mbuf *
frame_mbuf(struct eth_peer *e, uint64_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(e->mp);
	uint8_t *d;

	if (m == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, PEER_MSG);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(d, e->frame, PEER_MSG);
	memcpy(d + ETH_SEQ_OFF, &seq, sizeof(seq));
	return m;
}

/*
 * vhost creates its socket when it starts, so virtio_user is hot-plugged
 * after; vhost queues only once its vhost-user thread saw the device.
 */
static int
virtio_user_open(struct eth_peer *e)
{
	struct rte_mbuf *m[ETH_BURST];
	char args[160];
	uint64_t end;
	uint16_t i, n;
	int rc;

	snprintf(e->sock, sizeof(e->sock), "/tmp/tpcqpeer-vhost-%ld.sock", (long)getpid());
	unlink(e->sock);
	snprintf(args, sizeof(args), "iface=%s,queues=1", e->sock);
	rc = vdev_make("net_vhost0", args, &e->tx_port);
	if (rc != 0)
		return rc;
	e->tx_made = true;
	rc = port_start(e->tx_port, e->mp, false);
	if (rc != 0)
		return rc;
	snprintf(args, sizeof(args), "path=%s,queues=1,queue_size=%u,"
		 "mac=02:00:00:00:00:01", e->sock, ETH_RING);
	rc = vdev_make("net_virtio_user0", args, &e->rx_port);
	if (rc != 0)
		return rc;
	e->rx_made = true;
	rc = port_start(e->rx_port, e->mp, true);
	if (rc != 0)
		return rc;
	end = peer_now_ns() + 5000000000ull;
	for (;;) {
		struct rte_mbuf *w = frame_mbuf(e, STOP);

		if (w != NULL && rte_eth_tx_burst(e->tx_port, 0, &w, 1) == 1)
			break;
		rte_pktmbuf_free(w);
		if (peer_now_ns() > end) {
			fprintf(stderr, PEER_PROG ": ethdev:virtio_user: vhost never "
				"connected\n");
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
	usleep(10000);
	while ((n = rte_eth_rx_burst(e->rx_port, 0, m, ETH_BURST)) > 0)
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

static void
ethdev_close(void *priv)
{
	struct eth_peer *e = priv;

	/* vhost writes to a socket virtio_user closed. */
	signal(SIGPIPE, SIG_IGN);
	if (e->rx_made)
		port_remove(e->rx_port);
	if (e->tx_made)
		port_remove(e->tx_port);
	if (e->sock[0] != '\0')
		unlink(e->sock);
	rte_mempool_free(e->mp);
	if (e->eal_up) {
		rte_eal_cleanup();
		/* Its own prefix per run: leave no directory behind. */
		if (e->runtime_dir[0] != '\0')
			rmdir(e->runtime_dir);
	}
	free(e);
}

static int
ethdev_open(struct peer_run *r, void **priv)
{
	uint16_t type = rte_cpu_to_be_16(ETH_TYPE);
	struct eth_peer *e;
	int rc;

	bool unregistered = false, norepoll = false, aimed = false;
	bool l3fwd = strcmp(r->wait, "l3fwd-power") == 0;
	bool wait = strcmp(r->wait, "wait") == 0;
	const char *opt = r->arg + strlen("virtio_user");

	if (strncmp(r->arg, "virtio_user", strlen("virtio_user")) != 0 ||
	    (*opt != '\0' && *opt != ',')) {
		fprintf(stderr, PEER_PROG ": ethdev: --dev=ethdev:virtio_user (the "
			"one port pair with a sender in this process), not %s\n", r->dev);
		return -EINVAL;
	}
	while (*opt == ',') {
		size_t len = strcspn(opt + 1, ",");

		if (len == strlen("unregistered") &&
		    strncmp(opt + 1, "unregistered", len) == 0 && l3fwd)
			unregistered = true;
		else if (len == strlen("norepoll") &&
			 strncmp(opt + 1, "norepoll", len) == 0 && wait)
			norepoll = true;
		else if (len == strlen("aimed") &&
			 strncmp(opt + 1, "aimed", len) == 0 && wait)
			aimed = true;
		else {
			fprintf(stderr, PEER_PROG ": ethdev: %s: ,unregistered goes "
				"with --peer=ethdev-l3fwd-power, ,norepoll and ,aimed "
				"with --peer=ethdev-wait (the tests' negative controls), "
				"nothing else\n", r->dev);
			return -EINVAL;
		}
		opt += 1 + len;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->l3fwd = l3fwd;
	e->wait = wait;
	e->unregistered = unregistered;
	e->norepoll = norepoll;
	e->aimed = aimed;
	memset(e->frame, 0xff, 6);
	e->frame[6] = 0x02;
	memcpy(e->frame + 12, &type, 2);
	rc = eal_start(e, r);
	if (rc != 0) {
		free(e);
		return rc;
	}
	e->mp = rte_pktmbuf_pool_create("tpcqpeer_eth", 4095, 0, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (e->mp == NULL) {
		fprintf(stderr, PEER_PROG ": ethdev: mbuf pool: %s\n",
			rte_strerror(rte_errno));
		ethdev_close(e);
		return -ENOMEM;
	}
	rc = virtio_user_open(e);
	if (rc != 0) {
		ethdev_close(e);
		return rc;
	}
	r->counts_sleeps = e->l3fwd || e->wait;
	*priv = e;
	return 0;
}

static int
ethdev_send(void *priv, uint64_t seq)
{
	struct eth_peer *e = priv;
	struct rte_mbuf *m = frame_mbuf(e, seq);
	uint64_t end = 0;

	if (m == NULL)
		return -ENOMEM;
	/* The guest ring may be full of the window's packets: wait, as a NIC's Tx would. */
	while (rte_eth_tx_burst(e->tx_port, 0, &m, 1) != 1) {
		if (end == 0)
			end = peer_now_ns() + TX_RETRY_NS;
		else if (peer_now_ns() > end) {
			rte_pktmbuf_free(m);
			fprintf(stderr, PEER_PROG ": ethdev: vhost Tx refused a packet "
				"for 1 s\n");
			return -EIO;
		}
	}
	__atomic_store_n(&e->sent, e->sent + 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * A blocked l3fwd-power wait ends by this packet, or by its 10 ms timeout
 * anyway: one attempt, no retry.
 */
static void
ethdev_kick(void *priv)
{
	struct eth_peer *e = priv;
	struct rte_mbuf *m = frame_mbuf(e, STOP);

	if (m != NULL && rte_eth_tx_burst(e->tx_port, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
}

static uint64_t
seq_of(struct rte_mbuf *m)
{
	uint64_t seq = STOP;
	uint16_t type;

	if (m->data_len >= PEER_MSG) {
		memcpy(&type, rte_pktmbuf_mtod_offset(m, const uint8_t *, 12), 2);
		if (type == rte_cpu_to_be_16(ETH_TYPE))
			memcpy(&seq, rte_pktmbuf_mtod_offset(m, const uint8_t *,
							     ETH_SEQ_OFF), sizeof(seq));
	}
	rte_pktmbuf_free(m);
	return seq;
}

/*
 * Packets read; after a sleep that ended by its timeout (@p timed_out, at
 * @p woke), one posted over 1 ms before it woke was stranded by the sleep:
 * testpmd-cq's recoveries_lost, judged the same way.
 */
unsigned int
peer_ethdev_take(struct eth_peer *e, struct peer_run *r, uint64_t woke, bool timed_out)
{
	struct rte_mbuf *m[ETH_BURST];
	uint16_t i, n = rte_eth_rx_burst(e->rx_port, 0, m, ETH_BURST);
	bool lost = false;
	uint64_t seq, t;

	for (i = 0; i < n; i++) {
		seq = seq_of(m[i]);
		if (seq == STOP)
			continue;
		t = __atomic_load_n(&r->post_ns[seq % PEER_POST_SLOTS], __ATOMIC_ACQUIRE);
		lost |= timed_out && t + LOST_NS < woke;
		peer_got(r, seq);
	}
	if (n > 0 && timed_out) {
		r->recoveries++;
		r->recoveries_lost += lost;
	}
	return n;
}

/*
 * busy: virtio leaves a queue's interrupt disabled at its setup
 * (virtio_init_vring()), as cqpoll's probe leaves it, so vhost's Tx signals
 * no eventfd here either.
 */
static int
ethdev_receive(void *priv, struct peer_run *r)
{
	struct eth_peer *e = priv;

	if (e->l3fwd)
		return peer_ethdev_l3fwd(e, r);
	if (e->wait)
		return peer_ethdev_wait(e, r);
	while (!peer_stopping(r))
		peer_ethdev_take(e, r, 0, false);
	return 0;
}

const struct peer_transport peer_ethdev = {
	.name = "ethdev",
	.waits = waits,
	.unpinned = true,
	.open = ethdev_open,
	.send = ethdev_send,
	.kick = ethdev_kick,
	.receive = ethdev_receive,
	.close = ethdev_close,
};
