/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_CLOCK_H
#define TPCQ_CLOCK_H

/*
 * The clocks the programs time with, in ns.
 */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define TPCQ_NS_PER_S 1000000000ULL

/* A clock in ns: CLOCK_MONOTONIC for latency, the thread CPU time for CPU. */
static inline uint64_t
tpcq_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * TPCQ_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/*
 * The clocks of the poller's run: wall time, the poller thread's CPU time and
 * the whole process's (generator and emulated devices included).
 */
struct tpcq_clocks {
	uint64_t wall, thread, process;
};

/* Process first and last, so that its window holds the thread's. */
static inline void
tpcq_clocks_read(struct tpcq_clocks *c, bool start)
{
	if (start)
		c->process = tpcq_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	c->wall = tpcq_now_ns(CLOCK_MONOTONIC);
	c->thread = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (!start)
		c->process = tpcq_now_ns(CLOCK_PROCESS_CPUTIME_ID);
}

#endif /* TPCQ_CLOCK_H */
