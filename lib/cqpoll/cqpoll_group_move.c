/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Moving a group between threads: the owner lets it go at a safe point
 * (cqpoll_group_release()), another thread takes it (cqpoll_group_adopt()).
 * Nothing of the group is rebuilt: its members, the active list (which
 * members still need poll-and-arm), the CQs' arms, the epoll set with the
 * events pending on it and a prepared sleep all stay in the group's memory,
 * which the release and the adoption hand over with a release/acquire pair.
 * Nothing in a group's memory belongs to a thread: the epoll fd, the event
 * fds and the CQs' rings are process-wide; the adoption ties the group to
 * its adopter, whose thread-only calls alone are let through. What would lose a wake-up is a move that
 * forgets which members are armed (cqpoll_mutant.h, NAIVE_MOVE), or one in
 * the middle of an iteration, which the owner-only release rules out.
 */

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "cqpoll_group_private.h"
#include "cqpoll_log_private.h"
#include "cqpoll_mutant.h"

int
cqpoll_group_move_request(struct cqpoll_group *g)
{
	if (g == NULL) {
		CQPOLL_LOG_LIB(ERR, "group move request: NULL group");
		return -EINVAL;
	}
	__atomic_store_n(&g->move_req, 1, __ATOMIC_RELEASE);
	/* Wake it if it sleeps, in its epoll or in its lone member's wait. */
	return cqpoll_group_kick(g);
}

int
cqpoll_group_move_pending(const struct cqpoll_group *g)
{
	if (g == NULL)
		return -EINVAL;
	return __atomic_load_n(&g->move_req, __ATOMIC_ACQUIRE);
}

int
cqpoll_group_release(struct cqpoll_group *g)
{
	if (g == NULL) {
		CQPOLL_LOG_LIB(ERR, "group release: NULL group");
		return -EINVAL;
	}
	if (__atomic_load_n(&g->released, __ATOMIC_RELAXED)) {
		CQPOLL_LOG_LIB(ERR, "group %p release: already released", (void *)g);
		return -EALREADY;
	}
	if (!cqpoll_group_owned(g)) {
		CQPOLL_LOG_LIB(ERR, "group %p release: another thread adopted it",
			       (void *)g);
		return -EPERM;
	}
	/* Mid-delivery the loops hold members: not a safe point. */
	if (g->in_callback) {
		CQPOLL_LOG_LIB(ERR, "group %p release: called from a callback",
			       (void *)g);
		return -EBUSY;
	}
	CQPOLL_LOG_LIB(DEBUG, "group %p: released%s, %u of %u cqs active",
		       (void *)g, g->sleeping ? " asleep" : "", g->nactive, g->n);
	__atomic_store_n(&g->move_req, 0, __ATOMIC_RELAXED);
	/* Everything the owner wrote is visible to the adopter's acquire. */
	__atomic_store_n(&g->released, 1, __ATOMIC_RELEASE);
	return 0;
}

#if CQPOLL_MUTANT(NAIVE_MOVE)
/*
 * Negative control only (test build): the move drops the armed state. The
 * new thread knows the members but not which of them still need an arm,
 * and takes them all for armed, as if every moved group had been asleep.
 */
static void
drop_armed_state(struct cqpoll_group *g)
{
	while (g->nactive != 0)
		cqpoll_group_deactivate(g, g->active[0]);
}
#else
/* The group keeps which members are armed: the adopter sleeps as safely. */
static inline void
drop_armed_state(struct cqpoll_group *g)
{
	(void)g;
}
#endif

int
cqpoll_group_adopt(struct cqpoll_group *g)
{
	int expected = 1;

	if (g == NULL) {
		CQPOLL_LOG_LIB(ERR, "group adopt: NULL group");
		return -EINVAL;
	}
	if (!__atomic_compare_exchange_n(&g->released, &expected, 0, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		CQPOLL_LOG_LIB(ERR, "group %p adopt: not released by its thread",
			       (void *)g);
		return -EBUSY;
	}
	__atomic_store_n(&g->owner, (uintptr_t)pthread_self(), __ATOMIC_RELAXED);
	drop_armed_state(g);
	if (g->sleeping)
		return 1;
	/* The time in transit was neither busy nor asleep. */
	g->t_mark = cqpoll_now_ns();
	return 0;
}
