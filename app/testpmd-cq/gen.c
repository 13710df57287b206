/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator lcore: the device side. It posts completions on an open-loop
 * schedule, completion i due at start + i / rate, whatever the poller does, so
 * a slow or sleeping poller shows up as latency instead of slowing the load.
 * It spins on the TSC rather than sleeping: a sleep's wake-up jitter would
 * bunch the posts and hide the sleep/wake races this tool looks for.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "testpmd_cq.h"

static bool
must_stop(const struct tpcq_run *run)
{
	return __atomic_load_n(&run->stop, __ATOMIC_RELAXED) ||
		tpcq_interrupted();
}

int
tpcq_gen_main(void *arg)
{
	struct tpcq_run *run = arg;
	const struct tpcq_dev *dev = run->params->dev;
	struct cqpoll_completion comp;
	double tsc_per_comp;
	uint64_t seq, start, due;
	bool full;
	int r = 0;

	tsc_per_comp = (double)rte_get_tsc_hz() / (double)run->params->rate;
	memset(&comp, 0, sizeof(comp));
	comp.status = CQPOLL_STATUS_SUCCESS;
	comp.opcode = CQPOLL_OP_RECV;
	comp.byte_len = TPCQ_BYTE_LEN;
	comp.qp_num = TPCQ_QP_NUM;

	while (!__atomic_load_n(&run->start, __ATOMIC_ACQUIRE)) {
		if (must_stop(run))
			goto out_nostart;
		rte_pause();
	}

	start = rte_rdtsc();
	for (seq = 0; seq < run->total; seq++) {
		/* From the start, not the last post: late posts do not shift the rest. */
		due = start + (uint64_t)((double)seq * tsc_per_comp);
		while (rte_rdtsc() < due) {
			if (must_stop(run))
				goto out;
			rte_pause();
		}

		comp.wr_id = seq;
		full = false;
		while ((r = dev->post(run->cq, &comp)) == -ENOSPC) {
			/* A full CQ delays this completion; it is never dropped. */
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
	/* Release publishes gen_error, gen_tsc and the final counts. */
	__atomic_store_n(&run->gen_done, true, __ATOMIC_RELEASE);
	return run->gen_error;
}
