/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_UCX_TEST_H
#define CQPOLL_UCX_TEST_H

/*
 * The tests' UCX "device": two UCP workers of one transport (tcp over lo,
 * posix or sysv shared memory), each in its own context, so that the
 * device side (worker A, the sender) never progresses the consumer's worker
 * B, the cqpoll CQ's. A sends a tagged message, tag = the sequence number;
 * B's receive for that tag, posted by the consumer through the driver,
 * completes in B's progress with the receive's wr_id. The first exchange
 * (both directions) is made at attach, before any sleep: a tcp endpoint
 * still connecting keeps the worker's fd readable.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ucp/api/ucp.h>

#include "cqpoll_ucx.h"

#define TEST_UCX_BUF 8192
/* Receives the consumer keeps posted ahead of the device's sends. */
#define TEST_UCX_WINDOW 64
/* The tag of the first exchange; sequence numbers stay below it. */
#define TEST_UCX_HELLO (1ull << 62)

struct test_ucx {
	const char *tls;
	ucp_context_h ctx_a, ctx_b;
	ucp_worker_h a, b;        /* A: the device's; B: the CQ's */
	ucp_ep_h ep_ab, ep_ba;
	uint64_t next_recv;       /* consumer: receives posted for 0 .. next_recv - 1 */
	uint64_t tag_base;        /* or'ed into their tags and wr_ids */
	char buf_a[TEST_UCX_BUF];
	char buf_b[TEST_UCX_WINDOW][TEST_UCX_BUF];
};

/* A context over transport @p tls with tags and wake-ups. */
ucs_status_t test_ucx_ctx(const char *tls, ucp_context_h *ctx);
ucs_status_t test_ucx_worker(ucp_context_h ctx, ucp_worker_h *w);

/*
 * Both contexts, workers and endpoints over transport @p tls. 0, or < 0
 * with the reason in @p why (-ENODATA: the transport does not run here).
 */
int test_ucx_open(struct test_ucx *t, const char *tls, char *why, size_t len);

/* Wait for request @p r of worker @p w (and progress @p other too, if any). */
ucs_status_t test_ucx_wait(ucp_worker_h w, ucp_worker_h other, ucs_status_ptr_t r);

/*
 * One message each way, outside the CQ, both workers progressed here: the
 * connections are up before the CQ is used.
 */
int test_ucx_hello(struct test_ucx *t, char *why, size_t len);

/* Consumer: B's receives for sequence numbers up to @p upto - 1. */
int test_ucx_post_recvs(struct test_ucx *t, struct cqpoll_cq *cq, uint64_t upto);

/* Device: @p n bytes from A with tag @p seq; returns once A's send completed. */
int test_ucx_send(struct test_ucx *t, uint64_t seq, size_t n);

void test_ucx_close(struct test_ucx *t);

#endif /* CQPOLL_UCX_TEST_H */
