/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libcqpoll's log hook, wired to DPDK's log at start-up: the core's messages
 * under logtype lib.cqpoll, each driver's under pmd.cqpoll.DRIVER. The
 * logtypes are registered by constructors, like DPDK's own, so that
 * --log-level=lib.cqpoll:debug or pmd.cqpoll.*:debug applies to them.
 */

#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "cqpoll_dpdk_private.h"
#include "cqpoll_log.h"

RTE_LOG_REGISTER(cqpoll_dpdk_logtype, lib.cqpoll, NOTICE);

/*
 * One logtype per known driver. Registering a logtype later, from whatever
 * thread logs first, would grow DPDK's table under readers that take no
 * lock; a driver not listed logs under lib.cqpoll with its name in front.
 */
static struct {
	const char *driver;
	const char *logtype_name;
	int logtype;
} drivers[] = {
	{ "sw", "pmd.cqpoll.sw", -1 },
	{ "mlx5", "pmd.cqpoll.mlx5", -1 },
	{ "verbs", "pmd.cqpoll.verbs", -1 },
	{ "uring", "pmd.cqpoll.uring", -1 },
	{ "ofi", "pmd.cqpoll.ofi", -1 },
	{ "ucx", "pmd.cqpoll.ucx", -1 },
};

static int
logtype_of(const char *component)
{
	unsigned int i;

	/* The core's messages first: its sleep and wake-up ask every cycle. */
	if (strcmp(component, CQPOLL_LOG_CORE) == 0)
		return cqpoll_dpdk_logtype;
	for (i = 0; i < RTE_DIM(drivers); i++)
		if (drivers[i].logtype >= 0 &&
		    strcmp(component, drivers[i].driver) == 0)
			return drivers[i].logtype;
	return cqpoll_dpdk_logtype;
}

static bool
hook_enabled(void *arg, enum cqpoll_log_level level, const char *component)
{
	(void)arg;
	return rte_log_can_log((uint32_t)logtype_of(component), (uint32_t)level);
}

static void
hook_write(void *arg, enum cqpoll_log_level level, const char *component,
	   const char *msg)
{
	int type = logtype_of(component);

	(void)arg;
	if (strcmp(component, CQPOLL_LOG_CORE) == 0)
		rte_log((uint32_t)level, (uint32_t)type, "CQPOLL: %s\n", msg);
	else
		rte_log((uint32_t)level, (uint32_t)type, "CQPOLL %s: %s\n",
			component, msg);
}

static const struct cqpoll_log_hook dpdk_hook = {
	.enabled = hook_enabled,
	.write = hook_write,
};

RTE_INIT(cqpoll_dpdk_log_init)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(drivers); i++)
		drivers[i].logtype = rte_log_register_type_and_pick_level(
			drivers[i].logtype_name, RTE_LOG_NOTICE);
	/* An application's own hook, installed earlier, is left in place. */
	if (cqpoll_log_get_hook() == NULL)
		cqpoll_log_set_hook(&dpdk_hook);
}
