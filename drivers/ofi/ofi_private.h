/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_OFI_PRIVATE_H
#define CQPOLL_OFI_PRIVATE_H

/* libfabric driver internals; only the consumer thread touches them. */

#include <poll.h>

#include "cqpoll_driver.h"
#include "cqpoll_ofi.h"

#define OFI_ERRMSG_MAX 256

struct cqpoll_ofi_cq {
	struct fid_fabric *fabric;
	struct fid_cq *cq;
	int fd;                      /* the CQ's wait object */
	char errmsg[OFI_ERRMSG_MAX]; /* provider message of the last error entry */
};

extern const struct cqpoll_driver_ops cqpoll_ofi_ops;

int cqpoll_ofi_poll(void *priv, struct cqpoll_completion *comps, unsigned int n);

#endif /* CQPOLL_OFI_PRIVATE_H */
