/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The completion-channel demux (see ibv_channel.h): one object per ibv
 * channel, found through a registry, with the members that read it.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ibv_async.h"
#include "ibv_channel.h"
#include "ibv_glue.h"

struct cqpoll_ibv_channel {
	/* Set at creation, read-only afterwards. */
	struct ibv_comp_channel *ch;
	const struct cqpoll_ibv_glue *glue; /* what serves ch->context */
	bool owned;                        /* destroyed with the last member */
	struct cqpoll_ibv_channel *next;   /* registry list, under registry_lock */
	unsigned int refs;                 /* members; under registry_lock */

	/* Under lock: the members, and what was read for them. */
	pthread_mutex_t lock;
	struct cqpoll_ibv_member **members;
	unsigned int n_members;
	unsigned int cap_members;
};

/* Only joining and leaving take it: never the event or poll path. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cqpoll_ibv_channel *registry;

static struct cqpoll_ibv_channel *
channel_find(struct ibv_comp_channel *ch)
{
	struct cqpoll_ibv_channel *c;

	for (c = registry; c != NULL; c = c->next)
		if (c->ch == ch)
			return c;
	return NULL;
}

static struct cqpoll_ibv_channel *
channel_new(struct ibv_comp_channel *ch)
{
	struct cqpoll_ibv_channel *c;
	int fl;

	/* Taking events must never block: the core sleeps in poll(2). */
	fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch = ch;
	c->glue = cqpoll_ibv_glue_of(ch->context);
	pthread_mutex_init(&c->lock, NULL);
	c->next = registry;
	registry = c;
	return c;
}

static void
channel_free(struct cqpoll_ibv_channel *c)
{
	struct cqpoll_ibv_channel **p;

	for (p = &registry; *p != NULL; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	pthread_mutex_destroy(&c->lock);
	free(c->members);
	free(c);
}

static int
member_add(struct cqpoll_ibv_channel *c, struct cqpoll_ibv_member *m)
{
	struct cqpoll_ibv_member **v;
	unsigned int cap;

	if (c->n_members == c->cap_members) {
		cap = c->cap_members != 0 ? 2 * c->cap_members : 4;
		v = realloc(c->members, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		c->members = v;
		c->cap_members = cap;
	}
	c->members[c->n_members++] = m;
	return 0;
}

static struct cqpoll_ibv_member *
member_of(const struct cqpoll_ibv_channel *c, const struct ibv_cq *cq)
{
	unsigned int i;

	/* A handful of CQs per thread: a scan beats any index. */
	for (i = 0; i < c->n_members; i++)
		if (c->members[i]->cq == cq)
			return c->members[i];
	return NULL;
}

static int
member_fds(struct cqpoll_ibv_member *m, int channel_fd, int extra_fd)
{
	struct epoll_event e = { .events = EPOLLIN };

	m->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (m->efd < 0)
		return -errno;
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (m->epfd < 0)
		return -errno;
	if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, channel_fd, &e) < 0 ||
	    epoll_ctl(m->epfd, EPOLL_CTL_ADD, m->efd, &e) < 0 ||
	    (extra_fd >= 0 && epoll_ctl(m->epfd, EPOLL_CTL_ADD, extra_fd, &e) < 0))
		return -errno;
	return 0;
}

static void
member_fds_close(struct cqpoll_ibv_member *m)
{
	if (m->epfd >= 0)
		close(m->epfd);
	if (m->efd >= 0)
		close(m->efd);
	m->efd = m->epfd = -1;
}

int
cqpoll_ibv_channel_join(struct cqpoll_ibv_member *m, struct ibv_cq *cq,
			struct ibv_comp_channel *ch, bool owned, int extra_fd)
{
	struct cqpoll_ibv_channel *c;
	int r;

	m->cq = cq;
	m->glue = cqpoll_ibv_glue_of(cq->context);
	m->routed = 0;
	m->efd = m->epfd = -1;
	m->async = NULL;
	m->handle = NULL;
	m->async_woken = 0;
	pthread_mutex_lock(&registry_lock);
	c = channel_find(ch);
	/*
	 * An ibv_cq has one channel, so its members know every handle of it.
	 * Two handles would be two owners of one consumer index: each would
	 * take completions and events the other expects.
	 */
	if (c != NULL) {
		pthread_mutex_lock(&c->lock);
		r = member_of(c, cq) != NULL ? -EBUSY : 0;
		pthread_mutex_unlock(&c->lock);
		if (r < 0)
			goto out;
	}
	if (c == NULL) {
		c = channel_new(ch);
		if (c == NULL) {
			r = -errno;
			goto out;
		}
	}
	r = member_fds(m, ch->fd, extra_fd);
	if (r == 0)
		r = cqpoll_ibv_async_join(m);
	if (r == 0) {
		pthread_mutex_lock(&c->lock);
		r = member_add(c, m);
		pthread_mutex_unlock(&c->lock);
	}
	if (r < 0) {
		cqpoll_ibv_async_leave(m);
		member_fds_close(m);
		if (c->refs == 0)
			channel_free(c);
		goto out;
	}
	c->owned |= owned;
	c->refs++;
	m->chan = c;
out:
	pthread_mutex_unlock(&registry_lock);
	return r;
}

struct ibv_comp_channel *
cqpoll_ibv_channel_leave(struct cqpoll_ibv_member *m)
{
	struct cqpoll_ibv_channel *c = m->chan;
	struct ibv_comp_channel *ch = NULL;
	unsigned int i;

	if (c == NULL)
		return NULL;
	pthread_mutex_lock(&registry_lock);
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->n_members; i++) {
		if (c->members[i] == m) {
			c->members[i] = c->members[--c->n_members];
			break;
		}
	}
	/* Read for us by another member, never taken: ack, or destroy hangs. */
	if (m->routed != 0)
		m->glue->ack_cq_events(m->cq, m->routed);
	m->routed = 0;
	pthread_mutex_unlock(&c->lock);
	/* No async event reports this handle from here on. */
	cqpoll_ibv_async_leave(m);
	member_fds_close(m);
	if (--c->refs == 0) {
		if (c->owned)
			ch = c->ch;
		channel_free(c);
	}
	m->chan = NULL;
	pthread_mutex_unlock(&registry_lock);
	return ch;
}

void
cqpoll_ibv_channel_bind(struct cqpoll_ibv_member *m, struct cqpoll_cq *handle)
{
	/* Read by async readers of other threads, under the context's lock. */
	__atomic_store_n(&m->handle, handle, __ATOMIC_RELEASE);
}

int
cqpoll_ibv_channel_fd(const struct cqpoll_ibv_member *m)
{
	return m->epfd;
}

int
cqpoll_ibv_channel_get(struct cqpoll_ibv_member *m)
{
	struct cqpoll_ibv_channel *c = m->chan;
	struct cqpoll_ibv_member *owner;
	const uint64_t one = 1;
	struct ibv_cq *evcq;
	unsigned int n;
	uint64_t v;
	void *ctx;
	int err;

	cqpoll_ibv_async_process(m);
	pthread_mutex_lock(&c->lock);
	n = m->routed;
	m->routed = 0;
	if ((n != 0 || __atomic_exchange_n(&m->async_woken, 0, __ATOMIC_ACQ_REL)) &&
	    read(m->efd, &v, sizeof(v)) < 0) {
		/* Only clears readability; the count lives in routed. */
	}
	for (;;) {
		errno = 0;
		if (c->glue->get_cq_event(c->ch, &evcq, &ctx) != 0) {
			err = errno != 0 ? errno : EIO;
			break;
		}
		owner = member_of(c, evcq);
		if (owner == m) {
			n++;
		} else if (owner != NULL) {
			if (owner->routed++ == 0 &&
			    write(owner->efd, &one, sizeof(one)) != sizeof(one)) {
				/* Fails only on overflow: it is readable anyway. */
			}
		} else {
			/* Not a member: acked and dropped (see ibv_channel.h). */
			c->glue->ack_cq_events(evcq, 1);
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (err != EAGAIN && err != EWOULDBLOCK && n == 0)
		return -err;
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

void
cqpoll_ibv_channel_ack(struct cqpoll_ibv_member *m, unsigned int n)
{
	m->glue->ack_cq_events(m->cq, n);
}

unsigned int
cqpoll_ibv_channel_routed(struct cqpoll_ibv_member *m)
{
	unsigned int r;

	pthread_mutex_lock(&m->chan->lock);
	r = m->routed;
	pthread_mutex_unlock(&m->chan->lock);
	return r;
}
