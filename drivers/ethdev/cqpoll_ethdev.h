/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_ETHDEV_H
#define CQPOLL_ETHDEV_H

/**
 * @file
 * ethdev driver: one Rx queue of a DPDK port as a cqpoll CQ, so that Rx
 * queues and RDMA, io_uring or libfabric CQs sleep in one poll group (or one
 * rte_epoll_wait()) without a lost wake-up.
 *
 * A poll is rte_eth_rx_burst(); each mbuf is one completion: wr_id is the
 * struct rte_mbuf pointer (CQPOLL_COMPLETION_F_WR_ID), byte_len its pkt_len,
 * qp_num the Rx queue id, opcode CQPOLL_OP_RECV, status
 * CQPOLL_STATUS_SUCCESS. The mbuf belongs to the caller, who frees it.
 *
 * The arm is what the PMD really has, found by probing the queue, never by
 * the port's intr_conf (every PMD accepts intr_conf.rxq = 1):
 * - CQPOLL_ETHDEV_ARM_ENABLE: rte_eth_dev_rx_intr_enable() works (virtio,
 *   vhost). It is an edge arm: packets queued while disabled raise nothing,
 *   so the CQ is declared CQPOLL_ARM_EDGE and cqpoll_poll_and_arm() polls
 *   again after the enable and a full barrier. The event disables it again.
 * - CQPOLL_ETHDEV_ARM_ALWAYS: the queue has an event fd but no enable
 *   (rte_eth_dev_rx_intr_enable() returns -ENOTSUP; tap, whose fd is the
 *   queue's own tun fd): every packet queued raises an edge, none needs
 *   enabling. Also declared edge: a packet already queued raises no new one.
 * - CQPOLL_ETHDEV_ARM_NONE: no Rx interrupt (memif, af_packet, af_xdp):
 *   cqpoll_ethdev_cq_create() refuses the queue and says why.
 *
 * The event fd (cqpoll_cq_event_fd()) is an epoll fd of the driver's own in
 * which DPDK registered the queue's interrupt fd (rte_eth_dev_rx_intr_ctl_q(),
 * EPOLLET): the EAL never reads virtio's and vhost's eventfds, so only edge
 * waiting works on them.
 *
 * A signal-driven fd (O_ASYNC, as tap's: its Rx burst reads only after the
 * PMD's signal handler ran) is made to signal the thread that arms the CQ
 * (F_SETOWN_EX, F_OWNER_TID) at every arm: with the signal sent to the
 * process, a poller on a worker lcore can wake before the handler ran on
 * another thread, find the queue "empty" and sleep with the packet in it.
 *
 * The port must be configured with intr_conf.rxq = 1 and started before the
 * CQ is created, and the CQ destroyed before the port is stopped or closed.
 * Nothing else may enable, disable or wait on the queue's Rx interrupt, nor
 * call rte_eth_rx_burst() on it, while the CQ exists. See
 * doc/guides/ethdev-driver.md.
 *
 * Stable API of libcqpoll_dpdk (version node CQPOLL_DPDK_0.3).
 */

#include <stdbool.h>
#include <stdint.h>

#include "cqpoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a probed Rx queue arms (struct cqpoll_ethdev_probe::arm). */
enum cqpoll_ethdev_arm {
	/** No Rx interrupt: the queue cannot sleep, its CQ is refused. */
	CQPOLL_ETHDEV_ARM_NONE = 0,
	/** rte_eth_dev_rx_intr_enable() arms, for packets queued after it. */
	CQPOLL_ETHDEV_ARM_ENABLE,
	/** The fd is the queue: each packet queued raises an edge, no enable. */
	CQPOLL_ETHDEV_ARM_ALWAYS,
};

/** Longest reason of struct cqpoll_ethdev_probe, with its NUL. */
#define CQPOLL_ETHDEV_REASON_MAX 192

/** What cqpoll_ethdev_probe() found out about one Rx queue. */
struct cqpoll_ethdev_probe {
	enum cqpoll_ethdev_arm arm;   /**< How it arms; NONE: refused. */
	/** rte_eth_dev_rx_intr_ctl_q_get_fd(), or -1. Owned by the PMD. */
	int fd;
	/** The fd is signal-driven (O_ASYNC): its owner must be the poller. */
	bool signal_driven;
	/** The PMD's driver name (rte_eth_dev_info::driver_name). */
	char driver[32];
	/** Why ARM_NONE (names the missing Rx interrupt), or how it arms. */
	char reason[CQPOLL_ETHDEV_REASON_MAX];
};

/**
 * Find out whether and how an Rx queue can sleep. The probe enables and
 * disables the queue's interrupt once and registers its fd in a scratch
 * epoll set, then removes it: call it on a started port, outside any run.
 *
 * @param port_id
 *   A started port.
 * @param queue_id
 *   One of its Rx queues.
 * @param[out] pr
 *   What was found; reason always set.
 * @return
 *   0 when the queue can sleep (pr->arm is not NONE); -ENOTSUP when it has
 *   no Rx interrupt (pr->reason says which part is missing: no fd, fd not
 *   registrable, or interrupts not configured); -EINVAL for a bad port,
 *   queue or NULL @p pr; another -errno of a failing call. rte_errno is set.
 *
 * Thread safety: not with a CQ on the same queue, nor with another probe
 * or configuration of the port.
 */
int cqpoll_ethdev_probe(uint16_t port_id, uint16_t queue_id,
			struct cqpoll_ethdev_probe *pr);

/** Parameters of cqpoll_ethdev_cq_create(). */
struct cqpoll_ethdev_conf {
	uint32_t event_ack_batch; /**< 0: the build-time default. */
	uint32_t reserved;        /**< 0. */
};

/**
 * Wrap one Rx queue of a started port in a CQ.
 *
 * @param port_id
 *   A port configured with intr_conf.rxq = 1, started.
 * @param queue_id
 *   One of its Rx queues.
 * @param conf
 *   Parameters; NULL for the defaults.
 * @return
 *   The CQ, or NULL with errno and rte_errno set: ENOTSUP when the queue has
 *   no Rx interrupt (the reason, as cqpoll_ethdev_probe() gives it, is
 *   logged at ERR under pmd.cqpoll.ethdev), EINVAL (bad port, queue or
 *   conf), ENOMEM, or the errno of a failing call.
 *
 * Thread safety: safe from any thread, but not with another CQ, probe or
 * configuration of the same port.
 */
struct cqpoll_cq *cqpoll_ethdev_cq_create(uint16_t port_id, uint16_t queue_id,
					  const struct cqpoll_ethdev_conf *conf);

/**
 * The port and queue of an ethdev CQ.
 *
 * @param cq
 *   A CQ.
 * @param[out] port_id
 *   Its port; may be NULL.
 * @param[out] queue_id
 *   Its Rx queue; may be NULL.
 * @param[out] arm
 *   How it arms; may be NULL.
 * @return
 *   0, or -EINVAL if @p cq is NULL or not an ethdev CQ.
 *
 * Thread safety: safe from any thread while the CQ exists.
 */
int cqpoll_ethdev_cq_queue(const struct cqpoll_cq *cq, uint16_t *port_id,
			   uint16_t *queue_id, enum cqpoll_ethdev_arm *arm);

/**
 * Name of an arm kind: "none", "enable" or "always".
 *
 * @param arm
 *   The kind.
 * @return
 *   A static string; "unknown" for a value out of range.
 *
 * Thread safety: safe from any thread.
 */
const char *cqpoll_ethdev_arm_name(enum cqpoll_ethdev_arm arm);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_ETHDEV_H */
