/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A group's members: adding and removing CQs, the active list (the members
 * that may hold completions no event will announce), and the fd demux: one
 * epoll entry per distinct event fd, found by fd number in O(1), shared by
 * the CQs of one completion channel. Also counts, per CQ, the group sleeps
 * it spent armed (its waits), in O(1) per transition.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "cqpoll_clock.h"
#include "cqpoll_group_run_private.h"
#include "cqpoll_log_private.h"
#include "cqpoll_private.h"
#include "cqpoll_sleep_check.h"

/*
 * Room for @need pointers, doubling from @first: the (maybe moved) array,
 * or NULL on ENOMEM.
 */
static void *
grow_from(void *array, unsigned int *cap, unsigned int need, unsigned int first)
{
	unsigned int ncap;
	void *p;

	if (need <= *cap)
		return array;
	ncap = *cap != 0 ? *cap * 2 : first;
	while (ncap < need)
		ncap *= 2;
	p = realloc(array, (size_t)ncap * sizeof(void *));
	if (p == NULL)
		return NULL;
	*cap = ncap;
	return p;
}

static void *
grow(void *array, unsigned int *cap, unsigned int need)
{
	return grow_from(array, cap, need, 8);
}

/*
 * The entry of @p fd, in O(1): fds are small integers (the kernel hands out
 * the lowest free one), so the index is an array by fd number, a pointer
 * per fd of the process below the highest one of the group. A search of
 * the fd list instead made adding N CQs O(N^2): seconds at 65536.
 */
static struct cqpoll_group_fd *
fd_find(struct cqpoll_group *g, int fd)
{
	return (unsigned int)fd < g->fd_index_cap ? g->fd_index[fd] : NULL;
}

/* Make room in the fd index for @p fd; new slots are NULL. */
static int
fd_index_grow(struct cqpoll_group *g, int fd)
{
	unsigned int old = g->fd_index_cap;
	void *p;

	p = grow_from(g->fd_index, &g->fd_index_cap, (unsigned int)fd + 1, 64);
	if (p == NULL)
		return -ENOMEM;
	g->fd_index = p;
	memset(&g->fd_index[old], 0,
	       (size_t)(g->fd_index_cap - old) * sizeof(g->fd_index[0]));
	return 0;
}

/*
 * The shared channels groups serve, by event fd: one group per channel.
 * A group's take of the channel's fired list names every CQ that fired
 * on it, so a second group, or a CQ of the channel armed or waited on
 * alone, would have its events taken by the first group and its wake-up
 * lost. Process-wide, taken on the slow paths only: adding and removing
 * a group's fd, and arming or waiting on a channel CQ outside a group.
 */
struct channel_claim {
	int fd;
	const struct cqpoll_group *g;
};

static pthread_mutex_t channels_lock = PTHREAD_MUTEX_INITIALIZER;
static struct channel_claim *channels;
static unsigned int nchannels, channels_cap;

static int
channel_claim(const struct cqpoll_group *g, int fd)
{
	unsigned int i;
	void *p;
	int r = 0;

	pthread_mutex_lock(&channels_lock);
	for (i = 0; i < nchannels; i++)
		if (channels[i].fd == fd)
			break;
	if (i < nchannels) {
		r = channels[i].g == g ? 0 : -EBUSY;
	} else {
		if (nchannels == channels_cap) {
			p = realloc(channels, (size_t)(channels_cap + 8) *
					      sizeof(*channels));
			if (p == NULL) {
				r = -ENOMEM;
			} else {
				channels = p;
				channels_cap += 8;
			}
		}
		if (r == 0)
			channels[nchannels++] = (struct channel_claim){ fd, g };
	}
	pthread_mutex_unlock(&channels_lock);
	return r;
}

void
cqpoll_group_channel_unclaim(const struct cqpoll_group *g, int fd)
{
	unsigned int i;

	pthread_mutex_lock(&channels_lock);
	for (i = 0; i < nchannels; i++) {
		if (channels[i].fd == fd && channels[i].g == g) {
			channels[i] = channels[--nchannels];
			break;
		}
	}
	pthread_mutex_unlock(&channels_lock);
}

int
cqpoll_cq_channel_check(const struct cqpoll_cq *cq)
{
	unsigned int i;
	int fd, r = 0;

	if (cq->fired == NULL ||
	    __atomic_load_n(&cq->group, __ATOMIC_RELAXED) != NULL)
		return 0;
	fd = cq->ops.event_fd(cq->fp.priv);
	pthread_mutex_lock(&channels_lock);
	for (i = 0; i < nchannels; i++)
		if (channels[i].fd == fd)
			r = -EBUSY;
	pthread_mutex_unlock(&channels_lock);
	if (r != 0)
		CQPOLL_LOG_LIB(ERR, "cq %p: its channel (fd %d) is served by a poll group: add the cq to that group, or wait on it after its siblings left the group",
			       (void *)cq, fd);
	return r;
}

/* Attach a member to the entry of its fd, creating the epoll entry once. */
static int
fd_attach(struct cqpoll_group *g, struct cqpoll_group_member *m, int fd)
{
	struct cqpoll_group_fd *gfd = fd_find(g, fd);
	struct epoll_event ev = { .events = EPOLLIN };
	bool created = false;
	void *p;
	int r;

	if (gfd == NULL) {
		p = grow(g->fds, &g->fds_cap, g->nfds + 1);
		if (p == NULL || fd_index_grow(g, fd) != 0)
			return -ENOMEM;
		g->fds = p;
		gfd = calloc(1, sizeof(*gfd));
		if (gfd == NULL)
			return -ENOMEM;
		gfd->fd = fd;
		gfd->fired = m->cq->fired != NULL;
		ev.data.ptr = gfd;
		r = gfd->fired ? channel_claim(g, fd) : 0;
		if (r != 0) {
			if (r == -EBUSY)
				CQPOLL_LOG_LIB(ERR, "group %p add: cq %p's channel (fd %d) is served by another group: one group per channel",
					       (void *)g, (void *)m->cq, fd);
			free(gfd);
			return r;
		}
		if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			r = -errno;
			if (gfd->fired)
				cqpoll_group_channel_unclaim(g, fd);
			free(gfd);
			return r;
		}
		gfd->pos = g->nfds;
		g->fds[g->nfds++] = gfd;
		g->fd_index[fd] = gfd;
		created = true;
	}
	/* Most fds are one CQ's own: room for one member first, not eight. */
	p = grow_from(gfd->members, &gfd->cap, gfd->n + 1, 1);
	if (p == NULL) {
		if (created) {
			epoll_ctl(g->epfd, EPOLL_CTL_DEL, fd, NULL);
			if (gfd->fired)
				cqpoll_group_channel_unclaim(g, fd);
			g->nfds--;
			g->fd_index[fd] = NULL;
			free(gfd);
		}
		return -ENOMEM;
	}
	gfd->members = p;
	gfd->members[gfd->n++] = m;
	m->gfd = gfd;
	return 0;
}

static void
fd_detach(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	struct cqpoll_group_fd *gfd = m->gfd;
	unsigned int i;

	for (i = 0; i < gfd->n; i++) {
		if (gfd->members[i] == m) {
			gfd->members[i] = gfd->members[--gfd->n];
			break;
		}
	}
	if (gfd->n != 0)
		return;
	epoll_ctl(g->epfd, EPOLL_CTL_DEL, gfd->fd, NULL);
	if (gfd->fired)
		cqpoll_group_channel_unclaim(g, gfd->fd);
	g->fd_index[gfd->fd] = NULL;
	/* Swap with the last: the fd list has no order to keep. */
	g->fds[gfd->pos] = g->fds[--g->nfds];
	g->fds[gfd->pos]->pos = gfd->pos;
	free(gfd->members);
	free(gfd);
}

/* The group sleeps @p m spent armed and off the active list: its CQ's waits. */
void
cqpoll_group_count_waits(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	uint64_t now;

	if (!m->counting_waits)
		return;
	/* A cqpoll_group_stats_reset() since leaves nothing to count. */
	now = __atomic_load_n(&g->stats.sleeps, __ATOMIC_RELAXED);
	if (now > m->sleeps_mark)
		cqpoll_stat_add(&m->cq->counters.waits, now - m->sleeps_mark);
	m->counting_waits = false;
}

void
cqpoll_group_activate_at(struct cqpoll_group *g, struct cqpoll_group_member *m,
			 uint64_t now)
{
	if (m->active)
		return;
	cqpoll_group_count_waits(g, m);
	m->active = true;
	/*
	 * Not polled since: a pass must poll it (a wake-up's poll marks it
	 * again after this), whatever an earlier poll found.
	 */
	m->empty_pass = 0;
	/* Woken or new: it gets a full cold_us before it may go cold again. */
	m->t_work = now;
	m->active_pos = g->nactive;
	g->active[g->nactive++] = m;
}

void
cqpoll_group_activate(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	if (!m->active)
		cqpoll_group_activate_at(g, m, cqpoll_now_ns());
}

void
cqpoll_group_deactivate(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	struct cqpoll_group_member *last;

	if (!m->active)
		return;
	/* Swap with the last: O(1), the active list has no order to keep. */
	last = g->active[--g->nactive];
	g->active[m->active_pos] = last;
	last->active_pos = m->active_pos;
	m->active = false;
	m->empty_pass = 0;
	/* Only poll-and-arm's 0 takes a healthy member off: it is armed. */
	if (!m->failed) {
		m->counting_waits = true;
		m->sleeps_mark = __atomic_load_n(&g->stats.sleeps, __ATOMIC_RELAXED);
	}
}

int
cqpoll_group_member_find(const struct cqpoll_group *g, const struct cqpoll_cq *cq)
{
	unsigned int i;

	for (i = 0; i < g->n; i++)
		if (g->members[i]->cq == cq)
			return (int)i;
	return -1;
}

int
cqpoll_group_add(struct cqpoll_group *g, struct cqpoll_cq *cq,
		 cqpoll_group_cb_t cb, void *arg)
{
	struct cqpoll_group_member *m;
	void *p;
	int fd, r;

	if (g == NULL || cq == NULL || cb == NULL) {
		CQPOLL_LOG_LIB(ERR, "group add: NULL %s", g == NULL ? "group" :
			       cq == NULL ? "cq" : "callback");
		return -EINVAL;
	}
	if (!cqpoll_group_owned(g)) {
		CQPOLL_LOG_LIB(ERR, "group %p add: released, or adopted by another thread", (void *)g);
		return -EPERM;
	}
	/* An unarmed CQ joining a prepared sleep could strand its work. */
	if (g->in_callback || g->sleeping) {
		CQPOLL_LOG_LIB(ERR, "group %p add: called from a callback or a prepared sleep",
			       (void *)g);
		return -EBUSY;
	}
	/* In this group or another: two pollers of one CQ lose completions. */
	if (cq->group != NULL) {
		CQPOLL_LOG_LIB(ERR, "group %p add: cq %p is already in %s group",
			       (void *)g, (void *)cq,
			       cq->group == g ? "this" : "another");
		return -EBUSY;
	}
	/* A dead CQ would be reported at once: refuse it instead. */
	if (cqpoll_cq_state_now(cq) != CQPOLL_CQ_STATE_OK) {
		CQPOLL_LOG_LIB(ERR, "group %p add: cq %p has failed (%s)",
			       (void *)g, (void *)cq,
			       cqpoll_cq_state_name(cqpoll_cq_state_now(cq)));
		return cqpoll_cq_state_errno(cqpoll_cq_state_now(cq));
	}
	fd = cqpoll_cq_event_fd(cq);
	if (fd < 0) {
		CQPOLL_LOG_LIB(ERR, "group %p add: cq %p has no event fd: %s",
			       (void *)g, (void *)cq, strerror(-fd));
		return fd;
	}
	p = grow(g->members, &g->cap, g->n + 1);
	if (p == NULL)
		return -ENOMEM;
	g->members = p;
	/* Room on the active list now: activating must not fail later. */
	p = grow(g->active, &g->active_cap, g->n + 1);
	if (p == NULL)
		return -ENOMEM;
	g->active = p;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->cq = cq;
	m->cb = cb;
	m->arg = arg;
	m->oracle = cqpoll_sleep_check_run(cq) != -ENOTSUP;
	r = fd_attach(g, m, fd);
	if (r < 0) {
		free(m);
		return r;
	}
	g->members[g->n++] = m;
	g->noracle += m->oracle;
	cq->group = g;
	cq->group_member = m;
	/* Not armed by the group yet: the next transition must arm it. */
	cqpoll_group_activate(g, m);
	return 0;
}

/* Take members[i] out of every list and epoll; the CQ is free again. */
void
cqpoll_group_member_remove(struct cqpoll_group *g, unsigned int i)
{
	struct cqpoll_group_member *m = g->members[i];

	cqpoll_group_deactivate(g, m);
	cqpoll_group_count_waits(g, m);
	g->noracle -= m->oracle;
	fd_detach(g, m);
	m->cq->group_member = NULL;
	m->cq->group = NULL;
	/* Keep the order of the others: polling order is fairness order. */
	memmove(&g->members[i], &g->members[i + 1],
		(size_t)(g->n - i - 1) * sizeof(g->members[0]));
	g->n--;
	free(m);
}

int
cqpoll_group_remove(struct cqpoll_group *g, struct cqpoll_cq *cq)
{
	struct cqpoll_group_member *m;
	int i;

	if (g == NULL || cq == NULL)
		return -EINVAL;
	if (!cqpoll_group_owned(g))
		return -EPERM;
	if (g->in_callback)
		return -EBUSY;
	i = cqpoll_group_member_find(g, cq);
	if (i < 0)
		return -ENOENT;
	m = g->members[i];
	/* Reported failed and not yet reaped: it leaves unreported. */
	if (m->failed) {
		struct cqpoll_group_member **p;

		for (p = &g->failed; *p != NULL; p = &(*p)->next_failed) {
			if (*p == m) {
				*p = m->next_failed;
				break;
			}
		}
	}
	cqpoll_group_member_remove(g, (unsigned int)i);
	return 0;
}

