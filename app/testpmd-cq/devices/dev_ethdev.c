/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ethdev: an Rx queue of a DPDK port as the CQ (drivers/ethdev), with a
 * packet per completion, its sequence number in the payload.
 *
 * ethdev:virtio_user  a vhost port and a virtio_user port in this process
 *                     (virtio_user hot-plugged once vhost started and
 *                     created its socket); the generator transmits on vhost,
 *                     the poller receives on virtio_user.
 * ethdev:tap          a tap port fed from a kernel AF_PACKET socket on its
 *                     interface (needs root and /dev/net/tun); the poller on
 *                     a worker lcore, the generator on the main one.
 *                     ethdev:tap,owner=process is the negative control:
 *                     before each sleep the fd's signals go back to the
 *                     process, as the PMD sets them up.
 * ethdev:memif, :af_packet, :null
 *                     PMDs without Rx interrupts: refused at CQ creation,
 *                     with the reason.
 * ethdev:NAME         any port the EAL made (--vdev, a PCI device), by name.
 *
 * Lost wake-ups: a sleep check judges every sleep on the queue, and the
 * l3fwd-power transition asks it before each of its own: a packet sent and
 * not yet read, while no edge waits in the CQ's epoll set, is stranded.
 * The check looks at the set with poll(2), which leaves the edge there.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_epoll.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cqpoll_ethdev.h>
#include <cqpoll_sleep_check.h>

#include "dev.h"
#include "ethdev_frame.h"
#include "ethdev_port.h"
#include "params.h"
#include "plugin.h"
#include "testpmd_cq.h"

#define ETH_OUTSTANDING 128
/* l3fwd-power's rte_epoll_wait() timeout (main_intr_loop). */
#define L3FWD_WAIT_MS 10

enum eth_kind { ETH_VIRTIO_USER, ETH_TAP, ETH_VDEV, ETH_PORT };

struct eth_dev {
	enum eth_kind kind;
	struct tpcq_eth_ports ports; /* the ports it made (and removes) */
	struct rte_mempool *mp;
	int pkt_fd;                /* tap: AF_PACKET on the kernel interface */
	bool owner_process;        /* tap negative control */
	int intr_fd;               /* the queue's interrupt fd */
	struct cqpoll_cq *cq;
	uint64_t sent;             /* packets out of the generator, released */
	const struct tpcq_devctx *dc; /* its consumed count is the poller's */
	uint8_t frame[TPCQ_BYTE_LEN];
};

/* --cqs=1: one device, which the sleep check finds here. */
static struct eth_dev *the_dev;

static int
stranded(struct eth_dev *e)
{
	uint64_t sent = __atomic_load_n(&e->sent, __ATOMIC_ACQUIRE);
	struct pollfd pfd = { .fd = cqpoll_cq_event_fd(e->cq), .events = POLLIN };

	if (e->dc->consumed == NULL ||
	    sent <= __atomic_load_n(e->dc->consumed, __ATOMIC_ACQUIRE))
		return 0;
	/* Read after the count: an edge raised for those packets is seen. */
	return poll(&pfd, 1, 0) > 0 ? 0 : 1;
}

static int
eth_check(struct cqpoll_cq *cq, void *arg)
{
	struct eth_dev *e = __atomic_load_n(&the_dev, __ATOMIC_ACQUIRE);

	(void)arg;
	if (e == NULL || e->cq != cq)
		return tpcq_kit_stranded(cq);
	if (e->owner_process)
		fcntl(e->intr_fd, F_SETOWN, getpid());
	return stranded(e);
}

static const struct cqpoll_sleep_check eth_sleep_check = { .check = eth_check };

static uint64_t
eth_seq_of(const struct cqpoll_completion *c)
{
	return tpcq_eth_frame_seq((struct rte_mbuf *)(uintptr_t)c->wr_id, TPCQ_BYTE_LEN);
}

static int
virtio_user_open(struct eth_dev *e)
{
	return tpcq_eth_virtio_user_open(&e->ports, TPCQ_PROG, "tpcq-vhost", e->mp,
					 e->frame, sizeof(e->frame));
}

static int
tap_open(struct eth_dev *e)
{
	char ifname[IFNAMSIZ], args[64], path[128];
	struct sockaddr_ll sll;
	int one = 1, r;
	FILE *f;

	if (access("/dev/net/tun", R_OK | W_OK) != 0) {
		fprintf(stderr, TPCQ_PROG ": ethdev:tap: /dev/net/tun: %s\n",
			strerror(errno));
		return -errno;
	}
	snprintf(ifname, sizeof(ifname), "dtpcq%ld", (long)getpid() % 100000);
	snprintf(args, sizeof(args), "iface=%s", ifname);
	r = tpcq_eth_vdev_make(TPCQ_PROG, "net_tap0", args, &e->ports.rx_port);
	if (r != 0) {
		fprintf(stderr, TPCQ_PROG ": ethdev:tap needs root (CAP_NET_ADMIN)\n");
		return r;
	}
	e->ports.rx_made = true;
	/* Router solicitations would land in the queue. */
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
	f = fopen(path, "w");
	if (f != NULL) {
		fputs("1\n", f);
		fclose(f);
	}
	r = tpcq_eth_port_start(e->ports.rx_port, e->mp, true);
	if (r != 0)
		return r;
	e->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	/* Straight to tun's xmit, inside send(): queued before send returns. */
	if (e->pkt_fd < 0 || sll.sll_ifindex == 0 ||
	    bind(e->pkt_fd, (struct sockaddr *)&sll, sizeof(sll)) != 0 ||
	    setsockopt(e->pkt_fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
		       sizeof(one)) != 0) {
		r = -errno;
		fprintf(stderr, TPCQ_PROG ": ethdev:tap: AF_PACKET socket on %s: %s\n",
			ifname, strerror(errno));
		return r;
	}
	return 0;
}

/*
 * PMDs refused from their name alone, before a port is made. memif has no
 * Rx interrupt (its eth_dev_ops set no rx_queue_intr_enable and its queues
 * no interrupt fd), and a memif port made only to be refused is unsafe to
 * tear down: DPDK 22.11's memif frees its listener's interrupt handle
 * without unregistering the callback, and EAL's interrupt thread then walks
 * freed memory (a crash in rte_intr_fd_get at exit, 7 in 100 runs under
 * load). The refusal must not cost a crash, so no port is made.
 */
static const char *
vdev_refused(const char *pmd)
{
	if (strcmp(pmd, "memif") == 0)
		return "net_memif has no Rx interrupt (its ops have no "
		       "rx_queue_intr_enable); decided from the driver's name, "
		       "no port made (DPDK 22.11's memif teardown leaves EAL's "
		       "interrupt thread a stale handle)";
	return NULL;
}

/* af_packet, null: made here so that the probe's refusal can be shown. */
static int
vdev_open(struct eth_dev *e, const char *pmd)
{
	char name[64], args[160];
	int r;

	snprintf(name, sizeof(name), "net_%s0", pmd);
	args[0] = '\0';
	if (strcmp(pmd, "af_packet") == 0)
		snprintf(args, sizeof(args), "iface=lo");
	r = tpcq_eth_vdev_make(TPCQ_PROG, name, args, &e->ports.rx_port);
	if (r != 0)
		return r;
	e->ports.rx_made = true;
	return tpcq_eth_port_start(e->ports.rx_port, e->mp, true);
}

static void
eth_free(struct eth_dev *e)
{
	__atomic_store_n(&the_dev, NULL, __ATOMIC_RELEASE);
	if (e->cq != NULL)
		cqpoll_cq_destroy(e->cq);
	tpcq_eth_ports_close(&e->ports);
	if (e->pkt_fd >= 0)
		close(e->pkt_fd);
	rte_mempool_free(e->mp);
	free(e);
}

static int
eth_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	struct cqpoll_ethdev_probe pr;
	const char *what = p->ibdev;
	struct eth_dev *e;
	int r;

	if (what == NULL || p->cqs != 1) {
		fprintf(stderr, TPCQ_PROG ": --dev=ethdev:PMD: one Rx queue, --cqs=1\n");
		return -EINVAL;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->pkt_fd = -1;
	tpcq_eth_frame_init(e->frame, sizeof(e->frame));
	e->mp = rte_pktmbuf_pool_create("tpcq_eth", 4095, 0, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (e->mp == NULL) {
		fprintf(stderr, TPCQ_PROG ": ethdev: mbuf pool: %s\n",
			rte_strerror(rte_errno));
		free(e);
		return -ENOMEM;
	}
	if (strcmp(what, "virtio_user") == 0) {
		e->kind = ETH_VIRTIO_USER;
		r = virtio_user_open(e);
	} else if (strcmp(what, "tap") == 0 || strcmp(what, "tap,owner=process") == 0) {
		e->kind = ETH_TAP;
		e->owner_process = strcmp(what, "tap") != 0;
		r = tap_open(e);
	} else if (vdev_refused(what) != NULL) {
		fprintf(stderr, TPCQ_PROG ": ethdev:%s: refused: %s\n", what,
			vdev_refused(what));
		eth_free(e);
		return -ENOTSUP;
	} else if (strcmp(what, "af_packet") == 0 || strcmp(what, "null") == 0) {
		e->kind = ETH_VDEV;
		r = vdev_open(e, what);
	} else {
		e->kind = ETH_PORT;
		r = rte_eth_dev_get_port_by_name(what, &e->ports.rx_port);
		if (r != 0)
			fprintf(stderr, TPCQ_PROG ": ethdev:%s: no such port (give it "
				"to the EAL, e.g. --vdev=%s, before '--')\n", what, what);
		else
			r = tpcq_eth_port_start(e->ports.rx_port, e->mp, true);
	}
	if (r != 0) {
		eth_free(e);
		return r < 0 ? r : -EIO;
	}
	r = cqpoll_ethdev_probe(e->ports.rx_port, 0, &pr);
	if (r != 0) {
		fprintf(stderr, TPCQ_PROG ": ethdev:%s: refused: %s\n", what, pr.reason);
		eth_free(e);
		return r;
	}
	printf("ethdev:%s: %s\n", what, pr.reason);
	e->intr_fd = pr.fd;
	e->cq = cqpoll_ethdev_cq_create(e->ports.rx_port, 0, NULL);
	if (e->cq == NULL) {
		r = -errno;
		fprintf(stderr, TPCQ_PROG ": ethdev:%s: cqpoll_ethdev_cq_create: %s\n",
			what, strerror(errno));
		eth_free(e);
		return r;
	}
	e->dc = dc;
	cqpoll_sleep_check_register(&eth_sleep_check);
	__atomic_store_n(&the_dev, e, __ATOMIC_RELEASE);

	dc->cq = e->cq;
	dc->priv = e;
	dc->wr_id_mask = UINT64_MAX;
	dc->monotonic_ts = false;
	dc->max_outstanding = ETH_OUTSTANDING;
	dc->expect.opcode = CQPOLL_OP_RECV;
	dc->expect.qp_num = 0;
	dc->expect.byte_len = TPCQ_BYTE_LEN;
	dc->expect.check_byte_len = e->kind != ETH_PORT;
	dc->expect.seq_of = eth_seq_of;
	dc->poller_on_worker = e->kind == ETH_TAP;
	return 0;
}

static int
eth_post(struct tpcq_devctx *dc, uint64_t seq)
{
	struct eth_dev *e = dc->priv;
	struct rte_mbuf *m;

	if (seq - __atomic_load_n(dc->consumed, __ATOMIC_ACQUIRE) >= ETH_OUTSTANDING)
		return -ENOSPC;
	if (e->kind == ETH_TAP) {
		memcpy(e->frame + TPCQ_ETH_SEQ_OFF, &seq, sizeof(seq));
		if (send(e->pkt_fd, e->frame, sizeof(e->frame), 0) < 0)
			return errno == EAGAIN || errno == ENOBUFS ? -ENOSPC : -errno;
	} else if (e->kind == ETH_VIRTIO_USER) {
		m = tpcq_eth_frame_mbuf(e->mp, e->frame, TPCQ_BYTE_LEN, seq);
		if (m == NULL)
			return -ENOSPC;
		if (rte_eth_tx_burst(e->ports.tx_port, 0, &m, 1) != 1) {
			rte_pktmbuf_free(m);
			return -ENOSPC;
		}
	} else {
		fprintf(stderr, TPCQ_PROG ": ethdev: this port has no peer here to "
			"send from; only virtio_user and tap carry traffic\n");
		return -ENOTSUP;
	}
	__atomic_store_n(&e->sent, seq + 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * One sleep of examples/l3fwd-power (main_intr_loop: turn_on_off_intr(),
 * sleep_until_rx_interrupt(), turn_on_off_intr()): enable with the return
 * code ignored, wait up to 10 ms, disable; the caller polls only after it.
 */
int
tpcq_ethdev_l3fwd_sleep(struct tpcq_devctx *dc, struct cqpoll_cq_stats *st)
{
	struct eth_dev *e = dc->priv;
	struct rte_epoll_event ev;
	int n;

	rte_eth_dev_rx_intr_enable(e->ports.rx_port, 0);
	st->arms++;
	st->waits++;
	st->lost_wakeups += (uint64_t)stranded(e);
	n = rte_epoll_wait(cqpoll_cq_event_fd(e->cq), &ev, 1, L3FWD_WAIT_MS);
	rte_eth_dev_rx_intr_disable(e->ports.rx_port, 0);
	if (n < 0)
		return -EIO;
	if (n == 0)
		st->wait_timeouts++;
	else
		st->events++;
	return 0;
}

static void
eth_close(struct tpcq_devctx *dc)
{
	eth_free(dc->priv);
	/* The CQ was the device's: destroyed with it. */
	dc->cq = NULL;
}

const struct tpcq_dev tpcq_dev_ethdev = {
	.name = "ethdev",
	.help = "an Rx queue of a DPDK port (ethdev driver): virtio_user (fed "
		"by vhost in this process), tap (fed by a kernel socket; root; "
		"tap,owner=process: its negative control), memif, af_packet, null "
		"(no Rx interrupt: refused), or a port's name",
	.takes_ibdev = true,
	.arg_name = "PMD",
	.arms = 1u << CQPOLL_ARM_EDGE,
	.default_arm = CQPOLL_ARM_EDGE,
	.arm_help = "the PMD's own: rte_eth_dev_rx_intr_enable() (virtio, vhost) "
		"or always armed (tap); packets queued before raise no event",
	.faults = 0,
	.needs_eal = true,
	.open = eth_open,
	.post = eth_post,
	.close = eth_close,
};
