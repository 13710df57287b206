/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Moving a poll group between threads, deterministically: the owner-only
 * calls refuse a released group (-EPERM) and a second release (-EALREADY),
 * and once another thread adopted it they refuse every thread but that one
 * (-EPERM), the thread that ran it before and its release included;
 * adopting needs a release (-EBUSY); a move request makes cqpoll_group_run()
 * release the group and return CQPOLL_GROUP_RUN_RELEASED, and is cleared by
 * the release; a group moved in a prepared sleep is adopted asleep (1) with
 * its members still armed, and a completion posted while it was in transit
 * wakes the new thread: the event raised by the old thread's arm.
 */

#include <inttypes.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cqpoll_test.h"
#include "test_group_common.h"

static uint64_t consumed;

/* Adopt, then run: the thread that adopted a group is the one to run it. */
static void *
adopt_run_thread(void *arg)
{
	int r = cqpoll_group_adopt(arg);

	return (void *)(intptr_t)(r != 0 ? r : cqpoll_group_run(arg));
}

/* Adopt and hold the group until told, then release it. */
struct holder {
	struct cqpoll_group *g;
	int adopted, go, released;
};

static void *
hold_thread(void *arg)
{
	struct holder *h = arg;

	__atomic_store_n(&h->adopted, cqpoll_group_adopt(h->g) == 0 ? 1 : -1,
			 __ATOMIC_RELEASE);
	while (!__atomic_load_n(&h->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	h->released = cqpoll_group_release(h->g);
	return NULL;
}

static int
test_move_api(void)
{
	struct cqpoll_group *g = cqpoll_group_create(NULL);
	struct cqpoll_cq *cq = cqpoll_sw_emu_cq_create(NULL);
	struct tg_rx rx = { .consumed = &consumed };
	struct holder h = { .g = g };
	pthread_t t;
	void *ret;

	TEST_ASSERT(g != NULL && cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_group_release(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_adopt(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_move_request(NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_group_move_pending(NULL), -EINVAL);
	/* Not released: nobody may adopt it. */
	TEST_ASSERT_EQ(cqpoll_group_adopt(g), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, tg_cb, &rx), 0);
	TEST_ASSERT_EQ(cqpoll_group_release(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_release(g), -EALREADY);
	/* Released: the thread-only calls refuse it. */
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_run(g), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_remove(g, cq), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, tg_cb, &rx), -EPERM);
	/*
	 * Another thread adopts it; then it is that thread's, not ours, the
	 * thread that ran it before: every thread-only call is refused, the
	 * release among them, while the adopter holds it.
	 */
	TEST_ASSERT_EQ(pthread_create(&t, NULL, hold_thread, &h), 0);
	while (__atomic_load_n(&h.adopted, __ATOMIC_ACQUIRE) == 0)
		usleep(1000);
	TEST_ASSERT_EQ(h.adopted, 1);
	TEST_ASSERT_EQ(cqpoll_group_adopt(g), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_group_release(g), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_run(g), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_remove(g, cq), -EPERM);
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, tg_cb, &rx), -EPERM);
	__atomic_store_n(&h.go, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	TEST_ASSERT_EQ(h.released, 0);
	TEST_ASSERT_EQ(cqpoll_group_adopt(g), 0);

	/* A move requested before run: run releases it at once. */
	TEST_ASSERT_EQ(cqpoll_group_move_request(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_move_pending(g), 1);
	TEST_ASSERT_EQ(cqpoll_group_run(g), CQPOLL_GROUP_RUN_RELEASED);
	TEST_ASSERT_EQ(cqpoll_group_move_pending(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_adopt(g), 0);
	/* A move requested while it runs on another thread. */
	TEST_ASSERT_EQ(cqpoll_group_release(g), 0);
	TEST_ASSERT_EQ(pthread_create(&t, NULL, adopt_run_thread, g), 0);
	usleep(20000);
	TEST_ASSERT_EQ(cqpoll_group_move_request(g), 0);
	pthread_join(t, &ret);
	TEST_ASSERT_EQ((intptr_t)ret, CQPOLL_GROUP_RUN_RELEASED);
	TEST_ASSERT_EQ(cqpoll_group_adopt(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_remove(g, cq), 0);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

struct sleeper {
	struct cqpoll_group *g;
	int adopted;
	int finished;
	int ready;
};

/* The new thread: adopt, wait on the group's fd, finish the sleep. */
static void *
sleeper_thread(void *arg)
{
	struct sleeper *s = arg;
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0);

	s->adopted = cqpoll_group_adopt(s->g);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, cqpoll_group_event_fd(s->g), &ev) != 0)
		return NULL;
	/* No safety net to rescue it: the event must come. */
	s->ready = epoll_wait(ep, &ev, 1, 5000);
	s->finished = cqpoll_group_sleep_finish(s->g);
	close(ep);
	return NULL;
}

static int
test_move_asleep(void)
{
	struct cqpoll_group_conf conf = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					  .wait_timeout_ms = 60000 };
	struct cqpoll_sw_emu_conf sw = { .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_completion c = { .wr_id = 0, .byte_len = 8 };
	struct tg_rx rx[2] = { { .consumed = &consumed }, { .consumed = &consumed } };
	struct cqpoll_group_stats st;
	struct cqpoll_cq *cq[2];
	struct sleeper s = { 0 };
	pthread_t t;
	unsigned int i;

	s.g = cqpoll_group_create(&conf);
	TEST_ASSERT(s.g != NULL, "create");
	for (i = 0; i < 2; i++) {
		cq[i] = cqpoll_sw_emu_cq_create(&sw);
		TEST_ASSERT(cq[i] != NULL, "cq");
		TEST_ASSERT_EQ(cqpoll_group_add(s.g, cq[i], tg_cb, &rx[i]), 0);
	}
	/* Asleep here: both armed. */
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(s.g), 0);
	TEST_ASSERT(cqpoll_cq_is_armed(cq[0]) == 1 && cqpoll_cq_is_armed(cq[1]) == 1,
		    "not armed");
	TEST_ASSERT_EQ(cqpoll_group_release(s.g), 0);
	/* In transit: work for CQ 1. Its arm, taken here, raises the event. */
	TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq[1], &c), 0);
	TEST_ASSERT_EQ(pthread_create(&t, NULL, sleeper_thread, &s), 0);
	pthread_join(t, NULL);
	TEST_ASSERT_EQ(s.adopted, 1);
	TEST_ASSERT_EQ(s.ready, 1);
	TEST_ASSERT_EQ(s.finished, 1);
	TEST_ASSERT_EQ(rx[1].expected, 1);
	TEST_ASSERT_EQ(rx[0].expected + rx[0].errors + rx[1].errors, 0);
	cqpoll_group_stats_get(s.g, &st);
	TEST_ASSERT_EQ(st.wakeups_event, 1);
	TEST_ASSERT_EQ(st.lost_wakeups, 0);
	/* Still the adopter's (its thread ended): not free to adopt. */
	TEST_ASSERT_EQ(cqpoll_group_adopt(s.g), -EBUSY);
	cqpoll_group_destroy(s.g);
	for (i = 0; i < 2; i++)
		cqpoll_cq_destroy(cq[i]);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_move_api),
	TEST_CASE(test_move_asleep),
};

int
main(void)
{
	return test_run("group-move", cases, sizeof(cases) / sizeof(cases[0]));
}
