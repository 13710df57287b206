/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The consolidating scheduler driving real moves (issue 34, part 3 in
 * small): 8 groups of 2 emulated sw CQs on two runner threads, as two
 * lcores run several groups each (busy mode with cold members, then a
 * prepared sleep on every group in one epoll set). Runner 0 steps
 * cqpoll_sched every 10 ms on each group's load read from its counters
 * (cqpoll_sched_load_from_stats()) and asks for the moves it decides; the
 * owner releases a group at its next safe point and hands it to the other
 * runner, which adopts it.
 *
 * At 1000 completions/s every group ends on one runner and the other,
 * holding none, is woken at most twice in the last half of the phase; under a flood
 * both runners hold groups. Every completion arrives once and in order, and
 * no sleep begins with work pending (the emulated devices' oracle).
 *
 * Judged by counters: the groups each runner holds and the wake-ups of its
 * epoll wait. Negative control (--static): no scheduler, four groups each;
 * each runner is woken by its groups' traffic and the same check catches it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cqpoll_sched.h"
#include "cqpoll_test.h"
#include "test_group_common.h"
#include "test_mailbox.h"

#define NG 8
#define NCQ 2
#define INTERVAL_NS 10000000ull
#define LOW_RATE 1000
#define PHASE_NS 1000000000ull
/*
 * The flood ends once both runners have held groups for this long (ten of
 * the scheduler's steps), or after PHASE_NS.
 */
#define SPREAD_HOLD_NS 100000000ull
/* In flight per CQ at most: the emulated CQ holds 256. */
#define CQ_DEPTH 128
/*
 * A completion's work, spun in its callback: an application's handler. It
 * makes the load the groups' own (a flood fills an lcore with work however
 * little CPU the posting thread gets), not the machine's.
 */
#define WORK_NS 5000

struct runner {
	unsigned int id;
	int epfd;
	struct test_mailbox mbox;
	bool owned[NG], sleeping[NG];
	/* Epoll waits that returned with something ready, read by main. */
	uint64_t wakeups;
	unsigned int held;      /* groups held when the traffic ended */
	int fail;
};

static struct cqpoll_group *groups[NG];
static struct cqpoll_cq *cqs[NG * NCQ];
static struct tg_rx rx[NG * NCQ];
static uint64_t consumed[NG * NCQ];
static uint64_t posted[NG * NCQ];
static struct runner runners[2];
static unsigned int dest[NG];
static bool use_sched = true;
static int stop_all;
static unsigned int stopped;
static uint64_t moves;

static void
on_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	       unsigned int n, void *arg)
{
	tg_cb(cq, c, n, arg);
	test_spin_ns((uint64_t)WORK_NS * n);
}

static int
fail(struct runner *r, const char *what, unsigned int gi, int v)
{
	fprintf(stderr, "runner %u: group %u: %s: %d (%s)\n", r->id, gi, what,
		v, v < 0 ? strerror(-v) : "");
	__atomic_store_n(&r->fail, 1, __ATOMIC_RELEASE);
	return -1;
}

static void
send_group(struct runner *to, unsigned int gi)
{
	test_mailbox_send(&to->mbox, (struct test_mail){ .gi = gi });
}

static int
take_mail(struct runner *r)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct test_mail in[TEST_MAIL_MAX];
	unsigned int gi;
	int a, n, i;

	n = test_mailbox_take(&r->mbox, in);
	if (n < 0)
		return fail(r, "mailbox read", 0, n);
	for (i = 0; i < n; i++) {
		gi = in[i].gi;
		a = cqpoll_group_adopt(groups[gi]);
		if (a < 0)
			return fail(r, "adopt", gi, a);
		/* Moved asleep: finish the sleep here, the runner polls on. */
		if (a == 1 && (a = cqpoll_group_sleep_finish(groups[gi])) < 0)
			return fail(r, "sleep finish after adopt", gi, a);
		__atomic_store_n(&r->owned[gi], true, __ATOMIC_RELAXED);
		ev.data.u32 = gi;
		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD,
			      cqpoll_group_event_fd(groups[gi]), &ev) != 0)
			return fail(r, "epoll add", gi, -errno);
	}
	return 0;
}

/* Hand over every owned group whose move is pending (all: at the end). */
static int
serve_moves(struct runner *r, bool all)
{
	unsigned int gi, to;
	int v;

	for (gi = 0; gi < NG; gi++) {
		if (!r->owned[gi] || (!all && cqpoll_group_move_pending(groups[gi]) != 1))
			continue;
		to = all ? 2 : __atomic_load_n(&dest[gi], __ATOMIC_ACQUIRE);
		if (r->sleeping[gi]) {
			v = cqpoll_group_sleep_finish(groups[gi]);
			if (v < 0)
				return fail(r, "sleep finish before release", gi, v);
			r->sleeping[gi] = false;
		}
		if (epoll_ctl(r->epfd, EPOLL_CTL_DEL,
			      cqpoll_group_event_fd(groups[gi]), NULL) != 0)
			return fail(r, "epoll del", gi, -errno);
		v = cqpoll_group_release(groups[gi]);
		if (v != 0)
			return fail(r, "release", gi, v);
		__atomic_store_n(&r->owned[gi], false, __ATOMIC_RELAXED);
		if (to < 2) {
			__atomic_fetch_add(&moves, 1, __ATOMIC_RELAXED);
			send_group(&runners[to], gi);
		}
	}
	return 0;
}

/* Runner 0's scheduler: loads of the last interval in, moves asked for. */
static int
sched_step(struct runner *r, struct cqpoll_sched *s,
	   struct cqpoll_group_stats *prev, uint64_t interval_ns)
{
	struct cqpoll_sched_move mv[NG];
	struct cqpoll_group_stats cur;
	unsigned int gi;
	double busy;
	int n, i, v;

	for (gi = 0; gi < NG; gi++) {
		cqpoll_group_stats_get(groups[gi], &cur);
		v = cqpoll_sched_load_from_stats(&prev[gi], &cur, interval_ns, &busy);
		if (v != 0 || (v = cqpoll_sched_load_set(s, gi, busy)) != 0)
			return fail(r, "load", gi, v);
		prev[gi] = cur;
	}
	n = cqpoll_sched_step(s, mv, NG);
	if (n < 0)
		return fail(r, "sched step", 0, n);
	for (i = 0; i < n; i++) {
		__atomic_store_n(&dest[mv[i].group], mv[i].to, __ATOMIC_RELEASE);
		v = cqpoll_group_move_request(groups[mv[i].group]);
		if (v != 0)
			return fail(r, "move request", mv[i].group, v);
	}
	return 0;
}

static int
runner_loop(struct runner *r)
{
	struct cqpoll_sched_conf conf = { .nb_lcores = 2, .nb_groups = NG };
	struct cqpoll_group_stats prev[NG];
	struct cqpoll_sched *s = NULL;
	struct epoll_event evs[NG + 1];
	unsigned int gi, owned, asleep;
	uint64_t next = 0, now, last = 0;
	int v, found, timeout;
	bool ended = false;

	if (r->id == 0 && use_sched) {
		s = cqpoll_sched_create(&conf);
		if (s == NULL)
			return fail(r, "sched create", 0, -errno);
		for (gi = 0; gi < NG; gi++)
			cqpoll_group_stats_get(groups[gi], &prev[gi]);
		last = test_now_ns();
		next = last + INTERVAL_NS;
	}
	while (!__atomic_load_n(&stop_all, __ATOMIC_ACQUIRE)) {
		if (take_mail(r) != 0 || serve_moves(r, false) != 0)
			goto out;
		if (s != NULL && (now = test_now_ns()) >= next) {
			if (sched_step(r, s, prev, now - last) != 0)
				goto out;
			last = now;
			next = now + INTERVAL_NS;
		}
		found = 0;
		owned = asleep = 0;
		for (gi = 0; gi < NG; gi++) {
			if (!r->owned[gi])
				continue;
			owned++;
			v = cqpoll_group_run_once(groups[gi]);
			if (v < 0 && fail(r, "run once", gi, v))
				goto out;
			found += v;
		}
		for (gi = 0; found == 0 && gi < NG; gi++) {
			if (!r->owned[gi])
				continue;
			v = cqpoll_group_sleep_prepare(groups[gi]);
			if (v == 0) {
				r->sleeping[gi] = true;
				asleep++;
			} else if (v > 0) {
				found += v;
			} else if (v != -EAGAIN && fail(r, "sleep prepare", gi, v)) {
				goto out;
			}
		}
		if (found == 0 && asleep == owned) {
			/* The scheduler's runner wakes for its next step. */
			now = test_now_ns();
			timeout = s == NULL ? -1 :
				  next > now ? (int)((next - now) / 1000000 + 1) : 0;
			v = epoll_wait(r->epfd, evs, NG + 1, timeout);
			if (v < 0 && errno != EINTR && fail(r, "epoll_wait", 0, -errno))
				goto out;
			if (v > 0)
				__atomic_fetch_add(&r->wakeups, 1, __ATOMIC_RELAXED);
		}
		for (gi = 0; gi < NG; gi++) {
			if (!r->owned[gi] || !r->sleeping[gi])
				continue;
			v = cqpoll_group_sleep_finish(groups[gi]);
			if (v < 0 && fail(r, "sleep finish", gi, v))
				goto out;
			r->sleeping[gi] = false;
		}
	}
	/*
	 * The end: once both runners stopped no group is released any more,
	 * so after this mail each holds what it held when the traffic ended,
	 * the groups in transit included. Then every group goes back to the
	 * main thread.
	 */
	ended = true;
out:
	/* A runner that failed comes here too: the other must not wait for it. */
	__atomic_add_fetch(&stopped, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&stopped, __ATOMIC_ACQUIRE) < 2)
		;
	if (ended && take_mail(r) == 0) {
		for (gi = 0; gi < NG; gi++)
			r->held += r->owned[gi];
		serve_moves(r, true);
	}
	cqpoll_sched_destroy(s);
	return 0;
}

static void *
runner_thread(void *arg)
{
	runner_loop(arg);
	return NULL;
}

static uint64_t
received(unsigned int q)
{
	return __atomic_load_n(&consumed[q], __ATOMIC_ACQUIRE);
}

/* Post to CQ q if it has room; 1 if posted. */
static int
post(unsigned int q)
{
	struct cqpoll_completion c = { .wr_id = posted[q], .byte_len = 8 };

	if (posted[q] - received(q) >= CQ_DEPTH)
		return 0;
	if (cqpoll_sw_emu_post(cqs[q], &c) != 0)
		abort();
	posted[q]++;
	return 1;
}

static unsigned int
owned_by(unsigned int r)
{
	unsigned int gi, n = 0;

	for (gi = 0; gi < NG; gi++)
		n += __atomic_load_n(&runners[r].owned[gi], __ATOMIC_RELAXED);
	return n;
}

static int
test_sched_move(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY,
					  .wait_timeout_ms = 100, .cold_us = 1000 };
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = NG };
	struct cqpoll_group_stats st;
	uint64_t t0, w0, w1, low_wakeups, lost = 0, rec = 0, tot = 0, k = 0;
	unsigned int i, gi, low_owned[2], idle, high_owned[2];
	uint64_t w0s[2], low_moves, now, spread_since, flood_ms;
	uint64_t seed = 0x5eedull;
	pthread_t rt[2];
	int r;

	for (gi = 0; gi < NG; gi++) {
		groups[gi] = cqpoll_group_create(&conf);
		TEST_ASSERT(groups[gi] != NULL, "create: %s", strerror(errno));
	}
	for (i = 0; i < NG * NCQ; i++) {
		struct cqpoll_sw_emu_conf sw = { .size = 256,
			.arm = (enum cqpoll_arm_semantics)(i % 3) };

		cqs[i] = cqpoll_sw_emu_cq_create(&sw);
		TEST_ASSERT(cqs[i] != NULL, "sw: %s", strerror(errno));
		rx[i] = (struct tg_rx){ .consumed = &consumed[i] };
		TEST_ASSERT_EQ(cqpoll_group_add(groups[i / NCQ], cqs[i], on_completions,
						&rx[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		runners[i] = (struct runner){ .id = i };
		runners[i].epfd = epoll_create1(EPOLL_CLOEXEC);
		TEST_ASSERT(runners[i].epfd >= 0 &&
			    test_mailbox_init(&runners[i].mbox) == 0, "fds");
		TEST_ASSERT_EQ(epoll_ctl(runners[i].epfd, EPOLL_CTL_ADD,
					 runners[i].mbox.fd, &ev), 0);
	}
	/* As the scheduler starts: group g on runner g % 2. */
	for (gi = 0; gi < NG; gi++) {
		TEST_ASSERT_EQ(cqpoll_group_release(groups[gi]), 0);
		send_group(&runners[gi % 2], gi);
	}
	for (i = 0; i < 2; i++)
		TEST_ASSERT_EQ(pthread_create(&rt[i], NULL, runner_thread, &runners[i]), 0);

	/*
	 * Low load: 1000/s to random CQs; each runner's wake-ups in the second
	 * half. The scheduler may gather the groups on either runner.
	 */
	t0 = test_now_ns();
	w0 = 0;
	while (test_now_ns() - t0 < PHASE_NS) {
		if (w0 == 0 && test_now_ns() - t0 >= PHASE_NS / 2) {
			w0 = 1;
			for (i = 0; i < 2; i++)
				w0s[i] = __atomic_load_n(&runners[i].wakeups,
							 __ATOMIC_RELAXED);
		}
		post((unsigned int)(test_rnd(&seed) % (NG * NCQ)));
		usleep(1000000 / LOW_RATE);
	}
	for (i = 0; i < 2; i++)
		low_owned[i] = owned_by(i);
	/* The runner with fewer groups: none, if the groups were gathered. */
	idle = low_owned[1] <= low_owned[0];
	w1 = __atomic_load_n(&runners[idle].wakeups, __ATOMIC_RELAXED);
	low_wakeups = w1 - w0s[idle];
	low_moves = __atomic_load_n(&moves, __ATOMIC_RELAXED);

	/* A flood: every CQ kept CQ_DEPTH deep until spread, a phase at most. */
	t0 = test_now_ns();
	spread_since = 0;
	while ((now = test_now_ns()) - t0 < PHASE_NS) {
		if (owned_by(0) == 0 || owned_by(1) == 0)
			spread_since = 0;
		else if (spread_since == 0)
			spread_since = now;
		else if (now - spread_since >= SPREAD_HOLD_NS)
			break;
		for (i = 0; i < NG * NCQ; i++)
			post(i);
	}
	flood_ms = (test_now_ns() - t0) / 1000000;

	__atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++) {
		uint64_t one = 1;

		TEST_ASSERT_EQ(write(runners[i].mbox.fd, &one, sizeof(one)), 8);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(rt[i], NULL);
		high_owned[i] = runners[i].held;
	}
	TEST_ASSERT(!runners[0].fail && !runners[1].fail, "a runner failed");
	/* Every group was released to the main thread: drain them here. */
	for (gi = 0; gi < NG; gi++)
		TEST_ASSERT_EQ(cqpoll_group_adopt(groups[gi]), 0);
	t0 = test_now_ns();
	for (;;) {
		for (i = 0, k = 0; i < NG * NCQ; i++)
			k += received(i) < posted[i];
		if (k == 0 || test_now_ns() - t0 > 2000000000ull)
			break;
		for (gi = 0; gi < NG; gi++) {
			r = cqpoll_group_run_once(groups[gi]);
			TEST_ASSERT(r >= 0, "drain group %u: %d", gi, r);
		}
	}
	for (i = 0; i < NG * NCQ; i++) {
		TEST_ASSERT(rx[i].expected == posted[i] && rx[i].errors == 0,
			    "CQ %u: %" PRIu64 " posted, %" PRIu64 " received, %"
			    PRIu64 " out of order", i, posted[i], rx[i].expected,
			    rx[i].errors);
		tot += posted[i];
	}
	for (gi = 0; gi < NG; gi++) {
		cqpoll_group_stats_get(groups[gi], &st);
		lost += st.lost_wakeups;
		rec += st.timeout_recoveries;
	}
	printf("%s: moves %" PRIu64 " (%" PRIu64 " at low load), completions %"
	       PRIu64 ", lost wake-ups %" PRIu64 ", recoveries %" PRIu64 "; low "
	       "load: runners hold %u and %u groups, runner %u woken %" PRIu64
	       " times in the last 0.5 s; flood of %" PRIu64 " ms: runners hold %u and %u\n",
	       use_sched ? "sched" : "static", moves, low_moves, tot, lost, rec,
	       low_owned[0], low_owned[1], idle, low_wakeups, flood_ms, high_owned[0],
	       high_owned[1]);
	for (gi = 0; gi < NG; gi++)
		cqpoll_group_destroy(groups[gi]);
	for (i = 0; i < NG * NCQ; i++)
		cqpoll_cq_destroy(cqs[i]);
	TEST_ASSERT_EQ(lost, 0);
	TEST_ASSERT_EQ(rec, 0);
	/* The judged claims: consolidated and asleep at low load, spread under a flood. */
	TEST_ASSERT(low_owned[idle] == 0 && low_wakeups <= 2, "low load: runner "
		    "%u holds %u groups and was woken %" PRIu64 " times", idle,
		    low_owned[idle], low_wakeups);
	TEST_ASSERT(high_owned[0] > 0 && high_owned[1] > 0, "flood: runners hold "
		    "%u and %u groups", high_owned[0], high_owned[1]);
	return TEST_PASS;
}

int
main(int argc, char **argv)
{
	static const struct test_case cases[] = { TEST_CASE(test_sched_move) };

	if (argc > 1 && strcmp(argv[1], "--static") == 0)
		use_sched = false;
	return test_run(use_sched ? "sched-move" : "sched-move-static", cases, 1);
}
