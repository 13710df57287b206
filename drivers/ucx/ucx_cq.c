/* SPDX-License-Identifier: BSD-3-Clause */
/* UCX driver: wrapping a worker, events, the ops table, destruction. */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll_log_private.h"
#include "ucx_private.h"

#define UCX_SIZE_DEFAULT 4096u
#define UCX_SIZE_MAX (1u << 24)

static int
ucx_event_fd(void *priv)
{
	struct cqpoll_ucx_cq *q = priv;

	return q->efd;
}

/*
 * The worker's fd is an epoll set over its interfaces' fds (level-triggered
 * unless UCP_WAKEUP_EDGE), readable while any of them is. Nothing is read
 * here: progress consumes what made it readable, and the next
 * ucp_worker_arm() drains the worker's own eventfd and the shared-memory
 * signal sockets. An event is pending while the set is readable.
 */
static int
ucx_event_get(void *priv)
{
	struct cqpoll_ucx_cq *q = priv;
	struct pollfd pfd = { .fd = q->efd, .events = POLLIN };
	int r;

	r = poll(&pfd, 1, 0);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r > 0 ? 1 : 0;
}

/*
 * cqpoll_cq_wait()'s sleep: poll(2) on the worker's fd, as
 * ucp_worker_wait() sleeps, and nothing after it. Readable is the event:
 * event_get would only poll the fd once more to learn what this poll just
 * said. A wake-up (ucp_worker_signal()) makes the fd readable too. The
 * timeout is the alarm's (cqpoll_alarm_private.h), watched beside the worker's fd,
 * so that the sleep arms no timer of its own, as ucp_worker_wait() arms
 * none; the alarm alone ending the sleep is its timeout.
 */
static int
ucx_wait(void *priv, int timeout_ms)
{
	struct cqpoll_ucx_cq *q = priv;

	return cqpoll_alarm_poll(&q->alarm, q->efd, timeout_ms, cqpoll_now_ns());
}

/*
 * The workers wrapped by a CQ, process-wide: a second CQ on one worker would
 * progress it too, and each would take the other's completions and events.
 */
static pthread_mutex_t wrapped_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cqpoll_ucx_cq *wrapped;

/* Claim @p worker for @p q: 0, or -EBUSY with the CQ that holds it. */
static int
worker_claim(struct cqpoll_ucx_cq *q, ucp_worker_h worker, void **holder)
{
	struct cqpoll_ucx_cq *w;
	int r = 0;

	pthread_mutex_lock(&wrapped_lock);
	for (w = wrapped; w != NULL; w = w->next_wrapped) {
		if (w->worker == worker) {
			*holder = w;
			r = -EBUSY;
			break;
		}
	}
	if (r == 0) {
		q->worker = worker;
		q->next_wrapped = wrapped;
		wrapped = q;
	}
	pthread_mutex_unlock(&wrapped_lock);
	return r;
}

static void
worker_release(struct cqpoll_ucx_cq *q)
{
	struct cqpoll_ucx_cq **p;

	pthread_mutex_lock(&wrapped_lock);
	for (p = &wrapped; *p != NULL; p = &(*p)->next_wrapped) {
		if (*p == q) {
			*p = q->next_wrapped;
			break;
		}
	}
	pthread_mutex_unlock(&wrapped_lock);
}

static void
ucx_free(struct cqpoll_ucx_cq *q)
{
	cqpoll_alarm_close(&q->alarm);
	free(q->slots);
	free(q->ring);
	free(q);
}

static void
ucx_destroy(void *priv)
{
	struct cqpoll_ucx_cq *q = priv;

	cqpoll_ucx_cancel_all(q);
	worker_release(q);
	ucx_free(q);
}

/*
 * A failure reported from any thread wakes whoever sleeps on the worker's
 * fd: ucp_worker_signal() may be called from any thread.
 */
static int
ucx_wake(void *priv)
{
	struct cqpoll_ucx_cq *q = priv;

	return ucp_worker_signal(q->worker) == UCS_OK ? 0 : -EIO;
}

const struct cqpoll_driver_ops cqpoll_ucx_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "ucx",
	.arm = cqpoll_ucx_arm,
	.event_fd = ucx_event_fd,
	.event_get = ucx_event_get,
	.destroy = ucx_destroy,
	.wake = ucx_wake,
	.wait = ucx_wait,
};

static uint32_t
pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

struct cqpoll_cq *
cqpoll_ucx_cq_create(ucp_worker_h worker, const struct cqpoll_ucx_conf *conf)
{
	/* Zeroed: fields this driver does not set (flags, socket_id) are off. */
	struct cqpoll_cq_params params = { .size = 0 };
	uint32_t size = conf != NULL && conf->size != 0 ? conf->size : UCX_SIZE_DEFAULT;
	struct cqpoll_ucx_cq *q;
	struct cqpoll_cq *cq;
	void *holder = NULL;
	uint32_t i;
	int efd, r;

	if (worker == NULL || size > UCX_SIZE_MAX) {
		CQPOLL_LOG(ERR, "ucx", "cq create: %s", worker == NULL ? "NULL worker" :
			   "size over 2^24 requests");
		errno = EINVAL;
		return NULL;
	}
	/* INVALID_PARAM without UCP_FEATURE_WAKEUP: nothing to sleep on. */
	if (ucp_worker_get_efd(worker, &efd) != UCS_OK) {
		CQPOLL_LOG(ERR, "ucx", "cq create: worker %p has no wake-up fd (its context lacks UCP_FEATURE_WAKEUP)",
			   (void *)worker);
		errno = EOPNOTSUPP;
		return NULL;
	}
	size = pow2_at_least(size);
	q = calloc(1, sizeof(*q));
	if (q != NULL) {
		q->ring = calloc(size, sizeof(*q->ring));
		q->slots = calloc(size, sizeof(*q->slots));
	}
	if (q == NULL || q->ring == NULL || q->slots == NULL) {
		if (q != NULL)
			ucx_free(q);
		errno = ENOMEM;
		return NULL;
	}
	if (worker_claim(q, worker, &holder) != 0) {
		CQPOLL_LOG(ERR, "ucx", "cq create: worker %p is already wrapped (ucx cq state %p): one CQ per worker, or each would take the other's completions",
			   (void *)worker, holder);
		ucx_free(q);
		errno = EBUSY;
		return NULL;
	}
	q->efd = efd;
	q->mask = size - 1;
	for (i = 0; i < size; i++) {
		q->slots[i].q = q;
		q->slots[i].next_free = i + 1 < size ? i + 1 : UINT32_MAX;
	}
	q->free_head = 0;
	memset(&params, 0, sizeof(params));
	params.arm = CQPOLL_ARM_REPORT_MISSED;
	params.size = size;
	params.event_ack_batch = conf != NULL ? conf->event_ack_batch : 0;
	cq = cqpoll_cq_alloc(&cqpoll_ucx_ops, cqpoll_ucx_poll, q, &params);
	if (cq == NULL) {
		r = errno;
		worker_release(q);
		ucx_free(q);
		errno = r;
		return NULL;
	}
	return cq;
}

ucp_worker_h
cqpoll_ucx_cq_worker(struct cqpoll_cq *cq)
{
	struct cqpoll_ucx_cq *q;

	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_ucx_ops) {
		errno = EINVAL;
		return NULL;
	}
	q = cqpoll_cq_priv(cq);
	return q->worker;
}

int
cqpoll_ucx_cq_signal(struct cqpoll_cq *cq)
{
	struct cqpoll_ucx_cq *q;

	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_ucx_ops)
		return -EINVAL;
	q = cqpoll_cq_priv(cq);
	return ucp_worker_signal(q->worker) == UCS_OK ? 0 : -EIO;
}
