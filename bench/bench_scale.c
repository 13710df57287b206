/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a poll group's size costs when one CQ has traffic and the others are
 * idle (a server with one CQ per connection): for each size N in --cqs, a
 * group of N CQs of which only the last gets completions: software CQs
 * (drivers/sw, the production driver, one eventfd each), or with
 * --dev=uring io_uring instances (drivers/uring: the ring's fd and an
 * eventfd each; the busy one gets NOPs, stamped with their submission time
 * in user_data, since io_uring CQEs carry no timestamp):
 *
 *  busy      busy mode: idle CQs go cold after cold_us and are left armed;
 *            latency from the device's timestamp to the callback (p50).
 *  wake-up   interrupt mode: the group sleeps between completions; latency
 *            as above (p50), and the consumer thread's own CPU time
 *            (CLOCK_THREAD_CPUTIME_ID) per event wake-up.
 *  sleep     the time to go to sleep, cqpoll_group_sleep_prepare() timed on
 *            one thread: the first one after the N adds (every CQ is armed
 *            once: O(N)), then the steady one after a wake-up of the one
 *            busy CQ (cold CQs stay armed across sleeps: O(newly cold)).
 *  hk_max    busy mode, no traffic, every CQ cold: the most CQ polls one
 *            loop iteration made, the health check's and the safety net's
 *            (a few members per iteration: bounded, whatever N).
 *  idle      the group with no traffic at all, in interrupt mode, for
 *            --idle-ms: the consumer's CPU share, and its CPU per
 *            safety-net timeout (each polls at most 256 members, taking
 *            turns: bounded per timeout, whatever N).
 *  memory    bytes per idle member: the CQ's own (cqpoll_sw_cq_create())
 *            and the group's (cqpoll_group_add()), from the C allocator's
 *            statistics (mallinfo2(): bytes in use, arena and mmap); the
 *            resident memory the CQs added (VmRSS: with io_uring, the rings
 *            the kernel maps into the process, which malloc never sees); and
 *            the kernel's (the eventfd, its file and the epoll entry), from
 *            the slab objects in use machine-wide (/proc/slabinfo, root):
 *            other processes move it too, so it is a rough figure, and
 *            meaningful at large N only.
 *
 * With --channel=shared the sw CQs share one event channel
 * (cqpoll_sw_cq_create_on(): one fd for all, the group polls the CQs that
 * fired, O(fired)), so N is not bounded by the descriptor limit; the
 * default, own, gives each CQ its eventfd.
 *
 * The busy, wake-up and CPU figures are printed as ratios to N = 1 as
 * well (the first size given; goal <= 2 each). One eventfd per CQ: the
 * descriptor limit is raised to fit N (root, or a hard limit high enough).
 * Timing figures need an idle machine; on a loaded one only the memory and
 * the O(1) steady sleep are meaningful.
 *
 * With --check it exits 1 if a steady sleep polls more than the one CQ that
 * woke, or a wake-up polls more CQs than at the first size: counters, not
 * timings, so that a loaded machine judges them too (the smoke test's
 * assertion; its negative control is bench_scale built against a library
 * whose sleeps poll and arm every member, CQPOLL_MUTANT_ARM_ALL).
 *
 * Usage: bench_scale [--cqs=N,N,...] [--samples=N] [--gap-us=US]
 *                    [--cq-size=N] [--cold-us=US] [--dev=sw|uring] [--check]
 *                    [--timeout-ms=MS] [--idle-ms=MS] [--channel=own|shared]
 *        defaults: --cqs=1,4096,65536 --samples=2000 --gap-us=100
 *                  --cq-size=64 --cold-us=1000 --timeout-ms=10 (DPDK's
 *                  l3fwd-power's bound: short, so that the idle run sees
 *                  many timeouts) --idle-ms=1000
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"
#ifdef CQPOLL_BENCH_URING
#include <liburing.h>

#include "cqpoll_uring.h"
#endif

#define MAX_SIZES 8
#define MAX_CQS (1u << 20)
/* Steady sleeps timed per size. */
#define SLEEP_LOOPS 2000

struct opts {
	uint64_t sizes[MAX_SIZES];
	unsigned int nsizes;
	uint64_t samples;
	uint64_t gap_us;
	uint64_t cq_size;
	uint64_t cold_us;
	int uring; /* --dev=uring */
	int check; /* --check */
	uint64_t timeout_ms; /* the group's safety-net timeout */
	uint64_t idle_ms;
	/* --channel=shared: the sw CQs share one event channel (one fd). */
	int shared;
};

/* What one size measured. */
struct row {
	uint64_t n;
	uint64_t busy_p50, busy_p99, wake_p50, wake_p99;
	double cpu_per_wake_ns;
	/* Work that must not grow with N, whatever the machine's load. */
	double polls_per_wake, polls_per_iter, polls_per_sleep, polls_per_finish;
	/* Idle: CPU share, and CPU per safety-net timeout. */
	double idle_cpu_pct, idle_ns_per_timeout;
	uint64_t sleep_first_ns, sleep_p50_ns, sleep_p99_ns;
	double cq_bytes, group_bytes, kernel_bytes, rss_bytes;
	double add_ns;
	/*
	 * Busy mode, no traffic, every CQ cold: the most CQ polls one loop
	 * iteration made (the health check's and the safety net's), a count.
	 */
	uint64_t hk_max_polls;
	/* Not run: the fd limit is below N (hard limit, no CAP_SYS_RESOURCE). */
	uint64_t skipped_fd_limit;
};

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
pct(uint64_t *v, uint64_t n, double q)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(uint64_t)(q * (double)(n - 1))];
}

/* Bytes the C allocator hands out now: small blocks and mmap'ed ones. */
static size_t
heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * The kernel's slab objects in use, machine-wide, in bytes: the sum over
 * /proc/slabinfo of active objects times their size (root only); 0 if
 * unreadable. An eventfd is a file (filp), its context and an epoll entry
 * (eventpoll_epi): a delta over N CQs, less the noise of the other
 * processes, is what they cost.
 */
static uint64_t
slab_bytes(void)
{
	char line[512], name[64];
	unsigned long long active, total, size;
	uint64_t sum = 0;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%63s %llu %llu %llu", name, &active, &total,
			   &size) == 4)
			sum += (uint64_t)active * size;
	fclose(f);
	return sum;
}

/* The process's resident memory, in bytes (/proc/self/statm); 0 if unreadable. */
static uint64_t
rss_bytes(void)
{
	unsigned long long size, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

static struct cqpoll_cq *
cq_create(const struct opts *o, struct cqpoll_sw_channel *ch)
{
	struct cqpoll_sw_conf sc = { .size = (uint32_t)o->cq_size,
				     .arm = CQPOLL_ARM_EDGE };

#ifdef CQPOLL_BENCH_URING
	if (o->uring) {
		struct cqpoll_uring_conf uc = { .size = (uint32_t)o->cq_size };

		return cqpoll_uring_cq_create(&uc);
	}
#endif
	return cqpoll_sw_cq_create_on(&sc, ch);
}

/* One completion for @p cq, from the device's side; 0 or < 0. */
static int
post(struct cqpoll_cq *cq, uint64_t seq)
{
	struct cqpoll_completion c = { .wr_id = seq, .byte_len = 8 };

#ifdef CQPOLL_BENCH_URING
	struct io_uring *ring = cqpoll_uring_cq_ring(cq);

	if (ring != NULL) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (sqe == NULL)
			return -EBUSY;
		io_uring_prep_nop(sqe);
		/* No timestamp in a CQE: the submission time is the wr_id. */
		sqe->user_data = test_now_ns();
		return io_uring_submit(ring) == 1 ? 0 : -EIO;
	}
#endif
	return cqpoll_sw_post(cq, &c);
}

/* When the completion became visible, or was submitted (io_uring). */
static uint64_t
t_posted(const struct cqpoll_completion *c)
{
	return (c->flags & CQPOLL_COMPLETION_F_TIMESTAMP) ? c->timestamp : c->wr_id;
}

/* The consumer side of a latency run: the group's callback records. */
struct lat {
	uint64_t *v;
	uint64_t n;      /* samples taken; the poster waits on it */
	uint64_t cap;
	struct cqpoll_group *g;
	uint64_t cpu_ns; /* the consumer thread's CPU time over the run */
	int run_ret;
};

static void
lat_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
       void *arg)
{
	struct lat *l = arg;
	uint64_t now = test_now_ns();
	unsigned int i;

	(void)cq;
	for (i = 0; i < n; i++) {
		if (l->n < l->cap)
			l->v[l->n] = now - t_posted(&c[i]);
		__atomic_store_n(&l->n, l->n + 1, __ATOMIC_RELEASE);
	}
}

static void
idle_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
	void *arg)
{
	(void)cq;
	(void)c;
	(void)n;
	(void)arg;
	fprintf(stderr, "bench_scale: an idle CQ got a completion\n");
	abort();
}

static void *
consumer(void *arg)
{
	struct lat *l = arg;
	uint64_t t0 = cpu_ns();

	l->run_ret = cqpoll_group_run(l->g);
	l->cpu_ns = cpu_ns() - t0;
	return NULL;
}

/*
 * Post @p samples completions to @p hot, one at a time, each after a random
 * gap around @p gap_ns and once the previous one was handled, while the
 * group runs on another thread in @p mode.
 */
static int
latency_run(struct cqpoll_group *g, struct cqpoll_cq *hot, struct lat *l,
	    enum cqpoll_group_mode mode, uint64_t samples, uint64_t gap_ns,
	    uint64_t settle_ns)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull, i;
	pthread_t t;
	int r;

	l->n = 0;
	l->g = g;
	r = cqpoll_group_set_mode(g, mode);
	if (r != 0 || pthread_create(&t, NULL, consumer, l) != 0) {
		fprintf(stderr, "bench_scale: consumer: %s\n", strerror(r ? -r : EAGAIN));
		return -1;
	}
	/* Busy mode: the idle CQs go cold (armed, no longer polled) first. */
	test_spin_ns(settle_ns);
	for (i = 0; i < samples; i++) {
		test_spin_ns(gap_ns / 2 + test_rnd(&seed) % (gap_ns + 1));
		if (post(hot, i) != 0) {
			fprintf(stderr, "bench_scale: post failed\n");
			abort();
		}
		while (__atomic_load_n(&l->n, __ATOMIC_ACQUIRE) == i)
			;
	}
	cqpoll_group_stop(g);
	pthread_join(t, NULL);
	if (l->run_ret != 0) {
		fprintf(stderr, "bench_scale: group run: %s\n", strerror(-l->run_ret));
		return -1;
	}
	return 0;
}

/* No traffic: what the sleeping group costs, its safety net mostly. */
static int
idle_run(struct cqpoll_group *g, uint64_t idle_ms, struct row *row)
{
	struct cqpoll_group_stats st;
	struct lat l = { .g = g };
	pthread_t t;

	cqpoll_group_stats_reset(g);
	if (cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_INTERRUPT) != 0 ||
	    pthread_create(&t, NULL, consumer, &l) != 0)
		return -1;
	usleep((useconds_t)(idle_ms * 1000));
	cqpoll_group_stop(g);
	pthread_join(t, NULL);
	if (l.run_ret != 0)
		return -1;
	cqpoll_group_stats_get(g, &st);
	row->idle_cpu_pct = 100.0 * (double)l.cpu_ns / ((double)idle_ms * 1e6);
	row->idle_ns_per_timeout = st.wakeups_timeout != 0 ?
		(double)l.cpu_ns / (double)st.wakeups_timeout : 0.0;
	return 0;
}

/*
 * Busy mode on this thread, no traffic, once every CQ went cold: the most CQ
 * polls any one iteration made over three safety-net periods. Cold CQs are
 * polled only by the health check and the safety net, so this is the most
 * housekeeping one iteration paid for: a count, meaningful on any machine.
 */
static int
housekeeping_run(struct cqpoll_group *g, const struct opts *o, struct row *row)
{
	struct cqpoll_group_stats st;
	uint64_t t_end, polls, max = 0;
	int r;

	if (cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_BUSY) != 0)
		return -1;
	t_end = test_now_ns() + 3 * o->cold_us * 1000;
	do {
		r = cqpoll_group_run_once(g);
	} while (r >= 0 && test_now_ns() < t_end);
	cqpoll_group_stats_get(g, &st);
	polls = st.polls;
	t_end = test_now_ns() + 3 * o->timeout_ms * 1000000;
	while (r >= 0 && test_now_ns() < t_end) {
		r = cqpoll_group_run_once(g);
		cqpoll_group_stats_get(g, &st);
		if (st.polls - polls > max)
			max = st.polls - polls;
		polls = st.polls;
	}
	if (r < 0) {
		fprintf(stderr, "bench_scale: housekeeping run: %s\n", strerror(-r));
		return -1;
	}
	row->hk_max_polls = max;
	return 0;
}

/*
 * The time to go to sleep, on this thread: the first sleep after the adds
 * arms every CQ; each later one follows a wake-up of the busy CQ alone.
 */
static int
sleep_run(struct cqpoll_group *g, struct cqpoll_cq *hot, struct row *row,
	  uint64_t *v)
{
	struct cqpoll_group_stats st;
	uint64_t t, polls = 0, fpolls = 0;
	unsigned int i;
	int r;

	t = test_now_ns();
	r = cqpoll_group_sleep_prepare(g);
	row->sleep_first_ns = test_now_ns() - t;
	if (r != 0)
		goto fail;
	for (i = 0; i < SLEEP_LOOPS; i++) {
		/* Armed: the post raises the event the finish consumes. */
		if (post(hot, i) != 0)
			goto fail;
		cqpoll_group_stats_get(g, &st);
		fpolls -= st.polls;
		r = cqpoll_group_sleep_finish(g);
		if (r != 1)
			goto fail;
		cqpoll_group_stats_get(g, &st);
		fpolls += st.polls;
		polls -= st.polls;
		t = test_now_ns();
		r = cqpoll_group_sleep_prepare(g);
		v[i] = test_now_ns() - t;
		if (r != 0)
			goto fail;
		cqpoll_group_stats_get(g, &st);
		polls += st.polls;
	}
	row->polls_per_sleep = (double)polls / SLEEP_LOOPS;
	row->polls_per_finish = (double)fpolls / SLEEP_LOOPS;
	r = cqpoll_group_sleep_finish(g);
	if (r != 0)
		goto fail;
	row->sleep_p50_ns = pct(v, SLEEP_LOOPS, 0.5);
	row->sleep_p99_ns = pct(v, SLEEP_LOOPS, 0.99);
	return 0;
fail:
	fprintf(stderr, "bench_scale: sleep run: unexpected %d (%s)\n", r,
		r < 0 ? strerror(-r) : "completions");
	return -1;
}

/* 0: room for @p n CQs' fds; else the hard limit that is too low. */
static uint64_t
fd_limit(uint64_t n, unsigned int per_cq)
{
	struct rlimit rl;
	/* The CQs' fds, the group's two fds and some for the rest. */
	rlim_t need = (rlim_t)n * per_cq + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1;
	if (rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max < need)
		rl.rlim_max = need; /* needs CAP_SYS_RESOURCE */
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		getrlimit(RLIMIT_NOFILE, &rl);
		fprintf(stderr, "bench_scale: %" PRIu64 " CQs need %llu fds, the hard"
			" limit is %llu and cannot be raised here (%s): skipped\n",
			n, (unsigned long long)need, (unsigned long long)rl.rlim_max,
			strerror(errno));
		return rl.rlim_max != 0 ? (uint64_t)rl.rlim_max : 1;
	}
	return 0;
}

static int
run_size(const struct opts *o, uint64_t n, struct row *row)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					.wait_timeout_ms = (uint32_t)o->timeout_ms,
					.cold_us = (uint32_t)o->cold_us };
	struct lat l = { .cap = o->samples };
	struct cqpoll_cq **cqs = calloc(n, sizeof(*cqs));
	uint64_t *sv = calloc(SLEEP_LOOPS, sizeof(*sv));
	struct cqpoll_group_stats st;
	struct cqpoll_group *g = NULL;
	struct cqpoll_sw_channel *ch = NULL;
	size_t h0, h1, h2;
	uint64_t i, k0, k2, t0, wakes, cpu, m0, m1;
	int ret = -1;

	memset(row, 0, sizeof(*row));
	row->n = n;
	l.v = calloc(o->samples, sizeof(*l.v));
	if (cqs == NULL || sv == NULL || l.v == NULL)
		goto out;
	row->skipped_fd_limit = fd_limit(o->shared ? 1 : n, o->uring ? 2 : 1);
	if (row->skipped_fd_limit != 0) {
		ret = 0;
		goto out;
	}
	k0 = slab_bytes();
	m0 = rss_bytes();
	h0 = heap_bytes();
	/* The channel is the CQs' own cost: its bytes count in cq_B. */
	if (o->shared) {
		ch = cqpoll_sw_channel_create();
		if (ch == NULL) {
			fprintf(stderr, "bench_scale: channel: %s\n", strerror(errno));
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		cqs[i] = cq_create(o, ch);
		if (cqs[i] == NULL) {
			fprintf(stderr, "bench_scale: CQ %" PRIu64 " of %" PRIu64 ": %s\n",
				i, n, strerror(errno));
			goto out;
		}
	}
	h1 = heap_bytes();
	m1 = rss_bytes();
	g = cqpoll_group_create(&gc);
	if (g == NULL) {
		fprintf(stderr, "bench_scale: group: %s\n", strerror(errno));
		goto out;
	}
	t0 = test_now_ns();
	for (i = 0; i < n; i++) {
		int r = cqpoll_group_add(g, cqs[i], i == n - 1 ? lat_cb : idle_cb, &l);

		if (r != 0) {
			fprintf(stderr, "bench_scale: add CQ %" PRIu64 ": %s\n", i,
				strerror(-r));
			goto out;
		}
	}
	row->add_ns = (double)(test_now_ns() - t0) / (double)n;
	h2 = heap_bytes();
	k2 = slab_bytes();
	row->cq_bytes = (double)(h1 - h0) / (double)n;
	row->group_bytes = (double)(h2 - h1) / (double)n;
	row->kernel_bytes = k2 > k0 ? (double)(k2 - k0) / (double)n : 0.0;
	row->rss_bytes = m1 > m0 ? (double)(m1 - m0) / (double)n : 0.0;

	/* The last CQ is the busy one: last in a walk over every member. */
	if (sleep_run(g, cqs[n - 1], row, sv) != 0)
		goto out;
	if (idle_run(g, o->idle_ms, row) != 0)
		goto out;
	cqpoll_group_stats_reset(g);
	if (latency_run(g, cqs[n - 1], &l, CQPOLL_GROUP_MODE_INTERRUPT, o->samples,
			o->gap_us * 1000, 0) != 0)
		goto out;
	cqpoll_group_stats_get(g, &st);
	wakes = st.wakeups_event;
	cpu = l.cpu_ns;
	row->wake_p50 = pct(l.v, l.n < l.cap ? l.n : l.cap, 0.5);
	row->wake_p99 = pct(l.v, l.n < l.cap ? l.n : l.cap, 0.99);
	row->cpu_per_wake_ns = wakes != 0 ? (double)cpu / (double)wakes : 0.0;
	row->polls_per_wake = wakes != 0 ? (double)st.polls / (double)wakes : 0.0;
	cqpoll_group_stats_reset(g);
	if (latency_run(g, cqs[n - 1], &l, CQPOLL_GROUP_MODE_BUSY, o->samples,
			o->gap_us * 1000, 5 * o->cold_us * 1000) != 0)
		goto out;
	row->busy_p50 = pct(l.v, l.n < l.cap ? l.n : l.cap, 0.5);
	cqpoll_group_stats_get(g, &st);
	row->polls_per_iter = st.iterations != 0 ?
		(double)st.polls / (double)st.iterations : 0.0;
	row->busy_p99 = pct(l.v, l.n < l.cap ? l.n : l.cap, 0.99);
	if (housekeeping_run(g, o, row) != 0)
		goto out;
	cqpoll_group_stats_get(g, &st);
	if (st.lost_wakeups != 0) {
		fprintf(stderr, "bench_scale: %" PRIu64 " lost wake-ups\n",
			st.lost_wakeups);
		goto out;
	}
	ret = 0;
out:
	cqpoll_group_destroy(g);
	for (i = 0; cqs != NULL && i < n; i++)
		cqpoll_cq_destroy(cqs[i]);
	if (ch != NULL && cqpoll_sw_channel_destroy(ch) != 0)
		ret = -1;
	free(cqs);
	free(sv);
	free(l.v);
	return ret;
}

/*
 * --check: the work of a steady sleep and of a wake-up must not grow with
 * the group: counters of the one-thread sleep run, where no safety net can
 * fire however loaded the machine (the threaded runs' polls include the
 * nets of timeouts a preempted poster causes). Returns 0, or 1 and says why.
 */
static int
check_rows(const struct row *r, unsigned int n)
{
	unsigned int i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		if (r[i].skipped_fd_limit != 0)
			continue;
		/* The woken CQ's poll-and-arm: one poll, two on edge at most. */
		if (r[i].polls_per_sleep > 2.0) {
			fprintf(stderr, "bench_scale: check: %" PRIu64 " CQs: %.2f polls"
				" per steady sleep (the one woken CQ needs at most 2)\n",
				r[i].n, r[i].polls_per_sleep);
			bad = 1;
		}
		if (r[i].polls_per_finish > 1.5 * r[0].polls_per_finish) {
			fprintf(stderr, "bench_scale: check: %" PRIu64 " CQs: %.2f polls"
				" per wake-up (sleep finish) against %.2f with %" PRIu64
				"\n", r[i].n, r[i].polls_per_finish,
				r[0].polls_per_finish, r[0].n);
			bad = 1;
		}
	}
	if (!bad)
		printf("bench_scale: check: a steady sleep and a wake-up do the same"
		       " work at every size\n");
	return bad;
}

static int
parse_u64(const char *opt, const char *v, uint64_t min, uint64_t max,
	  uint64_t *out, char **endp)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno != 0 || end == v || v[0] < '0' || v[0] > '9' ||
	    (endp == NULL && *end != '\0') || *out < min || *out > max) {
		fprintf(stderr, "bench_scale: --%s: want %" PRIu64 "..%" PRIu64
			", got '%s'\n", opt, min, max, v);
		return -1;
	}
	if (endp != NULL)
		*endp = end;
	return 0;
}

static int
parse_sizes(struct opts *o, const char *v)
{
	char *end;

	o->nsizes = 0;
	for (;;) {
		if (o->nsizes == MAX_SIZES) {
			fprintf(stderr, "bench_scale: --cqs: at most %d sizes\n",
				MAX_SIZES);
			return -1;
		}
		if (parse_u64("cqs", v, 1, MAX_CQS, &o->sizes[o->nsizes], &end) != 0)
			return -1;
		o->nsizes++;
		if (*end == '\0')
			return 0;
		if (*end != ',') {
			fprintf(stderr, "bench_scale: --cqs: a comma-separated list, got '%s'\n",
				v);
			return -1;
		}
		v = end + 1;
	}
}

static double
ratio(double x, double base)
{
	return base > 0 ? x / base : 0.0;
}

static void
print_rows(const struct opts *o, const struct row *r, unsigned int n)
{
	const struct row *b = &r[0];
	unsigned int i;

	printf("bench_scale: %s CQs (size %" PRIu64 "), 1 active; %" PRIu64
	       " samples per figure, gaps %" PRIu64 "..%" PRIu64 " us, cold_us %"
	       PRIu64 "\n", o->uring ? "io_uring" : o->shared ?
	       "sw (edge arm, one shared channel)" : "sw (edge arm)", o->cq_size,
	       o->samples, o->gap_us / 2,
	       o->gap_us / 2 + o->gap_us, o->cold_us);
	printf("%7s %9s %9s %9s %9s %11s %6s %6s %6s %9s %12s\n", "cqs",
	       "busy_p50", "busy_p99", "wake_p50", "wake_p99", "cpu_ns/wake",
	       "busy_x", "wake_x", "cpu_x", "idle_cpu%", "ns/timeout");
	for (i = 0; i < n; i++) {
		if (r[i].skipped_fd_limit != 0) {
			printf("%7" PRIu64 " skipped: needs %" PRIu64 " fds, hard limit %"
			       PRIu64 " (ulimit -Hn)\n", r[i].n,
			       (o->shared ? 1 : r[i].n) * (o->uring ? 2 : 1) + 64,
			       r[i].skipped_fd_limit);
			continue;
		}
		printf("%7" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
		       " %11.0f %6.2f %6.2f %6.2f %9.3f %12.0f\n", r[i].n, r[i].busy_p50,
		       r[i].busy_p99, r[i].wake_p50, r[i].wake_p99,
		       r[i].cpu_per_wake_ns,
		       ratio((double)r[i].busy_p50, (double)b->busy_p50),
		       ratio((double)r[i].wake_p50, (double)b->wake_p50),
		       ratio(r[i].cpu_per_wake_ns, b->cpu_per_wake_ns),
		       r[i].idle_cpu_pct, r[i].idle_ns_per_timeout);
	}
	printf("(latencies in ns; _x: ratio to %" PRIu64 " CQ%s, goal <= 2; idle: "
	       "no traffic for %" PRIu64 " ms, safety-net timeout %" PRIu64 " ms)\n",
	       b->n, b->n == 1 ? "" : "s", o->idle_ms, o->timeout_ms);
	printf("%7s %13s %12s %12s %11s %10s %10s %9s %10s %11s %11s %9s %9s\n",
	       "cqs", "first_sleep_us", "sleep_p50_ns", "sleep_p99_ns",
	       "polls/sleep", "polls/wake", "polls/iter", "hk_max", "add_ns/cq",
	       "cq_B/member", "grp_B/member", "kernel_B", "cq_rss_B");
	for (i = 0; i < n; i++) {
		if (r[i].skipped_fd_limit != 0)
			continue;
		printf("%7" PRIu64 " %13.1f %12" PRIu64 " %12" PRIu64 " %11.2f %10.2f"
		       " %10.2f %9" PRIu64 " %10.0f %11.0f %11.0f %9.0f %9.0f\n",
		       r[i].n, (double)r[i].sleep_first_ns / 1e3, r[i].sleep_p50_ns,
		       r[i].sleep_p99_ns, r[i].polls_per_sleep, r[i].polls_per_wake,
		       r[i].polls_per_iter, r[i].hk_max_polls,
		       r[i].add_ns,
		       r[i].cq_bytes, r[i].group_bytes, r[i].kernel_bytes,
		       r[i].rss_bytes);
	}
	printf("(first_sleep: the first sleep after the adds arms every CQ; "
	       "sleep_p50/p99: a sleep after a wake-up of the busy CQ;\n"
	       " polls/sleep: CQ polls per steady sleep, polls/wake: per event wake-up"
	       " (interrupt mode), polls/iter: per loop\n iteration (busy mode): all"
	       " O(1) if cold CQs stay armed; hk_max: the most CQ polls of one\n"
	       " busy iteration without traffic (health check and safety net: a"
	       " few members per iteration);\n"
	       " cq_B, grp_B: C allocator bytes per member (mallinfo2), the CQ's "
	       "and the group's; kernel_B: /proc/slabinfo active\n objects delta"
	       " per member, machine-wide, rough: large N only; cq_rss_B: resident"
	       " memory the CQs added, VmRSS)\n");
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "cqs", required_argument, NULL, 'c' },
		{ "samples", required_argument, NULL, 's' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "cq-size", required_argument, NULL, 'q' },
		{ "cold-us", required_argument, NULL, 'k' },
		{ "dev", required_argument, NULL, 'd' },
		{ "check", no_argument, NULL, 'C' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "idle-ms", required_argument, NULL, 'i' },
		{ "channel", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .sizes = { 1, 4096, 65536 }, .nsizes = 3,
			  .samples = 2000, .gap_us = 100, .cq_size = 64,
			  .cold_us = 1000, .timeout_ms = 10, .idle_ms = 1000 };
	struct row rows[MAX_SIZES];
	unsigned int i;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			r = parse_sizes(&o, optarg);
			break;
		case 's':
			r = parse_u64("samples", optarg, 10, 10000000, &o.samples, NULL);
			break;
		case 'g':
			r = parse_u64("gap-us", optarg, 1, 1000000, &o.gap_us, NULL);
			break;
		case 'q':
			r = parse_u64("cq-size", optarg, 2, 1u << 24, &o.cq_size, NULL);
			break;
		case 'k':
			r = parse_u64("cold-us", optarg, 1, 1000000, &o.cold_us, NULL);
			break;
		case 'd':
			if (strcmp(optarg, "sw") == 0) {
				o.uring = 0;
			} else if (strcmp(optarg, "uring") == 0) {
#ifdef CQPOLL_BENCH_URING
				o.uring = 1;
#else
				fprintf(stderr, "bench_scale: --dev=uring: built without"
					" the io_uring driver\n");
				return 2;
#endif
			} else {
				fprintf(stderr, "bench_scale: --dev: sw or uring, got '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'C':
			o.check = 1;
			break;
		case 'H':
			if (strcmp(optarg, "own") == 0 || strcmp(optarg, "shared") == 0) {
				o.shared = strcmp(optarg, "shared") == 0;
			} else {
				fprintf(stderr, "bench_scale: --channel: own or shared, got '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 't':
			r = parse_u64("timeout-ms", optarg, 1, 3600000, &o.timeout_ms, NULL);
			break;
		case 'i':
			r = parse_u64("idle-ms", optarg, 1, 600000, &o.idle_ms, NULL);
			break;
		case 'h':
			printf("usage: %s [--cqs=N,N,...] [--samples=N] [--gap-us=US] "
			       "[--cq-size=N] [--cold-us=US] [--dev=sw|uring] [--check]\n"
			       "       [--timeout-ms=MS] [--idle-ms=MS] [--channel=own|shared]\n",
			       argv[0]);
			return 0;
		default:
			return 2;
		}
		if (r != 0)
			return 2;
	}
	if (optind != argc) {
		fprintf(stderr, "bench_scale: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	/* The gap must leave the busy CQ hot: it gets work well within cold_us. */
	if (o.gap_us * 3 / 2 >= o.cold_us) {
		fprintf(stderr, "bench_scale: --gap-us=%" PRIu64 " lets the busy CQ go cold"
			" (gaps up to 1.5x must stay under --cold-us=%" PRIu64 ")\n",
			o.gap_us, o.cold_us);
		return 2;
	}
	if (o.shared && o.uring) {
		fprintf(stderr, "bench_scale: --channel=shared is for sw CQs (--dev=sw)\n");
		return 2;
	}
	for (i = 0; i < o.nsizes; i++) {
		if (run_size(&o, o.sizes[i], &rows[i]) != 0) {
			fprintf(stderr, "bench_scale: %" PRIu64 " CQs failed\n",
				o.sizes[i]);
			return 1;
		}
		if (rows[i].skipped_fd_limit == 0)
			fprintf(stderr, "bench_scale: %" PRIu64 " CQs done\n",
				o.sizes[i]);
	}
	print_rows(&o, rows, o.nsizes);
	return o.check ? check_rows(rows, o.nsizes) : 0;
}
