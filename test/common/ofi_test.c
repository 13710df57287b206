/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' libfabric pair: two loopback endpoints (ofi_test.h). */
#include "ofi_test.h"

static int
test_ofi_fail(char *why, size_t len, const char *what, int r)
{
	snprintf(why, len, "%s: %s", what, fi_strerror(-r));
	return r < 0 ? r : -EIO;
}

static int
test_ofi_side_open(struct test_ofi *t, struct test_ofi_side *s, char *why,
		   size_t len)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	int r;

	r = fi_fabric(t->info->fabric_attr, &s->fabric, NULL);
	if (r == 0)
		r = fi_domain(s->fabric, t->info, &s->domain, NULL);
	if (r == 0)
		r = fi_av_open(s->domain, &av_attr, &s->av, NULL);
	if (r == 0)
		r = fi_cq_open(s->domain, &cq_attr, &s->cq, NULL);
	if (r != 0)
		return test_ofi_fail(why, len, "opening fabric, domain, AV and CQ", r);
	return 0;
}

static int
test_ofi_ep(struct test_ofi *t, struct test_ofi_side *s, struct fid_ep **ep,
	    struct fid_cq *rx, char *why, size_t len)
{
	int r;

	r = fi_endpoint(s->domain, t->info, ep, NULL);
	if (r != 0)
		return test_ofi_fail(why, len, "fi_endpoint", r);
	r = fi_ep_bind(*ep, &s->av->fid, 0);
	if (r == 0)
		r = fi_ep_bind(*ep, &s->cq->fid, FI_TRANSMIT);
	if (r == 0)
		r = fi_ep_bind(*ep, &rx->fid, FI_RECV);
	if (r == 0)
		r = fi_enable(*ep);
	if (r != 0)
		return test_ofi_fail(why, len, "binding the endpoint", r);
	return 0;
}

int
test_ofi_open(struct test_ofi *t, const char *prov, char *why, size_t len)
{
	struct fi_info *hints = fi_allocinfo();
	bool shm = strcmp(prov, "shm") == 0;
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
	r = fi_getinfo(FI_VERSION(1, 9), shm ? NULL : "127.0.0.1", NULL,
		       shm ? 0 : FI_SOURCE, hints, &t->info);
	fi_freeinfo(hints);
	if (r != 0) {
		snprintf(why, len, "fi_getinfo(%s, RDM, FI_MSG): %s: no such provider "
			 "here", prov, fi_strerror(-r));
		return -ENODATA;
	}
	r = test_ofi_side_open(t, &t->a, why, len);
	if (r == 0)
		r = test_ofi_side_open(t, &t->b, why, len);
	if (r != 0)
		return r;
	t->fabric = t->b.fabric;
	t->domain = t->b.domain;
	return test_ofi_ep(t, &t->a, &t->ep_a, t->a.cq, why, len);
}

/* A's progress only: sends go out, A's completions come in. */
static void
test_ofi_progress(struct test_ofi *t)
{
	struct fi_cq_data_entry e;

	fi_cq_read(t->a.cq, &e, 0);
}

void
test_ofi_progress_b(struct test_ofi *t)
{
	struct fi_cq_data_entry e;

	fi_cq_read(t->b.cq, &e, 1);
}

int
test_ofi_post_room(struct test_ofi *t, uint64_t wr_id, size_t n, size_t room)
{
	struct fi_cq_data_entry e;
	ssize_t r;

	do {
		r = fi_recv(t->ep_b, t->buf_b, room, NULL, FI_ADDR_UNSPEC,
			    (void *)(uintptr_t)wr_id);
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
	while ((r = fi_cq_read(t->a.cq, &e, 1)) == -FI_EAGAIN)
		;
	return r == 1 ? 0 : (int)r;
}

int
test_ofi_post(struct test_ofi *t, uint64_t wr_id, size_t n)
{
	return test_ofi_post_room(t, wr_id, n, sizeof(t->buf_b));
}

int
test_ofi_attach(struct test_ofi *t, struct fid_cq *cq, char *why, size_t len)
{
	struct fi_cq_data_entry e;
	char name[256];
	size_t nlen = sizeof(name);
	ssize_t r;
	int got_a = 0, got_b = 0;

	r = test_ofi_ep(t, &t->b, &t->ep_b, cq, why, len);
	if (r != 0)
		return (int)r;
	r = fi_getname(&t->ep_b->fid, name, &nlen);
	if (r != 0)
		return test_ofi_fail(why, len, "fi_getname", (int)r);
	if (fi_av_insert(t->a.av, name, 1, &t->addr_b, 0, NULL) != 1)
		return test_ofi_fail(why, len, "fi_av_insert", -FI_EINVAL);
	r = fi_recv(t->ep_b, t->buf_b, sizeof(t->buf_b), NULL, FI_ADDR_UNSPEC, NULL);
	while (r == 0) {
		r = fi_send(t->ep_a, t->buf_a, 1, NULL, t->addr_b, NULL);
		if (r != -FI_EAGAIN)
			break;
		r = 0;
		test_ofi_progress(t);
		test_ofi_progress_b(t);
	}
	while (r == 0 && !(got_a && got_b)) {
		if (!got_a && fi_cq_read(t->a.cq, &e, 1) == 1)
			got_a = 1;
		if (!got_b && fi_cq_read(cq, &e, 1) == 1)
			got_b = 1;
	}
	if (r != 0)
		return test_ofi_fail(why, len, "connecting A to B", (int)r);
	return 0;
}

void
test_ofi_close_eps(struct test_ofi *t)
{
	if (t->ep_b != NULL)
		fi_close(&t->ep_b->fid);
	if (t->ep_a != NULL)
		fi_close(&t->ep_a->fid);
	t->ep_a = t->ep_b = NULL;
}

static void
test_ofi_side_close(struct test_ofi_side *s)
{
	if (s->cq != NULL)
		fi_close(&s->cq->fid);
	if (s->av != NULL)
		fi_close(&s->av->fid);
	if (s->domain != NULL)
		fi_close(&s->domain->fid);
	if (s->fabric != NULL)
		fi_close(&s->fabric->fid);
}

void
test_ofi_close(struct test_ofi *t)
{
	test_ofi_close_eps(t);
	test_ofi_side_close(&t->a);
	test_ofi_side_close(&t->b);
	if (t->info != NULL)
		fi_freeinfo(t->info);
	memset(t, 0, sizeof(*t));
}
