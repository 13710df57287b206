/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator lcore: the device side. It posts completions on an open-loop
 * schedule (arrival.c), whatever the poller does, so
 * a slow or sleeping poller shows up as latency instead of slowing the load.
 * It spins on the TSC rather than sleeping: a sleep's wake-up jitter would
 * bunch the posts and hide the sleep/wake races this tool looks for.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "testpmd_cq.h"

static bool
must_stop(const struct tpcq_run *run)
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
tpcq_gen_main(void *arg)
{
	struct tpcq_run *run = arg;
	const struct tpcq_dev *dev = run->params->dev;
	unsigned int ncqs = run->ncqs;
	struct cqpoll_group *g;
	struct tpcq_arrival arrival;
	uint64_t seq, start, due;
	bool full;
	int r = 0;

	tpcq_arrival_init(&arrival, run->params, (double)rte_get_tsc_hz());

	while (!__atomic_load_n(&run->start, __ATOMIC_ACQUIRE)) {
		if (must_stop(run))
			goto out_nostart;
		rte_pause();
	}

	start = rte_rdtsc();
	for (seq = 0; seq < run->total; seq++) {
		/* From the start, not the last post: late posts do not shift the rest. */
		due = start + (uint64_t)tpcq_arrival_at(&arrival, seq);
		while (rte_rdtsc() < due) {
			if (must_stop(run))
				goto out;
			rte_pause();
		}

		full = false;
		for (;;) {
			if (run->post_ns != NULL)
				record_post_time(run, seq);
			/* Round robin: each CQ sees its own dense sequence. */
			r = dev->post(&run->dcs[seq % ncqs], seq / ncqs);
			if (r != -ENOSPC)
				break;
			/* A full device delays this completion; it is never dropped. */
			if (!full) {
				full = true;
				__atomic_store_n(&run->overruns, run->overruns + 1,
						 __ATOMIC_RELAXED);
			}
			if (must_stop(run))
				goto out;
			rte_pause();
		}
		if (r < 0) {
			run->gen_error = r;
			break;
		}
		/* Release: the poller that reads this count may expect the entry. */
		__atomic_store_n(&run->posted, seq + 1, __ATOMIC_RELEASE);
	}
out:
	run->gen_tsc = rte_rdtsc() - start;
out_nostart:
	/*
	 * Release publishes gen_error, gen_tsc and the final counts. Sequentially
	 * consistent with the poller's group store and gen_done load: either the
	 * group is seen here and woken, or the poller sees the end before it
	 * sleeps. Without the wake-up a group asleep on idle CQs would notice the
	 * end only at its safety-net timeout.
	 */
	__atomic_store_n(&run->gen_done, true, __ATOMIC_SEQ_CST);
	g = __atomic_load_n(&run->group, __ATOMIC_SEQ_CST);
	if (g != NULL)
		cqpoll_group_wakeup(g);
	__atomic_store_n(&run->gen_left, true, __ATOMIC_RELEASE);
	return run->gen_error;
}
