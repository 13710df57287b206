/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The paced floors: what the machine costs at one load, with no CQ library
 * between the two threads. One thread on the device's CPU stamps a time at
 * each arrival of the run's schedule (--pattern, --seed) at that load,
 * paced exactly as the generator paces its posts (tpcq_gen_clock_pace():
 * asleep through gaps longer than a wake-up), for as long as a point runs;
 * the other, on the poller's CPU, takes every stamp it finds new as handled
 * then, as a poller takes a burst:
 *  - hand-off: it spins on the stamps' count, as a busy poller does;
 *  - wake-up: it sleeps in epoll_wait() on an eventfd that the stamping
 *    thread writes after each stamp, as an interrupt-mode poller sleeps on
 *    its completion channel.
 * Back-to-back floors (floors.c) are over in a fraction of a second and miss
 * the times the CPUs run something else (on a VM the hypervisor's), which a
 * point's p99 over seconds sees; these do not.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rte_pause.h>

#include "dev.h"
#include "engine.h"
#include "floors.h"
#include "floors_paced.h"
#include "hist.h"
#include "interrupt.h"
#include "params.h"
#include "testpmd_cq.h"

/*
 * Stamps by sequence number: the reader may fall this far behind
 * (descheduled for 0.3 s at 200000/s) and still find each.
 */
#define PACED_RING 65536

struct paced_ctx {
	int cpu;                  /* the reader's (the poller's) */
	bool sleep;               /* the reader sleeps on efd, else spins */
	bool pinned;
	int efd, epfd;
	uint64_t *stamp_ns;       /* PACED_RING of them */
	struct tpcq_hist *hist;
	/* The stamps' count, then UINT64_MAX to end; the writer's line. */
	uint64_t seq __attribute__((aligned(64)));
	/* How many the reader took; its line. */
	uint64_t taken __attribute__((aligned(64)));
	/* The sleeping reader's CPU time and its returns from epoll_wait(). */
	uint64_t sleeper_cpu_ns;
	uint64_t wakes;
};

/* Wait for the count to move: spinning, or asleep on the eventfd. */
static uint64_t
paced_next(struct paced_ctx *c, uint64_t last)
{
	struct epoll_event ev;
	uint64_t v, n;

	for (;;) {
		v = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		if (v != last)
			return v;
		if (!c->sleep) {
			rte_pause();
			continue;
		}
		/* A write after the load above leaves the fd readable. */
		if (epoll_wait(c->epfd, &ev, 1, -1) != 1)
			continue;
		c->wakes++;
		if (read(c->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
			return UINT64_MAX;
	}
}

static void *
paced_read(void *arg)
{
	struct paced_ctx *c = arg;
	uint64_t v, s, now, cpu0, last = 0;

	if (c->sleep)
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	c->pinned = tpcq_pin_self(c->cpu);
	cpu0 = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (;;) {
		v = paced_next(c, last);
		if (v == UINT64_MAX) {
			c->sleeper_cpu_ns =
				tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
			return NULL;
		}
		/* After the count: every stamp below it is older than now. */
		now = tpcq_now_ns(CLOCK_MONOTONIC);
		/* Stamps overwritten before they were read are not samples. */
		for (s = v - last > PACED_RING ? v - PACED_RING : last; s < v; s++)
			tpcq_hist_add(c->hist, now - c->stamp_ns[s % PACED_RING]);
		last = v;
		__atomic_store_n(&c->taken, v, __ATOMIC_RELEASE);
	}
}

static int
paced_publish(struct paced_ctx *c, uint64_t v)
{
	uint64_t one = 1;

	/* Release: the reader that sees the count finds the stamps. */
	__atomic_store_n(&c->seq, v, __ATOMIC_RELEASE);
	if (c->sleep && write(c->efd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 0;
}

/* One stamp at each arrival of p's schedule at rate, for secs. */
static int
paced_run(struct paced_ctx *c, const struct tpcq_params *p, uint64_t rate,
	  double secs)
{
	struct tpcq_params sched = *p;
	struct tpcq_gen_clock clock;
	struct tpcq_arrival a;
	uint64_t seq, total, start, due, now;
	pthread_t t;
	int r = 0;

	sched.rate = rate;
	sched.duration_s = secs;
	total = tpcq_arrival_total(&sched);
	if (pthread_create(&t, NULL, paced_read, c) != 0)
		return -EAGAIN;
	/* No EAL here, so no TSC rate: the schedule is in ns. */
	tpcq_gen_clock_init(&clock);
	tpcq_arrival_init(&a, &sched, (double)TPCQ_NS_PER_S);
	start = tpcq_now_ns(CLOCK_MONOTONIC);
	for (seq = 0; seq < total && r == 0 && !tpcq_interrupted(); seq++) {
		due = start + (uint64_t)tpcq_arrival_at(&a, seq);
		while ((now = tpcq_now_ns(CLOCK_MONOTONIC)) < due)
			tpcq_gen_clock_pace(&clock, due - now);
		c->stamp_ns[seq % PACED_RING] = tpcq_now_ns(CLOCK_MONOTONIC);
		r = paced_publish(c, seq + 1);
	}
	/* Let the reader take the last stamp before it is told to end. */
	while (r == 0 && __atomic_load_n(&c->taken, __ATOMIC_ACQUIRE) < seq &&
	       !tpcq_interrupted())
		rte_pause();
	if (paced_publish(c, UINT64_MAX) != 0 && r == 0)
		r = -EIO;
	pthread_join(t, NULL);
	return r;
}

/*
 * f and, asleep, the reader's CPU time per wake-up: what a wake-up costs the
 * sleeper at this load, caches and CPU cold from the gap (the back-to-back
 * figure, floors.c, is a hot loop's).
 */
static int
paced_measure(const struct tpcq_params *p, int cpu, bool sleep, uint64_t rate,
	      double secs, struct tpcq_floor *f, uint64_t *wake_cpu_ns,
	      bool *pinned)
{
	struct paced_ctx *c;
	int r = 0;

	c = aligned_alloc(64, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->sleep = sleep;
	c->efd = c->epfd = -1;
	c->stamp_ns = calloc(PACED_RING, sizeof(*c->stamp_ns));
	c->hist = tpcq_hist_create();
	if (c->stamp_ns == NULL || c->hist == NULL) {
		r = -ENOMEM;
		goto out;
	}
	if (sleep) {
		r = tpcq_floor_eventfd(&c->efd, &c->epfd);
		if (r != 0)
			goto out;
	}
	r = paced_run(c, p, rate, secs);
	*pinned = *pinned && c->pinned;
	f->samples = c->hist->count;
	f->p50_ns = tpcq_hist_quantile(c->hist, 0.50);
	f->p99_ns = tpcq_hist_quantile(c->hist, 0.99);
	if (wake_cpu_ns != NULL)
		*wake_cpu_ns = c->wakes != 0 ? c->sleeper_cpu_ns / c->wakes : 0;
out:
	if (c->efd >= 0)
		close(c->efd);
	if (c->epfd >= 0)
		close(c->epfd);
	tpcq_hist_free(c->hist);
	free(c->stamp_ns);
	free(c);
	return r;
}

int
tpcq_floors_measure_paced(const struct tpcq_params *p, uint64_t rate,
			  double secs, struct tpcq_floors *f)
{
	struct tpcq_floor_paced *fp;
	pthread_t self = pthread_self();
	cpu_set_t saved;
	int r;

	if (f->npaced >= TPCQ_FLOORS_PACED_MAX)
		return -ENOSPC;
	if (secs > TPCQ_FLOORS_PACED_MAX_S)
		secs = TPCQ_FLOORS_PACED_MAX_S;
	fp = &f->paced[f->npaced];
	memset(fp, 0, sizeof(*fp));
	fp->rate = rate;
	fp->secs = secs;
	pthread_getaffinity_np(self, sizeof(saved), &saved);
	f->pinned = tpcq_pin_self(f->cpu_device) && f->pinned;
	r = paced_measure(p, f->cpu_poller, false, rate, secs, &fp->handoff,
			  NULL, &f->pinned);
	if (r == 0 && !tpcq_interrupted())
		r = paced_measure(p, f->cpu_poller, true, rate, secs,
				  &fp->wakeup, &fp->wake_cpu_ns, &f->pinned);
	pthread_setaffinity_np(self, sizeof(saved), &saved);
	if (r == 0 && fp->handoff.samples > 0 && fp->wakeup.samples > 0)
		f->npaced++;
	return r;
}

int
tpcq_floors_measure(const struct tpcq_params *p, const uint64_t *rates,
		    unsigned int nrates, double secs, struct tpcq_floors *f)
{
	unsigned int i;
	int r;

	r = tpcq_floors_measure_base(tpcq_dev_numa_node(p), f);
	for (i = 0; r == 0 && i < nrates && !tpcq_interrupted(); i++)
		r = tpcq_floors_measure_paced(p, rates[i], secs, f);
	return r;
}
