/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_ETHDEV_PORT_H
#define TPCQ_ETHDEV_PORT_H

/*
 * The DPDK ports testpmd-cq's ethdev device and tpcq-peer's ethdev peers
 * make: one Rx and one Tx queue of TPCQ_ETH_RING descriptors, and the
 * vhost + virtio_user pair in this process whose vhost side sends what the
 * virtio_user side's Rx queue receives.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

/* Descriptors per queue, on every port either program makes. */
#define TPCQ_ETH_RING 256

/* The ports a device made, which tpcq_eth_ports_close() removes. */
struct tpcq_eth_ports {
	uint16_t rx_port;       /* virtio_user, or a device's one port */
	uint16_t tx_port;       /* vhost */
	bool rx_made, tx_made;
	char sock[108];         /* vhost-user socket, unlinked at close */
};

/*
 * Configure and start @p port with one Rx queue (from @p mp) and one Tx
 * queue, its Rx interrupt on if @p rxq_intr. Silent: the caller says why.
 * Returns 0 or a negative errno.
 */
int tpcq_eth_port_start(uint16_t port, struct rte_mempool *mp, bool rxq_intr);

/*
 * Hot-plug the virtual device @p name with devargs @p args ("" for none) and
 * find its port; says why not on stderr after "@p prog: ethdev: ".
 * Returns 0 or a negative errno.
 */
int tpcq_eth_vdev_make(const char *prog, const char *name, const char *args,
		       uint16_t *port);

/*
 * The vhost port (tx_port) and the virtio_user port (rx_port, its Rx
 * interrupt on) on the socket /tmp/@p sock_stem-PID.sock, started, with
 * vhost connected: @p frame (@p len bytes, ethdev_frame.h) with no sequence
 * number is sent until vhost takes it, and what virtio_user received is
 * then dropped. The ports made are
 * marked in @p ep, for tpcq_eth_ports_close() also on failure.
 * Returns 0 or a negative errno, said on stderr after "@p prog: ethdev".
 */
int tpcq_eth_virtio_user_open(struct tpcq_eth_ports *ep, const char *prog,
			      const char *sock_stem, struct rte_mempool *mp,
			      const uint8_t *frame, uint16_t len);

/* Stop, close and remove the ports @p ep made, and unlink its socket. */
void tpcq_eth_ports_close(struct tpcq_eth_ports *ep);

#endif /* TPCQ_ETHDEV_PORT_H */
