/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ethdev peers that sleep on the Rx queue's interrupt (peer_ethdev.c
 * says what each one reproduces): l3fwd-power's transition and DPDK's
 * blocking wait. Both put the queue's event in the thread's epoll with
 * rte_eth_dev_rx_intr_ctl_q(RTE_EPOLL_PER_THREAD), from the thread that
 * waits, and count their sleeps in testpmd-cq's terms.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_epoll.h>
#include <rte_ethdev.h>

#include "peer_ethdev.h"

/* examples/l3fwd-power (main.c): MIN_ZERO_POLL_COUNT, SUSPEND_THRESHOLD, its wait. */
#define L3FWD_MIN_ZERO_POLLS 10
#define L3FWD_SUSPEND_THRESHOLD 300
#define L3FWD_WAIT_MS 10
/* ,aimed: the longest the enable waits for the sender's next packet. */
#define AIM_NS 10000000ull

/* The Rx queue's event into this lcore's epoll (l3fwd-power's event_register()). */
static int
rx_event_add(const struct eth_peer *e)
{
	int rc = rte_eth_dev_rx_intr_ctl_q(e->ports.rx_port, 0, RTE_EPOLL_PER_THREAD,
					   RTE_INTR_EVENT_ADD, NULL);

	if (rc != 0)
		fprintf(stderr, PEER_PROG ": ethdev: rte_eth_dev_rx_intr_ctl_q: %s\n",
			strerror(-rc));
	return rc;
}

/* A sleep's end: counted, a timeout noted for the lost rule of the next take. */
static int
slept(struct peer_run *r, int n, uint64_t *woke, bool *timed_out)
{
	r->sleeps++;
	if (n < 0 && errno != EINTR) {
		fprintf(stderr, PEER_PROG ": ethdev: rte_epoll_wait: %s\n",
			strerror(errno));
		return -EIO;
	}
	if (n == 0) {
		r->wait_timeouts++;
		*timed_out = true;
		*woke = peer_now_ns();
	}
	return 0;
}

int
peer_ethdev_l3fwd(struct eth_peer *e, struct peer_run *r)
{
	struct rte_epoll_event ev;
	uint64_t zero = 0, woke = 0;
	bool timed_out = false;
	int rc, n;

	/* l3fwd-power's event_register(), on the lcore that waits. */
	rc = e->unregistered ? 0 : rx_event_add(e);
	if (rc != 0)
		return rc;
	while (!peer_stopping(r)) {
		if (peer_ethdev_take(e, r, woke, timed_out) > 0) {
			zero = 0;
			timed_out = false;
			continue;
		}
		timed_out = false;
		if (++zero <= L3FWD_MIN_ZERO_POLLS)
			continue;
		if (zero < L3FWD_SUSPEND_THRESHOLD) {
			rte_delay_us(1);
			continue;
		}
		rte_eth_dev_rx_intr_enable(e->ports.rx_port, 0);
		n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, &ev, 1, L3FWD_WAIT_MS);
		rte_eth_dev_rx_intr_disable(e->ports.rx_port, 0);
		rc = slept(r, n, &woke, &timed_out);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * ,aimed: the sender's next packet lands before the enable. Yielding, so
 * that a sender on this CPU runs.
 */
static void
aim(struct eth_peer *e, struct peer_run *r)
{
	uint64_t end = peer_now_ns() + AIM_NS;

	while (__atomic_load_n(&e->sent, __ATOMIC_ACQUIRE) <= r->consumed &&
	       !peer_stopping(r) && peer_now_ns() < end)
		sched_yield();
}

/*
 * DPDK's blocking wait at every empty poll. virtio's enable is a plain
 * store that clears VRING_AVAIL_F_NO_INTERRUPT; vhost enqueues, updates
 * the used index, fences and then reads the flag. With our fence after the
 * store, either vhost sees the flag clear and signals, or the poll after
 * the fence sees the packet: a packet queued before the enable is never
 * slept on. The EAL's Rx fd is an edge in the thread's epoll, never read,
 * so an event raised while the re-poll took the packet wakes the next
 * sleep at once: a spurious wake-up, as in DPDK.
 */
int
peer_ethdev_wait(struct eth_peer *e, struct peer_run *r)
{
	struct rte_epoll_event ev;
	uint64_t woke = 0;
	bool timed_out = false;
	int rc;

	rc = rx_event_add(e);
	if (rc != 0)
		return rc;
	while (!peer_stopping(r)) {
		if (peer_ethdev_take(e, r, woke, timed_out) > 0) {
			timed_out = false;
			continue;
		}
		timed_out = false;
		if (e->aimed)
			aim(e, r);
		rc = rte_eth_dev_rx_intr_enable(e->ports.rx_port, 0);
		if (rc != 0) {
			fprintf(stderr, PEER_PROG ": ethdev: rte_eth_dev_rx_intr_enable: "
				"%s\n", strerror(-rc));
			return rc;
		}
		rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!e->norepoll && peer_ethdev_take(e, r, 0, false) > 0) {
			rte_eth_dev_rx_intr_disable(e->ports.rx_port, 0);
			continue;
		}
		rc = rte_epoll_wait(RTE_EPOLL_PER_THREAD, &ev, 1, L3FWD_WAIT_MS);
		rte_eth_dev_rx_intr_disable(e->ports.rx_port, 0);
		rc = slept(r, rc, &woke, &timed_out);
		if (rc != 0)
			return rc;
	}
	return 0;
}
