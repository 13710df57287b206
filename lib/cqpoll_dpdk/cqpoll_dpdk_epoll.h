/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_DPDK_EPOLL_H
#define CQPOLL_DPDK_EPOLL_H

/**
 * @file
 * CQ events in DPDK's epoll (libcqpoll_dpdk): register a CQ's event fd in an
 * rte_epoll instance, typically the lcore's own (RTE_EPOLL_PER_THREAD), so
 * that one rte_epoll_wait() covers CQ events and ethdev Rx interrupts
 * (rte_eth_dev_rx_intr_ctl_q()).
 *
 * @code
 * e = cqpoll_dpdk_epoll_add_cq(RTE_EPOLL_PER_THREAD, cq, cq);
 * for (;;) {
 *     ...                                   // poll CQs and Rx queues
 *     while ((n = cqpoll_poll_and_arm(cq, c, 32)) > 0)
 *         process(c, n);
 *     rte_eth_dev_rx_intr_enable(port, queue);
 *     n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 8, 10);
 *     for (i = 0; i < n; i++)
 *         if (ev[i].epdata.data == cq)        // the data given at add
 *             cqpoll_cq_event_get(cq);         // then poll it
 * }
 * @endcode
 *
 * The rules of cqpoll_poll_and_arm() hold: sleep only after it returned 0 on
 * every CQ the thread serves, and consume events with
 * cqpoll_cq_event_get(), never by reading the fd. CQs sharing a completion
 * channel share one fd: register one of them, and on its event call
 * cqpoll_cq_event_get() on each.
 */

#include "cqpoll.h"
#include "cqpoll_group.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cqpoll_dpdk_epoll_cq;

/**
 * Add a CQ's event fd to an rte_epoll instance, for input events. The entry
 * is allocated on the calling lcore's NUMA socket.
 *
 * @param epfd
 *   The epoll instance, or RTE_EPOLL_PER_THREAD (-1) for the calling
 *   thread's, which is then the thread that must wait on it.
 * @param cq
 *   The CQ.
 * @param data
 *   Returned in rte_epoll_event::epdata.data of its events.
 * @return
 *   The registration, or NULL with rte_errno and errno set: EINVAL (NULL @p cq), ENOMEM,
 *   EEXIST (the fd is already in that instance), or another errno of
 *   rte_epoll_ctl() / epoll_ctl(2).
 *
 * Thread safety: any EAL thread; with RTE_EPOLL_PER_THREAD, the thread that
 * waits.
 */
struct cqpoll_dpdk_epoll_cq *
cqpoll_dpdk_epoll_add_cq(int epfd, struct cqpoll_cq *cq, void *data);

/**
 * Add a poll group's event fd (cqpoll_group_event_fd()) to an rte_epoll
 * instance, for input events, so that one rte_epoll_wait() covers every CQ
 * of the group and, say, ethdev Rx interrupts. Wait on the instance only
 * between cqpoll_group_sleep_prepare() returning 0 and
 * cqpoll_group_sleep_finish(), which consumes the group's events; the
 * entry is allocated on the calling lcore's NUMA socket.
 * @code
 * e = cqpoll_dpdk_epoll_add_group(RTE_EPOLL_PER_THREAD, g, g);
 * for (;;) {
 *     if (cqpoll_group_run_once(g) > 0 || rx_burst(...) > 0)
 *         continue;                         // group in busy mode
 *     if (cqpoll_group_sleep_prepare(g) != 0)
 *         continue;                         // work found while arming
 *     rte_eth_dev_rx_intr_enable(port, queue);
 *     rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 8, 10);
 *     rte_eth_dev_rx_intr_disable(port, queue);
 *     cqpoll_group_sleep_finish(g);         // whatever woke the thread
 * }
 * @endcode
 * @param epfd
 *   The epoll instance, or RTE_EPOLL_PER_THREAD (-1) for the calling
 *   thread's, which is then the thread that must wait on it.
 * @param g
 *   The group.
 * @param data
 *   Returned in rte_epoll_event::epdata.data of its events.
 * @return
 *   The registration (remove it with cqpoll_dpdk_epoll_del_cq()), or NULL
 *   with errno set: EINVAL (NULL @p g), ENOMEM, EEXIST, or another errno of
 *   rte_epoll_ctl() / epoll_ctl(2).
 * Thread safety: the group's thread.
 */
struct cqpoll_dpdk_epoll_cq *
cqpoll_dpdk_epoll_add_group(int epfd, struct cqpoll_group *g, void *data);

/**
 * Remove a CQ's (or a group's) event fd from the instance it was added to, and free the
 * registration. Events already returned by rte_epoll_wait() stay valid.
 *
 * @param e
 *   The registration; NULL is ignored.
 * @return
 *   0, or -errno of rte_epoll_ctl(), also in rte_errno (the registration is
 *   freed anyway).
 *
 * Thread safety: any EAL thread (the instance was resolved at add time);
 * while another thread waits on the instance, DPDK's rte_epoll_ctl() waits
 * for it to finish with this entry before it is freed.
 */
int cqpoll_dpdk_epoll_del_cq(struct cqpoll_dpdk_epoll_cq *e);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_DPDK_EPOLL_H */
