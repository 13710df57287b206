/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UCX peers: the pair of testpmd-cq's ucx device (two contexts and workers,
 * A sends a tagged message, tag = sequence number, B holds a receive for
 * each tag in the window), B waited on with UCX's own calls and nothing of
 * cqpoll:
 *   busy  ucp_worker_progress() in a loop
 *   wait  progress until it finds nothing, then ucp_worker_wait() (which
 *         arms the worker and sleeps on its fd unless the arm says BUSY)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "peer.h"

#define HELLO (1ull << 62)

struct ucx_peer;

struct ucx_slot {
	struct ucx_peer *u;
	void *req;                /* a receive in flight, else NULL */
};

struct ucx_peer {
	struct peer_run *r;
	struct ucx_slot slots[PEER_WINDOW];
	ucp_context_h ctx_a, ctx_b;
	ucp_worker_h a, b;
	ucp_ep_h ep_ab, ep_ba;
	uint64_t done[PEER_WINDOW]; /* receiver: completed, not yet counted */
	unsigned int ndone;
	char buf_a[PEER_MSG];
	char buf_b[PEER_WINDOW][PEER_MSG];
};

static const char *const waits[] = { "busy", "wait", NULL };

static ucs_status_t
make_worker(const char *tls, ucp_context_h *ctx, ucp_worker_h *w)
{
	ucp_params_t p = { .field_mask = UCP_PARAM_FIELD_FEATURES,
			   .features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP };
	ucp_worker_params_t wp = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				   .thread_mode = UCS_THREAD_MODE_SINGLE };
	ucp_config_t *cfg;
	ucs_status_t s;

	s = ucp_config_read(NULL, NULL, &cfg);
	if (s != UCS_OK)
		return s;
	s = ucp_config_modify(cfg, "TLS", tls);
	if (s == UCS_OK && strcmp(tls, "tcp") == 0)
		s = ucp_config_modify(cfg, "NET_DEVICES", "lo");
	if (s == UCS_OK)
		s = ucp_init(&p, cfg, ctx);
	ucp_config_release(cfg);
	if (s == UCS_OK)
		s = ucp_worker_create(*ctx, &wp, w);
	return s;
}

static ucs_status_t
make_ep(ucp_worker_h from, ucp_worker_h to, ucp_ep_h *ep)
{
	ucp_ep_params_t p = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS };
	ucp_address_t *addr;
	size_t len;
	ucs_status_t s;

	s = ucp_worker_get_address(to, &addr, &len);
	if (s != UCS_OK)
		return s;
	p.address = addr;
	s = ucp_ep_create(from, &p, ep);
	ucp_worker_release_address(to, addr);
	return s;
}

static ucs_status_t
wait_req(ucp_worker_h w, ucp_worker_h other, ucs_status_ptr_t req)
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

static void
recv_cb(void *req, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user)
{
	struct ucx_slot *sl = user;
	struct ucx_peer *u = sl->u;

	sl->req = NULL;
	if (status == UCS_OK && info != NULL && u->ndone < PEER_WINDOW)
		u->done[u->ndone++] = info->sender_tag;
	ucp_request_free(req);
}

static int
post_recv(struct ucx_peer *u, uint64_t seq)
{
	struct ucx_slot *sl = &u->slots[seq % PEER_WINDOW];
	ucp_tag_recv_info_t info;
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
			UCP_OP_ATTR_FIELD_RECV_INFO,
		.cb.recv = recv_cb, .user_data = sl, .recv_info.tag_info = &info,
	};
	ucs_status_ptr_t req;

	sl->u = u;
	sl->req = (void *)1; /* in flight until the callback says otherwise */

	req = ucp_tag_recv_nbx(u->b, u->buf_b[seq % PEER_WINDOW], PEER_MSG, seq,
			       UINT64_MAX, &p);
	if (req == NULL || UCS_PTR_IS_ERR(req)) {
		sl->req = NULL;
		if (req == NULL && u->ndone < PEER_WINDOW)
			u->done[u->ndone++] = info.sender_tag;  /* completed at once */
	} else if (sl->req != NULL) {
		sl->req = req;
	}
	return UCS_PTR_IS_ERR(req) ? -EIO : 0;
}

static int
ucx_open(struct peer_run *r, void **priv)
{
	struct ucx_peer *u = calloc(1, sizeof(*u));
	ucp_request_param_t p = { .op_attr_mask = 0 };
	ucs_status_ptr_t rr, sr;
	ucs_status_t s;
	uint64_t i;

	if (u == NULL)
		return -ENOMEM;
	u->r = r;
	s = make_worker(r->arg, &u->ctx_a, &u->a);
	if (s == UCS_OK)
		s = make_worker(r->arg, &u->ctx_b, &u->b);
	if (s == UCS_OK)
		s = make_ep(u->a, u->b, &u->ep_ab);
	if (s == UCS_OK)
		s = make_ep(u->b, u->a, &u->ep_ba);
	if (s == UCS_OK) {
		/* The first exchange both ways: tcp connections up before waiting. */
		rr = ucp_tag_recv_nbx(u->b, u->buf_b[0], PEER_MSG, HELLO, UINT64_MAX, &p);
		sr = ucp_tag_send_nbx(u->ep_ab, u->buf_a, 1, HELLO, &p);
		s = wait_req(u->a, u->b, sr);
		if (s == UCS_OK)
			s = wait_req(u->b, u->a, rr);
		rr = ucp_tag_recv_nbx(u->a, u->buf_a, PEER_MSG, HELLO, UINT64_MAX, &p);
		sr = ucp_tag_send_nbx(u->ep_ba, u->buf_b[0], 1, HELLO, &p);
		if (s == UCS_OK)
			s = wait_req(u->b, u->a, sr);
		if (s == UCS_OK)
			s = wait_req(u->a, u->b, rr);
	}
	if (s != UCS_OK) {
		fprintf(stderr, PEER_PROG ": ucx:%s: %s\n", r->arg, ucs_status_string(s));
		free(u);
		return -EIO;
	}
	for (i = 0; i < PEER_WINDOW; i++)
		if (post_recv(u, i) != 0)
			return -EIO;
	*priv = u;
	return 0;
}

static int
ucx_send(void *priv, uint64_t seq)
{
	struct ucx_peer *u = priv;
	ucp_request_param_t p = { .op_attr_mask = 0 };

	return wait_req(u->a, NULL, ucp_tag_send_nbx(u->ep_ab, u->buf_a, PEER_MSG,
						     seq, &p)) == UCS_OK ? 0 : -EIO;
}

static void
ucx_kick(void *priv)
{
	struct ucx_peer *u = priv;

	ucp_worker_signal(u->b);
}

/* Count what completed, and post the receives a window further on. */
static int
drain(struct ucx_peer *u)
{
	unsigned int i, n = u->ndone;
	uint64_t seq[PEER_WINDOW];

	memcpy(seq, u->done, n * sizeof(seq[0]));
	u->ndone = 0;
	for (i = 0; i < n; i++) {
		peer_got(u->r, seq[i]);
		if (post_recv(u, seq[i] + PEER_WINDOW) != 0)
			return -EIO;
	}
	return (int)n;
}

static int
ucx_receive(void *priv, struct peer_run *r)
{
	struct ucx_peer *u = priv;
	bool wait = strcmp(r->wait, "wait") == 0;
	ucs_status_t s;

	while (!peer_stopping(r)) {
		if (ucp_worker_progress(u->b) != 0 || u->ndone != 0) {
			if (drain(u) < 0)
				return -EIO;
			continue;
		}
		if (!wait)
			continue;
		s = ucp_worker_wait(u->b);
		if (s != UCS_OK)
			return -EIO;
	}
	return drain(u) < 0 ? -EIO : 0;
}

static void
ucx_close(void *priv)
{
	struct ucx_peer *u = priv;
	ucp_request_param_t p = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				  .flags = UCP_EP_CLOSE_FLAG_FORCE };

	unsigned int i;
	int spins;

	/* Receives still posted: cancelled, their callbacks run, then released. */
	for (i = 0; i < PEER_WINDOW; i++)
		if (u->slots[i].req != NULL)
			ucp_request_cancel(u->b, u->slots[i].req);
	for (spins = 0; spins < 100000; spins++) {
		for (i = 0; i < PEER_WINDOW && u->slots[i].req == NULL; i++)
			;
		if (i == PEER_WINDOW)
			break;
		ucp_worker_progress(u->b);
	}
	wait_req(u->a, u->b, ucp_ep_close_nbx(u->ep_ab, &p));
	wait_req(u->b, u->a, ucp_ep_close_nbx(u->ep_ba, &p));
	ucp_worker_destroy(u->a);
	ucp_worker_destroy(u->b);
	ucp_cleanup(u->ctx_a);
	ucp_cleanup(u->ctx_b);
	free(u);
}

const struct peer_transport peer_ucx = {
	.name = "ucx",
	.waits = waits,
	.open = ucx_open,
	.send = ucx_send,
	.kick = ucx_kick,
	.receive = ucx_receive,
	.close = ucx_close,
};
