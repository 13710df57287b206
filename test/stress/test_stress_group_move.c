/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stress of moving poll groups between threads (cqpoll_group_release(),
 * cqpoll_group_adopt()) under traffic: --groups groups of --cqs emulated
 * software CQs each (all three arm semantics, visibility and arm delays,
 * late, spurious and duplicated events), one producer thread posting bursts
 * to random CQs, two runner threads, and a mover thread that asks for moves
 * of random groups (cqpoll_group_move_request()).
 *
 * Each runner is an lcore with several groups: it adopts the groups handed
 * to it, runs them in busy mode with cold members (cold_us 20: idle CQs are
 * armed and left to their events), and when none found work it prepares a
 * sleep on every one (cqpoll_group_sleep_prepare()) and waits on their event
 * fds in its own epoll set, as in an external event loop. A group whose move
 * is pending is released where the runner meets it: between iterations, or
 * asleep (its prepared sleep, its armed members and its pending events
 * travel with it: the adopting runner waits on it or finishes the sleep).
 * The handover is a mailbox per runner, with an eventfd to wake it.
 *
 * Checked: every completion delivered exactly once and in order per CQ, no
 * lost wake-up by the devices' oracle (at each sleep) and no completion
 * found by a safety net, over --moves moves; moves happened asleep, with
 * armed members and with events pending on the members' fds.
 *
 * With --expect-lost the test passes only if that is violated: the negative
 * control, against a test-only build of the library whose move drops the
 * armed state (CQPOLL_MUTANT_NAIVE_MOVE).
 *
 * The run ends after --moves moves, or at the deadline (60 s by default; a
 * run cut by it still needs 20000 moves to pass).
 *
 * Usage: test_stress_group_move [--groups=N] [--cqs=N] [--moves=N]
 *                               [--deadline-s=S] [--expect-lost]
 */

#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cqpoll_test.h"
#include "test_group_common.h"
#include "test_mailbox.h"

#define MAX_GROUPS 16
/* Each run stays well inside meson's timeout on 2 cores (--deadline-s). */
static uint64_t deadline_ns = 60ull * 1000000000ull;
/* The negative control stops once caught this often. */
#define NAIVE_ENOUGH 5

static unsigned int ngroups = 4, ncqs = 4;
static uint64_t moves_wanted = 100000;
static int expect_lost;

static struct cqpoll_group *groups[MAX_GROUPS];
static struct cqpoll_cq *move_cqs[TG_MAX_CQS];
static uint64_t consumed;
static int stop_all;

struct runner {
	unsigned int id;
	struct runner *peer;
	int epfd;
	struct test_mailbox mbox;
	bool owned[MAX_GROUPS];
	bool sleeping[MAX_GROUPS];
	/* Counted by the runner, read after it ends. */
	uint64_t released, released_asleep, released_armed, released_events;
	uint64_t adopted_asleep, waits, errors;
	int fail;
};

static struct runner runners[2];
static uint64_t moves; /* releases by both runners */

static int
fail(struct runner *r, const char *what, unsigned int gi, int v)
{
	fprintf(stderr, "runner %u: group %u: %s: %d (%s)\n", r->id, gi, what, v,
		v < 0 ? strerror(-v) : "");
	__atomic_store_n(&r->fail, 1, __ATOMIC_RELEASE);
	return -1;
}

/* Run the loop of one runner; < 0 once it failed. */
static int runner_loop(struct runner *r);

static void *
runner_thread(void *arg)
{
	runner_loop(arg);
	return NULL;
}

/* Adopt what arrived: a group that comes asleep is still asleep here. */
static int
take_mail(struct runner *r)
{
	struct test_mail in[TEST_MAIL_MAX];
	struct epoll_event ev = { .events = EPOLLIN };
	int a, n, i;

	n = test_mailbox_take(&r->mbox, in);
	if (n < 0)
		return fail(r, "mailbox read", 0, n);
	for (i = 0; i < n; i++) {
		a = cqpoll_group_adopt(groups[in[i].gi]);
		if (a < 0 || a != in[i].asleep)
			return fail(r, "adopt (1: asleep) against the sender's", in[i].gi, a);
		r->owned[in[i].gi] = true;
		r->sleeping[in[i].gi] = a == 1;
		r->adopted_asleep += a == 1;
		ev.data.u32 = in[i].gi;
		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD,
			      cqpoll_group_event_fd(groups[in[i].gi]), &ev) != 0)
			return fail(r, "epoll add", in[i].gi, -errno);
	}
	return 0;
}

/* Members armed right now, and members with an event pending on their fd. */
static void
member_states(unsigned int gi, uint64_t *armed, uint64_t *events)
{
	struct pollfd pfd[TG_MAX_CQS];
	struct cqpoll_cq *cq;
	unsigned int i;

	for (i = 0; i < ncqs; i++) {
		cq = move_cqs[gi * ncqs + i];
		*armed += cqpoll_cq_is_armed(cq) == 1;
		pfd[i] = (struct pollfd){ .fd = cqpoll_cq_event_fd(cq), .events = POLLIN };
	}
	if (poll(pfd, ncqs, 0) > 0)
		(*events)++;
}

/* Release every owned group whose move is pending, asleep or not. */
static int
serve_moves(struct runner *r, bool all)
{
	struct cqpoll_group *g;
	uint64_t armed = 0;
	unsigned int gi;
	int v;

	for (gi = 0; gi < ngroups; gi++) {
		if (!r->owned[gi])
			continue;
		g = groups[gi];
		if (!all && cqpoll_group_move_pending(g) != 1)
			continue;
		/* Sampled: a poll per member is costly next to a move. */
		if ((r->released & 15) == 0) {
			armed = 0;
			member_states(gi, &armed, &r->released_events);
			r->released_armed += armed != 0;
		}
		if (epoll_ctl(r->epfd, EPOLL_CTL_DEL, cqpoll_group_event_fd(g), NULL) != 0)
			return fail(r, "epoll del", gi, -errno);
		v = cqpoll_group_release(g);
		if (v != 0)
			return fail(r, "release", gi, v);
		r->owned[gi] = false;
		r->released++;
		r->released_asleep += r->sleeping[gi];
		__atomic_fetch_add(&moves, 1, __ATOMIC_RELAXED);
		test_mailbox_send(&r->peer->mbox,
				  (struct test_mail){ .gi = gi, .asleep = r->sleeping[gi] });
		r->sleeping[gi] = false;
	}
	return 0;
}

/* Finish every prepared sleep: the runner polls on. */
static int
finish_sleeps(struct runner *r, int *found)
{
	unsigned int gi;
	int v;

	for (gi = 0; gi < ngroups; gi++) {
		if (!r->owned[gi] || !r->sleeping[gi])
			continue;
		v = cqpoll_group_sleep_finish(groups[gi]);
		if (v < 0)
			return fail(r, "sleep finish", gi, v);
		r->sleeping[gi] = false;
		*found += v;
	}
	return 0;
}

static int
runner_loop(struct runner *r)
{
	struct epoll_event evs[MAX_GROUPS + 1];
	unsigned int gi, owned, asleep;
	int v, found;

	while (!__atomic_load_n(&stop_all, __ATOMIC_ACQUIRE)) {
		if (take_mail(r) != 0 || serve_moves(r, false) != 0)
			return -1;
		found = 0;
		owned = asleep = 0;
		for (gi = 0; gi < ngroups; gi++) {
			if (!r->owned[gi])
				continue;
			owned++;
			if (r->sleeping[gi]) {
				asleep++;
				continue;
			}
			v = cqpoll_group_run_once(groups[gi]);
			if (v < 0)
				return fail(r, "run once", gi, v);
			found += v;
		}
		/* Idle: prepare a sleep on every group not asleep yet. */
		for (gi = 0; found == 0 && gi < ngroups; gi++) {
			if (!r->owned[gi] || r->sleeping[gi])
				continue;
			v = cqpoll_group_sleep_prepare(groups[gi]);
			if (v == 0) {
				r->sleeping[gi] = true;
				asleep++;
			} else if (v > 0) {
				found += v;
			} else if (v != -EAGAIN) {
				return fail(r, "sleep prepare", gi, v);
			}
		}
		if (found == 0 && asleep == owned) {
			/* Every group armed: wait on them and on the mailbox. */
			r->waits++;
			v = epoll_wait(r->epfd, evs, MAX_GROUPS + 1, 100);
			if (v < 0 && errno != EINTR)
				return fail(r, "epoll_wait", 0, -errno);
			/* A move asked for meanwhile takes the sleep along. */
			if (take_mail(r) != 0 || serve_moves(r, false) != 0)
				return -1;
		}
		if (finish_sleeps(r, &found) != 0)
			return -1;
	}
	/* The end: every group finished and handed back to the main thread. */
	if (take_mail(r) != 0 || finish_sleeps(r, &found) != 0 ||
	    serve_moves(r, true) != 0)
		return -1;
	return 0;
}

static void *
mover_thread(void *arg)
{
	uint64_t seed = 0xfeedfacecafef00dull;

	(void)arg;
	while (!__atomic_load_n(&stop_all, __ATOMIC_ACQUIRE)) {
		cqpoll_group_move_request(groups[test_rnd(&seed) % ngroups]);
		/* Now back to back, now after a while: asleep or busy. */
		if (test_rnd(&seed) % 4 == 0)
			test_spin_ns(test_rnd(&seed) % 50000);
		else
			test_spin_ns(test_rnd(&seed) % 2000);
	}
	return NULL;
}

static int
test_stress_group_move(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY,
					  .wait_timeout_ms = 100, .cold_us = 20 };
	struct cqpoll_group_stats st, tot = { 0 };
	unsigned int ntot = ngroups * ncqs, i, gi;
	struct tg_rx rx[TG_MAX_CQS];
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = MAX_GROUPS };
	struct tg_prod prod;
	pthread_t pt, mt, rt[2];
	uint64_t t0, t1, sum;
	bool caught = false;
	unsigned int k;
	int r;

	for (gi = 0; gi < ngroups; gi++) {
		groups[gi] = cqpoll_group_create(&conf);
		TEST_ASSERT(groups[gi] != NULL, "create: %s", strerror(errno));
	}
	for (i = 0; i < ntot; i++) {
		struct cqpoll_sw_emu_conf sw = {
			.size = 256,
			.arm = (enum cqpoll_arm_semantics)(i % 3),
			.faults = {
				.visibility_delay_ns = 1000, .visibility_delay_pct = 20,
				.arm_delay_ns = 5000, .arm_delay_pct = 20,
				/* Events in flight across moves: late on every 4th CQ. */
				.event_delay_us = i % 4 == 3 ? 20 : 0,
				.spurious_event_pct = 1, .duplicate_event_pct = 1,
				.report_missed_keeps_armed = i % 2,
				.seed = 0x5ca1ab1eull + i,
			},
		};

		move_cqs[i] = cqpoll_sw_emu_cq_create(&sw);
		TEST_ASSERT(move_cqs[i] != NULL, "sw: %s", strerror(errno));
		rx[i] = (struct tg_rx){ .consumed = &consumed };
		TEST_ASSERT_EQ(cqpoll_group_add(groups[i / ncqs], move_cqs[i], tg_cb,
						&rx[i]), 0);
	}
	/* The main thread made the groups: it hands them out, half each. */
	for (i = 0; i < 2; i++) {
		runners[i] = (struct runner){ .id = i, .peer = &runners[1 - i] };
		runners[i].epfd = epoll_create1(EPOLL_CLOEXEC);
		TEST_ASSERT(runners[i].epfd >= 0 &&
			    test_mailbox_init(&runners[i].mbox) == 0, "fds");
		TEST_ASSERT_EQ(epoll_ctl(runners[i].epfd, EPOLL_CTL_ADD,
					 runners[i].mbox.fd, &ev), 0);
	}
	for (gi = 0; gi < ngroups; gi++) {
		TEST_ASSERT_EQ(cqpoll_group_release(groups[gi]), 0);
		test_mailbox_send(&runners[gi % 2].mbox, (struct test_mail){ .gi = gi });
	}
	prod = (struct tg_prod){ .cqs = move_cqs, .ncqs = ntot, .consumed = &consumed,
		.seed = 0x9e3779b97f4a7c15ull, .max_gap_ns = 30000, .wait_drain = 1 };
	TEST_ASSERT_EQ(pthread_create(&pt, NULL, tg_producer, &prod), 0);
	for (i = 0; i < 2; i++)
		TEST_ASSERT_EQ(pthread_create(&rt[i], NULL, runner_thread, &runners[i]), 0);
	TEST_ASSERT_EQ(pthread_create(&mt, NULL, mover_thread, NULL), 0);
	t0 = test_now_ns();
	while (__atomic_load_n(&moves, __ATOMIC_RELAXED) < moves_wanted &&
	       test_now_ns() - t0 < deadline_ns &&
	       !__atomic_load_n(&runners[0].fail, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&runners[1].fail, __ATOMIC_ACQUIRE)) {
		usleep(10000);
		if (!expect_lost)
			continue;
		sum = 0;
		for (gi = 0; gi < ngroups; gi++) {
			cqpoll_group_stats_get(groups[gi], &st);
			sum += st.lost_wakeups + st.timeout_recoveries;
		}
		if (sum >= NAIVE_ENOUGH)
			break;
	}
	__atomic_store_n(&prod.stop, 1, __ATOMIC_RELEASE);
	pthread_join(pt, NULL);
	__atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
	pthread_join(mt, NULL);
	for (i = 0; i < 2; i++) {
		uint64_t one = 1;

		/* Wake a runner asleep on its groups. */
		TEST_ASSERT_EQ(write(runners[i].mbox.fd, &one, sizeof(one)), 8);
	}
	for (i = 0; i < 2; i++)
		pthread_join(rt[i], NULL);
	TEST_ASSERT(!runners[0].fail && !runners[1].fail, "a runner failed");
	/* Both runners handed every group back: the last mail is the main's. */
	for (i = 0; i < 2; i++) {
		for (k = 0; k < runners[i].mbox.n; k++) {
			gi = runners[i].mbox.mail[k].gi;
			r = cqpoll_group_adopt(groups[gi]);
			/* A group handed back in a prepared sleep finishes it. */
			TEST_ASSERT_EQ(r, runners[i].mbox.mail[k].asleep);
			if (r == 1) {
				r = cqpoll_group_sleep_finish(groups[gi]);
				TEST_ASSERT(r >= 0, "sleep finish: %d", r);
			}
		}
	}
	/* Drain every group together, in busy mode, for up to 2 s. */
	t1 = test_now_ns();
	while (__atomic_load_n(&consumed, __ATOMIC_ACQUIRE) < prod.posted_total &&
	       test_now_ns() - t1 < 2000000000ull) {
		for (gi = 0; gi < ngroups; gi++) {
			r = cqpoll_group_run_once(groups[gi]);
			TEST_ASSERT(r >= 0, "drain group %u: %d", gi, r);
		}
	}
	for (gi = 0; gi < ngroups; gi++) {
		cqpoll_group_stats_get(groups[gi], &st);
		tot.lost_wakeups += st.lost_wakeups;
		tot.timeout_recoveries += st.timeout_recoveries;
		tot.sleeps += st.sleeps;
		tot.cold_arms += st.cold_arms;
		tot.wakeups_event += st.wakeups_event;
	}
	printf("groups=%u cqs=%u moves=%" PRIu64 " asleep=%" PRIu64 " sampled=%"
	       PRIu64 " (every 16th: with_armed=%" PRIu64 " with_events_pending=%"
	       PRIu64 ") adopted_asleep=%" PRIu64 " waits=%" PRIu64 " posted=%" PRIu64
	       " consumed=%" PRIu64 " sleeps=%" PRIu64 " cold_arms=%" PRIu64
	       " wake_event=%" PRIu64 " lost_oracle=%" PRIu64 " timeout_recoveries=%"
	       PRIu64 " drain_stalls=%" PRIu64 " elapsed_ms=%" PRIu64 "\n",
	       ngroups, ncqs, moves,
	       runners[0].released_asleep + runners[1].released_asleep,
	       (runners[0].released + 15) / 16 + (runners[1].released + 15) / 16,
	       runners[0].released_armed + runners[1].released_armed,
	       runners[0].released_events + runners[1].released_events,
	       runners[0].adopted_asleep + runners[1].adopted_asleep,
	       runners[0].waits + runners[1].waits, prod.posted_total, consumed,
	       tot.sleeps, tot.cold_arms, tot.wakeups_event, tot.lost_wakeups,
	       tot.timeout_recoveries, prod.stalls,
	       (test_now_ns() - t0) / 1000000);
	for (i = 0; i < ntot; i++) {
		if (rx[i].errors != 0 || rx[i].expected != prod.posted[i]) {
			caught = true;
			if (!expect_lost)
				fprintf(stderr, "cq %u: %" PRIu64 " order errors, got %"
					PRIu64 " of %" PRIu64 "\n", i, rx[i].errors,
					rx[i].expected, prod.posted[i]);
		}
	}
	caught = caught || tot.lost_wakeups + tot.timeout_recoveries > 0;
	if (expect_lost) {
		TEST_ASSERT(caught, "the naive move was not caught");
	} else {
		TEST_ASSERT(!caught, "lost %" PRIu64 ", recovered by a net %" PRIu64,
			    tot.lost_wakeups, tot.timeout_recoveries);
		TEST_ASSERT_EQ(consumed, prod.posted_total);
		/* On a loaded machine the deadline may come first: still enough. */
		TEST_ASSERT(moves >= moves_wanted || moves >= 20000,
			    "only %" PRIu64 " moves", moves);
		TEST_ASSERT(runners[0].released_asleep + runners[1].released_asleep > 0 &&
			    runners[0].released_armed + runners[1].released_armed > 0 &&
			    runners[0].released_events + runners[1].released_events > 0,
			    "moves never asleep, with armed members or events pending");
	}
	for (gi = 0; gi < ngroups; gi++)
		cqpoll_group_destroy(groups[gi]);
	for (i = 0; i < ntot; i++)
		cqpoll_cq_destroy(move_cqs[i]);
	for (i = 0; i < 2; i++) {
		close(runners[i].epfd);
		close(runners[i].mbox.fd);
	}
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_stress_group_move),
};

static int
parse(const char *opt, const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || v[0] < '0' || v[0] > '9' ||
	    *out < min || *out > max) {
		fprintf(stderr, "--%s: want %" PRIu64 "..%" PRIu64 ", got '%s'\n",
			opt, min, max, v);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "groups", required_argument, NULL, 'g' },
		{ "cqs", required_argument, NULL, 'c' },
		{ "moves", required_argument, NULL, 'm' },
		{ "deadline-s", required_argument, NULL, 'd' },
		{ "expect-lost", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'g':
			if (parse("groups", optarg, 2, MAX_GROUPS, &v) != 0)
				return 1;
			ngroups = (unsigned int)v;
			break;
		case 'c':
			if (parse("cqs", optarg, 1, TG_MAX_CQS, &v) != 0)
				return 1;
			ncqs = (unsigned int)v;
			break;
		case 'm':
			if (parse("moves", optarg, 1, UINT64_MAX, &v) != 0)
				return 1;
			moves_wanted = v;
			break;
		case 'd':
			if (parse("deadline-s", optarg, 1, 86400, &v) != 0)
				return 1;
			deadline_ns = v * 1000000000ull;
			break;
		case 'x':
			expect_lost = 1;
			break;
		default:
			return 1;
		}
	}
	if (ngroups * ncqs > TG_MAX_CQS) {
		fprintf(stderr, "--groups x --cqs: at most %d CQs\n", TG_MAX_CQS);
		return 1;
	}
	return test_run("stress-group-move", cases, 1);
}
