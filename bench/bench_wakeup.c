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
 *  bare-epoll  the floor: a thread that does nothing but sleep in
 *            epoll_wait() on an eventfd registered edge-triggered (no read()
 *            to clear it); the other thread writes the eventfd.
 *  bare-uring  the other floor, where liburing is built: a thread that
 *            does nothing but sleep in io_uring_enter() (io_uring_wait_cqe(),
 *            no timeout); the other thread submits a NOP on the same ring,
 *            which completes inside its io_uring_enter().
 *  uring-1   the same NOPs on cqpoll's io_uring driver: a poll group of
 *            one io_uring CQ in interrupt mode, with the build's default
 *            safety net (the alarm every sleep is bounded by), against
 *            bare-uring what cqpoll adds on that driver, as testpmd-cq's
 *            interrupt mode against tpcq-peer's uring-wait.
 *  uring-1-1h  the same group with a safety net of an hour, whose alarm
 *            a stream of short sleeps never moves: against uring-1, the
 *            price of the default net's moves (one every half period).
 * Every consumer does the same measuring after each sample (a clock read
 * and a thread CPU clock read), so that CPU per wake-up of raw and group-1
 * against a floor's is what their wake-up paths add.
 *
 * Each sample waits for the previous one to be consumed and then for a random
 * gap, so the consumer is asleep when the next one comes. The consumers run
 * at once, asleep while not fed, and the scenarios take turns
 * in blocks (--block samples, 100 by default) in an order shuffled every
 * round (seeded, printed; --seed repeats it): the machine's state, which
 * wakes a sleeper in about 4 us or about 17-20 us and switches between the
 * two over seconds (issue 37), is then shared by the blocks of a round, and
 * a round's ratios measure cqpoll, not the mode. Reported per scenario, over
 * all rounds: median and p99 latency and the consumer thread's CPU time per
 * wake-up (CLOCK_THREAD_CPUTIME_ID, read after each sample). --json=FILE
 * writes every block (its latencies and the consumer's CPU time across it)
 * for devtools/run-wakeup.py, which judges the goals on the rounds' ratios
 * with devtools/verdict.py and names the two wake-up modes where they show.
 * Last, the cost of cqpoll_poll_and_arm() on an unarmed empty CQ (poll, arm,
 * and for edge the re-poll) against one empty cqpoll_poll_burst().
 *
 * The consumers run on CPU 0 and the poster on CPU 1 (--cpus=RX,TX, or
 * none for the scheduler's choice), as testpmd-cq and tpcq-peer place
 * theirs: a consumer woken on the CPU where the poster spins waits for the
 * poster to be preempted, a wake-up mode of the scheduler's placement.
 *
 * libcqpoll_emu's sleep check (the emulator's ground truth, asked before
 * each sleep for up to 64 members of a group) is test machinery whose cost
 * grows with the group: it is removed unless --oracle, which keeps it and
 * with it the count of lost wake-ups.
 *
 * Usage: bench_wakeup [--samples=N] [--block=N] [--cqs=N] [--gap-us=US]
 *                     [--seed=N] [--cpus=RX,TX|none] [--oracle] [--json=FILE]
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

#ifdef CQPOLL_BENCH_URING
#include <liburing.h>

#include "cqpoll_uring.h"
#endif

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_sleep_check.h"
#include "cqpoll_sw.h"
#include "cqpoll_emu.h"
#include "cqpoll_sw_emu.h"
#include "cqpoll_test.h"

#define ARM_LOOPS 20000
/* raw, group-1, group-N, bare-epoll; with liburing bare-uring, uring-1, uring-1-1h */
#define SCENARIOS_MAX 7

static uint64_t
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPUs of the consumers and of the poster; -1: the scheduler's choice. */
static int cpu_rx = 0, cpu_tx = 1;

static void
pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
		fprintf(stderr, "bench_wakeup: cannot pin to CPU %d\n", cpu);
}

/*
 * One scenario's samples: latency and the consumer thread's CPU time after
 * each, so that a block's CPU is the difference from its first sample to
 * its last (block - 1 wake-ups): what a consumer did between its blocks,
 * such as uring-1's safety net expiring, is left out. Index 0 .. block - 1
 * is the warm-up block, measured and not reported.
 */
struct scenario {
	const char *name;
	uint64_t *lat;
	uint64_t *cpu;     /* consumer thread CPU ns after sample i */
	uint64_t n;        /* samples taken; read by the poster */
	uint64_t total;    /* samples to take, warm-up included */
	uint64_t wakes;    /* the group's event wake-ups (raw: samples) */
	uint64_t timeouts; /* the group's sleeps ended by their timeout */
};

/* The consumer read sample s->n: its latency, the thread's CPU so far. */
static void
sample_done(struct scenario *s, uint64_t lat)
{
	s->lat[s->n] = lat;
	s->cpu[s->n] = now_ns(CLOCK_THREAD_CPUTIME_ID);
	__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELEASE);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Pooled percentile of the reported samples (warm-up left out). */
static uint64_t
pct(const uint64_t *sorted, uint64_t n, double q)
{
	return sorted[(uint64_t)(q * (double)(n - 1))];
}

/* A scenario's consumer and how to wake it. */
struct runner {
	struct scenario *s;
	void (*fire)(void *);
	void *arg;
};

/* The poster: @count samples of one scenario, each after a random gap. */
static void
pace_block(struct runner *r, uint64_t count, uint64_t gap_ns, uint64_t *seed)
{
	struct scenario *s = r->s;
	uint64_t i, n;

	for (i = 0; i < count; i++) {
		test_spin_ns(gap_ns / 2 + test_rnd(seed) % (gap_ns + 1));
		n = __atomic_load_n(&s->n, __ATOMIC_ACQUIRE);
		r->fire(r->arg);
		while (__atomic_load_n(&s->n, __ATOMIC_ACQUIRE) == n)
			;
	}
}

/* raw: eventfd + epoll_wait; bare (the floor): the same, edge, no read. */
struct raw {
	struct scenario *s;
	int efd, epfd;
	bool bare;
	uint64_t t_post;
};

static void *
raw_consumer(void *arg)
{
	struct raw *r = arg;
	struct epoll_event ev;
	uint64_t v;

	pin(cpu_rx);
	while (__atomic_load_n(&r->s->n, __ATOMIC_RELAXED) < r->s->total) {
		if (epoll_wait(r->epfd, &ev, 1, 1000) != 1)
			continue;
		if (!r->bare && read(r->efd, &v, sizeof(v)) != sizeof(v))
			continue;
		r->s->wakes++;
		sample_done(r->s, now_ns(CLOCK_MONOTONIC) -
			    __atomic_load_n(&r->t_post, __ATOMIC_ACQUIRE));
	}
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
raw_start(struct raw *r, struct scenario *s, bool bare, pthread_t *t)
{
	/* Edge: each write raises an event whatever the count holds. */
	struct epoll_event ev = { .events = bare ? EPOLLIN | EPOLLET : EPOLLIN };

	r->s = s;
	r->bare = bare;
	r->efd = eventfd(0, EFD_NONBLOCK);
	r->epfd = epoll_create1(0);
	if (r->efd < 0 || r->epfd < 0 ||
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->efd, &ev) < 0) {
		perror("bench_wakeup: eventfd/epoll");
		return -1;
	}
	return pthread_create(t, NULL, raw_consumer, r) == 0 ? 0 : -1;
}

#ifdef CQPOLL_BENCH_URING
/* bare-uring: io_uring_wait_cqe() on a ring the poster submits NOPs to. */
struct bare_uring {
	struct scenario *s;
	struct io_uring ring;
	uint64_t t_post;
};

static void *
uring_consumer(void *arg)
{
	struct bare_uring *u = arg;
	struct io_uring_cqe *cqe;

	pin(cpu_rx);
	/* Untimed, as the floor is: the poster sends every sample. */
	while (__atomic_load_n(&u->s->n, __ATOMIC_RELAXED) < u->s->total) {
		if (io_uring_wait_cqe(&u->ring, &cqe) != 0)
			continue;
		io_uring_cqe_seen(&u->ring, cqe);
		u->s->wakes++;
		sample_done(u->s, now_ns(CLOCK_MONOTONIC) -
			    __atomic_load_n(&u->t_post, __ATOMIC_ACQUIRE));
	}
	return NULL;
}

/* A NOP on @p ring, from the poster thread, its submission time in @p t_post. */
static void
post_nop(struct io_uring *ring, uint64_t *t_post)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (sqe == NULL)
		abort();
	io_uring_prep_nop(sqe);
	__atomic_store_n(t_post, now_ns(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
	if (io_uring_submit(ring) != 1)
		abort();
}

static void
uring_fire(void *arg)
{
	struct bare_uring *u = arg;

	post_nop(&u->ring, &u->t_post);
}

static int
uring_start(struct bare_uring *u, struct scenario *s, pthread_t *t)
{
	int r;

	u->s = s;
	r = io_uring_queue_init(8, &u->ring, 0);
	if (r < 0) {
		fprintf(stderr, "bench_wakeup: io_uring_queue_init: %s\n", strerror(-r));
		return -1;
	}
	return pthread_create(t, NULL, uring_consumer, u) == 0 ? 0 : -1;
}
#endif

/* group: one busy CQ among ncqs in an interrupt-mode group. */
struct grp {
	struct scenario *s;
	struct cqpoll_group *g;
	struct cqpoll_cq **cqs;
	unsigned int ncqs;
	struct cqpoll_cq *hot;
	uint64_t seq;
#ifdef CQPOLL_BENCH_URING
	struct io_uring *ring;    /* uring-1: its CQ's ring */
#endif
	uint64_t t_post;          /* uring-1: a NOP's CQE carries no time */
};

static void
grp_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
       void *arg)
{
	struct scenario *s = arg;
	unsigned int i;

	(void)cq;
	for (i = 0; i < n; i++)
		sample_done(s, now_ns(CLOCK_MONOTONIC) - c[i].timestamp);
}

static void *
grp_consumer(void *arg)
{
	struct grp *gr = arg;
	int r;

	pin(cpu_rx);
	r = cqpoll_group_run(gr->g);
	if (r != 0)
		fprintf(stderr, "bench_wakeup: group run: %s\n", strerror(-r));
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

/* uring-1: a NOP completion, timed from its submission. */
static void
uring_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
	 void *arg)
{
	struct grp *gr = arg;
	unsigned int i;

	(void)cq;
	(void)c;
	for (i = 0; i < n; i++)
		sample_done(gr->s, now_ns(CLOCK_MONOTONIC) -
			    __atomic_load_n(&gr->t_post, __ATOMIC_ACQUIRE));
}

#ifdef CQPOLL_BENCH_URING
/* As bare-uring's poster, on the CQ's ring. */
static void
uring_grp_fire(void *arg)
{
	struct grp *gr = arg;

	post_nop(gr->ring, &gr->t_post);
}
#endif

/*
 * An interrupt-mode group of @ncqs software CQs, or with @uring of one
 * io_uring CQ, under a safety net of @net_ms (0: the build's default). The
 * software groups' net is well above a round: they wait asleep while the
 * other scenarios take their blocks.
 */
static int
grp_start(struct grp *gr, struct scenario *s, unsigned int ncqs, bool uring,
	  uint32_t net_ms, pthread_t *t)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = net_ms };
	struct cqpoll_sw_emu_conf sw = { .size = 64, .arm = CQPOLL_ARM_LEVEL };
	unsigned int i;

	gr->s = s;
	gr->ncqs = ncqs;
	gr->cqs = calloc(ncqs, sizeof(*gr->cqs));
	gr->g = cqpoll_group_create(&conf);
	if (gr->cqs == NULL || gr->g == NULL) {
		fprintf(stderr, "bench_wakeup: group: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < ncqs; i++) {
#ifdef CQPOLL_BENCH_URING
		if (uring) {
			gr->cqs[i] = cqpoll_uring_cq_create(NULL);
			gr->ring = cqpoll_uring_cq_ring(gr->cqs[i]);
		} else
#endif
		gr->cqs[i] = cqpoll_sw_emu_cq_create(&sw);
		if (gr->cqs[i] == NULL) {
			fprintf(stderr, "bench_wakeup: CQ %u of %u: %s\n", i, ncqs,
				strerror(errno));
			return -1;
		}
		if (cqpoll_group_add(gr->g, gr->cqs[i], uring ? uring_cb : grp_cb,
				     uring ? (void *)gr : s) != 0)
			return -1;
	}
	/* The last CQ: the one polled last by a group that walks them all. */
	gr->hot = gr->cqs[ncqs - 1];
	return pthread_create(t, NULL, grp_consumer, gr) == 0 ? 0 : -1;
}

/* Stop the group, count its wake-ups; -1 if it lost one. */
static int
grp_finish(struct grp *gr, pthread_t t)
{
	struct cqpoll_group_stats st;
	unsigned int i;
	int ret = 0;

	cqpoll_group_stop(gr->g);
	pthread_join(t, NULL);
	cqpoll_group_stats_get(gr->g, &st);
	gr->s->wakes = st.wakeups_event;
	gr->s->timeouts = st.wakeups_timeout;
	if (st.lost_wakeups != 0) {
		fprintf(stderr, "bench_wakeup: %s: %" PRIu64 " lost wake-ups\n",
			gr->s->name, st.lost_wakeups);
		ret = -1;
	}
	cqpoll_group_destroy(gr->g);
	for (i = 0; i < gr->ncqs; i++)
		cqpoll_cq_destroy(gr->cqs[i]);
	free(gr->cqs);
	return ret;
}

/* Where each reported block sits: which scenario, round, place in it. */
struct block {
	unsigned int sc, round, pos;
	uint64_t first;    /* index of its first sample */
};

/*
 * The scenarios interleaved: a warm-up block of each, then @rounds rounds,
 * each a block of @bs samples of every scenario in an order shuffled per
 * round, so that a block's neighbours share the machine's state with it.
 */
static void
interleave(struct runner *run, unsigned int nsc, uint64_t rounds, uint64_t bs,
	   uint64_t gap_ns, uint64_t seed, struct block *blocks)
{
	unsigned int order[8], i, j, k;
	uint64_t r, rng = seed | 1;

	pin(cpu_tx);
	for (i = 0; i < nsc; i++)
		pace_block(&run[i], bs, gap_ns, &rng);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < nsc; i++)
			order[i] = i;
		for (i = nsc - 1; i > 0; i--) {   /* Fisher-Yates */
			j = (unsigned int)(test_rnd(&rng) % (i + 1));
			k = order[i];
			order[i] = order[j];
			order[j] = k;
		}
		for (i = 0; i < nsc; i++) {
			struct block *b = &blocks[r * nsc + i];

			b->sc = order[i];
			b->round = (unsigned int)r;
			b->pos = i;
			b->first = __atomic_load_n(&run[order[i]].s->n, __ATOMIC_ACQUIRE);
			pace_block(&run[order[i]], bs, gap_ns, &rng);
		}
	}
}

/* Every block: its samples' latencies and its CPU time, one JSON document. */
static int
write_json(const char *path, const struct scenario *sc, unsigned int nsc,
	   const struct block *blocks, uint64_t nblocks, uint64_t bs,
	   uint64_t gap_us, uint64_t ncqs, uint64_t seed, bool oracle)
{
	FILE *f = fopen(path, "w");
	uint64_t b, i;
	unsigned int k;

	if (f == NULL) {
		fprintf(stderr, "bench_wakeup: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\"program\": \"bench_wakeup\", \"block\": %" PRIu64
		", \"rounds\": %" PRIu64 ", \"gap_us\": [%" PRIu64 ", %" PRIu64
		"], \"cqs\": %" PRIu64 ", \"seed\": %" PRIu64 ", \"cpus\": [%d, %d], "
		"\"sleep_check\": %s,\n \"scenarios\": [",
		bs, nblocks / nsc, gap_us / 2, gap_us / 2 + gap_us, ncqs, seed,
		cpu_rx, cpu_tx, oracle ? "true" : "false");
	for (k = 0; k < nsc; k++)
		fprintf(f, "%s{\"name\": \"%s\", \"samples\": %" PRIu64
			", \"wakeups\": %" PRIu64 ", \"timeouts\": %" PRIu64 "}",
			k ? ", " : "", sc[k].name, sc[k].n - bs, sc[k].wakes,
			sc[k].timeouts);
	fprintf(f, "],\n \"blocks\": [\n");
	for (b = 0; b < nblocks; b++) {
		const struct block *bl = &blocks[b];
		const struct scenario *s = &sc[bl->sc];

		fprintf(f, "  {\"scenario\": \"%s\", \"round\": %u, \"pos\": %u, "
			"\"cpu_wakeups\": %" PRIu64 ", \"cpu_ns\": %" PRIu64 ", \"lat_ns\": [", s->name, bl->round,
			bl->pos, bs - 1, s->cpu[bl->first + bs - 1] - s->cpu[bl->first]);
		for (i = 0; i < bs; i++)
			fprintf(f, "%s%" PRIu64, i ? ", " : "", s->lat[bl->first + i]);
		fprintf(f, "]}%s\n", b + 1 < nblocks ? "," : "");
	}
	fprintf(f, "]}\n");
	return fclose(f) == 0 ? 0 : -1;
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

/* Pooled over the reported blocks: the summary line of a scenario. */
static void
report(const struct scenario *s, uint64_t bs)
{
	uint64_t n = s->n - bs, first, cpu = 0;
	uint64_t *v = malloc(n * sizeof(*v));

	if (v == NULL)
		abort();
	/* Each block from its first sample to its last, as in the JSON. */
	for (first = bs; first + bs <= s->n; first += bs)
		cpu += s->cpu[first + bs - 1] - s->cpu[first];
	memcpy(v, s->lat + bs, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("%-10s %8" PRIu64 " %10.1f %10.1f %12.2f\n", s->name, n,
	       (double)pct(v, n, 0.5) / 1e3, (double)pct(v, n, 0.99) / 1e3,
	       (double)cpu / (double)(n - n / bs) / 1e3);
	free(v);
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

static void
usage(FILE *f)
{
	fprintf(f, "usage: bench_wakeup [--samples=N] [--block=N] [--cqs=N] "
		"[--gap-us=US] [--seed=N] [--cpus=RX,TX|none] [--oracle] [--json=FILE]\n"
		"  verdicts on the goals: devtools/run-wakeup.py (the same rule as "
		"devtools/run-peers.py)\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "samples", required_argument, NULL, 's' },
		{ "cqs", required_argument, NULL, 'c' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "block", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "cpus", required_argument, NULL, 'p' },
		{ "oracle", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t samples = 3000, ncqs = 4096, gap_us = 100, bs = 100, seed = 0;
	uint64_t rounds, i;
	struct scenario sc[SCENARIOS_MAX] = { { .name = "raw" }, { .name = "group-1" },
					      { .name = "group-N" }, { .name = "bare-epoll" },
					      { .name = "bare-uring" }, { .name = "uring-1" },
					      { .name = "uring-1-1h" } };
	enum cqpoll_arm_semantics arms[] = { CQPOLL_ARM_LEVEL, CQPOLL_ARM_EDGE,
					     CQPOLL_ARM_REPORT_MISSED };
	struct raw raw = { 0 }, bare = { 0 };
#ifdef CQPOLL_BENCH_URING
	struct bare_uring bu = { 0 };
	struct grp gu = { 0 }, gh = { 0 };
	unsigned int nsc = 7;
#else
	unsigned int nsc = 4;
#endif
	struct grp g1 = { 0 }, gn = { 0 };
	struct runner run[SCENARIOS_MAX];
	struct block *blocks;
	const char *json = NULL;
	pthread_t t[SCENARIOS_MAX];
	double pa, po;
	struct rlimit rl;
	char name[32], junk;
	bool oracle = false;
	int o, ret = 0;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			if (parse_u64("samples", optarg, 10, 10000000, &samples) != 0)
				return 2;
			break;
		case 'c':
			if (parse_u64("cqs", optarg, 2, 65536, &ncqs) != 0)
				return 2;
			break;
		case 'g':
			if (parse_u64("gap-us", optarg, 1, 1000000, &gap_us) != 0)
				return 2;
			break;
		case 'b':
			if (parse_u64("block", optarg, 5, 100000, &bs) != 0)
				return 2;
			break;
		case 'r':
			if (parse_u64("seed", optarg, 0, UINT64_MAX, &seed) != 0)
				return 2;
			break;
		case 'j':
			json = optarg;
			break;
		case 'p':
			if (strcmp(optarg, "none") == 0) {
				cpu_rx = cpu_tx = -1;
			} else if (sscanf(optarg, "%d,%d%c", &cpu_rx, &cpu_tx, &junk) != 2 ||
				   cpu_rx < 0 || cpu_tx < 0 || cpu_rx >= CPU_SETSIZE ||
				   cpu_tx >= CPU_SETSIZE) {
				fprintf(stderr, "bench_wakeup: --cpus=RX,TX or none, "
					"got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'o':
			oracle = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || samples < bs) {
		fprintf(stderr, "bench_wakeup: %s\n", optind < argc ?
			"unexpected argument" : "--samples must be >= --block");
		usage(stderr);
		return 2;
	}
	if (seed == 0)
		seed = now_ns(CLOCK_MONOTONIC);
	/*
	 * libcqpoll_emu judges every sleep by default (its ground truth, up to
	 * 64 members of a group per sleep): test machinery whose cost grows with
	 * the group, not cqpoll's. Off unless --oracle, so that the CPU per
	 * wake-up is what a program on real devices pays.
	 */
	if (!oracle)
		cqpoll_sleep_check_register(NULL);
	rounds = samples / bs;
	samples = rounds * bs;
	/* One eventfd per software CQ: raise the soft limit to the hard one. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	snprintf(name, sizeof(name), "group-%" PRIu64, ncqs);
	sc[2].name = name;
	for (i = 0; i < nsc; i++) {
		sc[i].total = samples + bs;
		sc[i].lat = calloc(sc[i].total, sizeof(uint64_t));
		sc[i].cpu = calloc(sc[i].total, sizeof(uint64_t));
		if (sc[i].lat == NULL || sc[i].cpu == NULL)
			return 1;
	}
	blocks = calloc(rounds * nsc, sizeof(*blocks));
	if (blocks == NULL)
		return 1;
	if (raw_start(&raw, &sc[0], false, &t[0]) != 0 ||
	    grp_start(&g1, &sc[1], 1, false, 10000, &t[1]) != 0 ||
	    grp_start(&gn, &sc[2], (unsigned int)ncqs, false, 10000, &t[2]) != 0 ||
	    raw_start(&bare, &sc[3], true, &t[3]) != 0)
		return 1;
	run[0] = (struct runner){ &sc[0], raw_fire, &raw };
	run[1] = (struct runner){ &sc[1], grp_fire, &g1 };
	run[2] = (struct runner){ &sc[2], grp_fire, &gn };
	run[3] = (struct runner){ &sc[3], raw_fire, &bare };
#ifdef CQPOLL_BENCH_URING
	if (uring_start(&bu, &sc[4], &t[4]) != 0 ||
	    grp_start(&gu, &sc[5], 1, true, 0, &t[5]) != 0 ||
	    grp_start(&gh, &sc[6], 1, true, 3600000, &t[6]) != 0)
		return 1;
	run[4] = (struct runner){ &sc[4], uring_fire, &bu };
	run[5] = (struct runner){ &sc[5], uring_grp_fire, &gu };
	run[6] = (struct runner){ &sc[6], uring_grp_fire, &gh };
#endif
	interleave(run, nsc, rounds, bs, gap_us * 1000, seed, blocks);
	pthread_join(t[0], NULL);
	pthread_join(t[3], NULL);
	close(raw.efd);
	close(raw.epfd);
	close(bare.efd);
	close(bare.epfd);
#ifdef CQPOLL_BENCH_URING
	pthread_join(t[4], NULL);
	io_uring_queue_exit(&bu.ring);
#endif
	if (grp_finish(&g1, t[1]) != 0 || grp_finish(&gn, t[2]) != 0)
		ret = 1;
#ifdef CQPOLL_BENCH_URING
	if (grp_finish(&gu, t[5]) != 0 || grp_finish(&gh, t[6]) != 0)
		ret = 1;
#endif
	printf("%" PRIu64 " samples a scenario in %" PRIu64 " rounds of blocks of %"
	       PRIu64 ", interleaved (order shuffled per round, seed %" PRIu64
	       "), gaps %" PRIu64 "..%" PRIu64 " us, consumers on CPU %d, poster "
	       "on CPU %d (-1: unpinned)\n", samples, rounds, bs, seed, gap_us / 2,
	       gap_us / 2 + gap_us, cpu_rx, cpu_tx);
	printf("%-10s %8s %10s %10s %12s\n", "scenario", "samples", "p50_us",
	       "p99_us", "cpu_us/wake");
	for (i = 0; i < nsc; i++)
		report(&sc[i], bs);
	printf("group wake-ups (event / timeout): group-1 %" PRIu64 " / %" PRIu64
	       ", %s %" PRIu64 " / %" PRIu64 "; sleep check %s\n", sc[1].wakes,
	       sc[1].timeouts, name, sc[2].wakes, sc[2].timeouts, oracle ?
	       "on (--oracle: lost wake-ups counted, its cost included)" :
	       "off (lost wake-ups not counted; --oracle)");
	if (json != NULL && write_json(json, sc, nsc, blocks, rounds * nsc, bs, gap_us,
				       ncqs, seed, oracle) != 0)
		ret = 1;
	printf("goals (group-1 <= 1.2x raw; %s <= 2x group-1 in latency and in "
	       "CPU per wake-up; CPU per wake-up group-1 <= 1.05x raw, raw <= 1.10x "
	       "bare-epoll): judged per round by devtools/run-wakeup.py\n", name);
	printf("poll_and_arm from unarmed vs one empty poll, median ns less the clock read (sw CQ):\n");
	for (i = 0; i < 3; i++) {
		if (arm_cost(arms[i], &pa, &po) != 0) {
			fprintf(stderr, "bench_wakeup: arm cost failed\n");
			return 1;
		}
		printf("  %-14s %7.1f ns vs %5.1f ns: %.1fx\n",
		       cqpoll_arm_semantics_name(arms[i]), pa, po, pa / po);
	}
	for (i = 0; i < nsc; i++) {
		free(sc[i].lat);
		free(sc[i].cpu);
	}
	free(blocks);
	return ret;
}
