/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_ETHDEV_PRIVATE_H
#define CQPOLL_ETHDEV_PRIVATE_H

/*
 * ethdev driver internals. One consumer thread polls, arms and consumes
 * events; nothing here is shared with another thread but the PMD's own
 * state, which the PMD orders.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_log.h>

#include "cqpoll_alarm_private.h"
#include "cqpoll_clock.h"
#include "cqpoll_driver.h"
#include "cqpoll_ethdev.h"

struct cqpoll_ethdev_cq {
	/* Set at creation, read-only afterwards. */
	uint16_t port;
	uint16_t queue;
	enum cqpoll_ethdev_arm arm;
	bool signal_driven;
	int fd;                   /* the PMD's interrupt fd of the queue */
	int epfd;                 /* ours: fd registered by DPDK, EPOLLET */
	int wake_fd;              /* eventfd in epfd: the driver's wake-up */
	int owner_type;           /* signal-driven: the fd's owner to restore */
	pid_t owner_pid;
	/* Consumer thread only. */
	bool enabled;             /* ARM_ENABLE: the interrupt is enabled */
	/*
	 * The wait's safety-net timeout (ethdev_arm.c), a timerfd in epfd
	 * beside the queue's fd, opened at the first wait.
	 */
	struct cqpoll_alarm alarm;
	struct cqpoll_ethdev_cq *next; /* the list of queues taken */
};

extern int cqpoll_ethdev_logtype;

#define ETHDEV_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, (uint32_t)cqpoll_ethdev_logtype, \
		"CQPOLL_ETHDEV: " fmt "\n", ##__VA_ARGS__)

extern const struct cqpoll_driver_ops cqpoll_ethdev_ops;

int cqpoll_ethdev_poll(void *priv, struct cqpoll_completion *comps, unsigned int n);
int cqpoll_ethdev_arm(void *priv);
int cqpoll_ethdev_event_fd(void *priv);
int cqpoll_ethdev_event_get(void *priv);
int cqpoll_ethdev_wait(void *priv, int timeout_ms);
int cqpoll_ethdev_wake(void *priv);
void cqpoll_ethdev_disarm(struct cqpoll_ethdev_cq *q);

/* The probe, keeping the fd registered in a new epoll set (ethdev_probe.c). */
int cqpoll_ethdev_probe_keep(uint16_t port, uint16_t queue,
			     struct cqpoll_ethdev_probe *pr, int *epfd_out);

/* Set rte_errno and errno to err; returns -err. */
int cqpoll_ethdev_err(int err);

#endif /* CQPOLL_ETHDEV_PRIVATE_H */
