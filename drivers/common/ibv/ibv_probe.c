/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll_cq_from_ibv(): the probes of the drivers in this build
 * (ibv_probe.h), asked in priority order. What a completion identifies is
 * the caller's flag (CQPOLL_IBV_F_WQE_COUNTER), which each probe reads; this
 * file knows no driver.
 */

#include <errno.h>
#include <pthread.h>

#include "cqpoll_ibv.h"
#include "ibv_autoconf.h"
#include "ibv_probe.h"

#define IBV_FLAGS_KNOWN (CQPOLL_IBV_F_CQ_EX | CQPOLL_IBV_F_SOLICITED_ONLY | \
			 CQPOLL_IBV_F_WQE_COUNTER)

/* CQPOLL_IBV_PROBES(X): X(drv) for each driver that registered a probe. */
#define PROBE_DECLARE(drv) extern const struct cqpoll_ibv_probe cqpoll_##drv##_ibv_probe;
#define PROBE_ENTRY(drv) &cqpoll_##drv##_ibv_probe,
CQPOLL_IBV_PROBES(PROBE_DECLARE)

static const struct cqpoll_ibv_probe *probes[] = { CQPOLL_IBV_PROBES(PROBE_ENTRY) };
#define N_PROBES (sizeof(probes) / sizeof(probes[0]))
static pthread_once_t probes_sorted = PTHREAD_ONCE_INIT;

static void
probes_sort(void)
{
	const struct cqpoll_ibv_probe *p;
	unsigned int i, j;

	/* A handful of drivers: an insertion sort, stable for equal priorities. */
	for (i = 1; i < N_PROBES; i++) {
		p = probes[i];
		for (j = i; j > 0 && probes[j - 1]->priority > p->priority; j--)
			probes[j] = probes[j - 1];
		probes[j] = p;
	}
}

struct cqpoll_cq *
cqpoll_cq_from_ibv(struct ibv_cq *cq, struct ibv_comp_channel *ch,
		   const struct cqpoll_ibv_conf *conf)
{
	static const struct cqpoll_ibv_conf defaults;
	struct cqpoll_cq *h;
	unsigned int i;

	if (conf == NULL)
		conf = &defaults;
	if (cq == NULL || ch == NULL || cq->channel != ch ||
	    (conf->flags & ~(uint32_t)IBV_FLAGS_KNOWN) != 0) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&probes_sorted, probes_sort);
	for (i = 0; i < N_PROBES; i++) {
		h = probes[i]->attach(cq, ch, conf);
		if (h != NULL || errno != EOPNOTSUPP)
			return h;
	}
	errno = EOPNOTSUPP;
	return NULL;
}
