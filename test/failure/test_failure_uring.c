/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * failure-ringloss-uring: an io_uring ring lost under a poll group
 * (doc/guides/contract.md, section 11; doc/guides/uring-driver.md, "When
 * the ring fails"). Eight io_uring CQs in one group, fed with NOPs by a
 * submitter thread; mid-traffic the victim ring's fd is closed under the
 * poller (its number made to name /dev/null with dup2(), so that nothing
 * else can take the number and the later io_uring_queue_exit() closes
 * that): while the others' traffic flows (window "device"), or after a
 * pause long enough for the group to fall asleep with the victim armed
 * (window "asleep"); in busy, interrupt and adaptive mode.
 *
 * A ring loss raises no event: the driver finds it at the victim's next
 * arm (fstat of the ring's fd), which for a CQ armed and asleep is the one
 * the group's safety net rings. The other seven must deliver every
 * completion exactly once and in order; the victim its VICTIM_OK NOPs and
 * nothing after; the failure callback must be called once, with
 * CQPOLL_CQ_STATE_QUEUE_LOST and -EBADF, within three safety-net periods
 * of the loss (the net rings the arm of a CQ it finds armed and empty, and
 * waits for the first quiet sleep; plus scheduling slack); the failed CQ's poll, arm and wait must
 * return -EBADF without blocking, and destroying it must return.
 *
 * usage: test_failure_uring [--window=device|asleep] [--mode=busy|interrupt|adaptive]
 *                           [--expect-fail]
 *
 * --expect-fail is the negative control's verdict: built against a
 * test-only library whose safety net does not ring the arm of a CQ it finds
 * armed and empty (-DCQPOLL_TEST_NO_NET_ARM_CHECK), a ring lost while its
 * CQ is armed is never found: the traffic is delivered, nothing is
 * reported, and the checks must fail.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_test.h"
#include "uring_test.h"

#define NCQ 8
#define VICTIM 3
#define PER_CQ 1000
#define VICTIM_OK (PER_CQ / 2)
#define ASLEEP_PAUSE_NS 30000000ull
/* The net: short, since a ring loss waits for it at worst. */
#define TIMEOUT_MS 20
/* Scheduling slack on two shared cores (and sanitizers) over one net. */
#define SLACK_NS 100000000ull
#define TEST_LATE 2
#define LATE_TRIES 3

enum window { WIN_DEVICE = 0, WIN_ASLEEP, WIN_COUNT };
static const char *const window_names[] = { "device", "asleep" };

struct cq_rx {
	uint64_t next;
	uint64_t got;
	int bad;
};

struct round {
	enum window win;
	enum cqpoll_group_mode mode;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq[NCQ];
	struct cq_rx rx[NCQ];
	int devnull;
	uint64_t t_fail;
	int lost;                 /* the loss was made (the dup2 returned) */
	int reports;
	uint64_t t_report;
	int report_ok;
	char report_err[256];
	int group_done;
	int run_ret;
};

static void
on_comps(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	 unsigned int n, void *arg)
{
	struct round *rd = arg;
	struct cq_rx *rx = NULL;
	unsigned int i, q;

	for (q = 0; q < NCQ; q++)
		if (rd->cq[q] == cq)
			rx = &rd->rx[q];
	if (rx == NULL)
		return;
	q = (unsigned int)(rx - rd->rx);
	for (i = 0; i < n; i++) {
		if (c[i].wr_id != rx->next || c[i].status != CQPOLL_STATUS_SUCCESS) {
			if (rx->bad++ == 0)
				fprintf(stderr, "cq %u: got id %llu status %u, want %llu\n", q,
					(unsigned long long)c[i].wr_id, c[i].status,
					(unsigned long long)rx->next);
		}
		rx->next = c[i].wr_id + 1;
		__atomic_store_n(&rx->got, rx->got + 1, __ATOMIC_RELEASE);
	}
}

#define REPORT_FAIL(...) do { \
	snprintf(rd->report_err, sizeof(rd->report_err), __VA_ARGS__); \
	return; \
} while (0)

static void
check_failed(struct round *rd, struct cqpoll_cq *cq, const struct cqpoll_cq_failure *f)
{
	struct cqpoll_completion c[4];
	uint64_t t0;
	int r;

	if (cq != rd->cq[VICTIM])
		REPORT_FAIL("the callback named cq %p, not the victim", (void *)cq);
	if (f->state != CQPOLL_CQ_STATE_QUEUE_LOST || f->error != -EBADF)
		REPORT_FAIL("reported state %s error %d, want queue-lost %d",
			    cqpoll_cq_state_name(f->state), f->error, -EBADF);
	if ((r = cqpoll_poll_burst(cq, c, 4)) != -EBADF)
		REPORT_FAIL("poll of the failed cq returned %d", r);
	if ((r = cqpoll_poll_and_arm(cq, c, 4)) != -EBADF)
		REPORT_FAIL("poll-and-arm of the failed cq returned %d", r);
	t0 = test_now_ns();
	r = cqpoll_cq_wait(cq, 2000);
	if (r != -EBADF || test_now_ns() - t0 > 100000000ull)
		REPORT_FAIL("wait on the failed cq returned %d after %llu us", r,
			    (unsigned long long)((test_now_ns() - t0) / 1000));
	/*
	 * The producer's last use of the victim (its ring, in lose_ring()) is
	 * ordered before this destroy only through the kernel (the fd it closed
	 * is what failed the CQ), which ThreadSanitizer cannot see: wait for the
	 * flag it sets after that use, to order the free after it for TSan too.
	 * The dup2() has returned by now, so this waits a few instructions.
	 */
	while (!__atomic_load_n(&rd->lost, __ATOMIC_ACQUIRE))
		sched_yield();
	if ((r = cqpoll_cq_destroy(cq)) != 0)
		REPORT_FAIL("destroy of the failed cq returned %d", r);
	rd->cq[VICTIM] = NULL;
	rd->report_ok = 1;
}

static void
on_failure(struct cqpoll_group *g, struct cqpoll_cq *cq,
	   const struct cqpoll_cq_failure *f, void *arg)
{
	struct round *rd = arg;

	(void)g;
	__atomic_store_n(&rd->t_report, test_now_ns(), __ATOMIC_RELEASE);
	if (__atomic_add_fetch(&rd->reports, 1, __ATOMIC_ACQ_REL) == 1)
		check_failed(rd, cq, f);
}

static bool
all_delivered(struct round *rd, bool report)
{
	unsigned int q;

	for (q = 0; q < NCQ; q++) {
		uint64_t want = q == VICTIM ? VICTIM_OK : PER_CQ;

		if (__atomic_load_n(&rd->rx[q].got, __ATOMIC_ACQUIRE) < want)
			return false;
	}
	return !report || __atomic_load_n(&rd->reports, __ATOMIC_ACQUIRE) != 0;
}

/* The victim's ring fd closed under the poller, its number kept taken. */
static void
lose_ring(struct round *rd)
{
	int fd = cqpoll_uring_cq_ring(rd->cq[VICTIM])->ring_fd;

	__atomic_store_n(&rd->t_fail, test_now_ns(), __ATOMIC_RELEASE);
	if (dup2(rd->devnull, fd) < 0)
		fprintf(stderr, "dup2: %s\n", strerror(errno));
	__atomic_store_n(&rd->lost, 1, __ATOMIC_RELEASE);
}

static void *
producer(void *arg)
{
	struct round *rd = arg;
	uint64_t rng = 0x2545f4914f6cdd1dull ^ ((uint64_t)rd->win << 8 | rd->mode);
	uint64_t deadline;
	unsigned int q, s;
	int r;

	for (s = 0; s < PER_CQ; s++) {
		for (q = 0; q < NCQ; q++) {
			if (q == VICTIM && s >= VICTIM_OK)
				continue;
			while ((r = test_uring_nop(cqpoll_uring_cq_ring(rd->cq[q]), s, 0,
						   false, 0)) == -ENOSPC || r == -EBUSY)
				test_spin_ns(1000);
			if (r != 0)
				fprintf(stderr, "NOP on cq %u: %s\n", q, strerror(-r));
		}
		if (s + 1 == VICTIM_OK) {
			if (rd->win == WIN_ASLEEP)
				test_spin_ns(ASLEEP_PAUSE_NS);
			lose_ring(rd);
		}
		if (s % 8 == 7) {
			uint64_t x = test_rnd(&rng);

			if (x % 4 != 0) {
				test_spin_ns(x % 2000);
			} else {
				struct timespec ts = { 0, (long)(100000 + (x >> 8) % 300000) };

				nanosleep(&ts, NULL);
			}
		}
	}
	deadline = test_now_ns() + 4000000000ull;
	while (!all_delivered(rd, false) && !__atomic_load_n(&rd->group_done, __ATOMIC_ACQUIRE) &&
	       test_now_ns() < deadline)
		test_spin_ns(200000);
	/* Room for the report: a few nets, which a check that misses it spends. */
	deadline = test_now_ns() + (10ull * TIMEOUT_MS + 200) * 1000000ull;
	while (!all_delivered(rd, true) && !__atomic_load_n(&rd->group_done, __ATOMIC_ACQUIRE) &&
	       test_now_ns() < deadline)
		test_spin_ns(200000);
	cqpoll_group_stop(rd->g);
	return NULL;
}

static int
run_round(enum window win, enum cqpoll_group_mode mode)
{
	struct cqpoll_group_conf conf = { .mode = mode, .cold_us = 100,
					  .wait_timeout_ms = TIMEOUT_MS };
	struct round *rd = calloc(1, sizeof(*rd));
	uint64_t lat, bound;
	pthread_t th;
	unsigned int q;
	int failed = 0;

	TEST_ASSERT(rd != NULL, "calloc");
	rd->win = win;
	rd->mode = mode;
	rd->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	TEST_ASSERT(rd->devnull >= 0, "/dev/null");
	rd->g = cqpoll_group_create(&conf);
	TEST_ASSERT(rd->g != NULL, "group create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_register(rd->g, on_failure, rd), 0);
	for (q = 0; q < NCQ; q++) {
		struct cqpoll_uring_conf uc = { .size = 4096 };

		rd->cq[q] = cqpoll_uring_cq_create(&uc);
		TEST_ASSERT(rd->cq[q] != NULL, "uring cq: %s", strerror(errno));
		TEST_ASSERT_EQ(cqpoll_group_add(rd->g, rd->cq[q], on_comps, rd), 0);
	}
	TEST_ASSERT_EQ(pthread_create(&th, NULL, producer, rd), 0);
	rd->run_ret = cqpoll_group_run(rd->g);
	__atomic_store_n(&rd->group_done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);

	lat = rd->t_report > rd->t_fail ? rd->t_report - rd->t_fail : 0;
	/*
	 * Found by the net (contract.md, 11): at the first sleep that ends by
	 * timeout, which other members' events may put off; the bound
	 * failure-silent-sw asserts, three nets, with slack.
	 */
	bound = 3ull * TIMEOUT_MS * 1000000ull + SLACK_NS;
	printf("  %-7s %-10s: run %d, report after %llu us (bound %llu us), count %llu\n",
	       window_names[win], cqpoll_group_mode_name(mode), rd->run_ret,
	       (unsigned long long)(lat / 1000), (unsigned long long)(bound / 1000),
	       (unsigned long long)cqpoll_group_failed_count(rd->g));
	if (rd->run_ret != 0) {
		fprintf(stderr, "group run returned %d\n", rd->run_ret);
		failed = 1;
	}
	for (q = 0; q < NCQ; q++) {
		uint64_t want = q == VICTIM ? VICTIM_OK : PER_CQ;

		if (rd->rx[q].got != want || rd->rx[q].bad != 0) {
			fprintf(stderr, "cq %u: %llu of %llu delivered, %d bad\n", q,
				(unsigned long long)rd->rx[q].got,
				(unsigned long long)want, rd->rx[q].bad);
			failed = 1;
		}
	}
	if (rd->reports != 1 || !rd->report_ok) {
		fprintf(stderr, "%d failure reports; %s\n", rd->reports, rd->report_err);
		failed = 1;
	} else if (lat > bound) {
		fprintf(stderr, "failure reported after %llu us, bound %llu us\n",
			(unsigned long long)(lat / 1000), (unsigned long long)(bound / 1000));
		failed = 2;
	} else if (cqpoll_group_failed_count(rd->g) != 1 ||
		   cqpoll_group_count(rd->g) != NCQ - 1) {
		fprintf(stderr, "group: %llu failed, %d members left\n",
			(unsigned long long)cqpoll_group_failed_count(rd->g),
			cqpoll_group_count(rd->g));
		failed = 1;
	}
	cqpoll_group_destroy(rd->g);
	for (q = 0; q < NCQ; q++)
		if (rd->cq[q] != NULL)
			TEST_ASSERT_EQ(cqpoll_cq_destroy(rd->cq[q]), 0);
	close(rd->devnull);
	free(rd);
	return failed == 2 ? TEST_LATE : failed ? TEST_FAIL : TEST_PASS;
}

int
main(int argc, char **argv)
{
	static const enum cqpoll_group_mode modes[] = {
		CQPOLL_GROUP_MODE_BUSY, CQPOLL_GROUP_MODE_INTERRUPT,
		CQPOLL_GROUP_MODE_ADAPTIVE,
	};
	unsigned int w, m, failed = 0, rounds = 0;
	int a, only_w = -1, only_m = -1;
	bool expect_fail = false;
	char why[256];

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--expect-fail") == 0) {
			expect_fail = true;
		} else if (strncmp(argv[a], "--window=", 9) == 0) {
			for (w = 0; w < WIN_COUNT; w++)
				if (strcmp(argv[a] + 9, window_names[w]) == 0)
					only_w = (int)w;
		} else if (strncmp(argv[a], "--mode=", 7) == 0) {
			for (m = 0; m < 3; m++)
				if (strcmp(argv[a] + 7, cqpoll_group_mode_name(modes[m])) == 0)
					only_m = (int)m;
		} else {
			fprintf(stderr, "usage: %s [--window=device|asleep] "
				"[--mode=busy|interrupt|adaptive] [--expect-fail]\n",
				argv[0]);
			return 2;
		}
	}
	if (test_uring_probe(why, sizeof(why)) < 0) {
		printf("failure-ringloss-uring: skipped: %s\n", why);
		return TEST_SKIP;
	}
	for (w = 0; w < WIN_COUNT; w++) {
		if (only_w >= 0 && (int)w != only_w)
			continue;
		for (m = 0; m < 3; m++) {
			int r, t = 0;

			if (only_m >= 0 && (int)m != only_m)
				continue;
			rounds++;
			while ((r = run_round((enum window)w, modes[m])) == TEST_LATE &&
			       ++t < LATE_TRIES)
				printf("  late: again\n");
			if (r != TEST_PASS)
				failed++;
		}
	}
	printf("failure-ringloss-uring: %u rounds, %u failed%s\n", rounds, failed,
	       expect_fail ? " (negative control: failures expected)" : "");
	if (expect_fail)
		return failed != 0 ? TEST_PASS : TEST_FAIL;
	return failed != 0 ? TEST_FAIL : TEST_PASS;
}
