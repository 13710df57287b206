/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Async events of a verbs context (ibv_get_async_event(3)), read without
 * blocking by the members of its CQs and routed to the CQs they concern:
 *  - IBV_EVENT_CQ_ERR: the CQ it names overran: no more CQEs, no more
 *    completion events (CQPOLL_CQ_STATE_OVERRUN);
 *  - IBV_EVENT_DEVICE_FATAL: every resource of the context is dead, and
 *    ibv_get_cq_event() may never return again: every CQ of the context
 *    (CQPOLL_CQ_STATE_DEVICE_LOST);
 *  - IBV_EVENT_PORT_ERR: the QPs on the port go to error and flush their
 *    work. cqpoll does not know which QPs feed a CQ: every CQ of the
 *    context, once it has delivered what it holds (CQPOLL_CQ_STATE_PORT_DOWN);
 *  - IBV_EVENT_SRQ_LIMIT_REACHED: counted for the SRQ it names if the mlx5
 *    driver watches it (its limit was armed through cqpoll_mlx5_srq_arm_limit());
 *  - anything else (QP events, port active, LID or GID changes...)
 *    is not a CQ's: logged and acknowledged.
 * Every event is acknowledged once routed: ibv_destroy_cq() and
 * ibv_close_device() wait for the acknowledgements of theirs.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cqpoll_driver.h"
#include "cqpoll_log_private.h"
#include "cqpoll_mutant.h"
#include "ibv_async.h"
#include "ibv_glue.h"

struct cqpoll_ibv_async {
	/* Set at creation. */
	struct ibv_context *ctx;
	const struct cqpoll_ibv_glue *glue;
	struct cqpoll_ibv_async *next;     /* registry, under registry_lock */
	unsigned int refs;                 /* members; under registry_lock */
	/* Under lock: one reader of the async fd at a time, and the members. */
	pthread_mutex_t lock;
	struct cqpoll_ibv_member **members;
	unsigned int n, cap;
	struct cqpoll_ibv_srq_watch *srqs;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cqpoll_ibv_async *registry;

static struct cqpoll_ibv_async *
async_get(struct ibv_context *ctx)
{
	struct cqpoll_ibv_async *a;
	int fl;

	for (a = registry; a != NULL; a = a->next)
		if (a->ctx == ctx)
			return a;
	/* Taking events must never block: the reader is a poller. */
	if (ctx->async_fd >= 0) {
		fl = fcntl(ctx->async_fd, F_GETFL);
		if (fl < 0 || fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
			return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	a->ctx = ctx;
	a->glue = cqpoll_ibv_glue_of(ctx);
	pthread_mutex_init(&a->lock, NULL);
	a->next = registry;
	registry = a;
	return a;
}

static void
async_put(struct cqpoll_ibv_async *a)
{
	struct cqpoll_ibv_async **p;

	if (--a->refs != 0)
		return;
	for (p = &registry; *p != NULL; p = &(*p)->next) {
		if (*p == a) {
			*p = a->next;
			break;
		}
	}
	pthread_mutex_destroy(&a->lock);
	free(a->members);
	free(a);
}

/*
 * The member's own wait: whoever sleeps on it (a group, through its epoll
 * set) wakes on the context's async events too. 0 or -errno.
 */
#if CQPOLL_MUTANT(NO_ASYNC_WAIT)
/* Negative control only (test build): the async fd is left out. */
static int
async_fd_watch(struct cqpoll_ibv_member *m)
{
	(void)m;
	return 0;
}
#else
static int
async_fd_watch(struct cqpoll_ibv_member *m)
{
	struct epoll_event e = { .events = EPOLLIN };

	if (m->cq->context->async_fd >= 0 &&
	    epoll_ctl(m->epfd, EPOLL_CTL_ADD, m->cq->context->async_fd, &e) < 0 &&
	    errno != EEXIST)
		return -errno;
	return 0;
}
#endif

int
cqpoll_ibv_async_join(struct cqpoll_ibv_member *m)
{
	struct cqpoll_ibv_member **v;
	struct cqpoll_ibv_async *a;
	int r = 0;

	m->async = NULL;
	pthread_mutex_lock(&registry_lock);
	a = async_get(m->cq->context);
	if (a == NULL) {
		r = -errno;
		goto out;
	}
	a->refs++;
	r = async_fd_watch(m);
	if (r < 0) {
		async_put(a);
		goto out;
	}
	pthread_mutex_lock(&a->lock);
	if (a->n == a->cap) {
		v = realloc(a->members, (a->cap != 0 ? 2 * a->cap : 4) * sizeof(*v));
		if (v == NULL) {
			r = -ENOMEM;
		} else {
			a->members = v;
			a->cap = a->cap != 0 ? 2 * a->cap : 4;
		}
	}
	if (r == 0)
		a->members[a->n++] = m;
	pthread_mutex_unlock(&a->lock);
	if (r < 0) {
		async_put(a);
		goto out;
	}
	m->async = a;
out:
	pthread_mutex_unlock(&registry_lock);
	return r;
}

void
cqpoll_ibv_async_leave(struct cqpoll_ibv_member *m)
{
	struct cqpoll_ibv_async *a = m->async;
	unsigned int i;

	if (a == NULL)
		return;
	pthread_mutex_lock(&registry_lock);
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < a->n; i++) {
		if (a->members[i] == m) {
			a->members[i] = a->members[--a->n];
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	m->async = NULL;
	async_put(a);
	pthread_mutex_unlock(&registry_lock);
}

static const char *
event_name(enum ibv_event_type t)
{
	/* ibv_event_type_str(3) would do, but not every build has it inline. */
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return "IBV_EVENT_CQ_ERR";
	case IBV_EVENT_DEVICE_FATAL:
		return "IBV_EVENT_DEVICE_FATAL";
	case IBV_EVENT_PORT_ERR:
		return "IBV_EVENT_PORT_ERR";
	case IBV_EVENT_QP_FATAL:
		return "IBV_EVENT_QP_FATAL";
	case IBV_EVENT_QP_REQ_ERR:
		return "IBV_EVENT_QP_REQ_ERR";
	case IBV_EVENT_QP_ACCESS_ERR:
		return "IBV_EVENT_QP_ACCESS_ERR";
	case IBV_EVENT_PORT_ACTIVE:
		return "IBV_EVENT_PORT_ACTIVE";
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return "IBV_EVENT_SRQ_LIMIT_REACHED";
	default:
		return "other async event";
	}
}

/* Under a->lock: the CQ failed; whoever sleeps on it must poll it. */
static void
fail_member(struct cqpoll_ibv_member *m, int error, const char *cause)
{
	struct cqpoll_cq *h = __atomic_load_n(&m->handle, __ATOMIC_ACQUIRE);
	const uint64_t one = 1;

	if (h == NULL || cqpoll_cq_fail(h, error, cause) != 0)
		return;
	__atomic_store_n(&m->async_woken, 1, __ATOMIC_RELEASE);
	if (write(m->efd, &one, sizeof(one)) != sizeof(one)) {
		/* Fails only on overflow: it is readable anyway. */
	}
}

static void
route(struct cqpoll_ibv_async *a, const struct ibv_async_event *ev)
{
	struct cqpoll_ibv_srq_watch *w;
	unsigned int i;
	int error = 0;

	switch (ev->event_type) {
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		for (w = a->srqs; w != NULL; w = w->next) {
			if (w->srq == ev->element.srq) {
				__atomic_fetch_add(&w->limit_events, 1, __ATOMIC_RELEASE);
				return;
			}
		}
		CQPOLL_LOG(INFO, "ibv", "context %p: %s of an SRQ cqpoll does not watch",
			   (void *)a->ctx, event_name(ev->event_type));
		return;
	case IBV_EVENT_CQ_ERR:
		for (i = 0; i < a->n; i++)
			if (a->members[i]->cq == ev->element.cq)
				fail_member(a->members[i], -EOVERFLOW, "IBV_EVENT_CQ_ERR");
		return;
	case IBV_EVENT_DEVICE_FATAL:
		error = -ENODEV;
		break;
	case IBV_EVENT_PORT_ERR:
		error = -ENETDOWN;
		break;
	default:
		CQPOLL_LOG(INFO, "ibv", "context %p: %s (%d): no CQ's, acknowledged",
			   (void *)a->ctx, event_name(ev->event_type),
			   (int)ev->event_type);
		return;
	}
	CQPOLL_LOG(ERR, "ibv", "context %p: %s: %u cqs fail", (void *)a->ctx,
		   event_name(ev->event_type), a->n);
	for (i = 0; i < a->n; i++)
		fail_member(a->members[i], error, event_name(ev->event_type));
}

static void
drain(struct cqpoll_ibv_async *a)
{
	struct ibv_async_event ev;

	/* Another reader takes them now, and routes ours to us. */
	if (pthread_mutex_trylock(&a->lock) != 0)
		return;
	while (a->glue->get_async_event(a->ctx, &ev) == 0) {
		route(a, &ev);
		a->glue->ack_async_event(&ev);
	}
	pthread_mutex_unlock(&a->lock);
}

void
cqpoll_ibv_async_process(struct cqpoll_ibv_member *m)
{
	if (m->async == NULL || m->async->ctx->async_fd < 0)
		return;
	drain(m->async);
}

int
cqpoll_ibv_async_srq_join(struct cqpoll_ibv_srq_watch *w)
{
	struct cqpoll_ibv_async *a;
	int r = 0;

	pthread_mutex_lock(&registry_lock);
	a = async_get(w->srq->context);
	if (a == NULL) {
		r = -errno;
	} else {
		a->refs++;
		pthread_mutex_lock(&a->lock);
		w->next = a->srqs;
		a->srqs = w;
		pthread_mutex_unlock(&a->lock);
		w->async = a;
	}
	pthread_mutex_unlock(&registry_lock);
	return r;
}

void
cqpoll_ibv_async_srq_leave(struct cqpoll_ibv_srq_watch *w)
{
	struct cqpoll_ibv_async *a = w->async;
	struct cqpoll_ibv_srq_watch **p;

	if (a == NULL)
		return;
	pthread_mutex_lock(&registry_lock);
	pthread_mutex_lock(&a->lock);
	for (p = &a->srqs; *p != NULL; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	w->async = NULL;
	async_put(a);
	pthread_mutex_unlock(&registry_lock);
}

void
cqpoll_ibv_async_srq_poll(struct cqpoll_ibv_srq_watch *w)
{
	if (w->async != NULL)
		drain(w->async);
}
