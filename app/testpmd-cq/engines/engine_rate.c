/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rate engine: open loop. Completion seq is posted when the arrival
 * schedule (arrival.c, --rate and --pattern) says, whatever the poller does,
 * so a slow or sleeping poller shows up as latency instead of slowing the
 * load. It sleeps through long gaps and wakes a margin early to spin to the
 * due time (tpcq_gen_wait()): a late wake-up would bunch the posts and hide
 * the sleep/wake races this tool looks for, a spin through every gap would
 * take the poller's CPU.
 */
#include <rte_cycles.h>
#include <rte_pause.h>

#include "engine.h"
#include "params.h"
#include "run.h"

static uint64_t
rate_total(const struct tpcq_params *p)
{
	return tpcq_arrival_total(p);
}

static int
rate_run(struct tpcq_run *run, uint64_t start)
{
	struct tpcq_arrival arrival;
	uint64_t seq, due;
	int r;

	tpcq_arrival_init(&arrival, run->params, (double)rte_get_tsc_hz());
	for (seq = 0; seq < run->total; seq++) {
		/* From the start, not the last post: late posts do not shift the rest. */
		due = start + (uint64_t)tpcq_arrival_at(&arrival, seq);
		if (tpcq_gen_wait(run, due) != 0)
			return 0;
		/* A full device delays this completion: an overrun of the rate. */
		r = tpcq_gen_post(run, seq, true);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return 0;
}

const struct tpcq_engine tpcq_engine_rate = {
	.name = "rate",
	.help = "open loop: completions due at --rate, spaced by --pattern, "
		"whatever the poller does; latency includes any queueing",
	.open_loop = true,
	.total = rate_total,
	.run = rate_run,
};
