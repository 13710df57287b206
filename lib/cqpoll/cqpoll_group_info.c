/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A group's description for monitoring: only what another thread may read
 * while the group runs (the mode request is atomic, the rest is set once).
 */

#include <errno.h>

#include "cqpoll_group_private.h"

int
cqpoll_group_info_get(const struct cqpoll_group *g, struct cqpoll_group_info *info)
{
	if (g == NULL || info == NULL)
		return -EINVAL;
	info->mode = (enum cqpoll_group_mode)
		__atomic_load_n(&g->mode_req, __ATOMIC_ACQUIRE);
	info->policy = g->policy->name;
	info->burst = g->burst;
	info->wait_timeout_ms = (uint32_t)g->wait_timeout_ms;
	return 0;
}
