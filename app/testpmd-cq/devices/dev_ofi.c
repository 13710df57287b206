/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric: two reliable-datagram endpoints of one provider over loopback
 * (drivers/ofi). --dev=ofi:PROVIDER names the provider (tcp; shm where its
 * CQs have an fd wait object). Endpoint A sends, endpoint B receives; the
 * cqpoll CQ is B's receive CQ, and a completion's wr_id is the receive's
 * context, the sequence number. The generator posts the receive and the
 * send, and drives A's progress until the send completed; B's progress runs
 * only in the poller's reads and fi_trywait(). A and B are in separate
 * fabrics and domains so that A's progress never runs B's: with manual
 * progress a completion written by another thread's progress does not
 * signal the CQ's wait object (libfabric's ofi_cq_write() does not). The
 * connection is made at open, with one message.
 *
 * Latency is from the post time the generator records (host clock) to the
 * poller's read.
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

#include <cqpoll_ofi.h>

#include "dev.h"
#include "ofi_side.h"
#include "params.h"
#include "plugin.h"
#include "testpmd_cq.h"

/* Receives outstanding on B at most: bounded by the CQ it reports on. */
#define OFI_DEPTH 256

struct ofi_dev {
	const char *prov;
	struct fi_info *info;
	struct tpcq_ofi_side a, b;
	struct fid_ep *ep_a, *ep_b;
	fi_addr_t addr_b;
	char buf_a[TPCQ_BYTE_LEN];
	char buf_b[TPCQ_BYTE_LEN];
};

static int
ofi_fail(const struct ofi_dev *o, const char *what, int r)
{
	fprintf(stderr, TPCQ_PROG ": ofi:%s: %s: %s\n", o->prov, what, fi_strerror(-r));
	return r < 0 ? r : -EIO;
}

static int
ofi_side_open(struct ofi_dev *o, struct tpcq_ofi_side *s)
{
	int r = tpcq_ofi_side_open(o->info, s);

	return r != 0 ? ofi_fail(o, "opening the fabric, domain and queues", r) : 0;
}

static int
ofi_ep(struct ofi_dev *o, struct tpcq_ofi_side *s, struct fid_ep **ep,
       struct fid_cq *rx)
{
	int r = tpcq_ofi_side_ep(o->info, s, ep, rx);

	return r != 0 ? ofi_fail(o, "endpoint", r) : 0;
}

static void
ofi_free(struct ofi_dev *o, struct cqpoll_cq *cq)
{
	/* Endpoints before the CQs they are bound to. */
	if (o->ep_b != NULL)
		fi_close(&o->ep_b->fid);
	if (o->ep_a != NULL)
		fi_close(&o->ep_a->fid);
	cqpoll_cq_destroy(cq);
	tpcq_ofi_side_close(&o->a);
	tpcq_ofi_side_close(&o->b);
	if (o->info != NULL)
		fi_freeinfo(o->info);
	free(o);
}

static int
ofi_getinfo(struct ofi_dev *o)
{
	struct fi_info *hints = fi_allocinfo();
	bool shm = strcmp(o->prov, "shm") == 0;
	int r;

	if (hints == NULL)
		return ofi_fail(o, "fi_allocinfo", -FI_ENOMEM);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->mode = 0;          /* the context is our sequence number */
	hints->domain_attr->mr_mode = 0;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->fabric_attr->prov_name = strdup(o->prov);
	r = fi_getinfo(FI_VERSION(1, 9), shm ? NULL : "127.0.0.1", NULL,
		       shm ? 0 : FI_SOURCE, hints, &o->info);
	fi_freeinfo(hints);
	if (r != 0)
		fprintf(stderr, TPCQ_PROG ": ofi:%s: no such libfabric provider here "
			"with reliable datagrams and messages (fi_getinfo: %s)\n",
			o->prov, fi_strerror(-r));
	return r;
}

/* A's progress only, without taking A's completions. */
static void
ofi_progress(struct ofi_dev *o)
{
	struct fi_cq_data_entry e;

	fi_cq_read(o->a.cq, &e, 0);
}

/* One message from A to B at open: the connection, made before the run. */
static int
ofi_connect(struct ofi_dev *o, struct fid_cq *cq)
{
	struct fi_cq_data_entry e;
	bool got_a = false, got_b = false;
	ssize_t r;

	r = fi_recv(o->ep_b, o->buf_b, sizeof(o->buf_b), NULL, FI_ADDR_UNSPEC, NULL);
	while (r == 0) {
		r = fi_send(o->ep_a, o->buf_a, 1, NULL, o->addr_b, NULL);
		if (r != -FI_EAGAIN)
			break;
		r = 0;
		ofi_progress(o);
		fi_cq_read(o->b.cq, &e, 1);
	}
	while (r == 0 && !(got_a && got_b)) {
		if (!got_a && fi_cq_read(o->a.cq, &e, 1) == 1)
			got_a = true;
		if (!got_b && fi_cq_read(cq, &e, 1) == 1)
			got_b = true;
	}
	return r != 0 ? ofi_fail(o, "connecting the endpoints", (int)r) : 0;
}

static int
ofi_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	struct cqpoll_ofi_conf conf = { .size = p->size != 0 ? p->size : OFI_DEPTH };
	struct cqpoll_cq *cq = NULL;
	struct cqpoll_cq_info info;
	struct ofi_dev *o;
	char name[256];
	size_t nlen = sizeof(name);
	int r;

	o = calloc(1, sizeof(*o));
	if (o == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return -ENOMEM;
	}
	o->prov = p->ibdev;
	r = ofi_getinfo(o);
	if (r != 0)
		goto err;
	r = ofi_side_open(o, &o->a);
	if (r == 0)
		r = ofi_side_open(o, &o->b);
	if (r != 0)
		goto err;
	errno = 0;
	cq = cqpoll_ofi_cq_open(o->b.fabric, o->b.domain, &conf);
	if (cq == NULL) {
		r = errno != 0 ? -errno : -EIO;
		fprintf(stderr, TPCQ_PROG ": ofi:%s: cqpoll_ofi_cq_open: %s%s\n",
			o->prov, strerror(-r), r == -EOPNOTSUPP ?
			" (the provider's CQs have no fd wait object to sleep on)" : "");
		goto err;
	}
	r = ofi_ep(o, &o->a, &o->ep_a, o->a.cq);
	if (r == 0)
		r = ofi_ep(o, &o->b, &o->ep_b, cqpoll_ofi_cq_fid(cq));
	if (r != 0)
		goto err;
	r = fi_getname(&o->ep_b->fid, name, &nlen);
	if (r != 0) {
		r = ofi_fail(o, "fi_getname", r);
		goto err;
	}
	if (fi_av_insert(o->a.av, name, 1, &o->addr_b, 0, NULL) != 1) {
		r = ofi_fail(o, "fi_av_insert", -FI_EINVAL);
		goto err;
	}
	r = ofi_connect(o, cqpoll_ofi_cq_fid(cq));
	if (r != 0)
		goto err;
	cqpoll_cq_info_get(cq, &info);
	dc->cq = cq;
	dc->priv = o;
	dc->wr_id_mask = UINT64_MAX;
	dc->monotonic_ts = false;
	dc->max_outstanding = info.size != 0 && info.size < OFI_DEPTH ? info.size : OFI_DEPTH;
	dc->expect.opcode = CQPOLL_OP_RECV;
	dc->expect.qp_num = 0;
	dc->expect.byte_len = TPCQ_BYTE_LEN;
	dc->expect.check_byte_len = true;
	return 0;
err:
	ofi_free(o, cq);
	return r < 0 ? r : -EIO;
}

static int
ofi_post(struct tpcq_devctx *dc, uint64_t seq)
{
	struct ofi_dev *o = dc->priv;
	struct fi_cq_data_entry e;
	uint64_t consumed;
	ssize_t r;

	consumed = __atomic_load_n(dc->consumed, __ATOMIC_ACQUIRE);
	if (seq - consumed >= dc->max_outstanding)
		return -ENOSPC;
	/* B's progress is the poller's: a full receive queue waits for it. */
	r = fi_recv(o->ep_b, o->buf_b, sizeof(o->buf_b), NULL, FI_ADDR_UNSPEC,
		    (void *)(uintptr_t)seq);
	if (r == -FI_EAGAIN)
		return -ENOSPC;
	if (r != 0)
		return ofi_fail(o, "fi_recv", (int)r);
	while ((r = fi_send(o->ep_a, o->buf_a, sizeof(o->buf_a), NULL, o->addr_b,
			    NULL)) == -FI_EAGAIN)
		ofi_progress(o);
	if (r != 0)
		return ofi_fail(o, "fi_send", (int)r);
	while ((r = fi_cq_read(o->a.cq, &e, 1)) == -FI_EAGAIN)
		;
	if (r != 1)
		return ofi_fail(o, "the send's completion", (int)r);
	return 0;
}

static void
ofi_close(struct tpcq_devctx *dc)
{
	ofi_free(dc->priv, dc->cq);
}

const struct tpcq_dev tpcq_dev_ofi = {
	.name = "ofi",
	.help = "libfabric driver, two loopback endpoints of a provider: "
		"ofi:tcp (ofi:shm needs an fd wait object)",
	.takes_ibdev = true,
	.arms = 1u << CQPOLL_ARM_REPORT_MISSED,
	.default_arm = CQPOLL_ARM_REPORT_MISSED,
	.arm_help = "fi_trywait() says -FI_EAGAIN when completions may be pending",
	.faults = 0,
	.open = ofi_open,
	.post = ofi_post,
	.close = ofi_close,
};

static const struct tpcq_dev *const ofi_devs[] = { &tpcq_dev_ofi };

static const struct tpcq_plugin ofi_plugin = {
	.id = TPCQ_PLUGIN_ID,
	.devs = ofi_devs,
	.nb_devs = 1,
	.peer_process = &tpcq_dev_ofi_peer,
};

TPCQ_PLUGIN_EXPORT const struct tpcq_plugin *
tpcq_plugin_info(void)
{
	return &ofi_plugin;
}
