/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric peers: the pair of testpmd-cq's ofi device (endpoint A sends,
 * B receives on its own CQ, separate fabrics and domains; the sender posts
 * B's receive and drives A's progress until its send completed), B's CQ
 * read with libfabric's own calls:
 *   spin   fi_cq_read() in a loop (what fi_pingpong does)
 *   sread  fi_cq_sread() on a CQ with FI_WAIT_UNSPEC
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

#include "ofi_side.h"
#include "peer.h"

struct ofi_peer {
	struct fi_info *info;
	struct tpcq_ofi_side a, b;
	struct fid_cq *rx;        /* B's receives: the CQ the peer waits on */
	struct fid_ep *ep_a, *ep_b;
	fi_addr_t addr_b;
	char buf_a[PEER_MSG];
	char buf_b[PEER_MSG];
};

static const char *const waits[] = { "spin", "sread", NULL };

static int
fail(const char *what, int r)
{
	fprintf(stderr, PEER_PROG ": ofi: %s: %s\n", what, fi_strerror(-r));
	return -EIO;
}

static int
side_open(struct ofi_peer *o, struct tpcq_ofi_side *s)
{
	int r = tpcq_ofi_side_open(o->info, s);

	return r != 0 ? fail("fabric, domain and queues", r) : 0;
}

static int
make_ep(struct ofi_peer *o, struct tpcq_ofi_side *s, struct fid_ep **ep,
	struct fid_cq *rx)
{
	int r = tpcq_ofi_side_ep(o->info, s, ep, rx);

	return r != 0 ? fail("endpoint", r) : 0;
}

static int
ofi_open(struct peer_run *run, void **priv)
{
	struct ofi_peer *o = calloc(1, sizeof(*o));
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_DATA };
	struct fi_cq_data_entry e;
	char name[256];
	size_t nlen = sizeof(name);
	bool got_a = false, got_b = false;
	ssize_t r;

	if (o == NULL || hints == NULL)
		return -ENOMEM;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->mode = 0;
	hints->domain_attr->mr_mode = 0;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->fabric_attr->prov_name = strdup(run->arg);
	r = fi_getinfo(FI_VERSION(1, 9), "127.0.0.1", NULL, FI_SOURCE, hints, &o->info);
	fi_freeinfo(hints);
	if (r != 0)
		return fail("fi_getinfo", (int)r);
	if (side_open(o, &o->a) != 0 || side_open(o, &o->b) != 0)
		return -EIO;
	cq.wait_obj = strcmp(run->wait, "sread") == 0 ? FI_WAIT_UNSPEC : FI_WAIT_NONE;
	r = fi_cq_open(o->b.domain, &cq, &o->rx, NULL);
	if (r != 0)
		return fail("fi_cq_open", (int)r);
	if (make_ep(o, &o->a, &o->ep_a, o->a.cq) != 0 ||
	    make_ep(o, &o->b, &o->ep_b, o->rx) != 0)
		return -EIO;
	r = fi_getname(&o->ep_b->fid, name, &nlen);
	if (r != 0 || fi_av_insert(o->a.av, name, 1, &o->addr_b, 0, NULL) != 1)
		return fail("address of B", r != 0 ? (int)r : -FI_EINVAL);
	/* One message at open: the connection, before the run. */
	r = fi_recv(o->ep_b, o->buf_b, sizeof(o->buf_b), NULL, FI_ADDR_UNSPEC, NULL);
	while (r == 0 && (r = fi_send(o->ep_a, o->buf_a, 1, NULL, o->addr_b, NULL)) == -FI_EAGAIN) {
		r = 0;
		fi_cq_read(o->a.cq, &e, 0);
		fi_cq_read(o->b.cq, &e, 0);
	}
	while (r == 0 && !(got_a && got_b)) {
		if (!got_a && fi_cq_read(o->a.cq, &e, 1) == 1)
			got_a = true;
		if (!got_b && fi_cq_read(o->rx, &e, 1) == 1)
			got_b = true;
	}
	if (r != 0)
		return fail("connecting", (int)r);
	*priv = o;
	return 0;
}

static int
ofi_send(void *priv, uint64_t seq)
{
	struct ofi_peer *o = priv;
	struct fi_cq_data_entry e;
	ssize_t r;

	do {
		r = fi_recv(o->ep_b, o->buf_b, sizeof(o->buf_b), NULL, FI_ADDR_UNSPEC,
			    (void *)(uintptr_t)seq);
	} while (r == -FI_EAGAIN);
	if (r != 0)
		return fail("fi_recv", (int)r);
	while ((r = fi_send(o->ep_a, o->buf_a, sizeof(o->buf_a), NULL, o->addr_b,
			    NULL)) == -FI_EAGAIN)
		fi_cq_read(o->a.cq, &e, 0);
	if (r != 0)
		return fail("fi_send", (int)r);
	while ((r = fi_cq_read(o->a.cq, &e, 1)) == -FI_EAGAIN)
		;
	return r == 1 ? 0 : fail("the send's completion", (int)r);
}

static int
ofi_receive(void *priv, struct peer_run *run)
{
	struct ofi_peer *o = priv;
	struct fi_cq_data_entry e[16];
	bool sread = strcmp(run->wait, "sread") == 0;
	uint64_t now;
	ssize_t r, i;

	while (!peer_stopping(run)) {
		/* A bounded wait: the end of the run is seen within 100 ms. */
		r = sread ? fi_cq_sread(o->rx, e, 16, NULL, 100) : fi_cq_read(o->rx, e, 16);
		if (r == -FI_EAGAIN || r == -FI_ETIMEDOUT)
			continue;
		if (r < 0)
			return fail(sread ? "fi_cq_sread" : "fi_cq_read", (int)r);
		now = peer_burst(run);
		for (i = 0; i < r; i++)
			peer_got(run, now, (uint64_t)(uintptr_t)e[i].op_context);
		peer_burst_done(run);
	}
	return 0;
}

static void
ofi_close(void *priv)
{
	struct ofi_peer *o = priv;

	fi_close(&o->ep_b->fid);
	fi_close(&o->ep_a->fid);
	fi_close(&o->rx->fid);
	tpcq_ofi_side_close(&o->a);
	tpcq_ofi_side_close(&o->b);
	fi_freeinfo(o->info);
	free(o);
}

const struct peer_transport peer_ofi = {
	.name = "ofi",
	.waits = waits,
	.open = ofi_open,
	.send = ofi_send,
	.kick = NULL,
	.receive = ofi_receive,
	.close = ofi_close,
};
