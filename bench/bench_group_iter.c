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
 * The adaptive policy decides on time, and under callgrind the real clock
 * runs some fifty times slower than the code, unevenly: its silences, and
 * so its work (the buckets its histogram fills), would change from run to
 * run and with the machine's load. bench_group_iter_vclock, built from this
 * file with BENCH_VCLOCK, replaces clock_gettime() for the whole process,
 * the library included, with a virtual clock: every read advances it by
 * 50 to 150 ns (100 on average, a fixed pseudo-random sequence), and one
 * read in 4096 by 3 us more, a stalled sender. Its counts repeat exactly,
 * and --every=12 is a ping-pong of a ~1.2 us round trip, the UCX
 * shared-memory one of the results page, where the policy polls through
 * every silence. The sleeps are printed: with no other thread to post, a
 * sleep would last the group's whole timeout.
 *
 * usage: bench_group_iter CQS ITERATIONS [--traffic] [--every=K] [--cold]
 *                         [--policy=SPEC]
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"

static unsigned long long delivered;

#ifdef BENCH_VCLOCK
/* Virtual time: starts at 1 ms (0 means "never" to the policy). */
static uint64_t vclock_ns = 1000000;
static uint64_t vclock_rng = 88172645463325252ull;

/* Every clock of the process reads the virtual one (see above). */
int
clock_gettime(clockid_t id, struct timespec *ts)
{
	(void)id;
	/* xorshift64: the same sequence on every run. */
	vclock_rng ^= vclock_rng << 13;
	vclock_rng ^= vclock_rng >> 7;
	vclock_rng ^= vclock_rng << 17;
	vclock_ns += 50 + vclock_rng % 101;
	if ((vclock_rng >> 32) % 4096 == 0)
		vclock_ns += 3000;
	ts->tv_sec = (time_t)(vclock_ns / 1000000000u);
	ts->tv_nsec = (long)(vclock_ns % 1000000000u);
	return 0;
}
#endif

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
#ifdef BENCH_VCLOCK
	printf("virtual clock at %llu ns\n", (unsigned long long)vclock_ns);
#endif
	cqpoll_group_destroy(g);
	for (i = 0; i < ncq; i++)
		cqpoll_cq_destroy(cq[i]);
	free(cq);
	return 0;
}
