/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Poll groups on software CQs: arguments, membership, the three modes with a
 * producer thread, stop and mode change from another thread, wake-up by a CQ
 * event, and the group transition: the group sleeps only once every CQ is
 * armed, while a naive variant that re-polls only one CQ after arming is
 * caught by the same device oracle (deterministic, through the arm hook).
 */

#include <inttypes.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "cqpoll_test.h"
#include "test_group_common.h"
#ifdef CQPOLL_TEST_MLX5
#include "test_mixed_channel.h"
#endif

static uint64_t consumed;

/* A policy's sleep_cpu op that counts its calls. */
static unsigned int rec_sleep_cpu_calls;

static void
rec_sleep_cpu(void *state, uint64_t cpu_ns)
{
	(void)state;
	(void)cpu_ns;
	rec_sleep_cpu_calls++;
}

static void
null_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
	void *arg)
{
	(void)cq;
	(void)c;
	(void)n;
	(void)arg;
}

static int
test_bad_args(void)
{
	struct cqpoll_group_conf conf = { .mode = (enum cqpoll_group_mode)7 };
	struct cqpoll_group_stats st;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	const char *args;

	errno = 0;
	TEST_ASSERT(cqpoll_group_create(&conf) == NULL && errno == EINVAL, "mode");
	conf = (struct cqpoll_group_conf){ .burst = 5000 };
	TEST_ASSERT(cqpoll_group_create(&conf) == NULL && errno == EINVAL, "burst");
	conf = (struct cqpoll_group_conf){ .wait_timeout_ms = 3600001 };
	TEST_ASSERT(cqpoll_group_create(&conf) == NULL && errno == EINVAL, "timeout");
	conf = (struct cqpoll_group_conf){ .policy = cqpoll_policy_spin(),
					   .policy_args = "abc" };
	TEST_ASSERT(cqpoll_group_create(&conf) == NULL && errno == EINVAL, "spin args");
	conf = (struct cqpoll_group_conf){ .policy = cqpoll_policy_adaptive(),
					   .policy_args = "foo=1" };
	TEST_ASSERT(cqpoll_group_create(&conf) == NULL && errno == EINVAL, "adaptive args");
	conf.policy_args = "mult=0";
	TEST_ASSERT(cqpoll_group_create(&conf) == NULL && errno == EINVAL, "mult=0");
	conf.policy_args = "mult=3,wake_us=10,min_spin_us=1,max_spin_us=500";
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "adaptive with every key");
	cqpoll_group_destroy(g);

	TEST_ASSERT(cqpoll_policy_find("spin:20", &args) == cqpoll_policy_spin() &&
		    strcmp(args, "20") == 0, "find spin");
	TEST_ASSERT(cqpoll_policy_find("adaptive", &args) == cqpoll_policy_adaptive() &&
		    args == NULL, "find adaptive");
	TEST_ASSERT(cqpoll_policy_find("spinx", &args) == NULL, "find unknown");
	/* A policy without a name: logs and telemetry could not say which. */
	{
		struct cqpoll_policy_ops unnamed = *cqpoll_policy_spin();

		unnamed.name = NULL;
		conf = (struct cqpoll_group_conf){ .policy = &unnamed,
						   .mode = CQPOLL_GROUP_MODE_ADAPTIVE };
		errno = 0;
		TEST_ASSERT(cqpoll_group_create(&conf) == NULL && errno == EINVAL,
			    "policy with a NULL name");
		unnamed.name = "";
		TEST_ASSERT(cqpoll_group_create(&conf) == NULL && errno == EINVAL,
			    "policy with an empty name");
	}
	/*
	 * The ops table grows at its end: a member past the table's size is
	 * never read (a table built before it existed has no room for it), a
	 * size below the first table's is refused, and 0 is the first table.
	 */
	{
		struct cqpoll_policy_ops grown = *cqpoll_policy_spin();
		struct cqpoll_group *pg;
		uint64_t state[16] = { 0 };

		grown.sleep_cpu = rec_sleep_cpu;
		rec_sleep_cpu_calls = 0;
		TEST_ASSERT_EQ(cqpoll_policy_sleep_cpu(&grown, state, 5000), 0);
		TEST_ASSERT(rec_sleep_cpu_calls == 1, "sleep_cpu within the size is called");
		grown.size = offsetof(struct cqpoll_policy_ops, sleep_cpu);
		TEST_ASSERT_EQ(cqpoll_policy_sleep_cpu(&grown, state, 5000), -ENOTSUP);
		grown.size = 0;
		TEST_ASSERT_EQ(cqpoll_policy_sleep_cpu(&grown, state, 5000), -ENOTSUP);
		TEST_ASSERT(rec_sleep_cpu_calls == 1, "sleep_cpu past the size is not read");
		conf = (struct cqpoll_group_conf){ .policy = &grown,
						   .mode = CQPOLL_GROUP_MODE_ADAPTIVE };
		pg = cqpoll_group_create(&conf);
		TEST_ASSERT(pg != NULL, "policy ops of size 0 (the first table)");
		cqpoll_group_destroy(pg);
		grown.size = offsetof(struct cqpoll_policy_ops, wake_cost);
		errno = 0;
		TEST_ASSERT(cqpoll_group_create(&conf) == NULL && errno == EINVAL,
			    "policy ops smaller than the first table");
		TEST_ASSERT_EQ(cqpoll_policy_sleep_cpu(cqpoll_policy_spin(), state, 1),
			       -ENOTSUP);
	}
	TEST_ASSERT(cqpoll_policy_find(NULL, &args) == NULL, "find NULL");
	TEST_ASSERT(cqpoll_policy_find("spin", NULL) == NULL, "find NULL args");

	cqpoll_group_destroy(NULL);
	TEST_ASSERT_EQ(cqpoll_group_add(NULL, NULL, NULL, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_remove(NULL, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_count(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_set_mode(NULL, CQPOLL_GROUP_MODE_BUSY), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_get_mode(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_run_once(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_run(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_stop(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_wakeup(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_stats_get(NULL, &st), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_stats_reset(NULL), -EINVAL);
	TEST_ASSERT(strcmp(cqpoll_group_mode_name((enum cqpoll_group_mode)9),
			   "unknown") == 0, "mode name");

	g = cqpoll_group_create(NULL);
	TEST_ASSERT(g != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_group_get_mode(g), CQPOLL_GROUP_MODE_ADAPTIVE);
	TEST_ASSERT_EQ(cqpoll_group_stats_get(g, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_set_mode(g, (enum cqpoll_group_mode)-1), -EINVAL);
	cq = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(cq != NULL, "sw");
	TEST_ASSERT_EQ(cqpoll_group_add(g, NULL, null_cb, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, NULL, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_remove(g, cq), -ENOENT);
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, null_cb, NULL), 0);
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, null_cb, NULL), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_count(g), 1);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_add_remove(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY };
	struct cqpoll_completion c = { 0 };
	struct cqpoll_cq *cq[3];
	struct tg_rx rx[3];
	struct cqpoll_group *g;
	unsigned int i;

	consumed = 0;
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "create");
	for (i = 0; i < 3; i++) {
		cq[i] = cqpoll_sw_emu_cq_create(NULL);
		TEST_ASSERT(cq[i] != NULL, "sw");
		rx[i] = (struct tg_rx){ .consumed = &consumed };
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], tg_cb, &rx[i]), 0);
	}
	TEST_ASSERT_EQ(cqpoll_group_count(g), 3);
	TEST_ASSERT_EQ(cqpoll_group_remove(g, cq[1]), 0);
	TEST_ASSERT_EQ(cqpoll_group_count(g), 2);
	for (i = 0; i < 3; i++)
		TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq[i], &c), 0);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 2);
	TEST_ASSERT_EQ(rx[0].expected, 1);
	TEST_ASSERT_EQ(rx[1].expected, 0);
	TEST_ASSERT_EQ(rx[2].expected, 1);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	/* Back in: its completion is delivered. */
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq[1], tg_cb, &rx[1]), 0);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 1);
	TEST_ASSERT_EQ(rx[1].expected, 1);
	for (i = 0; i < 3; i++)
		TEST_ASSERT_EQ(cqpoll_group_remove(g, cq[i]), 0);
	TEST_ASSERT_EQ(cqpoll_group_count(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	cqpoll_group_destroy(g);
	for (i = 0; i < 3; i++)
		cqpoll_cq_destroy(cq[i]);
	return TEST_PASS;
}

/*
 * Lifetimes: a CQ in a group cannot be destroyed (the group would poll freed
 * memory: ASan reports it if the guard goes) nor join a second group, this
 * one or another (two pollers would share its completions and events). It
 * can once removed, or once its group is destroyed.
 */
static int
test_lifetimes(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 1 };
	struct cqpoll_completion c = { 0 };
	struct cqpoll_group *g1, *g2;
	struct cqpoll_cq *cq;
	struct tg_rx rx;

	consumed = 0;
	rx = (struct tg_rx){ .consumed = &consumed };
	g1 = cqpoll_group_create(&conf);
	g2 = cqpoll_group_create(&conf);
	cq = cqpoll_sw_cq_create(NULL);
	TEST_ASSERT(g1 != NULL && g2 != NULL && cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_cq_destroy(NULL), 0);
	TEST_ASSERT_EQ(cqpoll_group_add(g1, cq, tg_cb, &rx), 0);
	TEST_ASSERT_EQ(cqpoll_group_add(g1, cq, tg_cb, &rx), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_add(g2, cq, tg_cb, &rx), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_count(g1), 1);
	TEST_ASSERT_EQ(cqpoll_group_count(g2), 0);
	/* Armed and asleep in g1, then refused: g1 still polls a live CQ. */
	TEST_ASSERT_EQ(cqpoll_group_run_once(g1), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_sw_post(cq, &c), 0);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g1), 1);
	TEST_ASSERT_EQ(rx.expected, 1);
	TEST_ASSERT_EQ(cqpoll_group_remove(g2, cq), -ENOENT);
	/* Removed: free to join another group. */
	TEST_ASSERT_EQ(cqpoll_group_remove(g1, cq), 0);
	TEST_ASSERT_EQ(cqpoll_group_add(g2, cq, tg_cb, &rx), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), -EBUSY);
	c.wr_id = 1;
	TEST_ASSERT_EQ(cqpoll_sw_post(cq, &c), 0);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g2), 1);
	TEST_ASSERT_EQ(rx.expected, 2);
	/* Its group destroyed: the CQ is free again, and can be destroyed. */
	cqpoll_group_destroy(g2);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g1), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	cqpoll_group_destroy(g1);
	return TEST_PASS;
}

struct reentry {
	struct cqpoll_group *g;
	struct cqpoll_cq *other;
	int add, remove, run_once, run;
};

static void
reentry_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	   unsigned int n, void *arg)
{
	struct reentry *re = arg;

	(void)c;
	(void)n;
	re->add = cqpoll_group_add(re->g, re->other, null_cb, NULL);
	re->remove = cqpoll_group_remove(re->g, cq);
	re->run_once = cqpoll_group_run_once(re->g);
	re->run = cqpoll_group_run(re->g);
}

static int
test_callback_reentry(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY };
	struct cqpoll_completion c = { 0 };
	struct reentry re = { 0 };
	struct cqpoll_cq *cq;

	re.g = cqpoll_group_create(&conf);
	cq = cqpoll_sw_emu_cq_create(NULL);
	re.other = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(re.g != NULL && cq != NULL && re.other != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_group_add(re.g, cq, reentry_cb, &re), 0);
	TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq, &c), 0);
	TEST_ASSERT_EQ(cqpoll_group_run_once(re.g), 1);
	TEST_ASSERT_EQ(re.add, -EBUSY);
	TEST_ASSERT_EQ(re.remove, -EBUSY);
	TEST_ASSERT_EQ(re.run_once, -EBUSY);
	TEST_ASSERT_EQ(re.run, -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_count(re.g), 1);
	cqpoll_group_destroy(re.g);
	cqpoll_cq_destroy(cq);
	cqpoll_cq_destroy(re.other);
	return TEST_PASS;
}

/* The group thread's CPU over its last cqpoll_group_run(). */
static uint64_t run_cpu_ns;

static void *
run_thread(void *arg)
{
	struct timespec a, b;
	intptr_t r;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	r = cqpoll_group_run(arg);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	run_cpu_ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull +
		     (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
	return (void *)r;
}

/* What run_mode()'s group measured of its sleeps' CPU, and the run's time. */
static uint64_t run_sleep_cpu_ns, run_sleeps_timed, run_wall_ns;

/* 4 CQs, a producer thread, the group running until everything arrived. */
static int
run_mode(enum cqpoll_group_mode mode, const char *policy, uint64_t total,
	 struct cqpoll_group_stats *st)
{
	struct cqpoll_group_conf conf = { .mode = mode, .wait_timeout_ms = 100 };
	struct cqpoll_cq *cq[4];
	struct tg_rx rx[4];
	struct tg_prod prod = { 0 };
	struct cqpoll_group *g;
	pthread_t pt, gt;
	unsigned int i;
	uint64_t t0;
	void *ret;

	consumed = 0;
	if (policy != NULL)
		conf.policy = cqpoll_policy_find(policy, &conf.policy_args);
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "create: %s", strerror(errno));
	for (i = 0; i < 4; i++) {
		struct cqpoll_sw_emu_conf sw = { .arm = (enum cqpoll_arm_semantics)(i % 3) };

		cq[i] = cqpoll_sw_emu_cq_create(&sw);
		TEST_ASSERT(cq[i] != NULL, "sw");
		rx[i] = (struct tg_rx){ .consumed = &consumed };
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], tg_cb, &rx[i]), 0);
	}
	prod = (struct tg_prod){ .cqs = cq, .ncqs = 4, .total = total,
		.consumed = &consumed, .seed = 0x1234567ull + (uint64_t)mode,
		.max_gap_ns = 100000 };
	run_wall_ns = test_now_ns();
	TEST_ASSERT_EQ(pthread_create(&gt, NULL, run_thread, g), 0);
	TEST_ASSERT_EQ(pthread_create(&pt, NULL, tg_producer, &prod), 0);
	pthread_join(pt, NULL);
	t0 = test_now_ns();
	while (__atomic_load_n(&consumed, __ATOMIC_ACQUIRE) != total &&
	       test_now_ns() - t0 < 5000000000ull)
		usleep(1000);
	TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
	pthread_join(gt, &ret);
	run_wall_ns = test_now_ns() - run_wall_ns;
	TEST_ASSERT_EQ((intptr_t)ret, 0);
	TEST_ASSERT_EQ(consumed, total);
	for (i = 0; i < 4; i++) {
		TEST_ASSERT_EQ(rx[i].errors, 0);
		TEST_ASSERT_EQ(rx[i].expected, prod.posted[i]);
	}
	cqpoll_group_stats_get(g, st);
	TEST_ASSERT_EQ(cqpoll_group_sleep_cpu_get(g, &run_sleep_cpu_ns,
						  &run_sleeps_timed), 0);
	printf("  mode=%s policy=%s completions=%" PRIu64 " iterations=%" PRIu64
	       " transitions=%" PRIu64 " sleeps=%" PRIu64 " wake_event=%" PRIu64
	       " wake_timeout=%" PRIu64 " wake_xthread=%" PRIu64 " lost=%" PRIu64
	       " busy_ms=%" PRIu64 " asleep_ms=%" PRIu64 "\n",
	       cqpoll_group_mode_name(mode), policy ? policy : "-", st->completions,
	       st->iterations, st->transitions, st->sleeps, st->wakeups_event,
	       st->wakeups_timeout, st->wakeups_xthread, st->lost_wakeups,
	       st->busy_ns / 1000000, st->asleep_ns / 1000000);
	TEST_ASSERT_EQ(st->completions, total);
	TEST_ASSERT_EQ(st->lost_wakeups, 0);
	cqpoll_group_destroy(g);
	/*
	 * A group sleeps only once every member is armed: each of its sleeps
	 * was a wait on every member's event fd (cqpoll_cq_stats.waits).
	 */
	for (i = 0; i < 4; i++) {
		struct cqpoll_cq_stats cs;

		TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq[i], &cs), 0);
		TEST_ASSERT_EQ(cs.waits, st->sleeps);
		cqpoll_cq_destroy(cq[i]);
	}
	return TEST_PASS;
}

static int
test_mode_busy(void)
{
	struct cqpoll_group_stats st;

	if (run_mode(CQPOLL_GROUP_MODE_BUSY, NULL, 20000, &st) != TEST_PASS)
		return TEST_FAIL;
	/* Only the stop request may interrupt a busy group. */
	TEST_ASSERT_EQ(st.sleeps, 0);
	return TEST_PASS;
}

static int
test_mode_interrupt(void)
{
	struct cqpoll_group_stats st;
	uint64_t h = 0;
	unsigned int i;

	if (run_mode(CQPOLL_GROUP_MODE_INTERRUPT, NULL, 20000, &st) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT(st.sleeps > 100, "sleeps %" PRIu64, st.sleeps);
	TEST_ASSERT(st.wakeups_event > 100, "by event %" PRIu64, st.wakeups_event);
	for (i = 0; i < CQPOLL_GROUP_WAKE_HIST_BUCKETS; i++)
		h += st.wake_latency_hist[i];
	TEST_ASSERT(h > 0, "no wake-up latency sample");
	return TEST_PASS;
}

static int
test_mode_adaptive_spin(void)
{
	struct cqpoll_group_stats st;

	if (run_mode(CQPOLL_GROUP_MODE_ADAPTIVE, "spin:20", 20000, &st) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT(st.sleeps > 0, "never slept");
	return TEST_PASS;
}

static int
test_mode_adaptive(void)
{
	struct cqpoll_group_stats st;

	if (run_mode(CQPOLL_GROUP_MODE_ADAPTIVE, "adaptive", 20000, &st) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT(st.sleeps > 0, "never slept");
	return TEST_PASS;
}

/*
 * The CPU of a sample of the sleeps (cqpoll_group_sleep_cpu_get()): some are
 * timed, no more than the sampling allows (the first 8 transitions, then one
 * in 16), and their CPU is within the group thread's own CPU over the run,
 * itself within the run's time. The check that catches a measure on the
 * wrong clock: the group slept longer than it ran (asleep_ns over the
 * thread's CPU), so a sleep timed on CLOCK_MONOTONIC, asleep time and all,
 * would sum over the thread's CPU; that is asserted too, so the bound bites.
 * A new group has timed nothing; a NULL group is refused.
 */
static int
test_sleep_cpu(void)
{
	struct cqpoll_group_stats st;
	uint64_t cpu = 1, n = 1;

	/* As test_mode_interrupt(): 20000 completions, over 100 sleeps. */
	if (run_mode(CQPOLL_GROUP_MODE_INTERRUPT, NULL, 20000, &st) != TEST_PASS)
		return TEST_FAIL;
	printf("  %" PRIu64 " sleeps, %" PRIu64 " timed: %" PRIu64
	       " ns of thread CPU each; thread CPU %" PRIu64 " us, asleep %" PRIu64
	       " us, run %" PRIu64 " us\n", st.sleeps, run_sleeps_timed,
	       run_sleeps_timed != 0 ? run_sleep_cpu_ns / run_sleeps_timed : 0,
	       run_cpu_ns / 1000, st.asleep_ns / 1000, run_wall_ns / 1000);
	TEST_ASSERT(st.sleeps > 100, "sleeps %" PRIu64, st.sleeps);
	TEST_ASSERT(run_sleeps_timed > 0, "no sleep timed");
	TEST_ASSERT(run_sleeps_timed <= st.sleeps, "timed %" PRIu64 " of %" PRIu64,
		    run_sleeps_timed, st.sleeps);
	TEST_ASSERT(run_sleeps_timed <= 8 + st.transitions / 16 + 1,
		    "timed %" PRIu64 " of %" PRIu64 " transitions: not sampled",
		    run_sleeps_timed, st.transitions);
	TEST_ASSERT(run_sleep_cpu_ns > 0, "no CPU measured");
	TEST_ASSERT(run_sleep_cpu_ns <= run_cpu_ns, "sleeps' CPU %" PRIu64
		    " over the thread's %" PRIu64, run_sleep_cpu_ns, run_cpu_ns);
	TEST_ASSERT(run_cpu_ns < run_wall_ns, "thread CPU %" PRIu64
		    " over the run's %" PRIu64, run_cpu_ns, run_wall_ns);
	TEST_ASSERT(st.asleep_ns > run_cpu_ns, "asleep %" PRIu64
		    " ns, not over the thread's CPU: the bound would not catch a"
		    " wall-clock measure", st.asleep_ns);
	TEST_ASSERT_EQ(cqpoll_group_sleep_cpu_get(NULL, &cpu, &n), -EINVAL);
	{
		struct cqpoll_group *g = cqpoll_group_create(NULL);

		TEST_ASSERT(g != NULL, "create");
		TEST_ASSERT_EQ(cqpoll_group_sleep_cpu_get(g, &cpu, &n), 0);
		TEST_ASSERT(cpu == 0 && n == 0, "fresh group %" PRIu64 "/%" PRIu64,
			    cpu, n);
		TEST_ASSERT_EQ(cqpoll_group_sleep_cpu_get(g, NULL, NULL), 0);
		cqpoll_group_destroy(g);
	}
	return TEST_PASS;
}

/* Wait up to 5 s for a counter to reach a value: no timing assumption. */
static uint64_t
wait_stat(struct cqpoll_group *g, size_t off, uint64_t want)
{
	struct cqpoll_group_stats st;
	uint64_t t0 = test_now_ns(), v;

	do {
		cqpoll_group_stats_get(g, &st);
		memcpy(&v, (const char *)&st + off, sizeof(v));
		if (v >= want)
			break;
		usleep(1000);
	} while (test_now_ns() - t0 < 5000000000ull);
	return v;
}

#define WAIT_STAT(g, field, want) \
	wait_stat(g, offsetof(struct cqpoll_group_stats, field), want)

/* An idle group in a long sleep: stop, mode change and wake-up reach it. */
static int
test_cross_thread(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 20000 };
	struct cqpoll_group_stats st;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	uint64_t t0, it, x;
	pthread_t gt;
	void *ret;

	g = cqpoll_group_create(&conf);
	cq = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(g != NULL && cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, null_cb, NULL), 0);
	/* A stop before run makes it return at once, and is then cleared. */
	TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_run(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_stats_reset(g), 0);

	t0 = test_now_ns();
	TEST_ASSERT_EQ(pthread_create(&gt, NULL, run_thread, g), 0);
	/* The stale kick of the stop above ends the first sleep; then it sleeps. */
	TEST_ASSERT(WAIT_STAT(g, sleeps, 2) >= 2, "never slept twice");
	x = WAIT_STAT(g, wakeups_xthread, 1);
	TEST_ASSERT_EQ(cqpoll_group_wakeup(g), 0);
	TEST_ASSERT(WAIT_STAT(g, wakeups_xthread, x + 1) == x + 1, "wakeup lost");

	/* To busy: it wakes and polls without sleeping. */
	TEST_ASSERT_EQ(cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_BUSY), 0);
	TEST_ASSERT_EQ(WAIT_STAT(g, mode_changes, 1), 1);
	cqpoll_group_stats_get(g, &st);
	it = st.sleeps;
	TEST_ASSERT(WAIT_STAT(g, iterations, st.iterations + 1000) >=
		    st.iterations + 1000, "busy group does not iterate");
	cqpoll_group_stats_get(g, &st);
	TEST_ASSERT_EQ(st.sleeps, it);
	/* Back to interrupt: it sleeps again, and stays asleep. */
	TEST_ASSERT_EQ(cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_INTERRUPT), 0);
	TEST_ASSERT_EQ(WAIT_STAT(g, mode_changes, 2), 2);
	TEST_ASSERT(WAIT_STAT(g, sleeps, it + 1) > it, "no sleep after the change");
	/* The kick of the change may end the first sleep: let that settle. */
	usleep(100000);
	cqpoll_group_stats_get(g, &st);
	it = st.iterations;
	usleep(20000);
	cqpoll_group_stats_get(g, &st);
	TEST_ASSERT_EQ(st.iterations, it);

	TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
	pthread_join(gt, &ret);
	TEST_ASSERT_EQ((intptr_t)ret, 0);
	/* Far less than one 20 s safety-net timeout. */
	TEST_ASSERT(test_now_ns() - t0 < 15000000000ull, "stop took too long");
	cqpoll_group_stats_get(g, &st);
	TEST_ASSERT_EQ(st.wakeups_timeout, 0);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* A sleeping group wakes on the event of the one CQ that got work. */
static int
test_wake_on_event(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 20000 };
	struct cqpoll_completion c = { .wr_id = 0 };
	struct cqpoll_group_stats st;
	struct cqpoll_cq *cq[8];
	struct tg_rx rx[8];
	struct cqpoll_group *g;
	unsigned int i;
	pthread_t gt;
	uint64_t t0;

	consumed = 0;
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "create");
	for (i = 0; i < 8; i++) {
		cq[i] = cqpoll_sw_emu_cq_create(NULL);
		TEST_ASSERT(cq[i] != NULL, "sw");
		rx[i] = (struct tg_rx){ .consumed = &consumed };
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], tg_cb, &rx[i]), 0);
	}
	TEST_ASSERT_EQ(pthread_create(&gt, NULL, run_thread, g), 0);
	/*
	 * Post once the group went to sleep (every CQ armed): a fixed pause
	 * was not always enough on a loaded machine, and a post before the
	 * sleep is polled, not woken for.
	 */
	t0 = test_now_ns();
	do {
		usleep(1000);
		cqpoll_group_stats_get(g, &st);
	} while (st.sleeps == 0 && test_now_ns() - t0 < 5000000000ull);
	TEST_ASSERT(st.sleeps > 0, "the group never slept");
	TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq[5], &c), 0);
	t0 = test_now_ns();
	while (__atomic_load_n(&consumed, __ATOMIC_ACQUIRE) == 0 &&
	       test_now_ns() - t0 < 5000000000ull)
		usleep(100);
	TEST_ASSERT_EQ(consumed, 1);
	TEST_ASSERT_EQ(rx[5].expected, 1);
	usleep(20000);
	TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
	pthread_join(gt, NULL);
	cqpoll_group_stats_get(g, &st);
	TEST_ASSERT_EQ(st.wakeups_event, 1);
	TEST_ASSERT_EQ(st.wakeups_timeout, 0);
	TEST_ASSERT_EQ(st.lost_wakeups, 0);
	cqpoll_group_destroy(g);
	for (i = 0; i < 8; i++)
		cqpoll_cq_destroy(cq[i]);
	return TEST_PASS;
}

/*
 * A cold CQ woken by its event is hot again for a whole cold_us: the
 * iterations after the one that delivered its work poll it and leave it
 * armed no more. The group once compared the wake-up's clock reading with
 * the older end of the previous iteration, took the difference (negative,
 * unsigned) for a long idle time and armed the CQ cold again at once: one
 * cold arm and one event check per completion.
 */
static int
test_woken_stays_hot(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY,
					  .cold_us = 5000 };
	struct cqpoll_completion c = { .wr_id = 0 };
	struct cqpoll_group_stats st;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	struct tg_rx rx;
	uint64_t t0, cold_before, n = 0;
	int attempt, i;

	consumed = 0;
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "create");
	cq = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(cq != NULL, "sw");
	rx = (struct tg_rx){ .consumed = &consumed };
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, tg_cb, &rx), 0);
	for (attempt = 0; attempt < 10; attempt++) {
		/* Idle past cold_us: the CQ goes cold. */
		cqpoll_group_stats_get(g, &st);
		cold_before = st.cold_arms;
		usleep(6000);
		TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "run");
		cqpoll_group_stats_get(g, &st);
		TEST_ASSERT_EQ(st.cold_arms, cold_before + 1);
		cold_before = st.cold_arms;
		/* Its event wakes it: the work is delivered. */
		c.wr_id = n++;
		TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq, &c), 0);
		t0 = test_now_ns();
		while (__atomic_load_n(&consumed, __ATOMIC_ACQUIRE) < n &&
		       test_now_ns() - t0 < 1000000000ull)
			TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "run");
		TEST_ASSERT_EQ(consumed, n);
		/* Idle, but for far less than cold_us: it must stay hot. */
		t0 = test_now_ns();
		for (i = 0; i < 50; i++)
			TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "run");
		/* A thread descheduled for cold_us proves nothing: again. */
		if (test_now_ns() - t0 > 2000000ull)
			continue;
		cqpoll_group_stats_get(g, &st);
		TEST_ASSERT_EQ(st.cold_arms, cold_before);
		TEST_ASSERT(!cqpoll_cq_is_armed(cq), "woken CQ armed again at once");
		TEST_ASSERT_EQ(cqpoll_group_remove(g, cq), 0);
		cqpoll_group_destroy(g);
		cqpoll_cq_destroy(cq);
		return TEST_PASS;
	}
	TEST_ASSERT(0, "50 iterations never ran within 2 ms in %d attempts", attempt);
	return TEST_FAIL;
}

struct hook_post {
	struct cqpoll_cq *cq;
	int fired;
};

/* Inside the arm, before it takes effect: an edge arm raises no event. */
static void
post_in_window(void *arg)
{
	struct hook_post *h = arg;
	struct cqpoll_completion c = { .wr_id = 0 };

	if (h->fired++ == 0 && cqpoll_sw_emu_post(h->cq, &c) != 0)
		abort();
}

#define ARM_CQS 4

/*
 * For each CQ in turn, a completion lands in its arm window. The group must
 * find it and stay awake; the naive transition (re-poll only CQ 0) must
 * leave it stranded and go to sleep, as the device oracle shows. The check is
 * the same for both: cqpoll_cq_stranded() on every CQ when going to sleep.
 */
static int
run_arm_window(unsigned int victim, int naive, uint64_t *lost, int *delivered)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 1 };
	struct cqpoll_sw_emu_conf sw = { .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_group_stats st;
	struct cqpoll_cq *cq[ARM_CQS];
	struct tg_rx rx[ARM_CQS];
	struct hook_post h = { 0 };
	struct cqpoll_group *g;
	unsigned int i;
	int r;

	consumed = 0;
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "create");
	for (i = 0; i < ARM_CQS; i++) {
		cq[i] = cqpoll_sw_emu_cq_create(&sw);
		TEST_ASSERT(cq[i] != NULL, "sw");
		rx[i] = (struct tg_rx){ .consumed = &consumed };
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], tg_cb, &rx[i]), 0);
	}
	h.cq = cq[victim];
	TEST_ASSERT_EQ(cqpoll_sw_emu_set_hook(cq[victim], CQPOLL_SW_HOOK_BEFORE_ARM,
					  post_in_window, &h), 0);
	if (naive) {
		r = tg_naive_run_once(cq, ARM_CQS, rx, 1, lost);
	} else {
		r = cqpoll_group_run_once(g);
		cqpoll_group_stats_get(g, &st);
		*lost += st.lost_wakeups;
		/* Found in the transition: no sleep at all. */
		TEST_ASSERT_EQ(st.sleeps, 0);
	}
	TEST_ASSERT(r >= 0, "run: %d", r);
	TEST_ASSERT_EQ(h.fired, 1);
	*delivered = (int)consumed;
	cqpoll_group_destroy(g);
	for (i = 0; i < ARM_CQS; i++)
		cqpoll_cq_destroy(cq[i]);
	return TEST_PASS;
}

static int
test_sleeps_only_when_all_armed(void)
{
	uint64_t lost = 0;
	unsigned int v;
	int d;

	for (v = 0; v < ARM_CQS; v++) {
		if (run_arm_window(v, 0, &lost, &d) != TEST_PASS)
			return TEST_FAIL;
		TEST_ASSERT(d == 1, "victim %u: delivered %d", v, d);
	}
	TEST_ASSERT_EQ(lost, 0);
	return TEST_PASS;
}

static int
test_naive_group_is_caught(void)
{
	uint64_t lost;
	unsigned int v;
	int d;

	/* CQ 0 is re-polled: the naive code is right for it, by luck. */
	lost = 0;
	if (run_arm_window(0, 1, &lost, &d) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT(lost == 0 && d == 1, "victim 0: lost %" PRIu64 " delivered %d",
		    lost, d);
	for (v = 1; v < ARM_CQS; v++) {
		lost = 0;
		if (run_arm_window(v, 1, &lost, &d) != TEST_PASS)
			return TEST_FAIL;
		TEST_ASSERT(lost == 1 && d == 0, "victim %u: lost %" PRIu64
			    " delivered %d", v, lost, d);
	}
	return TEST_PASS;
}

#ifdef CQPOLL_TEST_MLX5
/*
 * One round per CQ in turn: post one completion, let the group wake and
 * deliver it. Returns the rounds whose completion was not delivered by the
 * wake (it would wait for a timeout, or forever), and adds the oracle's lost
 * wake-ups and the group's timeout recoveries to *lost.
 */
static int
shared_fd_rounds(int old_routing, unsigned int *late, uint64_t *lost, uint64_t *stale_sn)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 1 };
	uint64_t busy = cqpoll_verbs_emu_busy_destroys();
	struct cqpoll_group_stats st;
	struct tg_rx rx[4];
	uint64_t posted[4] = { 0 };
	struct cqpoll_group *g;
	struct mix m;
	unsigned int i, round, k;
	int r;

	consumed = 0;
	*late = 0;
	/* Strict sn: an mlx5 arm whose sn missed one of its events is ignored. */
	r = mix_create(&m, 4, 64, 1, old_routing, NULL, 0, CQPOLL_MLX5_EMU_F_STRICT_SN);
	TEST_ASSERT_EQ(r, 0);
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "create: %s", strerror(errno));
	for (i = 0; i < 4; i++) {
		rx[i] = (struct tg_rx){ .consumed = &consumed };
		TEST_ASSERT_EQ(cqpoll_group_add(g, m.cq[i], tg_cb, &rx[i]), 0);
	}
	/* Everything armed: the sleep ends by the timeout. */
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	for (round = 0; round < 200; round++) {
		struct cqpoll_completion c = { .byte_len = 8 };

		/* Every CQ in turn, mlx5 and verbs, woken by whoever reads. */
		k = round % 4;
		c.wr_id = posted[k];
		TEST_ASSERT_EQ(mix_post(&m, k, &c), 0);
		posted[k]++;
		for (i = 0; i < 3 && rx[k].expected != posted[k]; i++)
			TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "run");
		*late += rx[k].expected != posted[k];
		if (old_routing && *late != 0)
			break;
	}
	cqpoll_group_stats_get(g, &st);
	*lost = st.lost_wakeups + st.timeout_recoveries;
	printf("  %s routing: rounds=%u late=%u lost_oracle=%" PRIu64
	       " timeout_recoveries=%" PRIu64 " wake_event=%" PRIu64
	       " wake_timeout=%" PRIu64 "\n", old_routing ? "old" : "demux", round,
	       *late, st.lost_wakeups, st.timeout_recoveries, st.wakeups_event,
	       st.wakeups_timeout);
	/* The sn each mlx5 CQ armed with followed its own events, none other. */
	*stale_sn = 0;
	for (i = 0; i < 4; i++) {
		struct cqpoll_mlx5_emu_stats es;

		TEST_ASSERT_EQ(rx[i].errors, 0);
		if (m.is_mlx5[i]) {
			TEST_ASSERT_EQ(cqpoll_mlx5_emu_stats_get(m.real[i], &es), 0);
			*stale_sn += es.stale_sn_arms;
		}
	}
	cqpoll_group_destroy(g);
	/* Acks balance: no ibv_destroy_cq() would wait (the emulator says). */
	TEST_ASSERT_EQ(mix_destroy(&m), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_busy_destroys(), busy);
	return TEST_PASS;
}

/*
 * Two mlx5-emu and two verbs-emu CQs on ONE completion channel in one group:
 * each event reaches the CQ it names, whichever member reads it off the
 * channel, so every completion is delivered by its wake-up, with no lost
 * wake-up and no timeout recovery, and every destroy returns. The routing
 * mlx5 had before the demux (an mlx5 CQ takes every event as its own) is
 * caught by the same rounds.
 */
static int
test_shared_fd(void)
{
	uint64_t lost, stale_sn;
	unsigned int late;

	if (shared_fd_rounds(0, &late, &lost, &stale_sn) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT_EQ(late, 0);
	TEST_ASSERT_EQ(lost, 0);
	TEST_ASSERT_EQ(stale_sn, 0);
	if (shared_fd_rounds(1, &late, &lost, &stale_sn) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT(late + lost > 0, "the old routing was not caught");
	printf("  old routing: %" PRIu64 " arms with a stale sn\n", stale_sn);
	return TEST_PASS;
}
#else
static int
test_shared_fd(void)
{
	printf("  skip: this build has no mlx5 driver (a mixed channel needs it)\n");
	return TEST_SKIP;
}
#endif

/*
 * Interrupt mode: a wake-up costs polls in proportion to the CQs with work,
 * not to the group. 64 CQs, all armed and off the active list; one event:
 * the wake polls that CQ, the next iteration polls and re-arms it alone.
 * A group that polled (or poll-and-armed) every CQ would count >= 64 polls.
 */
static int
test_wake_cost_follows_active(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 1 };
	struct cqpoll_completion c = { .byte_len = 8 };
	struct cqpoll_group_stats st;
	struct cqpoll_cq *cq[64];
	struct cqpoll_group *g;
	unsigned int i;

	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "create: %s", strerror(errno));
	for (i = 0; i < 64; i++) {
		struct cqpoll_sw_emu_conf sw = { .size = 64,
			.arm = (enum cqpoll_arm_semantics)(i % 3) };

		cq[i] = cqpoll_sw_emu_cq_create(&sw);
		TEST_ASSERT(cq[i] != NULL, "sw");
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], null_cb, NULL), 0);
	}
	/* Arm every CQ: the sleep ends by the 1 ms timeout. */
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	cqpoll_group_stats_get(g, &st);
	TEST_ASSERT_EQ(st.sleeps, 1);
	TEST_ASSERT_EQ(st.wakeups_timeout, 1);
	/* 64 polls, 64 poll-and-arms, and the timeout's safety net polls all 64. */
	TEST_ASSERT_EQ(st.polls, 192);
	TEST_ASSERT_EQ(st.timeout_recoveries, 0);
	for (i = 0; i < 3; i++) {
		cqpoll_group_stats_reset(g);
		c.wr_id = i;
		/* An edge, a level and a report-missed CQ: every arm fires. */
		TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq[40 + i], &c), 0);
		TEST_ASSERT_EQ(cqpoll_group_run_once(g), 1);	/* the wake */
		/* Re-arm and go to sleep; not the sleep's timeout, the net's cost. */
		TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 0);
		cqpoll_group_stats_get(g, &st);
		TEST_ASSERT_EQ(st.completions, 1);
		TEST_ASSERT_EQ(st.wakeups_event, 1);
		TEST_ASSERT_EQ(st.lost_wakeups, 0);
		TEST_ASSERT(st.polls <= 6, "%" PRIu64 " polls for one woken CQ of 64",
			    st.polls);
		TEST_ASSERT(cqpoll_group_sleep_finish(g) >= 0, "finish");
	}
	cqpoll_group_destroy(g);
	for (i = 0; i < 64; i++)
		cqpoll_cq_destroy(cq[i]);
	return TEST_PASS;
}

/*
 * Sleeping in an external event loop: prepare arms every CQ, the group's fd
 * sits in another epoll instance next to an unrelated eventfd (an Rx queue's
 * interrupt, say), and finish consumes and polls whatever woke.
 */
static int
test_external_sleep(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_BUSY };
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct cqpoll_completion c = { .byte_len = 8 };
	struct cqpoll_group_stats st;
	struct cqpoll_cq *cq[4], *extra;
	struct cqpoll_group *g;
	struct tg_rx rx[4];
	int epfd, efd, gfd;
	uint64_t one = 1;
	unsigned int i;

	consumed = 0;
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "create: %s", strerror(errno));
	for (i = 0; i < 4; i++) {
		struct cqpoll_sw_emu_conf sw = { .arm = (enum cqpoll_arm_semantics)(i % 3) };

		cq[i] = cqpoll_sw_emu_cq_create(&sw);
		TEST_ASSERT(cq[i] != NULL, "sw");
		rx[i] = (struct tg_rx){ .consumed = &consumed };
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], tg_cb, &rx[i]), 0);
	}
	extra = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(extra != NULL, "sw");
	TEST_ASSERT_EQ(cqpoll_group_event_fd(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), -EINVAL);
	gfd = cqpoll_group_event_fd(g);
	TEST_ASSERT(gfd >= 0, "event fd %d", gfd);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	TEST_ASSERT(epfd >= 0 && efd >= 0, "epoll/eventfd: %s", strerror(errno));
	ev.data.fd = gfd;
	TEST_ASSERT_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, gfd, &ev), 0);
	ev.data.fd = efd;
	TEST_ASSERT_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &ev), 0);

	/* Work already there: prepare delivers it instead of sleeping. */
	TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq[1], &c), 0);
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 1);
	TEST_ASSERT_EQ(rx[1].expected, 1);

	/* Armed: a completion wakes the external wait on the group's fd. */
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), -EALREADY);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_add(g, extra, tg_cb, &rx[0]), -EBUSY);
	TEST_ASSERT_EQ(epoll_wait(epfd, &out, 1, 0), 0);
	c.wr_id = 0;
	TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq[2], &c), 0);
	TEST_ASSERT_EQ(epoll_wait(epfd, &out, 1, 1000), 1);
	TEST_ASSERT_EQ(out.data.fd, gfd);
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), 1);
	TEST_ASSERT_EQ(rx[2].expected, 1);

	/* Woken by the other fd: finish finds nothing and counts no timeout. */
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 0);
	TEST_ASSERT_EQ(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	TEST_ASSERT_EQ(epoll_wait(epfd, &out, 1, 1000), 1);
	TEST_ASSERT_EQ(out.data.fd, efd);
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), 0);
	cqpoll_group_stats_get(g, &st);
	TEST_ASSERT_EQ(st.sleeps, 2);
	TEST_ASSERT_EQ(st.wakeups_event, 1);
	TEST_ASSERT_EQ(st.wakeups_timeout, 0);
	TEST_ASSERT_EQ(st.lost_wakeups, 0);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_add(g, extra, tg_cb, &rx[0]), 0);
	TEST_ASSERT_EQ(consumed, 2);
	close(efd);
	close(epfd);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(extra);
	for (i = 0; i < 4; i++)
		cqpoll_cq_destroy(cq[i]);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_bad_args),
	TEST_CASE(test_add_remove),
	TEST_CASE(test_lifetimes),
	TEST_CASE(test_callback_reentry),
	TEST_CASE(test_mode_busy),
	TEST_CASE(test_mode_interrupt),
	TEST_CASE(test_mode_adaptive_spin),
	TEST_CASE(test_mode_adaptive),
	TEST_CASE(test_sleep_cpu),
	TEST_CASE(test_cross_thread),
	TEST_CASE(test_wake_on_event),
	TEST_CASE(test_woken_stays_hot),
	TEST_CASE(test_sleeps_only_when_all_armed),
	TEST_CASE(test_naive_group_is_caught),
	TEST_CASE(test_shared_fd),
	TEST_CASE(test_wake_cost_follows_active),
	TEST_CASE(test_external_sleep),
};

TEST_MAIN("group", cases)
