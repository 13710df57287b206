/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_IBV_PROBE_H
#define CQPOLL_IBV_PROBE_H

/*
 * Which driver takes an existing ibv_cq (cqpoll_cq_from_ibv()): every driver
 * over libibverbs offers a probe, asked in ascending priority until one takes
 * the CQ. A driver registers its probe by defining
 * `const struct cqpoll_ibv_probe cqpoll_<drv>_ibv_probe` and naming itself
 * in `cqpoll_ibv_probes` in its meson.build: the list is a table built into
 * libcqpoll, not a constructor, so that a static link keeps every probe
 * (objects that only register themselves at load time are dropped from
 * archives). Private to libcqpoll.
 */

#include <infiniband/verbs.h>

#include "cqpoll_ibv.h"

struct cqpoll_ibv_probe {
	const char *name;
	/* Lower first. The direct path, when it takes a CQ, beats the generic one. */
	int priority;
	/*
	 * Wrap @p cq (on @p ch, whose flags are known and consistent). NULL
	 * with errno EOPNOTSUPP: not this driver's CQ, the next probe is
	 * asked. NULL with any other errno: the CQ is this driver's and
	 * cannot be wrapped; that is the answer.
	 */
	struct cqpoll_cq *(*attach)(struct ibv_cq *cq, struct ibv_comp_channel *ch,
				    const struct cqpoll_ibv_conf *conf);
};

#endif /* CQPOLL_IBV_PROBE_H */
