/* SPDX-License-Identifier: BSD-3-Clause */
/* The UCX pair of testpmd-cq's ucx device and tpcq-peer's ucx peers. */
#include <string.h>

#include "ucx_pair.h"

static ucs_status_t
pair_ctx(const char *tls, ucp_context_h *ctx)
{
	ucp_params_t p = { .field_mask = UCP_PARAM_FIELD_FEATURES,
			   .features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP };
	ucp_config_t *cfg;
	ucs_status_t s;

	s = ucp_config_read(NULL, NULL, &cfg);
	if (s != UCS_OK)
		return s;
	/* Both sides the same transports (UCX_TLS); tcp over loopback only. */
	s = ucp_config_modify(cfg, "TLS", tls);
	if (s == UCS_OK && strcmp(tls, "tcp") == 0)
		s = ucp_config_modify(cfg, "NET_DEVICES", "lo");
	if (s == UCS_OK)
		s = ucp_init(&p, cfg, ctx);
	ucp_config_release(cfg);
	return s;
}

static ucs_status_t
pair_worker(ucp_context_h ctx, ucp_worker_h *w)
{
	ucp_worker_params_t p = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				  .thread_mode = UCS_THREAD_MODE_SINGLE };

	return ucp_worker_create(ctx, &p, w);
}

ucs_status_t
tpcq_ucx_pair_workers(struct tpcq_ucx_pair *up, const char *tls)
{
	ucs_status_t s;

	s = pair_ctx(tls, &up->ctx_a);
	if (s == UCS_OK)
		s = pair_ctx(tls, &up->ctx_b);
	if (s == UCS_OK)
		s = pair_worker(up->ctx_a, &up->a);
	if (s == UCS_OK)
		s = pair_worker(up->ctx_b, &up->b);
	return s;
}

/* An endpoint of @p from to @p to, from @p to's address. */
static ucs_status_t
pair_ep(ucp_worker_h from, ucp_worker_h to, ucp_ep_h *ep)
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

ucs_status_t
tpcq_ucx_pair_connect(struct tpcq_ucx_pair *up)
{
	ucs_status_t s;

	s = pair_ep(up->a, up->b, &up->ep_ab);
	if (s == UCS_OK)
		s = pair_ep(up->b, up->a, &up->ep_ba);
	return s;
}

ucs_status_t
tpcq_ucx_wait(ucp_worker_h w, ucp_worker_h other, ucs_status_ptr_t req)
{
	ucs_status_t s;

	if (req == NULL)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	do {
		ucp_worker_progress(w);
		if (other != NULL)
			ucp_worker_progress(other);
		s = ucp_request_check_status(req);
	} while (s == UCS_INPROGRESS);
	ucp_request_free(req);
	return s;
}

ucs_status_t
tpcq_ucx_pair_hello(struct tpcq_ucx_pair *up, void *buf_a, void *buf_b,
		    size_t len, uint64_t tag)
{
	ucp_request_param_t p = { .op_attr_mask = 0 };
	ucs_status_ptr_t rr, sr;
	ucs_status_t s;

	rr = ucp_tag_recv_nbx(up->b, buf_b, len, tag, UINT64_MAX, &p);
	sr = ucp_tag_send_nbx(up->ep_ab, buf_a, 1, tag, &p);
	s = tpcq_ucx_wait(up->a, up->b, sr);
	if (s == UCS_OK)
		s = tpcq_ucx_wait(up->b, up->a, rr);
	if (s != UCS_OK)
		return s;
	rr = ucp_tag_recv_nbx(up->a, buf_a, len, tag, UINT64_MAX, &p);
	sr = ucp_tag_send_nbx(up->ep_ba, buf_b, 1, tag, &p);
	s = tpcq_ucx_wait(up->b, up->a, sr);
	if (s == UCS_OK)
		s = tpcq_ucx_wait(up->a, up->b, rr);
	return s;
}

void
tpcq_ucx_pair_close(struct tpcq_ucx_pair *up)
{
	ucp_request_param_t p = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				  .flags = UCP_EP_CLOSE_FLAG_FORCE };

	if (up->ep_ab != NULL)
		tpcq_ucx_wait(up->a, up->b, ucp_ep_close_nbx(up->ep_ab, &p));
	if (up->ep_ba != NULL)
		tpcq_ucx_wait(up->b, up->a, ucp_ep_close_nbx(up->ep_ba, &p));
	if (up->a != NULL)
		ucp_worker_destroy(up->a);
	if (up->b != NULL)
		ucp_worker_destroy(up->b);
	if (up->ctx_a != NULL)
		ucp_cleanup(up->ctx_a);
	if (up->ctx_b != NULL)
		ucp_cleanup(up->ctx_b);
	memset(up, 0, sizeof(*up));
}
