/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What one iteration of a busy poll group costs, for callgrind
 * (bench/run_group_iter.sh): a group of N software CQs in busy mode, every
 * CQ hot (cold CQs off) or with the default cold timer, runs I iterations
 * of cqpoll_group_run_once(), with one completion posted to one CQ before
 * each iteration (--traffic) or none. The script counts the instructions
 * inside cqpoll_group_run_once() for I and 2I iterations and divides the
 * difference by I, so that set-up cancels out.
 *
 * usage: bench_group_iter CQS ITERATIONS [--traffic] [--cold]
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"

static unsigned long long delivered;

static void
on_comps(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	 unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	(void)arg;
	delivered += n;
}

int
main(int argc, char **argv)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY,
					  .cold_us = CQPOLL_GROUP_COLD_NEVER };
	struct cqpoll_completion c = { .byte_len = 8 };
	struct cqpoll_cq **cq;
	struct cqpoll_group *g;
	unsigned long ncq, iters, i;
	bool traffic = false;
	int a;

	if (argc < 3) {
		fprintf(stderr, "usage: %s CQS ITERATIONS [--traffic] [--cold]\n", argv[0]);
		return 2;
	}
	ncq = strtoul(argv[1], NULL, 0);
	iters = strtoul(argv[2], NULL, 0);
	for (a = 3; a < argc; a++) {
		if (strcmp(argv[a], "--traffic") == 0)
			traffic = true;
		else if (strcmp(argv[a], "--cold") == 0)
			conf.cold_us = 0;
		else
			return 2;
	}
	if (ncq == 0 || iters == 0)
		return 2;
	g = cqpoll_group_create(&conf);
	cq = calloc(ncq, sizeof(*cq));
	if (g == NULL || cq == NULL)
		return 1;
	for (i = 0; i < ncq; i++) {
		cq[i] = cqpoll_sw_cq_create(NULL);
		if (cq[i] == NULL || cqpoll_group_add(g, cq[i], on_comps, NULL) != 0)
			return 1;
	}
	for (i = 0; i < iters; i++) {
		if (traffic)
			cqpoll_sw_post(cq[i % ncq], &c);
		if (cqpoll_group_run_once(g) < 0)
			return 1;
	}
	printf("%lu iterations, %llu completions\n", iters, delivered);
	cqpoll_group_destroy(g);
	for (i = 0; i < ncq; i++)
		cqpoll_cq_destroy(cq[i]);
	free(cq);
	return 0;
}
