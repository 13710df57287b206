/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drain engine: closed loop at the device's limit. The generator posts as
 * fast as the device takes completions, keeping the CQ as full as it allows
 * for --duration, so the achieved rate is the most completions per second the
 * poller sustains and latency is mostly time spent queued in a full CQ.
 */
#include <rte_cycles.h>

#include "engine.h"
#include "params.h"
#include "run.h"

static uint64_t
drain_total(const struct tpcq_params *p)
{
	(void)p;
	return 0;
}

static int
drain_run(struct tpcq_run *run, uint64_t start)
{
	uint64_t seq, end;
	int r;

	end = tpcq_gen_end(run, start);
	/* Stop is checked here too: a poller that keeps up never fills the CQ. */
	for (seq = 0; rte_rdtsc() < end && !tpcq_gen_must_stop(run); seq++) {
		/* A full CQ is this engine's steady state, not an overrun. */
		r = tpcq_gen_post(run, seq, false);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return 0;
}

const struct tpcq_engine tpcq_engine_drain = {
	.name = "drain",
	.help = "closed loop: the device keeps the CQ as full as it allows; "
		"achieved_rate is the most completions per second the poller "
		"sustains",
	.open_loop = false,
	.total = drain_total,
	.run = drain_run,
};
