/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator lcore: the device side. It waits for the poller, runs the
 * engine (--engine, engine_*.c) that decides when each completion is posted,
 * then tells the poller it is done. The engines share one way to post, so
 * that every engine keeps the same delivery check and post-time record.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_pause.h>

#include "testpmd_cq.h"

/* Like testpmd's forwarding engines: the first is the default. */
static const struct tpcq_engine *const engines[] = {
	&tpcq_engine_rate,
	&tpcq_engine_pingpong,
	&tpcq_engine_drain,
};

const struct tpcq_engine *
tpcq_engine_find(const char *name)
{
	size_t i;

	for (i = 0; i < RTE_DIM(engines); i++)
		if (strcmp(engines[i]->name, name) == 0)
			return engines[i];
	return NULL;
}

const struct tpcq_engine *
tpcq_engine_default(void)
{
	return engines[0];
}

const char *
tpcq_engine_names(void)
{
	static char names[64];
	size_t i, n = 0;

	if (names[0] != '\0')
		return names;
	for (i = 0; i < RTE_DIM(engines) && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
				      i ? "|" : "", engines[i]->name);
	return names;
}

void
tpcq_engine_usage(FILE *f)
{
	size_t i;

	for (i = 0; i < RTE_DIM(engines); i++) {
		fprintf(f, "    %s%s\n", engines[i]->name, i == 0 ? " (default)" : "");
		tpcq_usage_wrap(f, engines[i]->help);
	}
}

bool
tpcq_gen_must_stop(const struct tpcq_run *run)
{
	return __atomic_load_n(&run->stop, __ATOMIC_RELAXED) ||
		tpcq_interrupted();
}

/*
 * For devices whose timestamps are on their own clock: when this post was
 * made, on the poller's clock. Stored before the post, so that the poller,
 * which reads it after the completion, finds it written.
 */
static inline void
record_post_time(struct tpcq_run *run, uint64_t seq)
{
	__atomic_store_n(&run->post_ns[seq & run->post_ns_mask],
			 tpcq_now_ns(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
}

int
tpcq_gen_post(struct tpcq_run *run, uint64_t seq, bool count_full)
{
	const struct tpcq_dev *dev = run->params->dev;
	unsigned int ncqs = run->traffic_cqs;
	bool full = false;
	int r;

	for (;;) {
		if (run->post_ns != NULL)
			record_post_time(run, seq);
		/* Round robin: each CQ sees its own dense sequence. */
		r = dev->post(&run->dcs[seq % ncqs], seq / ncqs);
		if (r != -ENOSPC)
			break;
		/* A full device delays this completion; it is never dropped. */
		if (!full && count_full)
			__atomic_store_n(&run->overruns, run->overruns + 1,
					 __ATOMIC_RELAXED);
		full = true;
		if (tpcq_gen_must_stop(run))
			return 1;
		rte_pause();
	}
	if (r < 0) {
		run->gen_error = r;
		return r;
	}
	/* Release: the poller that reads this count may expect the entry. */
	__atomic_store_n(&run->posted, seq + 1, __ATOMIC_RELEASE);
	return 0;
}

uint64_t
tpcq_gen_end(const struct tpcq_run *run, uint64_t start)
{
	if (run->total == UINT64_MAX)
		return UINT64_MAX;
	return start + (uint64_t)(run->params->duration_s *
				  (double)rte_get_tsc_hz());
}

int
tpcq_gen_main(void *arg)
{
	struct tpcq_run *run = arg;
	struct cqpoll_group *g;
	uint64_t start;
	unsigned int k;

	while (!__atomic_load_n(&run->start, __ATOMIC_ACQUIRE)) {
		if (tpcq_gen_must_stop(run))
			goto out;
		rte_pause();
	}
	start = rte_rdtsc();
	run->params->engine->run(run, start);
	run->gen_tsc = rte_rdtsc() - start;
out:
	/*
	 * Release publishes gen_error, gen_tsc and the final counts. Sequentially
	 * consistent with the poller's group store and gen_done load: either the
	 * group is seen here and woken, or the poller sees the end before it
	 * sleeps. Without the wake-up a group asleep on idle CQs would notice the
	 * end only at its safety-net timeout.
	 */
	__atomic_store_n(&run->gen_done, true, __ATOMIC_SEQ_CST);
	for (k = 0; k < run->npollers; k++) {
		g = __atomic_load_n(&run->groups[k], __ATOMIC_SEQ_CST);
		if (g != NULL)
			cqpoll_group_wakeup(g);
	}
	__atomic_store_n(&run->gen_left, true, __ATOMIC_RELEASE);
	return run->gen_error;
}
