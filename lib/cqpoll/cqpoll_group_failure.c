/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A member's failure: the loop that meets a failed CQ takes it off the
 * active list and out of every walk at once (cqpoll_group_member_failed());
 * between steps the group removes it and tells the failure callback
 * (cqpoll_group_reap()), which may destroy the CQ, and the group too, whose
 * free is then deferred until the library call returns.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "cqpoll_group_run_private.h"
#include "cqpoll_log_private.h"
#include "cqpoll_private.h"

void
cqpoll_group_member_failed(struct cqpoll_group *g, struct cqpoll_group_member *m,
			   int r)
{
	/* Off the active list in any case: the loops rely on it. */
	cqpoll_group_deactivate(g, m);
	if (m->failed)
		return;
	/* A failed CQ is not waited on any more. */
	cqpoll_group_count_waits(g, m);
	/* The core latched it already; a stray error is latched here. */
	if (cqpoll_cq_state_now(m->cq) == CQPOLL_CQ_STATE_OK)
		cqpoll_cq_latch_failure(m->cq, r);
	m->failed = true;
	m->next_failed = g->failed;
	g->failed = m;
}

bool
cqpoll_group_reap(struct cqpoll_group *g)
{
	struct cqpoll_group_member *m;
	struct cqpoll_cq_failure f;
	struct cqpoll_cq *cq;
	int i;

	while ((m = g->failed) != NULL) {
		g->failed = m->next_failed;
		cq = m->cq;
		i = cqpoll_group_member_find(g, cq);
		if (i < 0)
			continue;
		cqpoll_group_member_remove(g, (unsigned int)i);
		cqpoll_stat_add(&g->failed_count, 1);
		cqpoll_cq_state_get(cq, &f);
		/* A cause that is only the errno's text is said once. */
		if (f.cause == NULL || strcmp(f.cause, strerror(-f.error)) == 0)
			CQPOLL_LOG_LIB(WARNING, "group %p: cq %p failed (%s: %s): removed, %u cqs go on",
				       (void *)g, (void *)cq, cqpoll_cq_state_name(f.state),
				       strerror(-f.error), g->n);
		else
			CQPOLL_LOG_LIB(WARNING, "group %p: cq %p failed (%s: %s, %s): removed, %u cqs go on",
				       (void *)g, (void *)cq, cqpoll_cq_state_name(f.state),
				       f.cause, strerror(-f.error), g->n);
		if (g->failure_cb == NULL)
			continue;
		/*
		 * The CQ is the application's again: it may destroy it here,
		 * and the group too (deferred: cqpoll_group_destroy()).
		 */
		g->in_callback = true;
		g->in_failure_cb = true;
		g->failure_cb(g, cq, &f, g->failure_arg);
		g->in_failure_cb = false;
		g->in_callback = false;
		if (g->destroy_req)
			return true;
	}
	return false;
}

int
cqpoll_group_failure_cb_register(struct cqpoll_group *g,
				 cqpoll_group_failure_cb_t cb, void *arg)
{
	if (g == NULL || cb == NULL)
		return -EINVAL;
	if (g->in_callback)
		return -EBUSY;
	if (g->failure_cb != NULL)
		return -EEXIST;
	g->failure_cb = cb;
	g->failure_arg = arg;
	return 0;
}

int
cqpoll_group_failure_cb_unregister(struct cqpoll_group *g,
				   cqpoll_group_failure_cb_t cb, void *arg)
{
	if (g == NULL)
		return -EINVAL;
	if (g->in_callback)
		return -EBUSY;
	if (g->failure_cb == NULL || g->failure_cb != cb || g->failure_arg != arg)
		return -ENOENT;
	g->failure_cb = NULL;
	g->failure_arg = NULL;
	return 0;
}

uint64_t
cqpoll_group_failed_count(const struct cqpoll_group *g)
{
	return g != NULL ? __atomic_load_n(&g->failed_count, __ATOMIC_RELAXED) : 0;
}
