/* SPDX-License-Identifier: BSD-3-Clause */
/* io_uring driver: creating or attaching a ring, the ops table, destruction. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cqpoll_config.h"
#include "uring_private.h"

#define URING_SIZE_DEFAULT 4096u
/* The kernel's limit on CQ entries (IORING_MAX_CQ_ENTRIES). */
#define URING_CQ_SIZE_MAX (1u << 20)
#define URING_SQ_SIZE_MAX 4096u

static void
uring_free(struct cqpoll_uring_cq *q)
{
	/* First: its pending timeout would post into the ring. */
	cqpoll_uring_alarm_free(q);
	if (q->ring != NULL) {
		if (q->owned) {
			io_uring_queue_exit(q->ring);
		} else {
			io_uring_unregister_eventfd(q->ring);
			io_uring_cq_eventfd_toggle(q->ring, q->prev_enabled);
		}
	}
	if (q->efd >= 0)
		close(q->efd);
	free(q);
}

static void
uring_destroy(void *priv)
{
	uring_free(priv);
}

const struct cqpoll_driver_ops cqpoll_uring_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "uring",
	.arm = cqpoll_uring_arm,
	.event_fd = cqpoll_uring_event_fd,
	.event_get = cqpoll_uring_event_get,
	.destroy = uring_destroy,
	.wake = cqpoll_uring_wake,
	.wait = cqpoll_uring_wait,
};

/* Map the ring, register the eventfd, start disarmed, wrap. */
static struct cqpoll_cq *
uring_wrap(struct cqpoll_uring_cq *q, const struct cqpoll_uring_conf *conf)
{
	/* Zeroed: fields this driver does not set (flags, socket_id) are off. */
	struct cqpoll_cq_params params = { .size = 0 };
	struct io_uring *ring = q->ring;
	struct cqpoll_cq *cq;
	int r;

	/*
	 * The arm is IORING_CQ_EVENTFD_DISABLED in the CQ ring's flags, which
	 * kernels before 5.8 do not map: without it the eventfd fires for
	 * every CQE and cannot be gated.
	 */
	q->prev_enabled = io_uring_cq_eventfd_enabled(ring);
	if (ring->cq.kflags == NULL) {
		r = EOPNOTSUPP;
		goto err;
	}
	q->koverflow = ring->cq.koverflow;
	q->overflow0 = __atomic_load_n(q->koverflow, __ATOMIC_RELAXED);
	{
		struct stat st;

		if (fstat(ring->ring_fd, &st) < 0) {
			r = errno;
			goto err;
		}
		q->ring_dev = st.st_dev;
		q->ring_ino = st.st_ino;
	}
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd < 0) {
		r = errno;
		goto err;
	}
	cqpoll_uring_disarm(q);
	r = io_uring_register_eventfd(ring, q->efd);
	if (r < 0) {
		r = -r;
		goto err;
	}
	/* Fields added later (NUMA socket, flags) stay 0: their defaults. */
	memset(&params, 0, sizeof(params));
	params.arm = CQPOLL_ARM_EDGE;
	params.size = ring->cq.ring_entries;
	params.event_ack_batch = conf != NULL ? conf->event_ack_batch : 0;
	q->own_wait = cqpoll_uring_wait_usable(q);
	if (!q->own_wait)
		params.flags |= CQPOLL_CQ_PARAMS_F_NO_WAIT;
	cq = cqpoll_cq_alloc(&cqpoll_uring_ops, cqpoll_uring_poll, q, &params);
	if (cq != NULL)
		return cq;
	r = errno;
	io_uring_unregister_eventfd(ring);
err:
	if (!q->owned)
		io_uring_cq_eventfd_toggle(ring, q->prev_enabled);
	if (q->owned)
		io_uring_queue_exit(ring);
	q->ring = NULL;
	uring_free(q);
	errno = r;
	return NULL;
}

struct cqpoll_cq *
cqpoll_uring_cq_create(const struct cqpoll_uring_conf *conf)
{
	struct io_uring_params p;
	struct cqpoll_uring_cq *q;
	uint32_t size = conf != NULL && conf->size != 0 ? conf->size :
		URING_SIZE_DEFAULT;
	int r;

	if (size > URING_CQ_SIZE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->efd = -1;
	memset(&p, 0, sizeof(p));
	/* Plain task work: a completion wakes its submitter to be posted. */
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = size;
	r = io_uring_queue_init_params(size < URING_SQ_SIZE_MAX ? size : URING_SQ_SIZE_MAX,
				       &q->own, &p);
	if (r < 0) {
		free(q);
		errno = -r;
		return NULL;
	}
	if (!(p.features & IORING_FEAT_NODROP)) {
		/* Before 5.5 a full ring drops CQEs: the CQ could lose completions. */
		io_uring_queue_exit(&q->own);
		free(q);
		errno = ENOTSUP;
		return NULL;
	}
	q->ring = &q->own;
	q->owned = true;
	return uring_wrap(q, conf);
}

struct cqpoll_cq *
cqpoll_uring_cq_attach(struct io_uring *ring, const struct cqpoll_uring_conf *conf)
{
	struct cqpoll_uring_cq *q;

	if (ring == NULL ||
	    (ring->flags & (IORING_SETUP_IOPOLL | IORING_SETUP_DEFER_TASKRUN)) ||
	    !(ring->features & IORING_FEAT_NODROP)) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	q->efd = -1;
	q->ring = ring;
	return uring_wrap(q, conf);
}

struct io_uring *
cqpoll_uring_cq_ring(struct cqpoll_cq *cq)
{
	struct cqpoll_uring_cq *q = cqpoll_cq_priv_of(cq, &cqpoll_uring_ops);

	return q != NULL ? q->ring : NULL;
}
