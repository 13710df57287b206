/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_OFI_TEST_H
#define CQPOLL_OFI_TEST_H

/*
 * The tests' libfabric "device": two reliable-datagram endpoints of one
 * provider over loopback, in one domain. A posts a send, B's receive
 * completes on the cqpoll CQ with the receive's context as wr_id. The
 * provider's own code writes the completion (tcp: a socket; shm: shared
 * memory), driven by its progress engine.
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

struct test_ofi {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_ep *ep_a, *ep_b;
	struct fid_cq *cq_a;      /* A's sends and receives */
	struct fid_cq *cq_b_tx;   /* B's sends (none) */
	fi_addr_t addr_b;
	char buf_a[TEST_OFI_BUF];
	char buf_b[TEST_OFI_BUF];
};

static inline int
test_ofi_fail(char *why, size_t len, const char *what, int r)
{
	snprintf(why, len, "%s: %s", what, fi_strerror(-r));
	return r < 0 ? r : -EIO;
}

static inline int
test_ofi_ep(struct test_ofi *t, struct fid_ep **ep, struct fid_cq *tx,
	    struct fid_cq *rx, char *why, size_t len)
{
	int r;

	r = fi_endpoint(t->domain, t->info, ep, NULL);
	if (r != 0)
		return test_ofi_fail(why, len, "fi_endpoint", r);
	r = fi_ep_bind(*ep, &t->av->fid, 0);
	if (r == 0)
		r = fi_ep_bind(*ep, &tx->fid, FI_TRANSMIT);
	if (r == 0)
		r = fi_ep_bind(*ep, &rx->fid, FI_RECV);
	if (r == 0)
		r = fi_enable(*ep);
	if (r != 0)
		return test_ofi_fail(why, len, "binding the endpoint", r);
	return 0;
}

/*
 * Fabric, domain, address vector and endpoint A of provider @p prov over
 * loopback. Returns 0, or < 0 with the reason in @p why (-ENODATA: no such
 * provider here).
 */
static inline int
test_ofi_open(struct test_ofi *t, const char *prov, char *why, size_t len)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	int r;

	memset(t, 0, sizeof(*t));
	if (hints == NULL)
		return test_ofi_fail(why, len, "fi_allocinfo", -FI_ENOMEM);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->mode = 0;           /* contexts are our integers, not fi_context */
	hints->domain_attr->mr_mode = 0;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->fabric_attr->prov_name = strdup(prov);
	r = fi_getinfo(FI_VERSION(1, 9), strcmp(prov, "shm") == 0 ? NULL : "127.0.0.1",
		       NULL, strcmp(prov, "shm") == 0 ? 0 : FI_SOURCE, hints, &t->info);
	fi_freeinfo(hints);
	if (r != 0) {
		snprintf(why, len, "fi_getinfo(%s, RDM, FI_MSG): %s: no such provider "
			 "here", prov, fi_strerror(-r));
		return -ENODATA;
	}
	r = fi_fabric(t->info->fabric_attr, &t->fabric, NULL);
	if (r != 0)
		return test_ofi_fail(why, len, "fi_fabric", r);
	r = fi_domain(t->fabric, t->info, &t->domain, NULL);
	if (r != 0)
		return test_ofi_fail(why, len, "fi_domain", r);
	r = fi_av_open(t->domain, &av_attr, &t->av, NULL);
	if (r != 0)
		return test_ofi_fail(why, len, "fi_av_open", r);
	r = fi_cq_open(t->domain, &cq_attr, &t->cq_a, NULL);
	if (r == 0)
		r = fi_cq_open(t->domain, &cq_attr, &t->cq_b_tx, NULL);
	if (r != 0)
		return test_ofi_fail(why, len, "fi_cq_open", r);
	return test_ofi_ep(t, &t->ep_a, t->cq_a, t->cq_a, why, len);
}

/* Endpoint B, receiving on @p cq; A learns its address. */
static inline int
test_ofi_attach(struct test_ofi *t, struct fid_cq *cq, char *why, size_t len)
{
	char name[256];
	size_t nlen = sizeof(name);
	int r;

	r = test_ofi_ep(t, &t->ep_b, t->cq_b_tx, cq, why, len);
	if (r != 0)
		return r;
	r = fi_getname(&t->ep_b->fid, name, &nlen);
	if (r != 0)
		return test_ofi_fail(why, len, "fi_getname", r);
	if (fi_av_insert(t->av, name, 1, &t->addr_b, 0, NULL) != 1)
		return test_ofi_fail(why, len, "fi_av_insert", -FI_EINVAL);
	return 0;
}

/*
 * Drive both endpoints' progress (manual with ofi_rxm over tcp): B accepts
 * A's connection, reads its messages. Neither CQ read takes a completion
 * of A's, and B's transmit CQ never holds any.
 */
static inline void
test_ofi_progress(struct test_ofi *t)
{
	struct fi_cq_data_entry e;

	fi_cq_read(t->cq_a, &e, 0);
	fi_cq_read(t->cq_b_tx, &e, 1);
}

/*
 * A receive of @p room bytes on B with context @p wr_id, then @p n bytes
 * sent to it from A.
 */
static inline int
test_ofi_post_room(struct test_ofi *t, uint64_t wr_id, size_t n, size_t room)
{
	struct fi_cq_data_entry e;
	ssize_t r;

	do {
		r = fi_recv(t->ep_b, t->buf_b, room, NULL, FI_ADDR_UNSPEC,
			    (void *)(uintptr_t)wr_id);
		if (r == -FI_EAGAIN)
			test_ofi_progress(t);
	} while (r == -FI_EAGAIN);
	if (r != 0)
		return (int)r;
	do {
		r = fi_send(t->ep_a, t->buf_a, n < sizeof(t->buf_a) ? n : sizeof(t->buf_a),
			    NULL, t->addr_b, NULL);
		if (r == -FI_EAGAIN)
			test_ofi_progress(t);
	} while (r == -FI_EAGAIN);
	if (r != 0)
		return (int)r;
	/* Until A's send completed. */
	while ((r = fi_cq_read(t->cq_a, &e, 1)) == -FI_EAGAIN)
		test_ofi_progress(t);
	return r == 1 ? 0 : (int)r;
}

static inline int
test_ofi_post(struct test_ofi *t, uint64_t wr_id, size_t n)
{
	return test_ofi_post_room(t, wr_id, n, sizeof(t->buf_b));
}

/* Endpoints first: a CQ still bound to one cannot be closed. */
static inline void
test_ofi_close_eps(struct test_ofi *t)
{
	if (t->ep_b != NULL)
		fi_close(&t->ep_b->fid);
	if (t->ep_a != NULL)
		fi_close(&t->ep_a->fid);
	t->ep_a = t->ep_b = NULL;
}

static inline void
test_ofi_close(struct test_ofi *t)
{
	test_ofi_close_eps(t);
	if (t->cq_a != NULL)
		fi_close(&t->cq_a->fid);
	if (t->cq_b_tx != NULL)
		fi_close(&t->cq_b_tx->fid);
	if (t->av != NULL)
		fi_close(&t->av->fid);
	if (t->domain != NULL)
		fi_close(&t->domain->fid);
	if (t->fabric != NULL)
		fi_close(&t->fabric->fid);
	if (t->info != NULL)
		fi_freeinfo(t->info);
	memset(t, 0, sizeof(*t));
}

#endif /* CQPOLL_OFI_TEST_H */
