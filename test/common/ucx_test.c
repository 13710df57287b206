/* SPDX-License-Identifier: BSD-3-Clause */
/* The tests' UCX pair: two workers over one transport (ucx_test.h). */
#include "ucx_test.h"

static int
test_ucx_fail(char *why, size_t len, const char *what, ucs_status_t s)
{
	snprintf(why, len, "%s: %s", what, ucs_status_string(s));
	return -EIO;
}

ucs_status_t
test_ucx_ctx(const char *tls, ucp_context_h *ctx)
{
	ucp_params_t p = { .field_mask = UCP_PARAM_FIELD_FEATURES,
			   .features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP };
	ucp_config_t *cfg;
	ucs_status_t s;

	s = ucp_config_read(NULL, NULL, &cfg);
	if (s != UCS_OK)
		return s;
	/* Both sides the same transports; tcp over loopback only. */
	s = ucp_config_modify(cfg, "TLS", tls);
	if (s == UCS_OK && strcmp(tls, "tcp") == 0)
		s = ucp_config_modify(cfg, "NET_DEVICES", "lo");
	/* Eager only: a send completes without the receiver's progress. */
	if (s == UCS_OK)
		s = ucp_config_modify(cfg, "RNDV_THRESH", "inf");
	/*
	 * Room in a shared-memory FIFO for a full CQ's worth of unread
	 * messages (64 by default): a sender finds a full FIFO otherwise, and
	 * its send waits for the receiver's progress.
	 */
	/* (A transport's own setting: read from the environment at iface open.) */
	setenv("UCX_POSIX_FIFO_SIZE", "256", 0);
	setenv("UCX_SYSV_FIFO_SIZE", "256", 0);
	if (s == UCS_OK)
		s = ucp_init(&p, cfg, ctx);
	ucp_config_release(cfg);
	return s;
}

ucs_status_t
test_ucx_worker(ucp_context_h ctx, ucp_worker_h *w)
{
	ucp_worker_params_t p = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				  .thread_mode = UCS_THREAD_MODE_SINGLE };

	return ucp_worker_create(ctx, &p, w);
}

static ucs_status_t
test_ucx_ep(ucp_worker_h from, ucp_worker_h to, ucp_ep_h *ep)
{
	ucp_ep_params_t p = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS };
	ucp_address_t *addr;
	size_t alen;
	ucs_status_t s;

	s = ucp_worker_get_address(to, &addr, &alen);
	if (s != UCS_OK)
		return s;
	p.address = addr;
	s = ucp_ep_create(from, &p, ep);
	ucp_worker_release_address(to, addr);
	return s;
}

int
test_ucx_open(struct test_ucx *t, const char *tls, char *why, size_t len)
{
	ucs_status_t s;

	memset(t, 0, sizeof(*t));
	t->tls = tls;
	s = test_ucx_ctx(tls, &t->ctx_a);
	if (s == UCS_OK)
		s = test_ucx_ctx(tls, &t->ctx_b);
	if (s != UCS_OK) {
		test_ucx_fail(why, len, "ucp_init", s);
		return -ENODATA;
	}
	s = test_ucx_worker(t->ctx_a, &t->a);
	if (s == UCS_OK)
		s = test_ucx_worker(t->ctx_b, &t->b);
	if (s != UCS_OK)
		return test_ucx_fail(why, len, "ucp_worker_create", s);
	s = test_ucx_ep(t->a, t->b, &t->ep_ab);
	if (s == UCS_OK)
		s = test_ucx_ep(t->b, t->a, &t->ep_ba);
	if (s != UCS_OK) {
		test_ucx_fail(why, len, "ucp_ep_create", s);
		return -ENODATA;
	}
	return 0;
}

ucs_status_t
test_ucx_wait(ucp_worker_h w, ucp_worker_h other, ucs_status_ptr_t r)
{
	ucs_status_t s;
	time_t t0;

	if (r == NULL)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(r))
		return UCS_PTR_STATUS(r);
	t0 = time(NULL);
	do {
		ucp_worker_progress(w);
		if (other != NULL)
			ucp_worker_progress(other);
		s = ucp_request_check_status(r);
	} while (s == UCS_INPROGRESS && time(NULL) - t0 < 10);
	/* A test that waited 10 s for one request fails; the request leaks. */
	if (s == UCS_INPROGRESS)
		return UCS_ERR_TIMED_OUT;
	ucp_request_free(r);
	return s;
}

int
test_ucx_hello(struct test_ucx *t, char *why, size_t len)
{
	ucp_request_param_t p = { .op_attr_mask = 0 };
	ucs_status_ptr_t rr, sr;
	ucs_status_t s;

	rr = ucp_tag_recv_nbx(t->b, t->buf_b[0], TEST_UCX_BUF, TEST_UCX_HELLO,
			      UINT64_MAX, &p);
	sr = ucp_tag_send_nbx(t->ep_ab, t->buf_a, 1, TEST_UCX_HELLO, &p);
	s = test_ucx_wait(t->a, t->b, sr);
	if (s == UCS_OK)
		s = test_ucx_wait(t->b, t->a, rr);
	if (s != UCS_OK)
		return test_ucx_fail(why, len, "first exchange A to B", s);
	rr = ucp_tag_recv_nbx(t->a, t->buf_a, TEST_UCX_BUF, TEST_UCX_HELLO,
			      UINT64_MAX, &p);
	sr = ucp_tag_send_nbx(t->ep_ba, t->buf_b[0], 1, TEST_UCX_HELLO, &p);
	s = test_ucx_wait(t->b, t->a, sr);
	if (s == UCS_OK)
		s = test_ucx_wait(t->a, t->b, rr);
	if (s != UCS_OK)
		return test_ucx_fail(why, len, "first exchange B to A", s);
	return 0;
}

int
test_ucx_post_recvs(struct test_ucx *t, struct cqpoll_cq *cq, uint64_t upto)
{
	int r;

	while (t->next_recv < upto) {
		r = cqpoll_ucx_tag_recv(cq, t->buf_b[t->next_recv % TEST_UCX_WINDOW],
					TEST_UCX_BUF, t->tag_base | t->next_recv,
					UINT64_MAX, t->tag_base | t->next_recv);
		if (r != 0)
			return r;
		t->next_recv++;
	}
	return 0;
}

int
test_ucx_send(struct test_ucx *t, uint64_t seq, size_t n)
{
	ucp_request_param_t p = { .op_attr_mask = 0 };
	ucs_status_t s;

	s = test_ucx_wait(t->a, NULL, ucp_tag_send_nbx(t->ep_ab, t->buf_a,
			  n < TEST_UCX_BUF ? n : TEST_UCX_BUF, seq, &p));
	return s == UCS_OK ? 0 : -EIO;
}

/* Close an endpoint, progressing both workers until it is gone. */
static void
test_ucx_ep_close(struct test_ucx *t, ucp_worker_h w, ucp_ep_h ep)
{
	ucp_request_param_t p = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				  .flags = UCP_EP_CLOSE_FLAG_FORCE };

	if (ep != NULL)
		test_ucx_wait(w, w == t->a ? t->b : t->a, ucp_ep_close_nbx(ep, &p));
}

/* Endpoints first; the CQ of B must be destroyed before test_ucx_close(). */
static void
test_ucx_close_eps(struct test_ucx *t)
{
	test_ucx_ep_close(t, t->a, t->ep_ab);
	test_ucx_ep_close(t, t->b, t->ep_ba);
	t->ep_ab = t->ep_ba = NULL;
}

void
test_ucx_close(struct test_ucx *t)
{
	test_ucx_close_eps(t);
	if (t->a != NULL)
		ucp_worker_destroy(t->a);
	if (t->b != NULL)
		ucp_worker_destroy(t->b);
	if (t->ctx_a != NULL)
		ucp_cleanup(t->ctx_a);
	if (t->ctx_b != NULL)
		ucp_cleanup(t->ctx_b);
	memset(t, 0, sizeof(*t));
}
