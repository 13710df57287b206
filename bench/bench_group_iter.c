/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What one iteration of a poll group costs, for callgrind
 * (bench/run_group_iter.sh): a group of N software CQs, in busy mode or in
 * adaptive mode with a policy, every CQ hot (cold CQs off) or with the
 * default cold timer, runs I iterations of cqpoll_group_run_once(), with
 * one completion posted to one CQ before each iteration (--traffic), before
 * every K-th (--every=K: a ping-pong's silences, K - 1 empty polls between
 * completions) or none. The script counts the instructions inside
 * cqpoll_group_run_once() for I and 2I iterations and divides the
 * difference by I (or by the completions), so that set-up cancels out.
 *
 * A sleep would block this lone thread until the group's timeout: the
 * script's adaptive runs give the policy a wake-up cost no silence here is
 * worth (wake_us) and no probe, so that every decision is to poll, and the
 * count is the policy's bookkeeping, not a sleep. The sleeps are printed.
 *
 * usage: bench_group_iter CQS ITERATIONS [--traffic] [--every=K] [--cold]
 *                         [--policy=SPEC]
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

static int
usage(const char *prog)
{
	fprintf(stderr, "usage: %s CQS ITERATIONS [--traffic] [--every=K] [--cold] [--policy=SPEC]\n"
		"  --policy=SPEC  adaptive mode with this policy (e.g. adaptive:probe_ms=0);\n"
		"                 busy mode without it\n", prog);
	return 2;
}

int
main(int argc, char **argv)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY,
					  .cold_us = CQPOLL_GROUP_COLD_NEVER };
	struct cqpoll_completion c = { .byte_len = 8 };
	struct cqpoll_group_stats st;
	struct cqpoll_cq **cq;
	struct cqpoll_group *g;
	unsigned long ncq, iters, every = 0, i;
	char *end;
	int a;

	if (argc < 3)
		return usage(argv[0]);
	ncq = strtoul(argv[1], NULL, 0);
	iters = strtoul(argv[2], NULL, 0);
	for (a = 3; a < argc; a++) {
		if (strcmp(argv[a], "--traffic") == 0) {
			every = 1;
		} else if (strncmp(argv[a], "--every=", 8) == 0) {
			every = strtoul(argv[a] + 8, &end, 0);
			if (*end != '\0' || every == 0) {
				fprintf(stderr, "%s: --every wants a count >= 1: %s\n",
					argv[0], argv[a]);
				return 2;
			}
		} else if (strcmp(argv[a], "--cold") == 0) {
			conf.cold_us = 0;
		} else if (strncmp(argv[a], "--policy=", 9) == 0) {
			conf.mode = CQPOLL_GROUP_MODE_ADAPTIVE;
			conf.policy = cqpoll_policy_find(argv[a] + 9,
							 &conf.policy_args);
			if (conf.policy == NULL) {
				fprintf(stderr, "%s: no such policy: %s\n",
					argv[0], argv[a] + 9);
				return 2;
			}
		} else {
			return usage(argv[0]);
		}
	}
	if (ncq == 0 || iters == 0)
		return usage(argv[0]);
	g = cqpoll_group_create(&conf);
	if (g == NULL) {
		fprintf(stderr, "%s: cqpoll_group_create: %s\n", argv[0],
			strerror(errno));
		return 1;
	}
	cq = calloc(ncq, sizeof(*cq));
	if (cq == NULL)
		return 1;
	for (i = 0; i < ncq; i++) {
		cq[i] = cqpoll_sw_cq_create(NULL);
		if (cq[i] == NULL || cqpoll_group_add(g, cq[i], on_comps, NULL) != 0)
			return 1;
	}
	for (i = 0; i < iters; i++) {
		if (every != 0 && i % every == 0)
			cqpoll_sw_post(cq[(i / every) % ncq], &c);
		if (cqpoll_group_run_once(g) < 0)
			return 1;
	}
	if (cqpoll_group_stats_get(g, &st) != 0)
		return 1;
	printf("%lu iterations, %llu completions, %llu sleeps\n", iters,
	       delivered, (unsigned long long)st.sleeps);
	cqpoll_group_destroy(g);
	for (i = 0; i < ncq; i++)
		cqpoll_cq_destroy(cq[i]);
	free(cq);
	return 0;
}
