/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq_echo: an echo server that sleeps on an ethdev Rx queue and an
 * RDMA-style CQ together, through one cqpoll poll group.
 *
 * The server lcore runs a group of two CQs:
 *  - the Rx queue of a virtio_user port (drivers/ethdev): each packet is
 *    sent back on the same port;
 *  - a software CQ standing in for an RDMA receive CQ: each completion is
 *    answered on a reply CQ.
 * When both are idle the group arms both and sleeps on one epoll set; a
 * packet or a completion wakes it, and no wake-up is lost in between.
 *
 * The client lcore plays the peers: it sends a packet through a vhost port
 * connected to the virtio_user port and waits for its echo, then posts a
 * completion and waits for the reply, with a pause between rounds so that
 * the server falls asleep each time. Everything runs in one process on
 * DPDK's virtual PMDs; no NIC, no RDMA device.
 *
 * Usage: cqpoll-cq-echo [EAL options] -- [--rounds=N] [--gap-us=US]
 *                        [--mode=interrupt|adaptive|busy]
 * e.g.   cqpoll-cq-echo --no-huge -m 256 --no-pci -l 0-1 -- --rounds=200
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
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
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <cqpoll.h>
#include <cqpoll_ethdev.h>
#include <cqpoll_group.h>
#include <cqpoll_sw.h>

#define RING 256
#define PKT_LEN 64
#define REPLY_TIMEOUT_US 1000000

static struct {
	unsigned int rounds;
	unsigned int gap_us;
	enum cqpoll_group_mode mode;
} opt = { 100, 2000, CQPOLL_GROUP_MODE_INTERRUPT };

static uint16_t vhost_port, virtio_port;
static struct rte_mempool *pool;
static struct cqpoll_cq *rdma_cq, *reply_cq;
static struct cqpoll_group *group;

/* Server: echo each packet back where it came from. */
static void
on_packets(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	   unsigned int n, void *arg)
{
	struct rte_mbuf *m[64];
	unsigned int i, k, sent;

	(void)cq;
	(void)arg;
	for (i = 0; i < n; i += k) {
		for (k = 0; k < 64 && i + k < n; k++)
			m[k] = (struct rte_mbuf *)(uintptr_t)c[i + k].wr_id;
		sent = rte_eth_tx_burst(virtio_port, 0, m, (uint16_t)k);
		while (sent < k)
			rte_pktmbuf_free(m[sent++]);
	}
}

/* Server: answer each RDMA-style completion on the reply CQ. */
static void
on_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	       unsigned int n, void *arg)
{
	struct cqpoll_completion r;
	unsigned int i;

	(void)cq;
	(void)arg;
	for (i = 0; i < n; i++) {
		r = c[i];
		r.opcode = CQPOLL_OP_SEND;
		cqpoll_sw_post(reply_cq, &r);
	}
}

static int
server(void *arg)
{
	(void)arg;
	return cqpoll_group_run(group);
}

static int
send_packet(uint64_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	if (m == NULL)
		return -ENOMEM;
	p = (uint8_t *)rte_pktmbuf_append(m, PKT_LEN);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return -ENOMEM;
	}
	memset(p, 0, PKT_LEN);
	memset(p, 0xff, 6);
	p[6] = 0x02;
	p[12] = 0x88;
	p[13] = 0xb5;
	memcpy(p + 14, &seq, sizeof(seq));
	if (rte_eth_tx_burst(vhost_port, 0, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	return 0;
}

/* Client: wait for the echo of packet seq on the vhost port. */
static int
wait_echo(uint64_t seq)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000000 *
		REPLY_TIMEOUT_US, got;
	struct rte_mbuf *m;

	while (rte_get_timer_cycles() < end) {
		if (rte_eth_rx_burst(vhost_port, 0, &m, 1) == 0)
			continue;
		memcpy(&got, rte_pktmbuf_mtod_offset(m, uint8_t *, 14), sizeof(got));
		rte_pktmbuf_free(m);
		if (got == seq)
			return 0;
	}
	return -ETIMEDOUT;
}

static int
wait_reply(uint64_t seq)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000000 *
		REPLY_TIMEOUT_US;
	struct cqpoll_completion c;

	while (rte_get_timer_cycles() < end)
		if (cqpoll_poll_burst(reply_cq, &c, 1) == 1)
			return c.wr_id == seq ? 0 : -EPROTO;
	return -ETIMEDOUT;
}

static int
client(void)
{
	struct cqpoll_completion c = { .status = CQPOLL_STATUS_SUCCESS,
				       .opcode = CQPOLL_OP_RECV, .byte_len = 8,
				       .flags = CQPOLL_COMPLETION_F_WR_ID };
	uint64_t t0, pkt_us = 0, cq_us = 0, i;
	double us = 1e6 / (double)rte_get_timer_hz();

	for (i = 0; i < opt.rounds; i++) {
		rte_delay_us_sleep(opt.gap_us);
		t0 = rte_get_timer_cycles();
		if (send_packet(i) != 0 || wait_echo(i) != 0) {
			fprintf(stderr, "cq_echo: packet %" PRIu64 ": no echo\n", i);
			return -1;
		}
		pkt_us += rte_get_timer_cycles() - t0;
		rte_delay_us_sleep(opt.gap_us);
		t0 = rte_get_timer_cycles();
		c.wr_id = i;
		if (cqpoll_sw_post(rdma_cq, &c) != 0 || wait_reply(i) != 0) {
			fprintf(stderr, "cq_echo: completion %" PRIu64 ": no reply\n", i);
			return -1;
		}
		cq_us += rte_get_timer_cycles() - t0;
	}
	printf("cq_echo: %u packets echoed, mean %.1f us; %u completions "
	       "answered, mean %.1f us\n", opt.rounds,
	       (double)pkt_us * us / opt.rounds, opt.rounds,
	       (double)cq_us * us / opt.rounds);
	return 0;
}

static int
port_start(uint16_t port, int intr)
{
	struct rte_eth_conf conf;
	int r;

	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = intr;
	r = rte_eth_dev_configure(port, 1, 1, &conf);
	if (r == 0)
		r = rte_eth_rx_queue_setup(port, 0, RING, SOCKET_ID_ANY, NULL, pool);
	if (r == 0)
		r = rte_eth_tx_queue_setup(port, 0, RING, SOCKET_ID_ANY, NULL);
	if (r == 0)
		r = rte_eth_dev_start(port);
	return r;
}

/* vhost first: it creates the socket at start; then virtio_user joins it. */
static int
ports_open(const char *sock)
{
	char args[200];
	struct rte_mbuf *m;
	uint64_t end;
	int r;

	snprintf(args, sizeof(args), "net_vhost0,iface=%s,queues=1", sock);
	r = rte_dev_probe(args);
	if (r == 0)
		r = rte_eth_dev_get_port_by_name("net_vhost0", &vhost_port);
	if (r == 0)
		r = port_start(vhost_port, 0);
	if (r != 0)
		return r;
	snprintf(args, sizeof(args), "net_virtio_user0,path=%s,queues=1,queue_size=%u",
		 sock, RING);
	r = rte_dev_probe(args);
	if (r == 0)
		r = rte_eth_dev_get_port_by_name("net_virtio_user0", &virtio_port);
	if (r == 0)
		r = port_start(virtio_port, 1);
	if (r != 0)
		return r;
	/* Until vhost's vhost-user thread saw the device, it drops. */
	end = rte_get_timer_cycles() + 5 * rte_get_timer_hz();
	while (send_packet(UINT64_MAX) != 0)
		if (rte_get_timer_cycles() > end)
			return -ETIMEDOUT;
	rte_delay_us_sleep(10000);
	while (rte_eth_rx_burst(virtio_port, 0, &m, 1) == 1)
		rte_pktmbuf_free(m);
	return 0;
}

static int
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "mode", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			opt.rounds = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'g':
			opt.gap_us = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			if (strcmp(optarg, "interrupt") == 0)
				opt.mode = CQPOLL_GROUP_MODE_INTERRUPT;
			else if (strcmp(optarg, "adaptive") == 0)
				opt.mode = CQPOLL_GROUP_MODE_ADAPTIVE;
			else if (strcmp(optarg, "busy") == 0)
				opt.mode = CQPOLL_GROUP_MODE_BUSY;
			else
				return -1;
			break;
		default:
			return -1;
		}
	}
	return opt.rounds > 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct cqpoll_group_conf gconf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT };
	struct cqpoll_group_stats st;
	struct cqpoll_cq *rx_cq;
	unsigned int worker;
	char sock[108];
	int r, ret = EXIT_FAILURE;

	signal(SIGPIPE, SIG_IGN);
	r = rte_eal_init(argc, argv);
	if (r < 0)
		rte_exit(EXIT_FAILURE, "cannot init EAL: %s\n", rte_strerror(rte_errno));
	argc -= r;
	argv += r;
	if (parse(argc, argv) != 0)
		rte_exit(EXIT_FAILURE, "usage: cqpoll-cq-echo [EAL options] -- "
			 "[--rounds=N] [--gap-us=US] [--mode=interrupt|adaptive|busy]\n");
	worker = rte_get_next_lcore(-1, 1, 0);
	if (worker >= RTE_MAX_LCORE)
		rte_exit(EXIT_FAILURE, "needs two lcores (-l 0-1)\n");
	pool = rte_pktmbuf_pool_create("echo_pool", 4095, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		rte_exit(EXIT_FAILURE, "mbuf pool: %s\n", rte_strerror(rte_errno));
	snprintf(sock, sizeof(sock), "/tmp/cq-echo-%ld.sock", (long)getpid());
	unlink(sock);
	r = ports_open(sock);
	if (r != 0)
		rte_exit(EXIT_FAILURE, "vhost/virtio_user ports: %s\n", strerror(-r));

	/* The Rx queue as a CQ: refused, with the reason, if it cannot sleep. */
	rx_cq = cqpoll_ethdev_cq_create(virtio_port, 0, NULL);
	rdma_cq = cqpoll_sw_cq_create(NULL);
	reply_cq = cqpoll_sw_cq_create(NULL);
	gconf.mode = opt.mode;
	group = cqpoll_group_create(&gconf);
	if (rx_cq == NULL || rdma_cq == NULL || reply_cq == NULL || group == NULL)
		rte_exit(EXIT_FAILURE, "cqpoll: %s\n", strerror(errno));
	if (cqpoll_group_add(group, rx_cq, on_packets, NULL) != 0 ||
	    cqpoll_group_add(group, rdma_cq, on_completions, NULL) != 0)
		rte_exit(EXIT_FAILURE, "cqpoll_group_add failed\n");

	rte_eal_remote_launch(server, NULL, worker);
	if (client() == 0)
		ret = EXIT_SUCCESS;
	cqpoll_group_stop(group);
	rte_eal_wait_lcore(worker);

	cqpoll_group_stats_get(group, &st);
	printf("cq_echo: server group (%s): %" PRIu64 " sleeps, %" PRIu64
	       " woken by events, %" PRIu64 " by timeouts, %" PRIu64
	       " timeout recoveries\n", cqpoll_group_mode_name(opt.mode), st.sleeps,
	       st.wakeups_event, st.wakeups_timeout, st.timeout_recoveries);
	cqpoll_group_remove(group, rx_cq);
	cqpoll_group_remove(group, rdma_cq);
	cqpoll_group_destroy(group);
	cqpoll_cq_destroy(rx_cq);
	cqpoll_cq_destroy(rdma_cq);
	cqpoll_cq_destroy(reply_cq);
	rte_eth_dev_stop(virtio_port);
	rte_eth_dev_close(virtio_port);
	rte_eth_dev_stop(vhost_port);
	rte_eth_dev_close(vhost_port);
	unlink(sock);
	rte_eal_cleanup();
	return ret;
}
