/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The power-monitor tier's core side: the drivers' monitor addresses, the
 * test of a condition, the hook that waits, and a group's bounded monitor
 * wait with its fallback to polling.
 */

#include <errno.h>

#include "cqpoll_log_private.h"
#include "cqpoll_monitor_private.h"
#include "cqpoll_private.h"

static const struct cqpoll_monitor_hook *monitor_hook;

int
cqpoll_cq_get_monitor_addr(struct cqpoll_cq *cq, struct cqpoll_monitor_cond *cond)
{
	if (cq == NULL || cond == NULL)
		return -EINVAL;
	if (cq->ops.get_monitor_addr == NULL)
		return -ENOTSUP;
	return cq->ops.get_monitor_addr(cq->fp.priv, cond);
}

int
cqpoll_monitor_cond_met(const struct cqpoll_monitor_cond *cond)
{
	uint64_t v;

	if (cond == NULL || cond->match > CQPOLL_MONITOR_NOT_EQUAL)
		return -EINVAL;
	switch (cond->size) {
	case 1:
		v = __atomic_load_n((const volatile uint8_t *)cond->addr,
				    __ATOMIC_ACQUIRE);
		break;
	case 2:
		v = __atomic_load_n((const volatile uint16_t *)cond->addr,
				    __ATOMIC_ACQUIRE);
		break;
	case 4:
		v = __atomic_load_n((const volatile uint32_t *)cond->addr,
				    __ATOMIC_ACQUIRE);
		break;
	case 8:
		v = __atomic_load_n((const volatile uint64_t *)cond->addr,
				    __ATOMIC_ACQUIRE);
		break;
	default:
		return -EINVAL;
	}
	v &= cond->mask;
	return cond->match == CQPOLL_MONITOR_EQUAL ? v == cond->val : v != cond->val;
}

int
cqpoll_monitor_set_hook(const struct cqpoll_monitor_hook *hook)
{
	if (hook != NULL && (hook->available == NULL || hook->wait == NULL))
		return -EINVAL;
	__atomic_store_n(&monitor_hook, hook, __ATOMIC_RELEASE);
	return 0;
}

int
cqpoll_monitor_available(unsigned int n, const char **reason)
{
	const struct cqpoll_monitor_hook *h =
		__atomic_load_n(&monitor_hook, __ATOMIC_ACQUIRE);
	const char *why = NULL;

	if (h == NULL)
		why = "no monitor hook installed (libcqpoll_dpdk installs rte_power_monitor())";
	else if (n == 0 || n > CQPOLL_MONITOR_MAX)
		why = "too many CQs to monitor at once";
	else if (!h->available(h->arg, n, &why) && why == NULL)
		why = "the monitor hook says no";
	if (reason != NULL)
		*reason = why;
	return why == NULL;
}

/* Say once per process why the tier a policy asked for is off. */
static void
report_off(const char *why)
{
	static int said;

	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) == 0)
		CQPOLL_LOG_LIB(NOTICE, "power-monitor tier off, polling instead: %s",
			       why);
}

int
cqpoll_monitor_wait_cqs(struct cqpoll_cq *const *cqs, unsigned int n)
{
	struct cqpoll_monitor_cond conds[CQPOLL_MONITOR_MAX];
	const struct cqpoll_monitor_hook *h;
	const char *why;
	unsigned int i;
	int r;

	if (!cqpoll_monitor_available(n, &why)) {
		report_off(why);
		return -ENOTSUP;
	}
	for (i = 0; i < n; i++) {
		r = cqpoll_cq_get_monitor_addr(cqs[i], &conds[i]);
		if (r == -ENOTSUP)
			report_off("a CQ's driver has no monitor address");
		if (r != 0)
			return r;
	}
	h = __atomic_load_n(&monitor_hook, __ATOMIC_ACQUIRE);
	return h->wait(h->arg, conds, n, CQPOLL_MONITOR_WAIT_MAX_NS);
}
