/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_OFI_TEST_H
#define CQPOLL_OFI_TEST_H

/*
 * The tests' libfabric "device": two reliable-datagram endpoints of one
 * provider over loopback. A posts a send, B's receive completes on the
 * cqpoll CQ with the receive's context as wr_id. The provider's own code
 * writes the completion (tcp: from a socket), in B's progress.
 *
 * A and B live in separate fabrics and domains, so that the device side's
 * progress (A's) never runs B's: with manual progress, a completion that
 * another thread's progress writes into a CQ does not signal its wait
 * object (ofi_cq_write() in libfabric's utility code does not), so the
 * consumer must be the one thread progressing its endpoint, as libfabric's
 * wait model assumes. The connection is made once, at attach.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "cqpoll_ofi.h"

#define TEST_OFI_BUF 8192

struct test_ofi_side {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;        /* A: sends and receives; B: sends (none) */
};

struct test_ofi {
	struct fi_info *info;
	/* B's fabric and domain: open the cqpoll CQ on these. */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct test_ofi_side a, b;
	struct fid_ep *ep_a, *ep_b;
	fi_addr_t addr_b;
	char buf_a[TEST_OFI_BUF];
	char buf_b[TEST_OFI_BUF];
};

/*
 * Both sides of provider @p prov over loopback, and endpoint A. Returns 0,
 * or < 0 with the reason in @p why (-ENODATA: no such provider here).
 */
int test_ofi_open(struct test_ofi *t, const char *prov, char *why, size_t len);

/* B's progress, from the consumer's thread: through B's other CQ. */
void test_ofi_progress_b(struct test_ofi *t);

/*
 * A receive of @p room bytes on B with context @p wr_id, then @p n bytes
 * sent to it from A; returns once A's send completed.
 */
int test_ofi_post_room(struct test_ofi *t, uint64_t wr_id, size_t n, size_t room);

int test_ofi_post(struct test_ofi *t, uint64_t wr_id, size_t n);

/*
 * Endpoint B, receiving on @p cq; A learns its address, and the connection
 * is made with one message, read here from @p cq before the CQ is used.
 */
int test_ofi_attach(struct test_ofi *t, struct fid_cq *cq, char *why, size_t len);

/* Endpoints first: a CQ still bound to one cannot be closed. */
void test_ofi_close_eps(struct test_ofi *t);

void test_ofi_close(struct test_ofi *t);

#endif /* CQPOLL_OFI_TEST_H */
