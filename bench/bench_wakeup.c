/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a wake-up costs, measured in one run so that only ratios matter:
 *
 *  raw       a thread blocked in epoll_wait() on an eventfd; the other thread
 *            takes a timestamp and writes the eventfd. The floor any
 *            event-driven consumer pays.
 *  group-1   a poll group in interrupt mode over one software CQ; the other
 *            thread posts a completion (timestamped by the device). Latency
 *            is from that timestamp to the group's callback.
 *  group-N   the same with N - 1 more CQs in the group that stay idle: the
 *            cost of a wake-up must follow the CQs with work, not the group.
 *
 * Each sample waits for the previous one to be consumed and then for a random
 * gap, so the consumer is asleep when the next one comes. Reported per
 * scenario: median and p99 latency, and the consumer thread's CPU time per
 * wake-up; then the ratios the goals are stated in. Last, the cost of
 * cqpoll_poll_and_arm() on an unarmed empty CQ (poll, arm, and for edge the
 * re-poll) against one empty cqpoll_poll_burst().
 *
 * Usage: bench_wakeup [--samples=N] [--cqs=N] [--gap-us=US]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_emu.h"
#include "cqpoll_sw_emu.h"
#include "cqpoll_test.h"

#define ARM_LOOPS 20000

static uint64_t
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One scenario's samples and what the consumer thread burnt. */
struct scenario {
	const char *name;
	uint64_t *lat;
	uint64_t n;        /* samples taken; read by the poster */
	uint64_t cpu_ns;   /* consumer thread CPU time over the run */
	uint64_t wakes;
};

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
pct(const struct scenario *s, double q)
{
	uint64_t i = (uint64_t)(q * (double)(s->n - 1));

	return s->lat[i];
}

/* The poster: one sample at a time, after a random gap. */
static void
pace(struct scenario *s, uint64_t samples, uint64_t gap_ns,
     void (*fire)(void *), void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull, i;

	for (i = 0; i < samples; i++) {
		test_spin_ns(gap_ns / 2 + test_rnd(&seed) % (gap_ns + 1));
		fire(arg);
		while (__atomic_load_n(&s->n, __ATOMIC_ACQUIRE) == i)
			;
	}
}

/* raw: eventfd + epoll_wait. */
struct raw {
	struct scenario *s;
	int efd, epfd;
	uint64_t t_post;
	uint64_t samples;
};

static void *
raw_consumer(void *arg)
{
	struct raw *r = arg;
	struct epoll_event ev;
	uint64_t v, t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);

	while (__atomic_load_n(&r->s->n, __ATOMIC_RELAXED) < r->samples) {
		if (epoll_wait(r->epfd, &ev, 1, 1000) != 1)
			continue;
		if (read(r->efd, &v, sizeof(v)) != sizeof(v))
			continue;
		r->s->lat[r->s->n] = now_ns(CLOCK_MONOTONIC) -
			__atomic_load_n(&r->t_post, __ATOMIC_ACQUIRE);
		r->s->wakes++;
		__atomic_store_n(&r->s->n, r->s->n + 1, __ATOMIC_RELEASE);
	}
	r->s->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	return NULL;
}

static void
raw_fire(void *arg)
{
	struct raw *r = arg;
	uint64_t one = 1;

	__atomic_store_n(&r->t_post, now_ns(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
	if (write(r->efd, &one, sizeof(one)) != sizeof(one))
		abort();
}

static int
run_raw(struct scenario *s, uint64_t samples, uint64_t gap_ns)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct raw r = { .s = s, .samples = samples };
	pthread_t t;

	r.efd = eventfd(0, EFD_NONBLOCK);
	r.epfd = epoll_create1(0);
	if (r.efd < 0 || r.epfd < 0 ||
	    epoll_ctl(r.epfd, EPOLL_CTL_ADD, r.efd, &ev) < 0) {
		perror("bench_wakeup: eventfd/epoll");
		return -1;
	}
	pthread_create(&t, NULL, raw_consumer, &r);
	pace(s, samples, gap_ns, raw_fire, &r);
	pthread_join(t, NULL);
	close(r.efd);
	close(r.epfd);
	return 0;
}

/* group: one busy CQ among ncqs in an interrupt-mode group. */
struct grp {
	struct scenario *s;
	struct cqpoll_group *g;
	struct cqpoll_cq *hot;
	uint64_t seq;
};

static void
grp_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
       void *arg)
{
	struct scenario *s = arg;
	unsigned int i;

	(void)cq;
	for (i = 0; i < n; i++) {
		s->lat[s->n] = now_ns(CLOCK_MONOTONIC) - c[i].timestamp;
		__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELEASE);
	}
}

static void *
grp_consumer(void *arg)
{
	struct grp *gr = arg;
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int r;

	r = cqpoll_group_run(gr->g);
	if (r != 0)
		fprintf(stderr, "bench_wakeup: group run: %s\n", strerror(-r));
	gr->s->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	return NULL;
}

static void
grp_fire(void *arg)
{
	struct grp *gr = arg;
	struct cqpoll_completion c = { .wr_id = gr->seq++, .byte_len = 8 };

	if (cqpoll_sw_emu_post(gr->hot, &c) != 0)
		abort();
}

static int
run_group(struct scenario *s, unsigned int ncqs, uint64_t samples,
	  uint64_t gap_ns)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 1000 };
	struct cqpoll_sw_emu_conf sw = { .size = 64, .arm = CQPOLL_ARM_LEVEL };
	struct cqpoll_group_stats st;
	struct cqpoll_cq **cqs;
	struct grp gr = { .s = s };
	unsigned int i;
	pthread_t t;
	int ret = -1;

	cqs = calloc(ncqs, sizeof(*cqs));
	gr.g = cqpoll_group_create(&conf);
	if (cqs == NULL || gr.g == NULL) {
		fprintf(stderr, "bench_wakeup: group: %s\n", strerror(errno));
		goto out;
	}
	for (i = 0; i < ncqs; i++) {
		cqs[i] = cqpoll_sw_emu_cq_create(&sw);
		if (cqs[i] == NULL) {
			fprintf(stderr, "bench_wakeup: CQ %u of %u: %s\n", i, ncqs,
				strerror(errno));
			goto out;
		}
		if (cqpoll_group_add(gr.g, cqs[i], grp_cb, s) != 0)
			goto out;
	}
	/* The last CQ: the one polled last by a group that walks them all. */
	gr.hot = cqs[ncqs - 1];
	pthread_create(&t, NULL, grp_consumer, &gr);
	pace(s, samples, gap_ns, grp_fire, &gr);
	cqpoll_group_stop(gr.g);
	pthread_join(t, NULL);
	cqpoll_group_stats_get(gr.g, &st);
	s->wakes = st.wakeups_event;
	if (st.lost_wakeups != 0 || st.wakeups_timeout != 0) {
		fprintf(stderr, "bench_wakeup: %s: %" PRIu64 " lost wake-ups, %"
			PRIu64 " timeouts\n", s->name, st.lost_wakeups,
			st.wakeups_timeout);
		goto out;
	}
	ret = 0;
out:
	cqpoll_group_destroy(gr.g);
	for (i = 0; cqs != NULL && i < ncqs; i++)
		cqpoll_cq_destroy(cqs[i]);
	free(cqs);
	return ret;
}

/*
 * Median ns of poll_and_arm from unarmed, and of an empty poll: medians,
 * because other load on the machine preempts some calls.
 */
static int
arm_cost(enum cqpoll_arm_semantics arm, double *pa_ns, double *poll_ns)
{
	struct cqpoll_sw_emu_conf sw = { .size = 64, .arm = arm };
	struct cqpoll_completion c[32], p = { .byte_len = 8 };
	struct cqpoll_cq *cq = cqpoll_sw_emu_cq_create(&sw);
	uint64_t *pa = calloc(ARM_LOOPS, sizeof(*pa));
	uint64_t *po = calloc(ARM_LOOPS, sizeof(*po));
	uint64_t *ck = calloc(ARM_LOOPS, sizeof(*ck));
	unsigned int i;
	uint64_t t;
	int r, ret = -1;

	if (cq == NULL || pa == NULL || po == NULL || ck == NULL)
		goto out;
	/* Warm: the first polls would fault in the ring and the code. */
	for (i = 0; i < ARM_LOOPS; i++)
		if (cqpoll_poll_burst(cq, c, 32) != 0)
			goto out;
	for (i = 0; i < ARM_LOOPS; i++) {
		t = now_ns(CLOCK_MONOTONIC);
		ck[i] = now_ns(CLOCK_MONOTONIC) - t;
		t = now_ns(CLOCK_MONOTONIC);
		r = cqpoll_poll_burst(cq, c, 32);
		po[i] = now_ns(CLOCK_MONOTONIC) - t;
		if (r != 0)
			goto out;
		t = now_ns(CLOCK_MONOTONIC);
		r = cqpoll_poll_and_arm(cq, c, 32);
		pa[i] = now_ns(CLOCK_MONOTONIC) - t;
		if (r != 0)
			goto out;
		/* Untimed: fire the arm and consume its event, to arm again. */
		if (cqpoll_sw_emu_post(cq, &p) != 0 || cqpoll_cq_event_get(cq) != 1 ||
		    cqpoll_poll_burst(cq, c, 32) != 1)
			goto out;
	}
	qsort(pa, ARM_LOOPS, sizeof(*pa), cmp_u64);
	qsort(po, ARM_LOOPS, sizeof(*po), cmp_u64);
	qsort(ck, ARM_LOOPS, sizeof(*ck), cmp_u64);
	/* Less the cost of the clock read itself, the median of nothing timed. */
	*pa_ns = (double)pa[ARM_LOOPS / 2] - (double)ck[ARM_LOOPS / 2];
	*poll_ns = (double)po[ARM_LOOPS / 2] - (double)ck[ARM_LOOPS / 2];
	if (*poll_ns < 1.0)
		*poll_ns = 1.0;
	ret = 0;
out:
	cqpoll_cq_destroy(cq);
	free(pa);
	free(po);
	free(ck);
	return ret;
}

static void
report(struct scenario *s)
{
	qsort(s->lat, s->n, sizeof(s->lat[0]), cmp_u64);
	printf("%-10s %8" PRIu64 " %10.1f %10.1f %12.1f\n", s->name, s->n,
	       (double)pct(s, 0.5) / 1e3, (double)pct(s, 0.99) / 1e3,
	       s->wakes ? (double)s->cpu_ns / (double)s->wakes / 1e3 : 0.0);
}

static int
parse_u64(const char *opt, const char *v, uint64_t min, uint64_t max,
	  uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || v[0] < '0' || v[0] > '9' ||
	    *out < min || *out > max) {
		fprintf(stderr, "bench_wakeup: --%s: want %" PRIu64 "..%" PRIu64
			", got '%s'\n", opt, min, max, v);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "samples", required_argument, NULL, 's' },
		{ "cqs", required_argument, NULL, 'c' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t samples = 5000, ncqs = 4096, gap_us = 100, v;
	struct scenario sc[3] = { { .name = "raw" }, { .name = "group-1" },
				  { .name = "group-N" } };
	enum cqpoll_arm_semantics arms[] = { CQPOLL_ARM_LEVEL, CQPOLL_ARM_EDGE,
					     CQPOLL_ARM_REPORT_MISSED };
	double pa, po, m[3];
	struct rlimit rl;
	char name[32];
	unsigned int i;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == '?')
			return 2;
		if (parse_u64(opts[o == 's' ? 0 : o == 'c' ? 1 : 2].name, optarg,
			      o == 'c' ? 2 : 1, o == 's' ? 10000000 :
			      o == 'c' ? 65536 : 1000000, &v) != 0)
			return 2;
		if (o == 's')
			samples = v;
		else if (o == 'c')
			ncqs = v;
		else
			gap_us = v;
	}
	/* One eventfd per software CQ: raise the soft limit to the hard one. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	snprintf(name, sizeof(name), "group-%" PRIu64, ncqs);
	sc[2].name = name;
	for (i = 0; i < 3; i++) {
		sc[i].lat = calloc(samples, sizeof(uint64_t));
		if (sc[i].lat == NULL)
			return 1;
	}
	if (run_raw(&sc[0], samples, gap_us * 1000) != 0 ||
	    run_group(&sc[1], 1, samples, gap_us * 1000) != 0 ||
	    run_group(&sc[2], (unsigned int)ncqs, samples, gap_us * 1000) != 0)
		return 1;
	printf("%" PRIu64 " samples, gaps %" PRIu64 "..%" PRIu64 " us\n", samples,
	       gap_us / 2, gap_us / 2 + gap_us);
	printf("%-10s %8s %10s %10s %12s\n", "scenario", "samples", "p50_us",
	       "p99_us", "cpu_us/wake");
	for (i = 0; i < 3; i++) {
		report(&sc[i]);
		m[i] = (double)pct(&sc[i], 0.5);
	}
	printf("wake-up median, group-1 / raw:          %.2f (goal <= 1.2)\n",
	       m[1] / m[0]);
	printf("wake-up median, %s / group-1:   %.2f (goal <= 2)\n", name,
	       m[2] / m[1]);
	printf("cpu per wake-up, %s / group-1:  %.2f (goal <= 2)\n", name,
	       ((double)sc[2].cpu_ns / (double)sc[2].wakes) /
	       ((double)sc[1].cpu_ns / (double)sc[1].wakes));
	printf("poll_and_arm from unarmed vs one empty poll, median ns less the clock read (sw CQ):\n");
	for (i = 0; i < 3; i++) {
		if (arm_cost(arms[i], &pa, &po) != 0) {
			fprintf(stderr, "bench_wakeup: arm cost failed\n");
			return 1;
		}
		printf("  %-14s %7.1f ns vs %5.1f ns: %.1fx\n",
		       cqpoll_arm_semantics_name(arms[i]), pa, po, pa / po);
	}
	for (i = 0; i < 3; i++)
		free(sc[i].lat);
	return 0;
}
