/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A poll group created by the lcore that runs it: the first touch of its
 * memory, hence the NUMA node of its pages, is that lcore's.
 */

#include <errno.h>

#include <rte_launch.h>
#include <rte_lcore.h>

#include "cqpoll_dpdk_lcore.h"

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
		errno = EINVAL;
		return NULL;
	}
	if (lcore_id == rte_lcore_id()) {
		create_here(&a);
	} else {
		/* Only the main lcore launches on, and waits for, workers. */
		if (rte_lcore_id() != rte_get_main_lcore() ||
		    lcore_id == rte_get_main_lcore()) {
			errno = EINVAL;
			return NULL;
		}
		r = rte_eal_remote_launch(create_here, &a, lcore_id);
		if (r < 0) {
			errno = -r;
			return NULL;
		}
		rte_eal_wait_lcore(lcore_id);
	}
	errno = a.err;
	return a.g;
}
