/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQ handles: creation by drivers, destruction, description and counters.
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll_alloc_private.h"
#include "cqpoll_config.h"
#include "cqpoll_log_private.h"
#include "cqpoll_private.h"
#include "cqpoll_stats_private.h"

_Static_assert(offsetof(struct cqpoll_cq, fp) == 0,
	       "cqpoll_poll_burst() relies on the fast-path part coming first");
_Static_assert(sizeof(struct cqpoll_cq_fp) == 64,
	       "the fast-path part is one cache line, part of the ABI");
_Static_assert(offsetof(struct cqpoll_cq, counters) % 64 == 0 &&
	       offsetof(struct cqpoll_cq, driver) % 64 == 0,
	       "counters and control state off the fast-path line");
_Static_assert(sizeof(struct cqpoll_cq_stats) - offsetof(struct cqpoll_cq_stats, arms) ==
	       sizeof(struct cqpoll_cq_counters) - offsetof(struct cqpoll_cq_counters, arms) &&
	       offsetof(struct cqpoll_cq_stats, timeout_recoveries) -
	       offsetof(struct cqpoll_cq_stats, arms) ==
	       offsetof(struct cqpoll_cq_counters, timeout_recoveries) -
	       offsetof(struct cqpoll_cq_counters, arms),
	       "cqpoll_cq_stats_get() copies the counters from arms on as a block");
_Static_assert(sizeof(void *) != 8 || sizeof(struct cqpoll_completion) == 48,
	       "the completion record is part of the ABI");
_Static_assert(sizeof(void *) != 8 || sizeof(struct cqpoll_cq_info) == 24,
	       "cqpoll_cq_info::state lives in the old tail padding");

static int
default_event_ack(void *priv, unsigned int n)
{
	(void)priv;
	(void)n;
	return 0;
}

const char *
cqpoll_version(void)
{
	return CQPOLL_VERSION;
}

static const char *const arm_names[] = {
	[CQPOLL_ARM_LEVEL] = "level",
	[CQPOLL_ARM_EDGE] = "edge",
	[CQPOLL_ARM_REPORT_MISSED] = "report-missed",
};

const char *
cqpoll_arm_semantics_name(enum cqpoll_arm_semantics arm)
{
	if ((unsigned int)arm >= sizeof(arm_names) / sizeof(arm_names[0]))
		return "unknown";
	return arm_names[arm];
}

int
cqpoll_arm_semantics_parse(const char *name, enum cqpoll_arm_semantics *arm)
{
	unsigned int i;

	if (name == NULL || arm == NULL)
		return -EINVAL;
	for (i = 0; i < sizeof(arm_names) / sizeof(arm_names[0]); i++) {
		if (strcmp(name, arm_names[i]) == 0) {
			*arm = (enum cqpoll_arm_semantics)i;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * A table larger than any this library could grow to is not a sized table:
 * one from a driver built before the size field starts with its name.
 */
#define DRIVER_OPS_SIZE_LIMIT 4096

/*
 * Copy a driver's table into @p out as this library's layout, or refuse it
 * (-EPROTO, logged): see struct cqpoll_driver_ops on which sizes are taken.
 */
static int
driver_ops_take(const struct cqpoll_driver_ops *ops, struct cqpoll_driver_ops *out)
{
	size_t n = ops->size;
	size_t i;

	if (n < CQPOLL_DRIVER_OPS_SIZE_MIN || n > DRIVER_OPS_SIZE_LIMIT) {
		CQPOLL_LOG_LIB(ERR, "cq alloc: driver ops table of %zu bytes, this libcqpoll takes %zu to %zu: a driver built against another libcqpoll's cqpoll_driver.h",
			       n, (size_t)CQPOLL_DRIVER_OPS_SIZE_MIN,
			       sizeof(struct cqpoll_driver_ops));
		return -EPROTO;
	}
	for (i = sizeof(*out); i < n; i++) {
		if (((const unsigned char *)ops)[i] != 0) {
			CQPOLL_LOG_LIB(ERR, "cq alloc: driver %s: ops table of %zu bytes gives ops past this libcqpoll's %zu: it needs a newer libcqpoll",
				       ops->name != NULL ? ops->name : "(no name)",
				       n, sizeof(*out));
			return -EPROTO;
		}
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, ops, n < sizeof(*out) ? n : sizeof(*out));
	return 0;
}

struct cqpoll_cq *
cqpoll_cq_alloc(const struct cqpoll_driver_ops *ops, cqpoll_poll_burst_t poll,
		void *priv, const struct cqpoll_cq_params *params)
{
	struct cqpoll_driver_ops table;
	struct cqpoll_cq *cq;

	if (ops != NULL && driver_ops_take(ops, &table) != 0) {
		errno = EPROTO;
		return NULL;
	}
	if (ops == NULL || poll == NULL || params == NULL || ops->name == NULL) {
		CQPOLL_LOG_LIB(ERR, "cq alloc: no %s",
			       ops == NULL ? "ops table" : poll == NULL ?
			       "poll function" : params == NULL ? "params" :
			       "driver name");
		errno = EINVAL;
		return NULL;
	}
	if (ops->arm == NULL || ops->event_fd == NULL ||
	    ops->event_get == NULL || ops->destroy == NULL) {
		CQPOLL_LOG_LIB(ERR, "cq alloc: driver %s lacks a mandatory op (arm, event_fd, event_get, destroy)",
			       ops->name);
		errno = EINVAL;
		return NULL;
	}
	if ((unsigned int)params->arm > CQPOLL_ARM_REPORT_MISSED) {
		CQPOLL_LOG_LIB(ERR, "cq alloc: driver %s: bad arm semantics %d",
			       ops->name, (int)params->arm);
		errno = EINVAL;
		return NULL;
	}
	if (cqpoll_socket_check((params->flags & CQPOLL_CQ_PARAMS_F_SOCKET_ID) ?
				params->socket_id : CQPOLL_SOCKET_ANY,
				"cq alloc") != 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = cqpoll_mem_alloc(sizeof(*cq),
			      (params->flags & CQPOLL_CQ_PARAMS_F_SOCKET_ID) ?
			      params->socket_id : CQPOLL_SOCKET_ANY);
	if (cq == NULL) {
		CQPOLL_LOG_LIB(ERR, "cq alloc: driver %s: out of memory", ops->name);
		errno = ENOMEM;
		return NULL;
	}
	cq->fp.poll = poll;
	cq->fp.priv = priv;
	cq->fp.counters = &cq->counters.fp;
	cq->driver = ops;
	cq->ops = table;
	if (cq->ops.event_ack == NULL)
		cq->ops.event_ack = default_event_ack;
	cq->wake = table.wake;
	if (!(params->flags & CQPOLL_CQ_PARAMS_F_NO_WAIT))
		cq->wait = table.wait;
	if (!(params->flags & CQPOLL_CQ_PARAMS_F_NO_FIRED))
		cq->fired = table.fired;
	cq->arm = params->arm;
	cq->size = params->size;
	cq->event_ack_batch = params->event_ack_batch != 0 ?
		params->event_ack_batch : CQPOLL_EVENT_ACK_BATCH_DEFAULT;
	return cq;
}

void *
cqpoll_cq_priv(const struct cqpoll_cq *cq)
{
	return cq != NULL ? cq->fp.priv : NULL;
}

int
cqpoll_cq_poll_swap(struct cqpoll_cq *cq, cqpoll_poll_burst_t poll, cqpoll_poll_burst_t *old)
{
	if (cq == NULL || poll == NULL)
		return -EINVAL;
	/*
	 * The consumer owns fp.poll; a failure latched (cqpoll_cq_latch_failure())
	 * or reported keeps the failed poll.
	 */
	if (cq->fail_latched || cqpoll_cq_state_now(cq) != CQPOLL_CQ_STATE_OK)
		return -EBUSY;
	if (old != NULL)
		*old = cq->fp.poll;
	cq->fp.poll = poll;
	return 0;
}

void
cqpoll_cq_hold(struct cqpoll_cq *cq)
{
	cq->holds++;
}

void
cqpoll_cq_release(struct cqpoll_cq *cq)
{
	cq->holds--;
}

const struct cqpoll_driver_ops *
cqpoll_cq_driver(const struct cqpoll_cq *cq)
{
	return cq != NULL ? cq->driver : NULL;
}

int
cqpoll_cq_destroy(struct cqpoll_cq *cq)
{
	if (cq == NULL)
		return 0;
	/* The group would poll freed memory at its next iteration. */
	if (cq->group != NULL)
		return -EBUSY;
	/* A driver object (a QP) would read it at its next use or its destroy. */
	if (cq->holds != 0)
		return -EBUSY;
	/* Verbs blocks destroy until every event was acked: never leave any. */
	if (cq->events_unacked != 0)
		cq->ops.event_ack(cq->fp.priv, cq->events_unacked);
	cq->ops.destroy(cq->fp.priv);
	cqpoll_alarm_close(&cq->alarm);
	cqpoll_mem_free(cq);
	return 0;
}

int
cqpoll_cq_info_get(const struct cqpoll_cq *cq, struct cqpoll_cq_info *info)
{
	if (cq == NULL || info == NULL)
		return -EINVAL;
	info->driver = cq->ops.name;
	info->arm = cq->arm;
	info->size = cq->size;
	info->event_ack_batch = cq->event_ack_batch;
	info->state = cqpoll_cq_state_now(cq);
	return 0;
}

int
cqpoll_cq_stats_get(const struct cqpoll_cq *cq, struct cqpoll_cq_stats *stats)
{
	const struct cqpoll_cq_counters *c;
	uint64_t hits;

	if (cq == NULL || stats == NULL)
		return -EINVAL;
	c = &cq->counters;
	/*
	 * Hits before polls: the writer adds to polls first, so polls read
	 * later is never below; the clamp covers weakly ordered readers.
	 */
	hits = __atomic_load_n(&c->fp.hits, __ATOMIC_ACQUIRE);
	stats->polls = __atomic_load_n(&c->fp.polls, __ATOMIC_RELAXED);
	stats->empty_polls = stats->polls > hits ? stats->polls - hits : 0;
	stats->completions = __atomic_load_n(&c->fp.completions, __ATOMIC_RELAXED);
	cqpoll_stats_copy(&stats->arms, &c->arms,
			  sizeof(*c) - offsetof(struct cqpoll_cq_counters, arms));
	return 0;
}

int
cqpoll_cq_stats_reset(struct cqpoll_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	cqpoll_stats_zero(&cq->counters, sizeof(cq->counters));
	return 0;
}
