/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stress of the group transition: a group of --cqs software CQs (all three arm
 * semantics, arm and visibility delays, spurious and duplicated events), a
 * producer thread posting bursts with gaps to random CQs around the group's
 * transitions, and a third thread switching the group's mode at random.
 *
 * Checked: every completion delivered exactly once and in order per CQ, and
 * no lost wake-up by the device oracle, over --transitions sleeps.
 *
 * With --arm=level|edge|report-missed every CQ has that arm semantics (the
 * default mixes the three). --cq-transitions=N runs until the CQs' arms
 * (each one a CQ's own poll-and-arm transition: poll, arm, re-poll where the
 * semantics needs it) add up to N, instead of counting the group's sleeps. With --churn the group's thread removes a random
 * CQ now and then and adds it back some iterations later, while its
 * producer keeps posting: what was posted meanwhile must still arrive, once
 * and in order.
 *
 * With --cold-us=US the group's busy and adaptive modes arm CQs idle for US
 * µs and stop polling them (cold), and pick their events up while polling;
 * the mode changer then favours those modes, and the run also checks that
 * CQs went cold and that the group looked for their events. With
 * --busy-only as well the group stays in busy mode (no mode changer): it
 * never sleeps, so every cold CQ's work must be found by a look at the
 * events racing the producer's posts (not by a sleep after a mode change,
 * nor by the safety net), and every event consumed woke a cold CQ.
 *
 * With --naive the consumer runs the naive group transition instead (arm
 * every CQ, re-poll only the first), and with --expect-lost the test passes
 * only if the oracle catches it: the negative control.
 *
 * With --dev=mixed the CQs are mlx5-emu and verbs-emu CQs, alternately, all
 * on ONE emulated completion channel (test_mixed_channel.h), with faults on
 * the verbs-emu device; --old-routing gives the mlx5 CQs the event routing
 * they had before the channel demux (every event read is the reader's), the
 * negative control, caught with --expect-lost.
 *
 * Usage: test_stress_group [--cqs=N] [--transitions=N | --cq-transitions=N]
 *                          [--arm=SEM] [--churn] [--dev=sw|mixed]
 *                          [--cold-us=US [--busy-only]] [--expect-stranded]
 *                          [--naive --expect-lost] [--old-routing --expect-lost]
 */

#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <unistd.h>

#include "cqpoll_test.h"
#include "test_group_common.h"
#ifdef CQPOLL_TEST_MLX5
#include "test_mixed_channel.h"
#endif

/* Each run stays well inside meson's timeout on 2 cores. */
#define DEADLINE_NS (75ull * 1000000000ull)
#define NAIVE_ENOUGH 5

static uint64_t consumed;
static unsigned int ncqs = 4;
static uint64_t transitions = 200000;
/* With --cq-transitions: stop on CQ arms (each CQ's own transition) instead. */
static uint64_t cq_transitions;
static int naive, expect_lost, churn;
static uint32_t cold_us; /* 0: the group's default */
/* Busy mode throughout: cold CQs are found by the event checks alone. */
static int busy_only;
/* Negative control of the cold transition: completions must go missing. */
static int expect_stranded;
static int arm = -1; /* -1: mixed */
static int mixed, old_routing;

struct mode_changer {
	struct cqpoll_group *g;
	int stop;
	uint64_t changes;
};

/* Mostly interrupt and adaptive, where transitions happen; busy now and then. */
static void *
mode_changer_thread(void *arg)
{
	struct mode_changer *mc = arg;
	uint64_t rng = 0xdeadbeefcafef00dull, x;
	enum cqpoll_group_mode m;

	while (!__atomic_load_n(&mc->stop, __ATOMIC_ACQUIRE)) {
		usleep(500 + (useconds_t)(test_rnd(&rng) % 3000));
		x = test_rnd(&rng) % 10;
		/* With --cold-us, where CQs go cold: busy and adaptive. */
		if (cold_us != 0)
			x = x < 2 ? x : x < 6 ? 5 + x % 4 : 9;
		m = x < 5 ? CQPOLL_GROUP_MODE_INTERRUPT :
		    x < 9 ? CQPOLL_GROUP_MODE_ADAPTIVE : CQPOLL_GROUP_MODE_BUSY;
		if (cqpoll_group_set_mode(mc->g, m) != 0)
			abort();
		mc->changes++;
	}
	return NULL;
}

static void *
run_thread(void *arg)
{
	return (void *)(intptr_t)cqpoll_group_run(arg);
}

/* The group's own loop with membership churn: only its thread may churn. */
struct churner {
	struct cqpoll_group *g;
	struct cqpoll_cq **cq;
	struct tg_rx *rx;
	int stop;
	uint64_t removals;
};

static void *
churn_thread(void *arg)
{
	struct churner *ch = arg;
	uint64_t rng = 0x5eed5eed5eedull, back_at = 0, it = 0;
	int out = -1, r;

	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
		r = cqpoll_group_run_once(ch->g);
		if (r < 0)
			return (void *)(intptr_t)r;
		it++;
		if (out >= 0 && it >= back_at) {
			r = cqpoll_group_add(ch->g, ch->cq[out], tg_cb, &ch->rx[out]);
			if (r != 0)
				return (void *)(intptr_t)r;
			out = -1;
		} else if (out < 0 && test_rnd(&rng) % 512 == 0) {
			out = (int)(test_rnd(&rng) % ncqs);
			r = cqpoll_group_remove(ch->g, ch->cq[out]);
			if (r != 0)
				return (void *)(intptr_t)r;
			ch->removals++;
			back_at = it + 1 + test_rnd(&rng) % 8;
		}
	}
	if (out >= 0)
		return (void *)(intptr_t)cqpoll_group_add(ch->g, ch->cq[out], tg_cb,
							 &ch->rx[out]);
	return NULL;
}

/*
 * The CQs' arms and events added up (with --busy-only each event woke a
 * cold CQ).
 */
static struct cqpoll_cq_stats
cq_totals(struct cqpoll_cq **cq)
{
	struct cqpoll_cq_stats t = { 0 }, cs;
	unsigned int i;

	for (i = 0; i < ncqs; i++) {
		cqpoll_cq_stats_get(cq[i], &cs);
		t.arms += cs.arms;
		t.events += cs.events;
	}
	return t;
}

static bool
enough(struct cqpoll_group_stats *st, struct cqpoll_cq **cq)
{
	if (cq_transitions != 0)
		return cq_totals(cq).arms >= cq_transitions;
	return st->sleeps >= transitions;
}

/*
 * The negative control's sign: a completion nobody delivers. The producer
 * waits (up to 1 s) for each burst to be consumed, so nothing is consumed for
 * 2 s while something is posted and unread: long enough that a consumer
 * descheduled on a loaded machine is not taken for a stranded completion.
 */
static bool
stalled(const struct tg_prod *prod)
{
	static uint64_t last, since;
	uint64_t c = __atomic_load_n(&consumed, __ATOMIC_ACQUIRE);
	uint64_t now = test_now_ns();
	unsigned int i;
	uint64_t posted = 0;

	for (i = 0; i < ncqs; i++)
		posted += __atomic_load_n(&prod->posted[i], __ATOMIC_ACQUIRE);
	if (since == 0 || c != last || posted == c) {
		last = c;
		since = now;
		return false;
	}
	return now - since > 2000000000ull;
}

/* One naive transition in AIM_EVERY waits for the producer's next post
 * between its empty polls and its arms (at most AIM_MAX_NS): without it the
 * two threads can fall into step and miss the window for 200000 sleeps. */
#define AIM_EVERY 200
#define AIM_MAX_NS 20000000ull

static void
naive_aim(void *arg)
{
	const struct tg_prod *prod = arg;
	static unsigned int calls;
	uint64_t t0, before = 0, now;
	unsigned int i;

	if (++calls % AIM_EVERY != 0)
		return;
	for (i = 0; i < prod->ncqs; i++)
		before += __atomic_load_n(&prod->posted[i], __ATOMIC_ACQUIRE);
	t0 = test_now_ns();
	do {
		sched_yield();
		now = 0;
		for (i = 0; i < prod->ncqs; i++)
			now += __atomic_load_n(&prod->posted[i], __ATOMIC_ACQUIRE);
	} while (now == before && test_now_ns() - t0 < AIM_MAX_NS);
}

static int
check_delivery(struct tg_prod *prod, struct tg_rx *rx)
{
	unsigned int i;

	for (i = 0; i < ncqs; i++) {
		TEST_ASSERT(rx[i].errors == 0, "cq %u: %" PRIu64 " order errors", i,
			    rx[i].errors);
		TEST_ASSERT(rx[i].expected == prod->posted[i], "cq %u: got %" PRIu64
			    " of %" PRIu64, i, rx[i].expected, prod->posted[i]);
	}
	return TEST_PASS;
}

#ifdef CQPOLL_TEST_MLX5
static struct mix mix;

static int
mix_post_cb(void *arg, unsigned int q, const struct cqpoll_completion *c)
{
	return mix_post(arg, q, c);
}
#endif

static int
test_stress_group(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 100 };
	struct cqpoll_cq *cq[TG_MAX_CQS];
	struct tg_rx rx[TG_MAX_CQS];
	struct cqpoll_group_stats st;
	struct mode_changer mc = { 0 };
	struct churner ch = { 0 };
	struct tg_prod prod;
	struct cqpoll_group *g;
	pthread_t pt, gt, mt;
	uint64_t t0, lost = 0, sleeps = 0;
	unsigned int i;
	void *ret;
	int r;

	consumed = 0;
	conf.cold_us = cold_us;
	if (busy_only)
		conf.mode = CQPOLL_GROUP_MODE_BUSY;
	conf.policy = cqpoll_policy_find("adaptive:max_spin_us=100", &conf.policy_args);
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "create: %s", strerror(errno));
	for (i = 0; i < ncqs && mixed; i++) {
#ifdef CQPOLL_TEST_MLX5
		if (i == 0) {
			struct cqpoll_verbs_emu_faults f = {
				.visibility_delay_ns = 1000, .visibility_delay_pct = 20,
				.arm_delay_ns = 5000, .arm_delay_pct = 50,
				.spurious_event_pct = 1, .duplicate_event_pct = 1,
				.seed = 0x1234567ull,
			};

			TEST_ASSERT_EQ(mix_create(&mix, ncqs, 256, 1, old_routing, &f, 0, 0), 0);
		}
		cq[i] = mix.cq[i];
		rx[i] = (struct tg_rx){ .consumed = &consumed };
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], tg_cb, &rx[i]), 0);
#endif
	}
	for (i = 0; i < ncqs && !mixed; i++) {
		struct cqpoll_sw_emu_conf sw = {
			.size = 256,
			/* The negative control needs windows to fall in: edge, wide. */
			.arm = naive ? CQPOLL_ARM_EDGE : arm >= 0 ?
				(enum cqpoll_arm_semantics)arm :
				(enum cqpoll_arm_semantics)(i % 3),
			.faults = {
				.visibility_delay_ns = 1000, .visibility_delay_pct = 20,
				.arm_delay_ns = 5000,
				/* 64 CQs re-arm fewer per transition: same odds overall. */
				.arm_delay_pct = naive ? 100 : ncqs > 8 ? 20 : 50,
				.spurious_event_pct = 1, .duplicate_event_pct = 1,
				.report_missed_keeps_armed = i % 2,
				.seed = 0x1234567ull + i,
			},
		};

		cq[i] = cqpoll_sw_emu_cq_create(&sw);
		TEST_ASSERT(cq[i] != NULL, "sw: %s", strerror(errno));
		rx[i] = (struct tg_rx){ .consumed = &consumed };
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], tg_cb, &rx[i]), 0);
	}
	prod = (struct tg_prod){ .cqs = cq, .ncqs = ncqs, .consumed = &consumed,
		.seed = 0x9e3779b97f4a7c15ull, .max_gap_ns = 30000, .wait_drain = 1 };
#ifdef CQPOLL_TEST_MLX5
	if (mixed) {
		prod.post = mix_post_cb;
		prod.post_arg = &mix;
	}
#endif
	mc.g = g;
	TEST_ASSERT_EQ(pthread_create(&pt, NULL, tg_producer, &prod), 0);
	t0 = test_now_ns();
	if (naive) {
		tg_naive_aim = naive_aim;
		tg_naive_aim_arg = &prod;
		while (lost < NAIVE_ENOUGH && sleeps < transitions &&
		       test_now_ns() - t0 < DEADLINE_NS) {
			r = tg_naive_run_once(cq, ncqs, rx, 10, &lost);
			TEST_ASSERT(r >= 0, "naive: %d", r);
			sleeps += r == 0;
		}
	} else {
		ch = (struct churner){ .g = g, .cq = cq, .rx = rx };
		TEST_ASSERT_EQ(pthread_create(&gt, NULL,
					      churn ? churn_thread : run_thread,
					      churn ? (void *)&ch : (void *)g), 0);
		if (!busy_only)
			TEST_ASSERT_EQ(pthread_create(&mt, NULL, mode_changer_thread,
						      &mc), 0);
		do {
			usleep(10000);
			cqpoll_group_stats_get(g, &st);
			/* A negative control may stop once it is caught for sure. */
			if (expect_lost && st.lost_wakeups + st.timeout_recoveries >= NAIVE_ENOUGH)
				break;
			if (expect_stranded && stalled(&prod))
				break;
			/* Busy only: the net finds it, a timeout late. */
		} while ((expect_stranded || !enough(&st, cq)) &&
			 test_now_ns() - t0 < DEADLINE_NS &&
			 !(expect_stranded &&
			   st.lost_wakeups + st.timeout_recoveries > 0));
		__atomic_store_n(&mc.stop, 1, __ATOMIC_RELEASE);
		if (!busy_only)
			pthread_join(mt, NULL);
	}
	__atomic_store_n(&prod.stop, 1, __ATOMIC_RELEASE);
	pthread_join(pt, NULL);
	if (!naive) {
		__atomic_store_n(&ch.stop, 1, __ATOMIC_RELEASE);
		TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
		pthread_join(gt, &ret);
		TEST_ASSERT_EQ((intptr_t)ret, 0);
		TEST_ASSERT_EQ(cqpoll_group_count(g), (int)ncqs);
	}
	r = tg_drain(g, &consumed, prod.posted_total);
	TEST_ASSERT(r >= 0, "drain: %d", r);
	cqpoll_group_stats_get(g, &st);
	if (naive) {
		st.sleeps = sleeps;
		st.lost_wakeups = lost;
	}
	printf("dev=%s%s ", mixed ? "mixed" : "sw", old_routing ? " old-routing" : "");
	printf("cqs=%u naive=%d posted=%" PRIu64 " consumed=%" PRIu64
	       " sleeps=%" PRIu64 " transitions=%" PRIu64 " lost_oracle=%" PRIu64
	       " wake_event=%" PRIu64 " wake_timeout=%" PRIu64 " wake_xthread=%" PRIu64
	       " mode_changes=%" PRIu64 " busy_ms=%" PRIu64 " asleep_ms=%" PRIu64
	       " elapsed_ms=%" PRIu64 " removals=%" PRIu64 " cq_arms=%" PRIu64
	       " timeout_recoveries=%" PRIu64 " drain_stalls=%" PRIu64
	       " cold_arms=%" PRIu64 " event_checks=%" PRIu64 " cq_events=%" PRIu64 "\n",
	       ncqs, naive, prod.posted_total, consumed, st.sleeps, st.transitions,
	       st.lost_wakeups, st.wakeups_event, st.wakeups_timeout,
	       st.wakeups_xthread, st.mode_changes, st.busy_ns / 1000000,
	       st.asleep_ns / 1000000, (test_now_ns() - t0) / 1000000, ch.removals,
	       cq_totals(cq).arms, st.timeout_recoveries, prod.stalls, st.cold_arms,
	       st.event_checks, cq_totals(cq).events);
	if (!expect_stranded && check_delivery(&prod, rx) != TEST_PASS)
		return TEST_FAIL;
	if (expect_stranded) {
		/* Caught by the oracle at a sleep, or by what never arrived. */
		TEST_ASSERT(st.lost_wakeups + st.timeout_recoveries > 0 ||
			    consumed < prod.posted_total,
			    "the naive cold transition was not caught");
	} else {
		TEST_ASSERT_EQ(consumed, prod.posted_total);
	}
	if (expect_lost) {
		TEST_ASSERT(st.lost_wakeups + st.timeout_recoveries > 0,
			    "the %s was not caught",
			    old_routing ? "old routing" : "naive transition");
	} else if (!expect_stranded) {
		TEST_ASSERT_EQ(st.lost_wakeups, 0);
		TEST_ASSERT_EQ(st.timeout_recoveries, 0);
		/* On a loaded machine the deadline may come first: still enough. */
		TEST_ASSERT(enough(&st, cq) || st.sleeps >= 10000 ||
			    (busy_only && st.cold_arms >= 10000),
			    "only %" PRIu64 " sleeps, %" PRIu64 " cold arms",
			    st.sleeps, st.cold_arms);
		TEST_ASSERT(busy_only || mc.changes > 0, "no mode change");
		if (churn)
			TEST_ASSERT(ch.removals > 100, "%" PRIu64 " removals",
				    ch.removals);
		if (cold_us != 0)
			TEST_ASSERT(st.cold_arms > 100 && st.event_checks > 100,
				    "cold: %" PRIu64 " arms, %" PRIu64 " checks",
				    st.cold_arms, st.event_checks);
		/* Never asleep: every event was taken by a look, waking a cold CQ. */
		if (busy_only)
			TEST_ASSERT(st.sleeps == 0 && cq_totals(cq).events > 100,
				    "busy: %" PRIu64 " sleeps, %" PRIu64 " cold wakes",
				    st.sleeps, cq_totals(cq).events);
	}
	cqpoll_group_destroy(g);
#ifdef CQPOLL_TEST_MLX5
	if (mixed) {
		uint64_t busy = cqpoll_verbs_emu_busy_destroys();

		/* Every destroy returns: acks balanced on the shared channel. */
		TEST_ASSERT_EQ(mix_destroy(&mix), 0);
		TEST_ASSERT_EQ(cqpoll_verbs_emu_busy_destroys(), busy);
		return TEST_PASS;
	}
#endif
	for (i = 0; i < ncqs; i++)
		cqpoll_cq_destroy(cq[i]);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_stress_group),
};

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cqs", required_argument, NULL, 'c' },
		{ "transitions", required_argument, NULL, 't' },
		{ "naive", no_argument, NULL, 'n' },
		{ "expect-lost", no_argument, NULL, 'e' },
		{ "arm", required_argument, NULL, 'a' },
		{ "churn", no_argument, NULL, 'r' },
		{ "cq-transitions", required_argument, NULL, 'q' },
		{ "cold-us", required_argument, NULL, 'k' },
		{ "expect-stranded", no_argument, NULL, 's' },
		{ "dev", required_argument, NULL, 'd' },
		{ "old-routing", no_argument, NULL, 'o' },
		{ "busy-only", no_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'c':
			ncqs = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 't':
			transitions = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			naive = 1;
			break;
		case 'e':
			expect_lost = 1;
			break;
		case 'a': {
			enum cqpoll_arm_semantics a;

			if (cqpoll_arm_semantics_parse(optarg, &a) != 0) {
				fprintf(stderr, "bad --arm=%s\n", optarg);
				return TEST_FAIL;
			}
			arm = (int)a;
			break;
		}
		case 'r':
			churn = 1;
			break;
		case 'q':
			cq_transitions = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			cold_us = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			expect_stranded = 1;
			break;
		case 'd':
			if (strcmp(optarg, "mixed") == 0) {
				mixed = 1;
			} else if (strcmp(optarg, "sw") != 0) {
				fprintf(stderr, "bad --dev=%s\n", optarg);
				return TEST_FAIL;
			}
			break;
		case 'o':
			old_routing = 1;
			break;
		case 'b':
			busy_only = 1;
			break;
		default:
			return TEST_FAIL;
		}
	}
	if (ncqs == 0 || ncqs > TG_MAX_CQS || transitions == 0) {
		fprintf(stderr, "bad --cqs or --transitions\n");
		return TEST_FAIL;
	}
	if (busy_only && (cold_us == 0 || naive || churn)) {
		fprintf(stderr, "--busy-only needs --cold-us, and no --naive or --churn\n");
		return TEST_FAIL;
	}
	if ((old_routing && !mixed) || (mixed && (naive || churn))) {
		fprintf(stderr, "--old-routing needs --dev=mixed, which has no --naive or --churn\n");
		return TEST_FAIL;
	}
#ifndef CQPOLL_TEST_MLX5
	if (mixed) {
		printf("no mlx5 driver in this build: skipped\n");
		return TEST_SKIP;
	}
#endif
	return test_run("stress-group", cases, 1);
}
