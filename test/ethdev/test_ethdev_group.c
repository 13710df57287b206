/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One poll group holding an ethdev Rx queue (virtio_user fed by vhost), an
 * io_uring CQ (NOPs the kernel completes) and a software CQ, in one --mode
 * (interrupt, adaptive, busy). A producer thread posts to a random member,
 * waits until the group consumed it, then leaves a random gap of up to
 * 100 us: posts land before, inside and after the group's way into sleep
 * or into cold. Checked: every completion delivered once, in order, to its
 * own CQ; no lost wake-up found by the safety net (a recovery whose work
 * was posted well before its deadline: recovery_judge.h; late ones are
 * allowed) nor by the sw oracle; every member armed and
 * woken by its own events; the group slept (interrupt, adaptive) or its
 * members went cold (busy). Skips (77) without io_uring or the port pair.
 *
 * Usage: test_ethdev_group --mode=interrupt|adaptive|busy
 */

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "cqpoll.h"
#include "cqpoll_ethdev.h"
#include "cqpoll_group.h"
#include "ethdev_test.h"
#define CQPOLL_TEST_URING
#include "recovery_judge.h"
#include "test_mixed_real.h"

#define POSTS 3000
/*
 * Busy mode hands each post from one spinning thread to another: on a
 * loaded 2-CPU machine that waits for the scheduler (ms), so fewer posts,
 * and both CPUs spin for the whole run (the suite's CPU-bound: 400 posts,
 * about 130 to each member, every one checked as the 3000 are).
 */
#define POSTS_BUSY 400
#define DEADLINE_NS (40ull * 1000000000ull)

enum { M_ETH, M_URING, M_SW, M_N };
static const char *const names[M_N] = { "ethdev", "uring", "sw" };

struct rx {
	unsigned int k;
	uint64_t expected, errors;
};

static struct te_pair tp;
static struct rte_mempool *mp;
static struct mr_member mr[M_N];
static struct cqpoll_cq *cqs[M_N];
static struct rx rxs[M_N];
static uint64_t posted[M_N], consumed;
/* rxs[k].expected, for the recovery judge. */
static uint64_t next_seq[M_N];
/* Post to consumption, summed per member: where the time goes. */
static uint64_t wait_ns[M_N];
static int stop;
static uint64_t posts = POSTS;

static void
cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
   void *arg)
{
	struct rx *r = arg;
	uint64_t seq;
	unsigned int i;

	(void)cq;
	for (i = 0; i < n; i++) {
		if (r->k == M_ETH) {
			struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)c[i].wr_id;

			seq = te_seq(m);
			rte_pktmbuf_free(m);
		} else {
			seq = c[i].wr_id;
		}
		if (seq != r->expected || c[i].status != CQPOLL_STATUS_SUCCESS)
			r->errors++;
		r->expected++;
	}
	__atomic_store_n(&next_seq[r->k], r->expected, __ATOMIC_RELEASE);
	__atomic_fetch_add(&consumed, n, __ATOMIC_RELEASE);
}

static void *
producer(void *arg)
{
	uint64_t rnd = 0x9e3779b97f4a7c15ull, total = 0, end, t0;
	unsigned int k;
	int r;

	(void)arg;
	while (total < posts && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		k = (unsigned int)(test_rnd(&rnd) % M_N);
		rj_post_begin(k, posted[k]);
		if (k == M_ETH)
			r = te_send(tp.vhost, mp, posted[k]) == 1 ? 0 : -EIO;
		else
			r = mr_post(&mr[k], posted[k]);
		if (r != 0) {
			fprintf(stderr, "post to %s: %d\n", names[k], r);
			break;
		}
		rj_post_end(k, posted[k]);
		posted[k]++;
		total++;
		t0 = test_now_ns();
		end = t0 + 1000000000ull;
		/* Yield: a busy group may share this CPU with us. */
		while (__atomic_load_n(&consumed, __ATOMIC_ACQUIRE) < total &&
		       test_now_ns() < end)
			sched_yield();
		wait_ns[k] += test_now_ns() - t0;
		test_spin_ns(test_rnd(&rnd) % 100000);
	}
	return NULL;
}

static void *
run_thread(void *arg)
{
	return (void *)(intptr_t)cqpoll_group_run(arg);
}

static int
run(enum cqpoll_group_mode mode)
{
	struct cqpoll_group_conf conf = { .mode = mode, .wait_timeout_ms = 100,
					  .cold_us = 20 };
	struct cqpoll_group_stats st;
	struct cqpoll_cq_stats cs;
	struct cqpoll_group *g;
	pthread_t pt, gt;
	uint64_t t0, total;
	unsigned int k;
	void *ret;

	conf.policy = cqpoll_policy_find("adaptive:max_spin_us=20", &conf.policy_args);
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "group: %s", strerror(errno));
	for (k = 0; k < M_N; k++) {
		rxs[k] = (struct rx){ .k = k };
		TEST_ASSERT_EQ(cqpoll_group_add(g, cqs[k], cb, &rxs[k]), 0);
		next_seq[k] = 0;
	}
	rj_init(cqs, M_N, next_seq);
	t0 = test_now_ns();
	TEST_ASSERT_EQ(pthread_create(&gt, NULL, run_thread, g), 0);
	TEST_ASSERT_EQ(pthread_create(&pt, NULL, producer, NULL), 0);
	pthread_join(pt, NULL);
	total = posted[0] + posted[1] + posted[2];
	while (__atomic_load_n(&consumed, __ATOMIC_ACQUIRE) < total &&
	       test_now_ns() - t0 < DEADLINE_NS)
		usleep(1000);
	TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
	pthread_join(gt, &ret);
	TEST_ASSERT_EQ((intptr_t)ret, 0);
	rj_fini();
	cqpoll_group_stats_get(g, &st);
	printf("mode=%s posted=%" PRIu64 " consumed=%" PRIu64 " sleeps=%" PRIu64
	       " cold_arms=%" PRIu64 " wake_event=%" PRIu64 " wake_timeout=%" PRIu64
	       " lost_oracle=%" PRIu64 " timeout_recoveries=%" PRIu64 "\n",
	       cqpoll_group_mode_name(mode), total, consumed, st.sleeps, st.cold_arms,
	       st.wakeups_event, st.wakeups_timeout, st.lost_wakeups,
	       st.timeout_recoveries);
	for (k = 0; k < M_N; k++) {
		cqpoll_cq_stats_get(cqs[k], &cs);
		printf("  %-7s posted=%" PRIu64 " delivered=%" PRIu64 " errors=%" PRIu64
		       " arms=%" PRIu64 " events=%" PRIu64 " spurious=%" PRIu64
		       " timeout_recoveries=%" PRIu64 " (late=%" PRIu64 " lost=%" PRIu64
		       ") mean_delivery_us=%.1f\n",
		       names[k], posted[k], rxs[k].expected, rxs[k].errors, cs.arms,
		       cs.events, cs.spurious_events, cs.timeout_recoveries,
		       rj_late(k), rj_lost(k),
		       posted[k] ? (double)wait_ns[k] / 1e3 / (double)posted[k] : 0.0);
		TEST_ASSERT(rxs[k].errors == 0 && rxs[k].expected == posted[k],
			    "%s: %" PRIu64 " of %" PRIu64 ", %" PRIu64 " out of order",
			    names[k], rxs[k].expected, posted[k], rxs[k].errors);
		TEST_ASSERT(cs.arms > 0 && cs.events > 0, "%s: never armed and woken",
			    names[k]);
	}
	TEST_ASSERT_EQ(total, posts);
	TEST_ASSERT_EQ(st.lost_wakeups, 0);
	/* Late recoveries are allowed, lost ones are not: recovery_judge.h. */
	for (k = 0; k < M_N; k++)
		TEST_ASSERT(rj_lost(k) == 0, "%s: %" PRIu64 " lost wake-ups found by "
			    "the safety net (posted up to %" PRIu64 " us before their "
			    "deadline)", names[k], rj_lost(k), rj_worst_ns(k) / 1000);
	if (mode == CQPOLL_GROUP_MODE_BUSY)
		TEST_ASSERT(st.sleeps == 0 && st.cold_arms > 0, "busy: %" PRIu64
			    " sleeps, %" PRIu64 " cold arms", st.sleeps, st.cold_arms);
	else
		TEST_ASSERT(st.sleeps > 0, "the group never slept");
	for (k = 0; k < M_N; k++)
		cqpoll_group_remove(g, cqs[k]);
	cqpoll_group_destroy(g);
	return TEST_PASS;
}

int
main(int argc, char **argv)
{
	enum cqpoll_group_mode mode = CQPOLL_GROUP_MODE_INTERRUPT;
	char why[256];
	unsigned int k;
	int r;

	if (argc > 1 && strcmp(argv[1], "--mode=adaptive") == 0)
		mode = CQPOLL_GROUP_MODE_ADAPTIVE;
	else if (argc > 1 && strcmp(argv[1], "--mode=busy") == 0) {
		mode = CQPOLL_GROUP_MODE_BUSY;
		posts = POSTS_BUSY;
	}
	else if (argc > 1 && strcmp(argv[1], "--mode=interrupt") != 0) {
		fprintf(stderr, "usage: %s --mode=interrupt|adaptive|busy\n", argv[0]);
		return TEST_FAIL;
	}
	if (te_eal_init(argv[0]) != 0)
		return TEST_FAIL;
	mp = te_pool();
	if (mp == NULL)
		return TEST_FAIL;
	if (te_pair_open(&tp, mp, why, sizeof(why)) != 0) {
		printf("SKIP: no vhost/virtio_user pair here: %s\n", why);
		return TEST_SKIP;
	}
	for (k = M_URING; k < M_N; k++) {
		r = mr_open(&mr[k], k == M_URING ? MR_URING : MR_SW, 0, 0, why,
			    sizeof(why));
		if (r == -ENOTSUP) {
			printf("SKIP: %s: %s\n", names[k], why);
			return TEST_SKIP;
		}
		TEST_ASSERT(r == 0, "%s: %s", names[k], why);
		cqs[k] = mr[k].cq;
	}
	cqs[M_ETH] = cqpoll_ethdev_cq_create(tp.virtio, 0, NULL);
	TEST_ASSERT(cqs[M_ETH] != NULL, "ethdev CQ: %s", strerror(errno));
	r = run(mode);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	cqpoll_cq_destroy(cqs[M_ETH]);
	for (k = M_URING; k < M_N; k++)
		mr_close(&mr[k]);
	te_pair_close(&tp);
	rte_eal_cleanup();
	printf("%s\n", r == TEST_PASS ? "PASS" : "FAIL");
	return r;
}
