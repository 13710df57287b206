/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_PEER_ETHDEV_H
#define TPCQ_PEER_ETHDEV_H

/*
 * The ethdev peers' shared state: peer_ethdev.c makes the port pair, sends
 * and polls; peer_ethdev_sleep.c has the two loops that sleep on the Rx
 * interrupt (l3fwd-power's transition and DPDK's blocking wait).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "ethdev_port.h"
#include "peer.h"

struct eth_peer {
	bool l3fwd;
	bool wait;
	bool unregistered;         /* l3fwd-power's negative control */
	bool norepoll;             /* the wait's negative control */
	bool aimed;                /* the wait's window hit (tests) */
	uint64_t sent;             /* sender: packets in the ring */
	bool eal_up;
	struct tpcq_eth_ports ports;
	struct rte_mempool *mp;
	char runtime_dir[256];
	uint8_t frame[PEER_MSG];
};

/*
 * One rx_burst: the packets read, each through peer_got(); after a sleep
 * that ended by its timeout (@p timed_out, at @p woke), the lost rule.
 */
unsigned int peer_ethdev_take(struct eth_peer *e, struct peer_run *r, uint64_t woke,
			      bool timed_out);
/* Receiver loops until r->stop: 0, or < 0 with the reason printed. */
int peer_ethdev_l3fwd(struct eth_peer *e, struct peer_run *r);
int peer_ethdev_wait(struct eth_peer *e, struct peer_run *r);

#endif /* TPCQ_PEER_ETHDEV_H */
