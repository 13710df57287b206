/* SPDX-License-Identifier: BSD-3-Clause */
/* The async-event calls' table (ibv_glue.h) and the contexts it serves. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "ibv_glue.h"

static const struct cqpoll_ibv_glue verbs_glue = {
	.get_async_event = ibv_get_async_event,
	.ack_async_event = ibv_ack_async_event,
};

struct glue_entry {
	struct ibv_context *ctx;
	const struct cqpoll_ibv_glue *glue;
	struct glue_entry *next;
};

/* Looked up when a CQ joins a context, never on the poll or event path. */
static pthread_mutex_t glue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct glue_entry *glues;

int
cqpoll_ibv_glue_register(struct ibv_context *ctx, const struct cqpoll_ibv_glue *glue)
{
	struct glue_entry *e;
	int r = 0;

	if (ctx == NULL || glue == NULL || glue->get_async_event == NULL ||
	    glue->ack_async_event == NULL)
		return -EINVAL;
	pthread_mutex_lock(&glue_lock);
	for (e = glues; e != NULL; e = e->next)
		if (e->ctx == ctx)
			r = -EEXIST;
	if (r == 0) {
		e = malloc(sizeof(*e));
		if (e == NULL) {
			r = -ENOMEM;
		} else {
			e->ctx = ctx;
			e->glue = glue;
			e->next = glues;
			glues = e;
		}
	}
	pthread_mutex_unlock(&glue_lock);
	return r;
}

void
cqpoll_ibv_glue_unregister(struct ibv_context *ctx)
{
	struct glue_entry **p, *e;

	pthread_mutex_lock(&glue_lock);
	for (p = &glues; *p != NULL; p = &(*p)->next) {
		if ((*p)->ctx == ctx) {
			e = *p;
			*p = e->next;
			free(e);
			break;
		}
	}
	pthread_mutex_unlock(&glue_lock);
}

const struct cqpoll_ibv_glue *
cqpoll_ibv_glue_of(struct ibv_context *ctx)
{
	const struct cqpoll_ibv_glue *g = &verbs_glue;
	struct glue_entry *e;

	pthread_mutex_lock(&glue_lock);
	for (e = glues; e != NULL; e = e->next)
		if (e->ctx == ctx)
			g = e->glue;
	pthread_mutex_unlock(&glue_lock);
	return g;
}
