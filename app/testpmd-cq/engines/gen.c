/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator lcore: the device side. It waits for the poller, runs the
 * engine (--engine, engine_*.c) that decides when each completion is posted,
 * then tells the poller it is done. The engines share one way to post, so
 * that every engine keeps the same delivery check and post-time record.
 *
 * It is the whole harness: emulated devices that need a device thread
 * (mlx5-emu reads its doorbells) are serviced from this loop instead, so the
 * poller shares its machine with one harness thread, and that thread sleeps
 * through the gaps between completions (tpcq_gen_wait()) rather than spinning.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_pause.h>

#include "dev.h"
#include "engine.h"
#include "interrupt.h"
#include "run.h"
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
		tpcq_gen_service(run);
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
		/* Room comes from the poller, which may need an arm read to wake. */
		tpcq_gen_service(run);
		rte_pause();
	}
	if (r < 0) {
		run->gen_error = r;
		return r;
	}
	/* Its completion and event are out: the recovery judge's deadline. */
	if (run->post_end_ns != NULL)
		__atomic_store_n(&run->post_end_ns[seq & run->post_ns_mask],
				 tpcq_now_ns(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
	run->gen_watch |= run->dcs[seq % ncqs].watch;
	if (run->record != NULL && seq < run->total)
		run->record[seq] = tpcq_now_ns(CLOCK_MONOTONIC);
	/* Release: the poller that reads this count may expect the entry. */
	__atomic_store_n(&run->posted, seq + 1, __ATOMIC_RELEASE);
	return 0;
}

void
tpcq_gen_service(struct tpcq_run *run)
{
	const struct tpcq_dev *dev = run->params->dev;
	unsigned int k;

	if (dev->service == NULL)
		return;
	for (k = 0; k < run->ncqs; k++)
		dev->service(&run->dcs[k]);
}

/*
 * A doorbell matters to the device only while a CQE is unread: an arm that
 * finds the CQ empty fires at the next post, which reads the doorbell itself.
 * And a post that fired an event woke the consumer, which reads every CQE
 * before it arms again. So the harness watches doorbells from a post that
 * fired nothing until the poller consumed it, and may sleep otherwise.
 */
static bool
unread(struct tpcq_run *run)
{
	if (!run->gen_watch)
		return false;
	if (__atomic_load_n(&run->consumed, __ATOMIC_ACQUIRE) <
	    __atomic_load_n(&run->posted, __ATOMIC_RELAXED))
		return true;
	run->gen_watch = false;
	return false;
}

/* Sleep until CLOCK_MONOTONIC ns t; the TSC and this clock run together. */
static void
sleep_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / TPCQ_NS_PER_S),
		.tv_nsec = (long)(t % TPCQ_NS_PER_S),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void
tpcq_gen_clock_init(struct tpcq_gen_clock *c)
{
	/* Sleeps end when asked, not up to 50 us later (the default slack). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	c->margin_ns = TPCQ_GEN_MARGIN_START_NS;
	c->sleeps = 0;
}

void
tpcq_gen_clock_pace(struct tpcq_gen_clock *c, uint64_t left_ns)
{
	uint64_t target, woke, late;

	/* A sleep costs a wake-up: only worth it beyond the margin. */
	if (left_ns <= c->margin_ns + TPCQ_GEN_SLEEP_MIN_NS) {
		rte_pause();
		return;
	}
	target = tpcq_now_ns(CLOCK_MONOTONIC) + left_ns - c->margin_ns;
	/* In slices, so that a stop is seen within one. */
	if (target - tpcq_now_ns(CLOCK_MONOTONIC) > TPCQ_GEN_SLEEP_MAX_NS)
		target = tpcq_now_ns(CLOCK_MONOTONIC) + TPCQ_GEN_SLEEP_MAX_NS;
	sleep_until(target);
	woke = tpcq_now_ns(CLOCK_MONOTONIC);
	c->sleeps++;
	/*
	 * The margin follows the wake-up's lateness: up at once, down
	 * slowly, so that one quiet wake-up does not make the next post
	 * late.
	 */
	late = woke > target ? woke - target : 0;
	if (late + TPCQ_GEN_MARGIN_MIN_NS > c->margin_ns)
		c->margin_ns = late + TPCQ_GEN_MARGIN_MIN_NS;
	else
		c->margin_ns -= (c->margin_ns - late) / 16;
	if (c->margin_ns > TPCQ_GEN_MARGIN_MAX_NS)
		c->margin_ns = TPCQ_GEN_MARGIN_MAX_NS;
}

int
tpcq_gen_wait(struct tpcq_run *run, uint64_t due)
{
	uint64_t now;

	for (;;) {
		if (tpcq_gen_must_stop(run))
			return 1;
		now = rte_rdtsc();
		if (now >= due)
			return 0;
		if (unread(run)) {
			tpcq_gen_service(run);
			rte_pause();
			continue;
		}
		tpcq_gen_clock_pace(&run->gen_clock, (uint64_t)((double)(due - now) *
						run->gen_clock.ns_per_tsc));
	}
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
	uint64_t start, cpu0;
	unsigned int k;

	tpcq_gen_clock_init(&run->gen_clock);
	run->gen_clock.ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	cpu0 = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID);
	while (!__atomic_load_n(&run->start, __ATOMIC_ACQUIRE)) {
		if (tpcq_gen_must_stop(run))
			goto out;
		tpcq_gen_service(run);
		rte_pause();
	}
	start = rte_rdtsc();
	run->params->engine->run(run, start);
	run->gen_tsc = rte_rdtsc() - start;
out:
	/* The poller drains what is left: its arms still need reading. */
	while (unread(run) && !tpcq_gen_must_stop(run)) {
		tpcq_gen_service(run);
		rte_pause();
	}
	run->gen_cpu_ns = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
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
