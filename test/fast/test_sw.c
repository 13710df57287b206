/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The software CQ on its own: configuration checks, the owner-bit ring across
 * laps, a full ring refusing entries, each arm semantics' reaction to entries
 * already present, each injected fault, and the shared event channel (one
 * fd for many CQs; a group woken on it polls the CQs that fired).
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_config.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

static struct cqpoll_cq *
sw_cq(uint32_t size, enum cqpoll_arm_semantics arm, const struct cqpoll_sw_faults *f)
{
	struct cqpoll_sw_emu_conf conf = { .size = size, .arm = arm };

	if (f != NULL)
		conf.faults = *f;
	return cqpoll_sw_emu_cq_create(&conf);
}

static int
post_id(struct cqpoll_cq *cq, uint64_t id)
{
	struct cqpoll_completion c = { .wr_id = id, .byte_len = 64,
				       .opcode = CQPOLL_OP_RECV };

	return cqpoll_sw_emu_post(cq, &c);
}

static int
test_bad_config(void)
{
	struct cqpoll_sw_emu_conf conf = { .arm = (enum cqpoll_arm_semantics)5 };
	struct cqpoll_cq_info info;
	struct cqpoll_cq *cq;

	errno = 0;
	TEST_ASSERT(cqpoll_sw_emu_cq_create(&conf) == NULL && errno == EINVAL, "bad arm");
	conf.arm = CQPOLL_ARM_EDGE;
	conf.size = (1u << 24) + 1;
	TEST_ASSERT(cqpoll_sw_emu_cq_create(&conf) == NULL && errno == EINVAL, "too big");
	conf.size = 0;
	conf.faults.spurious_event_pct = 101;
	TEST_ASSERT(cqpoll_sw_emu_cq_create(&conf) == NULL && errno == EINVAL, "pct > 100");
	TEST_ASSERT_EQ(cqpoll_sw_emu_post(NULL, NULL), -EINVAL);

	cq = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(cq != NULL, "defaults");
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT(info.size >= CQPOLL_SW_CQ_SIZE_DEFAULT, "default size %u", info.size);
	TEST_ASSERT_EQ(info.arm, CQPOLL_ARM_EDGE);
	TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_sw_emu_set_hook(cq, CQPOLL_SW_HOOK_COUNT, NULL, NULL), -EINVAL);
	cqpoll_cq_destroy(cq);

	cq = sw_cq(5, CQPOLL_ARM_LEVEL, NULL);
	TEST_ASSERT(cq != NULL, "size 5");
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.size, 8);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_ring_laps(void)
{
	struct cqpoll_completion c[8];
	struct cqpoll_cq *cq = sw_cq(8, CQPOLL_ARM_EDGE, NULL);
	uint64_t next_post = 0, next_poll = 0, last_ts = 0;
	unsigned int burst;
	int r, i;

	TEST_ASSERT(cq != NULL, "create");
	/* Bursts of every size cross the wrap at every offset. */
	for (burst = 1; burst <= 8; burst++) {
		for (i = 0; i < (int)burst; i++)
			TEST_ASSERT_EQ(post_id(cq, next_post++), 0);
		r = cqpoll_poll_burst(cq, c, 8);
		TEST_ASSERT_EQ(r, burst);
		for (i = 0; i < r; i++) {
			TEST_ASSERT_EQ(c[i].wr_id, next_poll++);
			TEST_ASSERT(c[i].flags & CQPOLL_COMPLETION_F_TIMESTAMP, "timestamped");
			TEST_ASSERT(c[i].timestamp >= last_ts, "timestamps in order");
			TEST_ASSERT_EQ(c[i].byte_len, 64);
			last_ts = c[i].timestamp;
		}
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 8), 0);
	}
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/*
 * Size 1 is one entry (it became 2 before): full after one post, and the
 * phase bit alternates at every lap; level, edge and report-missed arms.
 */
static int
test_size_one(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq_info info;
	struct cqpoll_cq *cq;
	unsigned int a;
	int i;

	for (a = 0; a <= CQPOLL_ARM_REPORT_MISSED; a++) {
		cq = sw_cq(1, (enum cqpoll_arm_semantics)a, NULL);
		TEST_ASSERT(cq != NULL, "size 1");
		TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
		TEST_ASSERT_EQ(info.size, 1);
		for (i = 0; i < 5; i++) {
			TEST_ASSERT_EQ(post_id(cq, (uint64_t)i), 0);
			TEST_ASSERT_EQ(post_id(cq, 99), -ENOSPC);
			TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
			TEST_ASSERT_EQ(c[0].wr_id, (uint64_t)i);
			TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
		}
		/* Armed empty, a post raises the event; the entry is there once. */
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		TEST_ASSERT_EQ(post_id(cq, 5), 0);
		TEST_ASSERT(cqpoll_cq_event_get(cq) > 0, "no event (arm %u)", a);
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
		TEST_ASSERT_EQ(c[0].wr_id, 5);
		cqpoll_cq_destroy(cq);
	}
	return TEST_PASS;
}

static int
test_full_ring(void)
{
	struct cqpoll_completion c[16];
	struct cqpoll_cq *cq = sw_cq(8, CQPOLL_ARM_EDGE, NULL);
	int i;

	TEST_ASSERT(cq != NULL, "create");
	for (i = 0; i < 8; i++)
		TEST_ASSERT_EQ(post_id(cq, (uint64_t)i), 0);
	/* Full: refused, never overwritten. */
	TEST_ASSERT_EQ(post_id(cq, 99), -ENOSPC);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 3), 3);
	TEST_ASSERT_EQ(post_id(cq, 8), 0);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 16), 6);
	for (i = 0; i < 6; i++)
		TEST_ASSERT_EQ(c[i].wr_id, 3 + i);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* An entry present before the arm: who fires, and what the oracle says. */
static int
check_existing_entry(enum cqpoll_arm_semantics arm, int expect_event)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq = sw_cq(8, arm, NULL);

	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(post_id(cq, 1), 0);
	TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), !expect_event);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), expect_event);
	/* Whatever the arm did, poll-and-arm returns the entry. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 1);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_arm_semantics(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	struct cqpoll_cq *cq;

	if (check_existing_entry(CQPOLL_ARM_LEVEL, 1) != TEST_PASS ||
	    check_existing_entry(CQPOLL_ARM_EDGE, 0) != TEST_PASS ||
	    check_existing_entry(CQPOLL_ARM_REPORT_MISSED, 0) != TEST_PASS)
		return TEST_FAIL;

	/* Report-missed: the arm's report drives another poll. */
	cq = sw_cq(8, CQPOLL_ARM_REPORT_MISSED, NULL);
	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 0);
	/* An entry after the arm fires, whatever the semantics. */
	TEST_ASSERT_EQ(post_id(cq, 1), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 1);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.missed_reports, 0);
	TEST_ASSERT_EQ(st.events, 1);
	TEST_ASSERT_EQ(st.spurious_events, 0);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* A post held between making its entry visible and publishing it. */
struct held_post {
	struct cqpoll_cq *cq;
	uint32_t reached; /* the post is in the window */
	uint32_t go;      /* let it publish */
	int r;
};

static void
hold_before_publish(void *arg)
{
	struct held_post *h = arg;

	__atomic_store_n(&h->reached, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&h->go, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void *
held_post_thread(void *arg)
{
	struct held_post *h = arg;

	h->r = post_id(h->cq, 7);
	return NULL;
}

/*
 * The consumer may read an entry as soon as its owner bit is visible, before
 * the post publishes its producer index: an arm then sees the index behind
 * its own. That is no miss (the entry was polled) and no reason to fire: the
 * post looks at the arm once it has published. A device that took it for a
 * miss said so on every arm until the post went on, and poll-and-arm gave up
 * with -EAGAIN (the TSan stress run on a loaded machine hit it).
 */
static int
check_consumed_before_published(enum cqpoll_arm_semantics arm)
{
	struct held_post h = { 0 };
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	pthread_t t;

	h.cq = sw_cq(8, arm, NULL);
	TEST_ASSERT(h.cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_sw_emu_set_hook(h.cq, CQPOLL_SW_HOOK_BEFORE_PUBLISH,
					      hold_before_publish, &h), 0);
	TEST_ASSERT_EQ(pthread_create(&t, NULL, held_post_thread, &h), 0);
	while (!__atomic_load_n(&h.reached, __ATOMIC_ACQUIRE))
		sched_yield();
	TEST_ASSERT_EQ(cqpoll_poll_burst(h.cq, c, 4), 1);
	TEST_ASSERT_EQ(c[0].wr_id, 7);
	/* Empty, and the arm must hold: 0, no miss reported, no event yet. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(h.cq, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(h.cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(h.cq, &st), 0);
	TEST_ASSERT_EQ(st.missed_reports, 0);
	__atomic_store_n(&h.go, 1, __ATOMIC_RELEASE);
	TEST_ASSERT_EQ(pthread_join(t, NULL), 0);
	TEST_ASSERT_EQ(h.r, 0);
	/* The post saw the arm: its event comes, for an entry already read. */
	TEST_ASSERT_EQ(cqpoll_cq_wait(h.cq, 1000), 1);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(h.cq, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(h.cq, &st), 0);
	TEST_ASSERT_EQ(st.spurious_events, 1);
	TEST_ASSERT_EQ(st.completions, 1);
	cqpoll_cq_destroy(h.cq);
	return TEST_PASS;
}

static int
test_consumed_before_published(void)
{
	if (check_consumed_before_published(CQPOLL_ARM_LEVEL) != TEST_PASS ||
	    check_consumed_before_published(CQPOLL_ARM_EDGE) != TEST_PASS ||
	    check_consumed_before_published(CQPOLL_ARM_REPORT_MISSED) != TEST_PASS)
		return TEST_FAIL;
	return TEST_PASS;
}

static int
test_fault_delayed_event(void)
{
	struct cqpoll_sw_faults f = { .event_delay_us = 20000 };
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq = sw_cq(8, CQPOLL_ARM_EDGE, &f);
	uint64_t t0;

	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	t0 = test_now_ns();
	TEST_ASSERT_EQ(post_id(cq, 1), 0);
	/* Raised, not yet delivered: not pending, yet not stranded either. */
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 5000), 1);
	TEST_ASSERT(test_now_ns() - t0 >= 19000000ull, "delivered after the delay");
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 1);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_fault_duplicate_and_spurious(void)
{
	struct cqpoll_sw_faults f = { .duplicate_event_pct = 100 };
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	struct cqpoll_cq *cq = sw_cq(8, CQPOLL_ARM_EDGE, &f);

	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(post_id(cq, 1), 0);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 2);
	cqpoll_cq_destroy(cq);

	f.duplicate_event_pct = 0;
	f.spurious_event_pct = 100;
	cq = sw_cq(8, CQPOLL_ARM_EDGE, &f);
	TEST_ASSERT(cq != NULL, "create");
	/* Not armed, yet an event comes: the consumer must cope. */
	TEST_ASSERT_EQ(post_id(cq, 1), 0);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 1);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.spurious_events, 1);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_fault_delays_keep_order(void)
{
	struct cqpoll_sw_faults f = {
		.visibility_delay_ns = 2000, .visibility_delay_pct = 50,
		.arm_delay_ns = 2000, .arm_delay_pct = 50, .seed = 7,
	};
	struct cqpoll_completion c[8];
	struct cqpoll_cq *cq = sw_cq(16, CQPOLL_ARM_EDGE, &f);
	uint64_t next = 0, id = 0;
	int r, i, round;

	TEST_ASSERT(cq != NULL, "create");
	for (round = 0; round < 200; round++) {
		for (i = 0; i < round % 5; i++)
			TEST_ASSERT_EQ(post_id(cq, id++), 0);
		while ((r = cqpoll_poll_and_arm(cq, c, 8)) > 0)
			for (i = 0; i < r; i++)
				TEST_ASSERT_EQ(c[i].wr_id, next++);
		TEST_ASSERT_EQ(r, 0);
		cqpoll_cq_event_get(cq);
	}
	TEST_ASSERT_EQ(next, id);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static unsigned int chan_got[3];

static void
chan_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
	void *arg)
{
	(void)cq;
	(void)c;
	chan_got[(uintptr_t)arg] += n;
}

static int
fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0);
}

/*
 * Three CQs on one channel in one group: one fd for all; two of them get
 * work while the group is asleep; the wake polls those two once each (the
 * third is not asked: O(fired)), each counts one event (once per arm, two
 * posts to one CQ raise once), and the fd is quiet afterwards.
 */
static int
test_channel(void)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_INTERRUPT };
	struct cqpoll_sw_conf sc = { .size = 16, .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_completion comp = { .wr_id = 1 };
	struct cqpoll_group_stats st;
	struct cqpoll_cq_stats cs;
	struct cqpoll_sw_channel *ch;
	struct cqpoll_cq *cq[3];
	struct cqpoll_group *g;
	uint64_t polls;
	unsigned int i;
	int fd;

	TEST_ASSERT_EQ(cqpoll_sw_channel_destroy(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_sw_channel_event_fd(NULL), -EINVAL);
	ch = cqpoll_sw_channel_create();
	TEST_ASSERT(ch != NULL, "channel create");
	fd = cqpoll_sw_channel_event_fd(ch);
	TEST_ASSERT(fd >= 0, "channel fd");
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(g != NULL, "group");
	for (i = 0; i < 3; i++) {
		cq[i] = cqpoll_sw_cq_create_on(&sc, ch);
		TEST_ASSERT(cq[i] != NULL, "cq %u on the channel", i);
		TEST_ASSERT_EQ(cqpoll_cq_event_fd(cq[i]), fd);
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], chan_cb, (void *)(uintptr_t)i), 0);
	}
	TEST_ASSERT_EQ(cqpoll_sw_channel_destroy(ch), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 0);
	TEST_ASSERT_EQ(fd_readable(fd), 0);
	TEST_ASSERT_EQ(cqpoll_sw_post(cq[1], &comp), 0);
	TEST_ASSERT_EQ(cqpoll_sw_post(cq[1], &comp), 0);
	TEST_ASSERT_EQ(cqpoll_sw_post(cq[2], &comp), 0);
	TEST_ASSERT_EQ(fd_readable(fd), 1);
	TEST_ASSERT_EQ(cqpoll_group_stats_get(g, &st), 0);
	polls = st.polls;
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), 3);
	TEST_ASSERT_EQ(cqpoll_group_stats_get(g, &st), 0);
	TEST_ASSERT_EQ(st.polls - polls, 2);
	TEST_ASSERT_EQ(st.wakeups_event, 1);
	TEST_ASSERT(chan_got[0] == 0 && chan_got[1] == 2 && chan_got[2] == 1,
		    "delivered %u %u %u", chan_got[0], chan_got[1], chan_got[2]);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq[1], &cs), 0);
	TEST_ASSERT_EQ(cs.events, 1);
	TEST_ASSERT_EQ(fd_readable(fd), 0);
	/* Asleep again: the two woken are armed again, the third still is. */
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 0);
	TEST_ASSERT_EQ(cqpoll_sw_post(cq[0], &comp), 0);
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), 1);
	TEST_ASSERT_EQ(chan_got[0], 1);
	cqpoll_group_destroy(g);
	for (i = 0; i < 3; i++)
		cqpoll_cq_destroy(cq[i]);
	TEST_ASSERT_EQ(cqpoll_sw_channel_destroy(ch), 0);
	return TEST_PASS;
}

/*
 * A CQ destroyed while its event waits on the channel's list is taken off
 * it: the channel names only CQs that exist, and its fd stays as it was.
 */
static int
test_channel_destroy_queued(void)
{
	struct cqpoll_sw_conf sc = { .arm = CQPOLL_ARM_LEVEL };
	struct cqpoll_completion comp = { .wr_id = 1 }, c[4];
	struct cqpoll_sw_channel *ch = cqpoll_sw_channel_create();
	struct cqpoll_cq *a, *b;

	TEST_ASSERT(ch != NULL, "channel create");
	a = cqpoll_sw_cq_create_on(&sc, ch);
	b = cqpoll_sw_cq_create_on(&sc, ch);
	TEST_ASSERT(a != NULL && b != NULL, "cqs");
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(a, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(b, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_sw_post(a, &comp), 0);
	TEST_ASSERT_EQ(cqpoll_sw_post(b, &comp), 0);
	cqpoll_cq_destroy(a);
	/* b's own event is still there, through its own event_get. */
	TEST_ASSERT_EQ(cqpoll_cq_event_get(b), 1);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(b), 0);
	cqpoll_cq_destroy(b);
	TEST_ASSERT_EQ(cqpoll_sw_channel_destroy(ch), 0);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_bad_config),
	TEST_CASE(test_ring_laps),
	TEST_CASE(test_size_one),
	TEST_CASE(test_full_ring),
	TEST_CASE(test_arm_semantics),
	TEST_CASE(test_consumed_before_published),
	TEST_CASE(test_fault_delayed_event),
	TEST_CASE(test_fault_duplicate_and_spurious),
	TEST_CASE(test_fault_delays_keep_order),
	TEST_CASE(test_channel),
	TEST_CASE(test_channel_destroy_queued),
};

TEST_MAIN("sw", cases)
