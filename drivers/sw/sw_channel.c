/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software CQ shared event channel: one eventfd for many sw CQs, as one
 * verbs completion channel serves many CQs (ibv_create_comp_channel() once,
 * ibv_get_cq_event() names the CQ). A raise marks its CQ fired and puts it
 * on the channel's fired list, once however often it fires before it is
 * taken; the fd is readable while the list is not empty. The consumer asks
 * which CQs fired (cqpoll_sw_channel_fired()) and gets them in O(fired).
 *
 * The one race: the consumer takes the list while a device raises. The fd
 * is written only by the raise that found the list empty (after it let go
 * of the lock: a write under it made the woken consumer wait on the lock,
 * two more context switches per wake-up), so the consumer must drain the
 * fd BEFORE it takes the list: a raise after the drain either lands on the
 * list it takes (its write, if any, is then a spurious wake-up), or finds
 * it emptied and writes the fd again. Taking first and draining after would eat the write
 * of a raise that came in between and leave its CQ on the list with the fd
 * silent: a lost wake-up (CQPOLL_MUTANT(CHANNEL_NAIVE), the negative control
 * of stress-sw-channel).
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cqpoll_alloc_private.h"
#include "cqpoll_log_private.h"
#include "cqpoll_mutant.h"
#include "sw_private.h"

struct cqpoll_sw_channel {
	int efd;
	/* Guards the list, each CQ's links and ch_queued, and ncqs. */
	pthread_mutex_t lock;
	struct cqpoll_sw_cq *head, *tail;
	unsigned int ncqs;
};

struct cqpoll_sw_channel *
cqpoll_sw_channel_create(void)
{
	struct cqpoll_sw_channel *ch;
	int r;

	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		CQPOLL_LOG(ERR, "sw", "channel create: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ch->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ch->efd < 0) {
		r = errno;
		CQPOLL_LOG(ERR, "sw", "channel create: eventfd: %s", strerror(r));
		free(ch);
		errno = r;
		return NULL;
	}
	pthread_mutex_init(&ch->lock, NULL);
	return ch;
}

int
cqpoll_sw_channel_destroy(struct cqpoll_sw_channel *ch)
{
	unsigned int n;

	if (ch == NULL)
		return -EINVAL;
	pthread_mutex_lock(&ch->lock);
	n = ch->ncqs;
	pthread_mutex_unlock(&ch->lock);
	if (n != 0) {
		CQPOLL_LOG(ERR, "sw", "channel %p destroy: %u cqs still on it",
			   (void *)ch, n);
		return -EBUSY;
	}
	pthread_mutex_destroy(&ch->lock);
	close(ch->efd);
	free(ch);
	return 0;
}

int
cqpoll_sw_channel_event_fd(const struct cqpoll_sw_channel *ch)
{
	return ch != NULL ? ch->efd : -EINVAL;
}

int
cqpoll_sw_channel_join(struct cqpoll_sw_channel *ch, struct cqpoll_sw_cq *q)
{
	pthread_mutex_lock(&ch->lock);
	ch->ncqs++;
	pthread_mutex_unlock(&ch->lock);
	q->ch = ch;
	return 0;
}

static void
unlink_cq(struct cqpoll_sw_channel *ch, struct cqpoll_sw_cq *q)
{
	if (q->ch_prev != NULL)
		q->ch_prev->ch_next = q->ch_next;
	else
		ch->head = q->ch_next;
	if (q->ch_next != NULL)
		q->ch_next->ch_prev = q->ch_prev;
	else
		ch->tail = q->ch_prev;
	q->ch_prev = NULL;
	q->ch_next = NULL;
	q->ch_queued = false;
}

void
cqpoll_sw_channel_leave(struct cqpoll_sw_cq *q)
{
	struct cqpoll_sw_channel *ch = q->ch;

	if (ch == NULL)
		return;
	pthread_mutex_lock(&ch->lock);
	/* A destroyed CQ must not be named by a later take. */
	if (q->ch_queued)
		unlink_cq(ch, q);
	ch->ncqs--;
	pthread_mutex_unlock(&ch->lock);
	q->ch = NULL;
}

/* Any thread: the device's raise, or a failure's wake-up. */
int
cqpoll_sw_channel_raise(struct cqpoll_sw_cq *q)
{
	struct cqpoll_sw_channel *ch = q->ch;
	const uint64_t one = 1;
	bool was_empty = false;

	/* Before the lock: a take that pops the CQ then sees it fired. */
	__atomic_store_n(&q->ch_fired, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&ch->lock);
	if (!q->ch_queued) {
		q->ch_queued = true;
		q->ch_next = NULL;
		q->ch_prev = ch->tail;
		if (ch->tail != NULL)
			ch->tail->ch_next = q;
		else
			ch->head = q;
		ch->tail = q;
		was_empty = ch->head == q;
	}
	pthread_mutex_unlock(&ch->lock);
	/*
	 * Empty to not empty: make the fd readable (file comment). Raises onto
	 * a list that is not empty need no write: the one that made it so
	 * writes. EAGAIN: saturated, readable anyway.
	 */
	if (was_empty && write(ch->efd, &one, sizeof(one)) != sizeof(one) &&
	    errno != EAGAIN)
		return -errno;
	return 0;
}

int
cqpoll_sw_channel_fd(const struct cqpoll_sw_cq *q)
{
	return q->ch->efd;
}

/*
 * One CQ's own event (cqpoll_cq_event_get(), cqpoll_cq_wait()): its fired
 * mark only. The list entry stays, and a take skips it; the fd stays
 * readable until a take drains it.
 */
int
cqpoll_sw_channel_event_get(struct cqpoll_sw_cq *q)
{
	return (int)__atomic_exchange_n(&q->ch_fired, 0, __ATOMIC_ACQ_REL);
}

static int
drain(struct cqpoll_sw_channel *ch)
{
	uint64_t v;

	if (read(ch->efd, &v, sizeof(v)) == sizeof(v) || errno == EAGAIN)
		return 0;
	return -errno;
}

/*
 * When a take drains the channel's fd: first, so that a raise after the
 * drain finds the list as the take leaves it, and its write stays for the
 * next sleep. drain_first() returns 0 or -errno; drain_last() gets and
 * returns the take's result.
 */
#if CQPOLL_MUTANT(CHANNEL_NAIVE)
/*
 * Negative control only (test build): drained after the take, which eats
 * the write of a raise that found the list emptied in between.
 */
static inline int
drain_first(struct cqpoll_sw_channel *ch)
{
	(void)ch;
	return 0;
}

static inline int
drain_last(struct cqpoll_sw_channel *ch, int r)
{
	return r == 0 ? drain(ch) : r;
}
#else
static inline int
drain_first(struct cqpoll_sw_channel *ch)
{
	return drain(ch);
}

static inline int
drain_last(struct cqpoll_sw_channel *ch, int r)
{
	(void)ch;
	return r;
}
#endif

int
cqpoll_sw_channel_fired(void *priv, struct cqpoll_cq **fired, unsigned int max)
{
	struct cqpoll_sw_cq *q = priv, *c;
	struct cqpoll_sw_channel *ch = q->ch;
	const uint64_t one = 1;
	unsigned int taken = 0, n = 0;
	bool left;
	int r = 0;

	r = drain_first(ch);
	if (r < 0)
		return r;
	pthread_mutex_lock(&ch->lock);
	while (ch->head != NULL && taken < max) {
		c = ch->head;
		unlink_cq(ch, c);
		taken++;
		/* Taken by its own event_get since it was queued: nothing left. */
		if (__atomic_exchange_n(&c->ch_fired, 0, __ATOMIC_ACQ_REL) != 0)
			fired[n++] = c->handle;
	}
	left = ch->head != NULL;
	pthread_mutex_unlock(&ch->lock);
	/* Left for the next take: the fd must stay readable for it. */
	if (left && write(ch->efd, &one, sizeof(one)) != sizeof(one) &&
	    errno != EAGAIN)
		r = -errno;
	r = drain_last(ch, r);
	/* What was taken is named even if the fd failed: its CQs fired. */
	return n != 0 || r == 0 ? (int)n : r;
}
