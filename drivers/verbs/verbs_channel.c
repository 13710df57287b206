/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion channels, shared by the CQs of one thread.
 *
 * ibv_get_cq_event() returns the next event of the channel, whichever CQ it
 * is for, and the channel fd tells only that some CQ has one. So each CQ
 * sleeps on its own epoll fd, over the channel fd and an eventfd of its own:
 * a CQ that reads an event for another member counts it in that member's
 * routed count and signals its eventfd, and the member finds it there. Events
 * for CQs that are not members (not attached, or leaving) are acknowledged at
 * once: nobody else will, and their destroy would wait for it forever.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_private.h"

/* Channels by ibv channel; only creation and destruction of CQs take it. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cqpoll_verbs_channel *registry;

static struct cqpoll_verbs_channel *
channel_find(struct ibv_comp_channel *ch)
{
	struct cqpoll_verbs_channel *c;

	for (c = registry; c != NULL; c = c->next)
		if (c->ch == ch)
			return c;
	return NULL;
}

static struct cqpoll_verbs_channel *
channel_new(struct ibv_comp_channel *ch)
{
	struct cqpoll_verbs_channel *c;
	int fl;

	/* Consuming events must never block: the core sleeps in poll(2). */
	fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch = ch;
	pthread_mutex_init(&c->lock, NULL);
	c->next = registry;
	registry = c;
	return c;
}

static void
channel_free(struct cqpoll_verbs_channel *c)
{
	struct cqpoll_verbs_channel **p;

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
member_add(struct cqpoll_verbs_channel *c, struct cqpoll_verbs_cq *q)
{
	struct cqpoll_verbs_cq **m;
	unsigned int cap;

	if (c->n_members == c->cap_members) {
		cap = c->cap_members != 0 ? 2 * c->cap_members : 4;
		m = realloc(c->members, cap * sizeof(*m));
		if (m == NULL)
			return -ENOMEM;
		c->members = m;
		c->cap_members = cap;
	}
	c->members[c->n_members++] = q;
	return 0;
}

static int
cq_fds(struct cqpoll_verbs_cq *q, int channel_fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd < 0)
		return -errno;
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->epfd < 0)
		return -errno;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, channel_fd, &ev) < 0 ||
	    epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->efd, &ev) < 0)
		return -errno;
	return 0;
}

static void
cq_fds_close(struct cqpoll_verbs_cq *q)
{
	if (q->epfd >= 0)
		close(q->epfd);
	if (q->efd >= 0)
		close(q->efd);
	q->efd = q->epfd = -1;
}

int
cqpoll_verbs_channel_join(struct cqpoll_verbs_cq *q, struct ibv_comp_channel *ch,
			  bool owned)
{
	struct cqpoll_verbs_channel *c;
	int r;

	pthread_mutex_lock(&registry_lock);
	c = channel_find(ch);
	if (c == NULL) {
		c = channel_new(ch);
		if (c == NULL) {
			r = -errno;
			goto out;
		}
	}
	r = cq_fds(q, ch->fd);
	if (r == 0) {
		pthread_mutex_lock(&c->lock);
		r = member_add(c, q);
		pthread_mutex_unlock(&c->lock);
	}
	if (r < 0) {
		cq_fds_close(q);
		if (c->refs == 0)
			channel_free(c);
		goto out;
	}
	c->owned |= owned;
	c->refs++;
	q->chan = c;
out:
	pthread_mutex_unlock(&registry_lock);
	return r;
}

struct ibv_comp_channel *
cqpoll_verbs_channel_leave(struct cqpoll_verbs_cq *q)
{
	struct cqpoll_verbs_channel *c = q->chan;
	struct ibv_comp_channel *ch = NULL;
	unsigned int i;

	pthread_mutex_lock(&registry_lock);
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->n_members; i++) {
		if (c->members[i] == q) {
			c->members[i] = c->members[--c->n_members];
			break;
		}
	}
	/* Read for us by another member, never consumed: ack, or destroy hangs. */
	if (q->routed != 0)
		ibv_ack_cq_events(q->cq, q->routed);
	q->routed = 0;
	pthread_mutex_unlock(&c->lock);
	cq_fds_close(q);
	if (--c->refs == 0) {
		if (c->owned)
			ch = c->ch;
		channel_free(c);
	}
	pthread_mutex_unlock(&registry_lock);
	return ch;
}

int
cqpoll_verbs_event_fd(void *priv)
{
	struct cqpoll_verbs_cq *q = priv;

	return q->epfd;
}

static struct cqpoll_verbs_cq *
member_of(const struct cqpoll_verbs_channel *c, const struct ibv_cq *cq)
{
	unsigned int i;

	/* A handful of CQs per thread: a scan beats any index. */
	for (i = 0; i < c->n_members; i++)
		if (c->members[i]->cq == cq)
			return c->members[i];
	return NULL;
}

int
cqpoll_verbs_event_get(void *priv)
{
	struct cqpoll_verbs_cq *q = priv, *owner;
	struct cqpoll_verbs_channel *c = q->chan;
	const uint64_t one = 1;
	struct ibv_cq *evcq;
	unsigned int n;
	uint64_t v;
	void *ctx;
	int err;

	pthread_mutex_lock(&c->lock);
	n = q->routed;
	q->routed = 0;
	if (n != 0 && read(q->efd, &v, sizeof(v)) < 0) {
		/* Only clears readability; the count lives in routed. */
	}
	for (;;) {
		errno = 0;
		if (ibv_get_cq_event(c->ch, &evcq, &ctx) != 0) {
			err = errno != 0 ? errno : EIO;
			break;
		}
		owner = member_of(c, evcq);
		if (owner == q) {
			n++;
		} else if (owner != NULL) {
			if (owner->routed++ == 0 &&
			    write(owner->efd, &one, sizeof(one)) != sizeof(one)) {
				/* Fails only on overflow: it is readable anyway. */
			}
		} else {
			ibv_ack_cq_events(evcq, 1);
			c->foreign_events++;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (err != EAGAIN && err != EWOULDBLOCK && n == 0)
		return -err;
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

int
cqpoll_verbs_event_ack(void *priv, unsigned int n)
{
	struct cqpoll_verbs_cq *q = priv;

	ibv_ack_cq_events(q->cq, n);
	return 0;
}

bool
cqpoll_verbs_channel_in_use(const struct ibv_comp_channel *ch)
{
	const struct cqpoll_verbs_channel *c;
	bool r = false;

	pthread_mutex_lock(&registry_lock);
	for (c = registry; c != NULL; c = c->next)
		r |= c->ch == ch;
	pthread_mutex_unlock(&registry_lock);
	return r;
}
