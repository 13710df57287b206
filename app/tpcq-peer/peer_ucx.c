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
#include "ucx_pair.h"

#define HELLO (1ull << 62)

struct ucx_peer;

struct ucx_slot {
	struct ucx_peer *u;
	void *req;                /* a receive in flight, else NULL */
};

struct ucx_peer {
	struct peer_run *r;
	struct ucx_slot slots[PEER_WINDOW];
	struct tpcq_ucx_pair up;    /* A the sender's, B the receiver's */
	uint64_t done[PEER_WINDOW]; /* receiver: completed, not yet counted */
	unsigned int ndone;
	char buf_a[PEER_MSG];
	char buf_b[PEER_WINDOW][PEER_MSG];
};

static const char *const waits[] = { "busy", "wait", NULL };

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

	req = ucp_tag_recv_nbx(u->up.b, u->buf_b[seq % PEER_WINDOW], PEER_MSG, seq,
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
	ucs_status_t s;
	uint64_t i;

	if (u == NULL)
		return -ENOMEM;
	u->r = r;
	s = tpcq_ucx_pair_workers(&u->up, r->arg);
	if (s == UCS_OK)
		s = tpcq_ucx_pair_connect(&u->up);
	/* The first exchange both ways: tcp connections up before waiting. */
	if (s == UCS_OK)
		s = tpcq_ucx_pair_hello(&u->up, u->buf_a, u->buf_b[0], PEER_MSG, HELLO);
	if (s != UCS_OK) {
		fprintf(stderr, PEER_PROG ": ucx:%s: %s\n", r->arg, ucs_status_string(s));
		tpcq_ucx_pair_close(&u->up);
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

	return tpcq_ucx_wait(u->up.a, NULL, ucp_tag_send_nbx(u->up.ep_ab, u->buf_a,
							     PEER_MSG, seq, &p)) == UCS_OK ?
		0 : -EIO;
}

static void
ucx_kick(void *priv)
{
	struct ucx_peer *u = priv;

	ucp_worker_signal(u->up.b);
}

/* Count what completed, and post the receives a window further on. */
static int
drain(struct ucx_peer *u)
{
	unsigned int i, n = u->ndone;
	uint64_t seq[PEER_WINDOW], now;

	if (n == 0)
		return 0;
	memcpy(seq, u->done, n * sizeof(seq[0]));
	u->ndone = 0;
	now = peer_burst(u->r);
	for (i = 0; i < n; i++)
		peer_got(u->r, now, seq[i]);
	peer_burst_done(u->r);
	for (i = 0; i < n; i++)
		if (post_recv(u, seq[i] + PEER_WINDOW) != 0)
			return -EIO;
	return (int)n;
}

static int
ucx_receive(void *priv, struct peer_run *r)
{
	struct ucx_peer *u = priv;
	bool wait = strcmp(r->wait, "wait") == 0;
	ucs_status_t s;

	while (!peer_stopping(r)) {
		if (ucp_worker_progress(u->up.b) != 0 || u->ndone != 0) {
			if (drain(u) < 0)
				return -EIO;
			continue;
		}
		if (!wait)
			continue;
		s = ucp_worker_wait(u->up.b);
		if (s != UCS_OK)
			return -EIO;
	}
	return drain(u) < 0 ? -EIO : 0;
}

static void
ucx_close(void *priv)
{
	struct ucx_peer *u = priv;
	unsigned int i;
	int spins;

	/* Receives still posted: cancelled, their callbacks run, then released. */
	for (i = 0; i < PEER_WINDOW; i++)
		if (u->slots[i].req != NULL)
			ucp_request_cancel(u->up.b, u->slots[i].req);
	for (spins = 0; spins < 100000; spins++) {
		for (i = 0; i < PEER_WINDOW && u->slots[i].req == NULL; i++)
			;
		if (i == PEER_WINDOW)
			break;
		ucp_worker_progress(u->up.b);
	}
	tpcq_ucx_pair_close(&u->up);
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
