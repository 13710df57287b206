/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UCX consumer side: request callbacks push completions into the driver's
 * ring, the poll pops it and progresses the worker when it is empty, and the
 * arm reports what may have been missed.
 */

#include <errno.h>

#include "cqpoll_clock.h"
#include "ucx_private.h"

#define UCX_NO_SLOT UINT32_MAX
/* Progress calls per poll at most. */
#define UCX_PROGRESS_MAX 16

static uint8_t
status_of(ucs_status_t s)
{
	if (s == UCS_OK)
		return CQPOLL_STATUS_SUCCESS;
	if (s == UCS_ERR_CANCELED)
		return CQPOLL_STATUS_WR_FLUSH_ERR;
	if (s == UCS_ERR_MESSAGE_TRUNCATED)
		return CQPOLL_STATUS_LOC_LEN_ERR;
	return CQPOLL_STATUS_GENERAL_ERR;
}

/*
 * The slot's completion into the ring, and the slot back to the free list.
 * Room is certain: at most mask + 1 requests are posted and not yet polled.
 */
static void
push(struct cqpoll_ucx_slot *sl, ucs_status_t status, size_t len,
     const ucp_tag_t *tag)
{
	struct cqpoll_ucx_cq *q = sl->q;
	struct cqpoll_completion *c = &q->ring[q->tail & q->mask];

	c->wr_id = sl->wr_id;
	c->timestamp = cqpoll_now_ns();
	c->inline_data = NULL;
	c->byte_len = (uint32_t)len;
	c->qp_num = 0;
	c->imm_data = 0;
	c->status = status_of(status);
	c->vendor_err = status == UCS_OK ? 0 : (uint32_t)-status;
	c->opcode = sl->opcode;
	c->flags = CQPOLL_COMPLETION_F_WR_ID | CQPOLL_COMPLETION_F_TIMESTAMP;
	c->wqe_counter = 0;
	c->reserved = 0;
	if (tag != NULL) {
		c->qp_num = (uint32_t)(*tag >> 32);
		c->imm_data = (uint32_t)*tag;
		c->flags |= CQPOLL_COMPLETION_F_TAG;
	}
	q->tail++;
	sl->in_flight = false;
	sl->req = NULL;
	sl->next_free = q->free_head;
	q->free_head = (uint32_t)(sl - q->slots);
}

static void
send_cb(void *request, ucs_status_t status, void *user_data)
{
	struct cqpoll_ucx_slot *sl = user_data;

	push(sl, status, sl->len, NULL);
	ucp_request_free(request);
}

static void
recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
	void *user_data)
{
	struct cqpoll_ucx_slot *sl = user_data;

	if (status == UCS_OK && info != NULL)
		push(sl, status, info->length, &info->sender_tag);
	else
		push(sl, status, 0, NULL);
	ucp_request_free(request);
}

int
cqpoll_ucx_poll(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	struct cqpoll_ucx_cq *q = priv;
	unsigned int got = 0, i;

	/*
	 * Progress while the ring holds fewer than asked and the worker still
	 * makes progress: one call reads a bounded number of shared-memory
	 * FIFO entries (UCX adapts the window), so a single one may leave
	 * arrived messages behind. Bounded, since progress of other kinds
	 * (wire-up, keepalive) may go on without completing anything.
	 */
	q->progress_idle = false;
	for (i = 0; i < UCX_PROGRESS_MAX && q->tail - q->head < n; i++) {
		if (ucp_worker_progress(q->worker) == 0) {
			q->progress_idle = true;
			break;
		}
	}
	while (got < n && q->head != q->tail) {
		comps[got++] = q->ring[q->head & q->mask];
		q->head++;
	}
	q->in_use -= got;
	return (int)got;
}

/*
 * Report-missed: anything in the ring, anything one more progress did, or
 * events pending on the worker (ucp_worker_arm() drains its internal
 * eventfd and arms each interface; BUSY means "progress, then arm again").
 * Progress may run callbacks only here and in polls and posts, all on this
 * thread, so after an empty ring and an idle progress, an OK from the arm
 * covers everything that was not yet seen.
 *
 * The core arms only right after a poll of this CQ (cqpoll_poll_and_arm(),
 * the safety net's check, a group's wake-up): when that poll ended on an
 * idle progress and no send came since, nothing read the transports in
 * between (a receive reads none: cqpoll_ucx_tag_recv()), and the progress
 * here would find nothing (one empty epoll_wait() per sleep on tcp, which
 * ucp_worker_wait() does not pay). Whatever arrived since is still on the
 * transport, unread, and ucp_worker_arm() reports it (BUSY) or its fd
 * wakes the sleep. A caller that progresses the worker itself between its
 * poll and the arm (the naive transition of the negative controls) must
 * not count on this arm to find what that progress pushed.
 */
int
cqpoll_ucx_arm(void *priv)
{
	struct cqpoll_ucx_cq *q = priv;
	bool idle = q->progress_idle;
	ucs_status_t s;

	q->progress_idle = false;
	if (q->head != q->tail)
		return 1;
	if (!idle && (ucp_worker_progress(q->worker) != 0 || q->head != q->tail))
		return 1;
	s = ucp_worker_arm(q->worker);
	if (s == UCS_OK)
		return 0;
	if (s == UCS_ERR_BUSY)
		return 1;
	return -EIO;
}

static struct cqpoll_ucx_cq *
ucx_of(struct cqpoll_cq *cq)
{
	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_ucx_ops)
		return NULL;
	return cqpoll_cq_priv(cq);
}

static struct cqpoll_ucx_slot *
slot_get(struct cqpoll_ucx_cq *q, uint64_t wr_id, uint8_t opcode, size_t len)
{
	struct cqpoll_ucx_slot *sl;

	if (q->in_use > q->mask || q->free_head == UCX_NO_SLOT)
		return NULL;
	sl = &q->slots[q->free_head];
	q->free_head = sl->next_free;
	sl->wr_id = wr_id;
	sl->opcode = opcode;
	sl->len = (uint32_t)len;
	sl->in_flight = true;
	sl->req = NULL;
	q->in_use++;
	return sl;
}

static void
slot_put(struct cqpoll_ucx_slot *sl)
{
	struct cqpoll_ucx_cq *q = sl->q;

	sl->in_flight = false;
	sl->next_free = q->free_head;
	q->free_head = (uint32_t)(sl - q->slots);
	q->in_use--;
}

static int
errno_of(ucs_status_t s)
{
	if (s == UCS_ERR_NO_MEMORY)
		return -ENOMEM;
	if (s == UCS_ERR_NO_RESOURCE)
		return -EAGAIN;
	return -EIO;
}

/*
 * What a post returned: NULL, done at once (push it, with what the receive
 * info says); an error, no completion; else a request whose callback pushes
 * later, unless it already ran inside the post.
 */
static int
posted(struct cqpoll_ucx_slot *sl, ucs_status_ptr_t r, const ucp_tag_recv_info_t *info)
{
	if (r == NULL) {
		if (info != NULL)
			push(sl, UCS_OK, info->length, &info->sender_tag);
		else
			push(sl, UCS_OK, sl->len, NULL);
		return 0;
	}
	if (UCS_PTR_IS_ERR(r)) {
		slot_put(sl);
		return errno_of(UCS_PTR_STATUS(r));
	}
	if (sl->in_flight)
		sl->req = r;
	return 0;
}

int
cqpoll_ucx_tag_send(struct cqpoll_cq *cq, ucp_ep_h ep, const void *buf,
		    size_t len, ucp_tag_t tag, uint64_t wr_id)
{
	struct cqpoll_ucx_cq *q = ucx_of(cq);
	ucp_request_param_t prm;
	struct cqpoll_ucx_slot *sl;

	if (q == NULL || ep == NULL || len > UINT32_MAX)
		return -EINVAL;
	sl = slot_get(q, wr_id, CQPOLL_OP_SEND, len);
	if (sl == NULL)
		return -ENOBUFS;
	/* A post may progress the worker: the next arm progresses too. */
	q->progress_idle = false;
	prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	prm.cb.send = send_cb;
	prm.user_data = sl;
	return posted(sl, ucp_tag_send_nbx(ep, buf, len, tag, &prm), NULL);
}

int
cqpoll_ucx_tag_recv(struct cqpoll_cq *cq, void *buf, size_t len, ucp_tag_t tag,
		    ucp_tag_t tag_mask, uint64_t wr_id)
{
	struct cqpoll_ucx_cq *q = ucx_of(cq);
	ucp_tag_recv_info_t info = { 0 };
	ucp_request_param_t prm;
	struct cqpoll_ucx_slot *sl;

	if (q == NULL || len > UINT32_MAX)
		return -EINVAL;
	sl = slot_get(q, wr_id, CQPOLL_OP_RECV, 0);
	if (sl == NULL)
		return -ENOBUFS;
	/*
	 * A receive only matches what progress already took off the
	 * transports (UCX's unexpected queue): whatever it completes is pushed
	 * here, in the ring the arm looks at first, and it reads no transport,
	 * so an idle progress before it still stands (no progress in the next
	 * arm: the completion callback that posts the next receive would
	 * otherwise cost every sleep an empty epoll_wait() on tcp).
	 */
	prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
		UCP_OP_ATTR_FIELD_RECV_INFO;
	prm.cb.recv = recv_cb;
	prm.user_data = sl;
	prm.recv_info.tag_info = &info;
	return posted(sl, ucp_tag_recv_nbx(q->worker, buf, len, tag, tag_mask, &prm),
		      &info);
}

/*
 * At destroy: cancel what is still in flight and give the callbacks a
 * chance to run; a request that will not finish (a send UCX cannot cancel)
 * is released, after which UCX calls nothing of ours.
 */
void
cqpoll_ucx_cancel_all(struct cqpoll_ucx_cq *q)
{
	uint32_t i, left;
	int spins;

	for (i = 0; i <= q->mask; i++)
		if (q->slots[i].in_flight && q->slots[i].req != NULL)
			ucp_request_cancel(q->worker, q->slots[i].req);
	for (spins = 0; spins < 10000; spins++) {
		for (i = 0, left = 0; i <= q->mask; i++)
			left += q->slots[i].in_flight;
		if (left == 0)
			return;
		ucp_worker_progress(q->worker);
	}
	for (i = 0; i <= q->mask; i++) {
		if (q->slots[i].in_flight && q->slots[i].req != NULL) {
			ucp_request_free(q->slots[i].req);
			q->slots[i].in_flight = false;
		}
	}
}
