/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A poll group created by the lcore that runs it: the first touch of its
 * memory, hence the NUMA node of its pages, is that lcore's.
 */

#include <errno.h>

#include <rte_launch.h>
#include <rte_lcore.h>

#include "cqpoll_dpdk_lcore.h"
#include "cqpoll_dpdk_private.h"

struct create_args {
	const struct cqpoll_group_conf *conf;
	struct cqpoll_group *g;
	int err; /* errno is per thread: carried back by hand. */
};

static int
create_here(void *arg)
{
	struct create_args *a = arg;

	a->g = cqpoll_group_create(a->conf);
	a->err = a->g != NULL ? 0 : errno;
	return 0;
}

struct cqpoll_group *
cqpoll_dpdk_group_create_on_lcore(const struct cqpoll_group_conf *conf,
				  unsigned int lcore_id)
{
	struct create_args a = { .conf = conf };
	int r;

	if (lcore_id >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcore_id)) {
		CQPOLL_DPDK_LOG(ERR, "group create on lcore %u: not an enabled lcore",
				lcore_id);
		cqpoll_dpdk_err(EINVAL);
		return NULL;
	}
	if (lcore_id == rte_lcore_id()) {
		create_here(&a);
	} else {
		/* Only the main lcore launches on, and waits for, workers. */
		if (rte_lcore_id() != rte_get_main_lcore() ||
		    lcore_id == rte_get_main_lcore()) {
			CQPOLL_DPDK_LOG(ERR, "group create on lcore %u: only the main lcore creates on another lcore",
					lcore_id);
			cqpoll_dpdk_err(EINVAL);
			return NULL;
		}
		r = rte_eal_remote_launch(create_here, &a, lcore_id);
		if (r < 0) {
			CQPOLL_DPDK_LOG(ERR, "group create on lcore %u: %s",
					lcore_id, r == -EBUSY ?
					"the lcore is running a function" :
					rte_strerror(-r));
			cqpoll_dpdk_err(-r);
			return NULL;
		}
		rte_eal_wait_lcore(lcore_id);
	}
	/* The core logged the reason of a failure. */
	if (a.g == NULL)
		cqpoll_dpdk_err(a.err);
	else
		errno = 0;
	return a.g;
}
