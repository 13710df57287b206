/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poller: the consumer side, on the main lcore. With one CQ in poll or
 * interrupt mode it runs one of three loops until the generator is done, then
 * drains what is left with plain polls, so that every posted completion is
 * accounted for whatever the mode. Other runs go to the poll group
 * (poller_group.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include <cqpoll_driver.h>

#include "dev.h"
#include "params.h"
#include "plugin.h"
#include "poller.h"
#include "run.h"
#include "testpmd_cq.h"

/* How long the drain may take beyond any injected visibility delay. */
#define DRAIN_LIMIT_NS TPCQ_NS_PER_S

struct poller {
	struct tpcq_run *run;
	struct tpcq_result *res;
	struct cqpoll_cq *cq;
	struct cqpoll_completion *comps;
	struct tpcq_check check;
	uint64_t naive_delay_tsc;
	unsigned int burst;
	int timeout_ms;
};

static void
process(struct poller *pl, unsigned int n)
{
	tpcq_check_burst(pl->run, pl->res, &pl->check, pl->comps, n);
	/* Release: a device bounded by what is unread may reuse these slots. */
	__atomic_store_n(&pl->run->consumed, pl->res->completions,
			 __ATOMIC_RELEASE);
}

static int
fail(struct poller *pl, const char *call, int err)
{
	pl->res->error = err;
	pl->res->error_call = call;
	return err;
}

static bool
gen_finished(const struct tpcq_run *run)
{
	return __atomic_load_n(&run->gen_done, __ATOMIC_ACQUIRE);
}

/* Sleep; a timeout or a signal only means "poll again". */
static int
wait_event(struct poller *pl)
{
	int r;

	r = cqpoll_cq_wait(pl->cq, pl->timeout_ms);
	if (r < 0 && r != -EINTR)
		return fail(pl, "cqpoll_cq_wait", r);
	return 0;
}

static int
loop_poll(struct poller *pl)
{
	int n;

	for (;;) {
		n = cqpoll_poll_burst(pl->cq, pl->comps, pl->burst);
		if (n > 0)
			process(pl, (unsigned int)n);
		else if (n < 0)
			return fail(pl, "cqpoll_poll_burst", n);
		else if (gen_finished(pl->run))
			return 0;
	}
}

static int
loop_poll_and_arm(struct poller *pl)
{
	int n, r;

	for (;;) {
		n = cqpoll_poll_and_arm(pl->cq, pl->comps, pl->burst);
		if (n > 0) {
			process(pl, (unsigned int)n);
			continue;
		}
		/*
		 * Not armed: a report-missed device kept saying "missed" with
		 * nothing visible yet (UCX shared memory: a sender between
		 * taking a FIFO slot and filling it). Poll on, never sleep.
		 */
		if (n == -EAGAIN && !gen_finished(pl->run))
			continue;
		if (n < 0)
			return fail(pl, "cqpoll_poll_and_arm", n);
		/* Checked before each sleep, so the end costs no sleep. */
		if (gen_finished(pl->run))
			return 0;
		r = wait_event(pl);
		if (r < 0)
			return r;
	}
}

/*
 * A thread preempted between its last empty poll and its arm: on emulated
 * devices that window is otherwise a few nanoseconds wide, too narrow for a
 * completion to fall into it often enough to be seen in a short run.
 */
static void
naive_window(const struct poller *pl)
{
	const struct tpcq_dev *dev = pl->run->params->dev;
	uint64_t end;

	if (pl->naive_delay_tsc != 0) {
		end = rte_rdtsc() + pl->naive_delay_tsc;
		while (rte_rdtsc() < end)
			rte_pause();
	}
	/* A device written only by the consumer's thread: its write here. */
	if (dev->naive_window != NULL)
		dev->naive_window(pl->run->dc);
}

/*
 * The negative control: empty poll, arm, sleep. An entry written between the
 * last poll and the arm raises no event on an edge arm and sits in the CQ
 * until the safety-net timeout or the next entry; the library counts such
 * sleeps as lost wake-ups.
 */
static int
loop_naive(struct poller *pl)
{
	int n, r;

	for (;;) {
		n = cqpoll_poll_burst(pl->cq, pl->comps, pl->burst);
		if (n > 0) {
			process(pl, (unsigned int)n);
			continue;
		}
		if (n < 0)
			return fail(pl, "cqpoll_poll_burst", n);
		if (gen_finished(pl->run))
			return 0;
		naive_window(pl);
		r = tpcq_kit_arm_naive(pl->cq);
		if (r < 0)
			return fail(pl, "the naive arm", r);
		r = wait_event(pl);
		if (r < 0)
			return r;
	}
}

/* examples/l3fwd-power's constants (main.c): MIN_ZERO_POLL_COUNT, SUSPEND_THRESHOLD. */
#define L3FWD_MIN_ZERO_POLLS 10
#define L3FWD_SUSPEND_THRESHOLD 300

/*
 * DPDK's l3fwd-power as a peer (main_intr_loop): after 10 empty polls each
 * empty poll pauses 1 us (power_idle_heuristic()), and at 300 the lcore
 * enables the Rx interrupt, waits up to 10 ms and disables it, with no
 * poll after the enable. The count restarts only when packets come.
 */
static int
loop_l3fwd(struct poller *pl)
{
	uint64_t zero = 0;
	int n, r;

	for (;;) {
		n = cqpoll_poll_burst(pl->cq, pl->comps, pl->burst);
		if (n > 0) {
			process(pl, (unsigned int)n);
			zero = 0;
			continue;
		}
		if (n < 0)
			return fail(pl, "cqpoll_poll_burst", n);
		if (gen_finished(pl->run))
			return 0;
		if (++zero <= L3FWD_MIN_ZERO_POLLS)
			continue;
		if (zero < L3FWD_SUSPEND_THRESHOLD) {
			rte_delay_us(1);
			continue;
		}
		naive_window(pl);
		r = tpcq_ethdev_l3fwd_sleep(pl->run->dc, &pl->res->peer);
		if (r < 0)
			return fail(pl, "rte_epoll_wait", r);
	}
}

/* Read what the generator posted, then make sure nothing more comes. */
static int
drain(struct poller *pl)
{
	const struct tpcq_params *p = pl->run->params;
	uint64_t posted, limit;
	int n;

	posted = __atomic_load_n(&pl->run->posted, __ATOMIC_ACQUIRE);
	limit = tpcq_now_ns(CLOCK_MONOTONIC) + DRAIN_LIMIT_NS +
		p->faults.visibility_delay_ns;
	while (pl->res->completions < posted) {
		n = cqpoll_poll_burst(pl->cq, pl->comps, pl->burst);
		if (n > 0)
			process(pl, (unsigned int)n);
		else if (n < 0)
			return fail(pl, "cqpoll_poll_burst", n);
		else if (tpcq_now_ns(CLOCK_MONOTONIC) > limit)
			break;
	}
	/* Anything still there was delivered twice or never posted. */
	while ((n = cqpoll_poll_burst(pl->cq, pl->comps, pl->burst)) > 0)
		process(pl, (unsigned int)n);
	if (n < 0)
		return fail(pl, "cqpoll_poll_burst", n);
	if (pl->res->completions < posted)
		pl->res->missing = posted - pl->res->completions;
	return 0;
}

void
tpcq_poller_clocks(struct tpcq_result *res, const struct tpcq_clocks *c0)
{
	struct tpcq_clocks c1;
	double wall;

	tpcq_clocks_read(&c1, false);
	wall = (double)(c1.wall - c0->wall);
	res->wall_s = wall / (double)TPCQ_NS_PER_S;
	if (wall > 0.0) {
		res->cpu_pct = 100.0 * (double)(c1.thread - c0->thread) / wall;
		res->cpu_pct_process = 100.0 *
			(double)(c1.process - c0->process) / wall;
	}
}

/*
 * One CQ in poll or interrupt mode keeps its own loops, the reference the
 * group is measured against and the only home of the naive transition.
 */
bool
tpcq_poller_grouped(const struct tpcq_params *p)
{
	return p->mode == TPCQ_MODE_ADAPTIVE || p->cqs > 1 || p->pollers > 1;
}

void
tpcq_poller_run(struct tpcq_run *run, struct tpcq_result *res)
{
	const struct tpcq_params *p = run->params;
	struct tpcq_clocks c0;
	struct poller pl = {
		.run = run,
		.res = res,
		.cq = run->cq,
		.naive_delay_tsc = (uint64_t)((double)p->naive_delay_ns *
					      (double)rte_get_tsc_hz() / 1e9),
		.burst = p->burst,
		.timeout_ms = p->timeout_ms,
	};
	struct tpcq_check *ck = &pl.check;
	int r;

	if (p->groups > 0) {
		tpcq_poller_sched_run(run, res);
		return;
	}
	if (tpcq_poller_grouped(p)) {
		tpcq_poller_group_run(run, res);
		return;
	}
	tpcq_check_init(ck, run, res, 0);
	pl.comps = calloc(p->burst, sizeof(*pl.comps));
	if (pl.comps == NULL) {
		fail(&pl, "calloc", -ENOMEM);
		__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
		return;
	}

	tpcq_clocks_read(&c0, true);
	tpcq_recovery_watch(run, res, &pl.cq, &ck, 1);
	__atomic_store_n(&run->start, true, __ATOMIC_RELEASE);

	if (p->mode == TPCQ_MODE_POLL)
		r = loop_poll(&pl);
	else if (p->transition == TPCQ_TRANSITION_NAIVE)
		r = loop_naive(&pl);
	else if (p->transition == TPCQ_TRANSITION_L3FWD_POWER)
		r = loop_l3fwd(&pl);
	else
		r = loop_poll_and_arm(&pl);
	if (r == 0)
		r = drain(&pl);
	tpcq_recovery_unwatch();
	if (r < 0)
		__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);

	tpcq_poller_clocks(res, &c0);
	free(pl.comps);
}
