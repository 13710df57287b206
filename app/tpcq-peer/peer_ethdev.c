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
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "eal_args.h"
#include "ethdev_frame.h"
#include "ethdev_port.h"
#include "peer.h"
#include "peer_ethdev.h"

#define ETH_BURST 32           /* l3fwd-power's MAX_PKT_BURST, testpmd-cq's --burst */
#define STOP TPCQ_ETH_NO_SEQ
/* A sleep that timed out found a packet posted this long before: it was lost. */
#define LOST_NS 1000000ull
/* A full guest ring: the sender retries this long before it gives up. */
#define TX_RETRY_NS 1000000000ull

static const char *const waits[] = { "busy", "l3fwd-power", "wait", NULL };

/* testpmd-cq's EAL arguments for a DPDK port (app/testpmd-cq/main.c). */
static int
eal_start(struct eth_peer *e, const struct peer_run *r)
{
	static struct tpcq_eal_args ea = { .prefix = "tpcqpeer", .dpdk_port = true };
	static char cpus[32];
	static char *argv[TPCQ_EAL_ARGS_MAX + 2];
	int argc = 0;

	if (r->cpu_rx < 0 || r->cpu_tx < 0) {
		fprintf(stderr, PEER_PROG ": ethdev: --cpus=RX,TX: two CPUs for the "
			"EAL's lcores\n");
		return -EINVAL;
	}
	snprintf(cpus, sizeof(cpus), "%d,%d", r->cpu_rx, r->cpu_tx);
	ea.cpus = cpus;
	argv[argc++] = PEER_PROG;
	argc = tpcq_eal_args_add(&ea, argv, argc);
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

static struct rte_mbuf *
frame_mbuf(struct eth_peer *e, uint64_t seq)
{
	return tpcq_eth_frame_mbuf(e->mp, e->frame, PEER_MSG, seq);
}

/*
 * vhost creates its socket when it starts, so virtio_user is hot-plugged
 * after; its first packet is a STOP frame, which the receiver skips.
 */
static int
virtio_user_open(struct eth_peer *e)
{
	return tpcq_eth_virtio_user_open(&e->ports, PEER_PROG, "tpcqpeer-vhost",
					 e->mp, e->frame, PEER_MSG);
}

static void
ethdev_close(void *priv)
{
	struct eth_peer *e = priv;

	/* vhost writes to a socket virtio_user closed. */
	signal(SIGPIPE, SIG_IGN);
	tpcq_eth_ports_close(&e->ports);
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
	tpcq_eth_frame_init(e->frame, sizeof(e->frame));
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
	while (rte_eth_tx_burst(e->ports.tx_port, 0, &m, 1) != 1) {
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

	if (m != NULL && rte_eth_tx_burst(e->ports.tx_port, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
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
	uint16_t i, n = rte_eth_rx_burst(e->ports.rx_port, 0, m, ETH_BURST);
	bool lost = false;
	uint64_t seq, t, now;

	if (n == 0)
		return 0;
	now = peer_burst(r);
	for (i = 0; i < n; i++) {
		seq = tpcq_eth_frame_seq(m[i], PEER_MSG);
		if (seq == STOP)
			continue;
		if (timed_out) {
			t = __atomic_load_n(&r->post_ns[seq % PEER_POST_SLOTS],
					    __ATOMIC_ACQUIRE);
			lost |= t + LOST_NS < woke;
		}
		peer_got(r, now, seq);
	}
	peer_burst_done(r);
	if (timed_out) {
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
