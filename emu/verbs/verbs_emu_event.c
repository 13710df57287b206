/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs-emu events: queueing on the channel, ibv_get_cq_event() and
 * ibv_ack_cq_events() as libcqpoll_emu serves them (verbs_emu_ibv.c), and the
 * oracle.
 */

#include <errno.h>
#include <unistd.h>

#include "verbs_emu_private.h"

void
cqpoll_verbs_emu_deliver(struct cqpoll_verbs_emu_cq *q, uint32_t k)
{
	struct cqpoll_verbs_emu_channel *c = q->chan;
	uint64_t v = k;

	if (c == NULL)
		return;
	/* Counted before the token exists: a reader with a token finds its CQ. */
	pthread_mutex_lock(&c->lock);
	q->queued += k;
	pthread_mutex_unlock(&c->lock);
	if (write(c->ch.fd, &v, sizeof(v)) != sizeof(v)) {
		/* Only on counter overflow, 2^64 events: cannot happen. */
	}
}

static struct cqpoll_verbs_emu_cq *
take_event(struct cqpoll_verbs_emu_channel *c)
{
	struct cqpoll_verbs_emu_cq *start, *q;

	/* Round robin, so one busy CQ does not hide the others' events. */
	start = c->rr != NULL ? c->rr : c->cqs;
	q = start;
	while (q != NULL) {
		if (q->queued != 0) {
			q->queued--;
			q->reported++;
			c->rr = q->next;
			return q;
		}
		q = q->next != NULL ? q->next : c->cqs;
		if (q == start)
			break;
	}
	return NULL;
}

int
cqpoll_verbs_emu_ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			      void **cq_context)
{
	struct cqpoll_verbs_emu_channel *c = (struct cqpoll_verbs_emu_channel *)(void *)ch;
	struct cqpoll_verbs_emu_cq *q;
	uint64_t v;

	if (ch == NULL || cq == NULL || cq_context == NULL ||
	    !cqpoll_verbs_emu_is_context(ch->context)) {
		errno = EINVAL;
		return -1;
	}

	for (;;) {
		/* As libibverbs: -1 with errno from read(2), EAGAIN when none. */
		if (read(ch->fd, &v, sizeof(v)) != sizeof(v))
			return -1;
		pthread_mutex_lock(&c->lock);
		q = take_event(c);
		pthread_mutex_unlock(&c->lock);
		/* None: the token of an event whose CQ was destroyed unread. */
		if (q != NULL)
			break;
	}
	*cq = ibv_cq_ex_to_cq(&q->ex);
	*cq_context = q->ex.cq_context;
	return 0;
}

void
cqpoll_verbs_emu_ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
	struct cqpoll_verbs_emu_cq *q;

	if (cq == NULL || !cqpoll_verbs_emu_is_context(cq->context))
		return;
	q = emu_cq(cq);
	if (q->chan == NULL)
		return;
	pthread_mutex_lock(&q->chan->lock);
	q->acked += n;
	pthread_mutex_unlock(&q->chan->lock);
}

uint32_t
cqpoll_verbs_emu_queued(struct ibv_cq *cq)
{
	struct cqpoll_verbs_emu_cq *q = emu_cq(cq);
	uint32_t n = 0;

	if (q->chan != NULL) {
		pthread_mutex_lock(&q->chan->lock);
		n = q->queued;
		pthread_mutex_unlock(&q->chan->lock);
	}
	return n;
}

int
cqpoll_verbs_emu_ibv_stranded(struct ibv_cq *cq)
{
	struct cqpoll_verbs_emu_cq *q;
	uint32_t posted, covered, frontier, queued = 0;

	if (cq == NULL || !cqpoll_verbs_emu_is_context(cq->context))
		return -EINVAL;
	q = emu_cq(cq);
	/* posted is stored after covered and the queueing: read it first. */
	posted = __atomic_load_n(&q->posted, __ATOMIC_ACQUIRE);
	covered = __atomic_load_n(&q->covered, __ATOMIC_ACQUIRE);
	frontier = (int32_t)(covered - q->ci) > 0 ? covered : q->ci;
	if ((int32_t)(posted - frontier) <= 0)
		return 0;
	if (q->chan != NULL) {
		pthread_mutex_lock(&q->chan->lock);
		queued = q->queued;
		pthread_mutex_unlock(&q->chan->lock);
	}
	/* A queued event wakes the consumer, which then polls everything. */
	return queued != 0 ? 0 : 1;
}
