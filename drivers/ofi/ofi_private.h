/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_OFI_PRIVATE_H
#define CQPOLL_OFI_PRIVATE_H

/*
 * libfabric driver internals; only the consumer thread touches them, but
 * for the wake-up (ofi_cq.c), which reads fields set before the handle.
 */

#include <poll.h>
#include <stdbool.h>

#include "cqpoll_alarm_private.h"
#include "cqpoll_clock.h"
#include "cqpoll_driver.h"
#include "cqpoll_ofi.h"

#define OFI_ERRMSG_MAX 256

/*
 * Empty polls between two looks at the EQs of a CQ that is only polled
 * (a busy group never arms): a look is a system call on tcp (its EQ read
 * runs the connection manager's epoll), a poll is not.
 */
#define OFI_EQ_CHECK_EVERY 256

struct cqpoll_ofi_cq {
	struct fid_fabric *fabric;
	struct fid_cq *cq;
	struct cqpoll_cq *handle;    /* set once cqpoll_cq_alloc() returned */
	int fd;                      /* the event fd: cq_fd, or epfd with EQs */
	int cq_fd;                   /* the CQ's wait object */
	int epfd;                    /* epoll over cq_fd and the EQs' fds; -1 */
	uint32_t n_eqs;
	uint32_t empty_polls;        /* since the EQs were last read */
	bool eq_due;                 /* read the EQs at the next empty poll */
	bool shut;                   /* an EQ reported the peer gone */
	bool can_signal;             /* fi_cq_signal() works: the wake-up */
	/* The wait's safety-net timeout (ofi_cq.c), opened at the first wait. */
	struct cqpoll_alarm alarm;
	struct fid_eq *eqs[CQPOLL_OFI_EQ_MAX];
	/* fi_trywait()'s set: the CQ, then the EQs. */
	struct fid *wait_fids[1 + CQPOLL_OFI_EQ_MAX];
	char errmsg[OFI_ERRMSG_MAX]; /* provider message of the last error entry */
};

extern const struct cqpoll_driver_ops cqpoll_ofi_ops;

int cqpoll_ofi_poll(void *priv, struct cqpoll_completion *comps, unsigned int n);

/* ofi_eq.c */
int cqpoll_ofi_eq_setup(struct cqpoll_ofi_cq *q, const struct cqpoll_ofi_conf *conf);
void cqpoll_ofi_eq_teardown(struct cqpoll_ofi_cq *q);
void cqpoll_ofi_eq_check(struct cqpoll_ofi_cq *q);

#endif /* CQPOLL_OFI_PRIVATE_H */
