/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The floors: what the machine itself costs, measured on the two CPUs a run
 * uses (the poller's and the generator's), so that a latency can be read as
 * a multiple of what no CQ library could beat there and then.
 *  - hand-off: one thread stores to a cache line, the other, spinning on it,
 *    sees the store and answers; half of a round trip. A busy poller can be
 *    no faster than this.
 *  - wake-up: one thread writes an eventfd while the other sleeps in
 *    epoll_wait() on it; from the write to the sleeper's return. An
 *    interrupt-mode poller can be no faster than this. The sleeper's own
 *    CPU time per wake-up (its system calls and scheduling) is what a sleep
 *    costs a poller: the policy lab's cost of a sleep. Thread CPU time, so
 *    a busy machine's preemptions, which stretch the latencies, do not
 *    count in it.
 * Both are over in a fraction of a second; the paced floors (floors_paced.c)
 * measure each again at a point's load, for as long as it runs.
 * All run in threads of their own before the run (no EAL needed), so a
 * sweep's parent measures these once, and the paced ones once a load.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rte_pause.h>

/* Printed as testpmd-cq has always printed them, by the lab too. */
#define FLOORS_PROG "testpmd-cq"

#include "clock.h"
#include "cpus.h"
#include "floors.h"
#include "hist.h"

/* Samples of each floor, and a bound on their time on a loaded machine. */
#define HANDOFF_SAMPLES 20000
#define WAKEUP_SAMPLES 1000
#define FLOOR_MAX_NS (2 * TPCQ_NS_PER_S)
/* The sleeper must really be asleep when the write comes. */
#define WAKEUP_GAP_NS 200000

struct floor_ctx {
	int cpu;                  /* the answering thread's (the poller's) */
	bool pinned;
	/* Hand-off: the ping and the pong, each on its own cache line. */
	uint64_t ping __attribute__((aligned(64)));
	uint64_t pong __attribute__((aligned(64)));
	int efd __attribute__((aligned(64)));
	int epfd;
	uint64_t woke_ns;         /* wake-up: when the sleeper returned */
	uint64_t sleeper_cpu_ns;  /* the sleeper's CPU time, all wake-ups */
	uint64_t wakes;           /* and how many it returned from */
	unsigned int asleep;      /* the sleeper is (about to be) in epoll_wait */
	bool quit;
};

bool
tpcq_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

static void *
handoff_answer(void *arg)
{
	struct floor_ctx *c = arg;
	uint64_t v, last = 0;

	c->pinned = tpcq_pin_self(c->cpu);
	for (;;) {
		while ((v = __atomic_load_n(&c->ping, __ATOMIC_ACQUIRE)) == last)
			rte_pause();
		if (v == UINT64_MAX)
			return NULL;
		__atomic_store_n(&c->pong, v, __ATOMIC_RELEASE);
		last = v;
	}
}

static void *
wakeup_sleep(void *arg)
{
	struct floor_ctx *c = arg;
	struct epoll_event ev;
	uint64_t v;
	int r;

	uint64_t cpu0;

	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	c->pinned = tpcq_pin_self(c->cpu);
	cpu0 = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (;;) {
		__atomic_store_n(&c->asleep, 1, __ATOMIC_RELEASE);
		r = epoll_wait(c->epfd, &ev, 1, -1);
		if (r < 0 && errno == EINTR)
			continue;
		__atomic_store_n(&c->woke_ns, tpcq_now_ns(CLOCK_MONOTONIC),
				 __ATOMIC_RELEASE);
		if (read(c->efd, &v, sizeof(v)) < 0 ||
		    __atomic_load_n(&c->quit, __ATOMIC_ACQUIRE))
			break;
		c->wakes++;
	}
	/* Read by the measuring thread after pthread_join(). */
	c->sleeper_cpu_ns = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	return NULL;
}

static void
quantiles(struct tpcq_hist *h, struct tpcq_floor *f)
{
	f->samples = h->count;
	f->p50_ns = tpcq_hist_quantile(h, 0.50);
	f->p99_ns = tpcq_hist_quantile(h, 0.99);
}

static int
measure_handoff(struct floor_ctx *c, struct tpcq_hist *h)
{
	uint64_t i, t0, t1, deadline;
	pthread_t t;

	if (pthread_create(&t, NULL, handoff_answer, c) != 0)
		return -EAGAIN;
	deadline = tpcq_now_ns(CLOCK_MONOTONIC) + FLOOR_MAX_NS;
	for (i = 1; i <= HANDOFF_SAMPLES; i++) {
		t0 = tpcq_now_ns(CLOCK_MONOTONIC);
		__atomic_store_n(&c->ping, i, __ATOMIC_RELEASE);
		while (__atomic_load_n(&c->pong, __ATOMIC_ACQUIRE) != i)
			rte_pause();
		t1 = tpcq_now_ns(CLOCK_MONOTONIC);
		/*
		 * The first round trips warm both caches and the branch; few,
		 * so that a loaded machine's slow ones still leave samples.
		 */
		if (i > 10)
			tpcq_hist_add(h, (t1 - t0) / 2);
		if (t1 > deadline)
			break;
	}
	__atomic_store_n(&c->ping, UINT64_MAX, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	return 0;
}

static void
sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ns };

	nanosleep(&ts, NULL);
}

int
tpcq_floor_eventfd(int *efd, int *epfd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	*efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	*epfd = epoll_create1(EPOLL_CLOEXEC);
	if (*efd < 0 || *epfd < 0 ||
	    epoll_ctl(*epfd, EPOLL_CTL_ADD, *efd, &ev) != 0)
		return -errno;
	return 0;
}

static int
measure_wakeup(struct floor_ctx *c, struct tpcq_hist *h)
{
	uint64_t i, t0, one = 1, deadline;
	pthread_t t;
	int r;

	r = tpcq_floor_eventfd(&c->efd, &c->epfd);
	if (r != 0)
		goto out;
	if (pthread_create(&t, NULL, wakeup_sleep, c) != 0) {
		r = -EAGAIN;
		goto out;
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	deadline = tpcq_now_ns(CLOCK_MONOTONIC) + FLOOR_MAX_NS;
	for (i = 0; i < WAKEUP_SAMPLES; i++) {
		while (!__atomic_exchange_n(&c->asleep, 0, __ATOMIC_ACQ_REL))
			rte_pause();
		sleep_ns(WAKEUP_GAP_NS);
		__atomic_store_n(&c->woke_ns, 0, __ATOMIC_RELAXED);
		t0 = tpcq_now_ns(CLOCK_MONOTONIC);
		if (write(c->efd, &one, sizeof(one)) != sizeof(one)) {
			r = -errno;
			break;
		}
		while (__atomic_load_n(&c->woke_ns, __ATOMIC_ACQUIRE) == 0)
			rte_pause();
		tpcq_hist_add(h, c->woke_ns - t0);
		if (tpcq_now_ns(CLOCK_MONOTONIC) > deadline)
			break;
	}
	while (!__atomic_load_n(&c->asleep, __ATOMIC_ACQUIRE))
		rte_pause();
	__atomic_store_n(&c->quit, true, __ATOMIC_RELEASE);
	if (write(c->efd, &one, sizeof(one)) != sizeof(one))
		r = -errno;
	pthread_join(t, NULL);
out:
	if (c->efd >= 0)
		close(c->efd);
	if (c->epfd >= 0)
		close(c->epfd);
	return r;
}

/*
 * A timer nap's overshoot: how far past its end a clock_nanosleep() of
 * TIMER_NAP_NS returns, as the hybrid policy naps, at the thread's default
 * timer slack (the wake-up floor lowered this thread's; nothing lowers the
 * poller's).
 */
#define TIMER_SAMPLES 500
#define TIMER_NAP_NS 50000

static void
measure_timer(struct tpcq_hist *h)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = TIMER_NAP_NS };
	uint64_t i, t0, t1, deadline;

	prctl(PR_SET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	deadline = tpcq_now_ns(CLOCK_MONOTONIC) + FLOOR_MAX_NS / 4;
	for (i = 0; i < TIMER_SAMPLES; i++) {
		t0 = tpcq_now_ns(CLOCK_MONOTONIC);
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		t1 = tpcq_now_ns(CLOCK_MONOTONIC);
		tpcq_hist_add(h, t1 - t0 > TIMER_NAP_NS ? t1 - t0 - TIMER_NAP_NS : 0);
		if (t1 > deadline)
			break;
	}
}

/* The two CPUs of the default EAL lcores: the first the main lcore's. */
static void
floor_cpus(int node, int *poller, int *device)
{
	char buf[64];

	tpcq_default_lcores(node, buf, sizeof(buf));
	if (sscanf(buf, "%d,%d", poller, device) != 2 &&
	    sscanf(buf, "%d-%d", poller, device) != 2) {
		*poller = 0;
		*device = 1;
	}
}

int
tpcq_floors_measure_base(int node, struct tpcq_floors *f)
{
	struct tpcq_hist *h, *hw;
	struct floor_ctx *c;
	pthread_t self = pthread_self();
	cpu_set_t saved;
	int r;

	memset(f, 0, sizeof(*f));
	floor_cpus(node, &f->cpu_poller, &f->cpu_device);
	c = aligned_alloc(64, sizeof(*c));
	h = tpcq_hist_create();
	hw = tpcq_hist_create();
	if (c == NULL || h == NULL || hw == NULL) {
		free(c);
		tpcq_hist_free(h);
		tpcq_hist_free(hw);
		return -ENOMEM;
	}
	memset(c, 0, sizeof(*c));
	c->cpu = f->cpu_poller;
	c->efd = c->epfd = -1;
	pthread_getaffinity_np(self, sizeof(saved), &saved);
	f->pinned = tpcq_pin_self(f->cpu_device);

	r = measure_handoff(c, h);
	f->pinned = f->pinned && c->pinned;
	quantiles(h, &f->handoff);
	if (r == 0) {
		c->pinned = false;
		r = measure_wakeup(c, hw);
		f->pinned = f->pinned && c->pinned;
		quantiles(hw, &f->wakeup);
		f->wake_cpu_ns = c->wakes != 0 ? c->sleeper_cpu_ns / c->wakes : 0;
		memset(h, 0, sizeof(*h));
		measure_timer(h);
		quantiles(h, &f->timer);
	}
	pthread_setaffinity_np(self, sizeof(saved), &saved);
	tpcq_hist_free(h);
	tpcq_hist_free(hw);
	free(c);
	f->valid = r == 0 && f->handoff.samples > 0 && f->wakeup.samples > 0;
	return r;
}

void
tpcq_floors_print(const struct tpcq_floors *f)
{
	unsigned int i;

	printf(FLOORS_PROG ": floors on CPUs %d (poller) and %d (device)%s: "
	       "hand-off p50 %.2f us p99 %.2f us (%" PRIu64 " samples), "
	       "eventfd -> epoll_wait wake-up p50 %.2f us p99 %.2f us (%" PRIu64
	       " samples; the sleeper's CPU %.2f us a wake-up), timer nap's "
	       "overshoot p50 %.2f us p99 %.2f us\n", f->cpu_poller,
	       f->cpu_device, f->pinned ? "" : " (not pinned)",
	       (double)f->handoff.p50_ns / 1e3,
	       (double)f->handoff.p99_ns / 1e3, f->handoff.samples,
	       (double)f->wakeup.p50_ns / 1e3, (double)f->wakeup.p99_ns / 1e3,
	       f->wakeup.samples, (double)f->wake_cpu_ns / 1e3,
	       (double)f->timer.p50_ns / 1e3, (double)f->timer.p99_ns / 1e3);
	for (i = 0; i < f->npaced; i++)
		tpcq_floor_paced_print(&f->paced[i]);
	fflush(stdout);
}

void
tpcq_floor_paced_print(const struct tpcq_floor_paced *fp)
{
	printf(FLOORS_PROG ": floors paced at %" PRIu64 "/s for %.2g s: hand-off "
	       "p50 %.2f us p99 %.2f us, wake-up p50 %.2f us p99 %.2f us (%"
	       PRIu64 " samples each; the sleeper's CPU %.2f us a wake-up)\n",
	       fp->rate, fp->secs,
	       (double)fp->handoff.p50_ns / 1e3, (double)fp->handoff.p99_ns / 1e3,
	       (double)fp->wakeup.p50_ns / 1e3, (double)fp->wakeup.p99_ns / 1e3,
	       fp->handoff.samples, (double)fp->wake_cpu_ns / 1e3);
	fflush(stdout);
}

void
tpcq_floors_json(FILE *out, const struct tpcq_floors *f, const char *indent)
{
	unsigned int i;

	fprintf(out, "%s\"floors\": {\"cpu_poller\": %d, \"cpu_device\": %d, "
		"\"pinned\": %s,\n%s  \"handoff_ns\": {\"p50\": %" PRIu64
		", \"p99\": %" PRIu64 ", \"samples\": %" PRIu64 "},\n"
		"%s  \"wakeup_ns\": {\"p50\": %" PRIu64 ", \"p99\": %" PRIu64
		", \"samples\": %" PRIu64 ", \"cpu_per_wakeup\": %" PRIu64 "},\n"
		"%s  \"timer_ns\": {\"p50\": %" PRIu64 ", \"p99\": %" PRIu64
		", \"samples\": %" PRIu64 "},\n"
		"%s  \"paced\": [", indent, f->cpu_poller,
		f->cpu_device, f->pinned ? "true" : "false", indent,
		f->handoff.p50_ns, f->handoff.p99_ns, f->handoff.samples, indent,
		f->wakeup.p50_ns, f->wakeup.p99_ns, f->wakeup.samples,
		f->wake_cpu_ns, indent, f->timer.p50_ns, f->timer.p99_ns,
		f->timer.samples, indent);
	for (i = 0; i < f->npaced; i++)
		fprintf(out, "%s{\"rate\": %" PRIu64 ", \"secs\": %.3f, "
			"\"handoff_ns\": {\"p50\": %" PRIu64 ", \"p99\": %"
			PRIu64 ", \"samples\": %" PRIu64 "}, \"wakeup_ns\": "
			"{\"p50\": %" PRIu64 ", \"p99\": %" PRIu64
			", \"samples\": %" PRIu64 ", \"cpu_per_wakeup\": %"
			PRIu64 "}}", i > 0 ? ",\n    " : "",
			f->paced[i].rate, f->paced[i].secs,
			f->paced[i].handoff.p50_ns, f->paced[i].handoff.p99_ns,
			f->paced[i].handoff.samples, f->paced[i].wakeup.p50_ns,
			f->paced[i].wakeup.p99_ns, f->paced[i].wakeup.samples,
			f->paced[i].wake_cpu_ns);
	fputs("]}", out);
}

/*
 * The floor a point is held against: a poller that slept for most of its
 * completions (interrupt mode, or a policy at a load it sleeps at) against
 * the wake-up, one that stayed awake against the hand-off.
 */
bool
tpcq_floor_is_wakeup(const char *policy, double wakeups_per_s,
		     double achieved_rate)
{
	if (strcmp(policy, "interrupt") == 0)
		return true;
	if (strcmp(policy, "poll") == 0)
		return false;
	return achieved_rate > 0.0 && 2.0 * wakeups_per_s >= achieved_rate;
}

const char *
tpcq_floor_name(bool wakeup, uint64_t paced_rate)
{
	if (wakeup)
		return paced_rate != 0 ? "wakeup_paced" : "wakeup";
	return paced_rate != 0 ? "handoff_paced" : "handoff";
}

const struct tpcq_floor *
tpcq_floor_match(const struct tpcq_floors *f, bool wakeup, uint64_t rate,
		 uint64_t *paced_rate)
{
	unsigned int i;

	*paced_rate = 0;
	if (f == NULL || !f->valid)
		return NULL;
	for (i = 0; i < f->npaced; i++)
		if (f->paced[i].rate == rate) {
			*paced_rate = rate;
			return wakeup ? &f->paced[i].wakeup : &f->paced[i].handoff;
		}
	return wakeup ? &f->wakeup : &f->handoff;
}
