/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pingpong engine: request/response with one completion outstanding. The
 * generator plays the peer that echoes: it posts the response to the next
 * request only once the poller has consumed the previous one, so latency is
 * the response latency (wake-up included in interrupt mode) and the rate is
 * round trips per second, as perftest's latency tests measure.
 */
#include <rte_cycles.h>
#include <rte_pause.h>

#include "engine.h"
#include "params.h"
#include "run.h"

/* How long the echo waits for a completion the poller never reads. */
#define ECHO_GRACE_S 1

static uint64_t
pingpong_total(const struct tpcq_params *p)
{
	(void)p;
	return 0;
}

/* Whether the poller consumed completion seq; false if it is overdue. */
static bool
wait_consumed(struct tpcq_run *run, uint64_t seq, uint64_t give_up)
{
	while (__atomic_load_n(&run->consumed, __ATOMIC_ACQUIRE) <= seq) {
		/* A lost completion is the poller's drain to report, not a hang. */
		if (tpcq_gen_must_stop(run) || rte_rdtsc() > give_up)
			return false;
		/* A sleeping poller's arm may be what the device must read. */
		tpcq_gen_service(run);
		rte_pause();
	}
	return true;
}

static int
pingpong_run(struct tpcq_run *run, uint64_t start)
{
	uint64_t hz = rte_get_tsc_hz(), seq, end;
	int r;

	end = tpcq_gen_end(run, start);
	/*
	 * Stop (Ctrl-C, the prompt's stop) is checked here too: a poller that
	 * keeps up never makes the post or the echo wait, where it is checked.
	 */
	for (seq = 0; rte_rdtsc() < end && !tpcq_gen_must_stop(run); seq++) {
		/* One outstanding: the CQ is never full; count it if it is. */
		r = tpcq_gen_post(run, seq, true);
		if (r != 0)
			return r < 0 ? r : 0;
		/* Saturated: an endless run (-i) waits until told to stop. */
		if (!wait_consumed(run, seq, end > UINT64_MAX - ECHO_GRACE_S * hz ?
				   UINT64_MAX : end + ECHO_GRACE_S * hz))
			break;
	}
	return 0;
}

const struct tpcq_engine tpcq_engine_pingpong = {
	.name = "pingpong",
	.help = "request/response: the device echoes, posting the next "
		"completion once the poller consumed the last; latency is the "
		"response latency, achieved_rate the round trips per second",
	.open_loop = false,
	.total = pingpong_total,
	.run = pingpong_run,
};
