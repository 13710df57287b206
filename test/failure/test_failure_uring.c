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
 * armed and empty (-DCQPOLL_MUTANT_NO_NET_ARM_CHECK=1), a ring lost while its
 * CQ is armed is never found: the traffic is delivered, nothing is
 * reported, and the checks must fail.
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_test.h"
#include "failure_harness.h"
#include "uring_test.h"

#define NCQ FH_NCQ
#define VICTIM 3
#define PER_CQ 1000
#define VICTIM_OK (PER_CQ / 2)
#define ASLEEP_PAUSE_NS 30000000ull
/* The net: short, since a ring loss waits for it at worst. */
#define TIMEOUT_MS 20
/* Scheduling slack on two shared cores (and sanitizers) over one net. */
#define SLACK_NS 100000000ull
#define LATE_TRIES 3

enum window { WIN_DEVICE = 0, WIN_ASLEEP, WIN_COUNT };
static const char *const window_names[] = { "device", "asleep" };

struct round {
	struct fh_round fr;       /* first: the harness's callbacks get it */
	enum window win;
	enum cqpoll_group_mode mode;
	int devnull;
	int lost;                 /* the loss was made (the dup2 returned) */
};

static void
check_failed(struct fh_round *fr, struct cqpoll_cq *cq, const struct cqpoll_cq_failure *f)
{
	struct round *rd = (struct round *)fr;
	int r;

	if (cq != fr->cq[VICTIM])
		FH_REPORT_FAIL(fr, "the callback named cq %p, not the victim", (void *)cq);
	if (f->state != CQPOLL_CQ_STATE_QUEUE_LOST || f->error != -EBADF)
		FH_REPORT_FAIL(fr, "reported state %s error %d, want queue-lost %d",
			       cqpoll_cq_state_name(f->state), f->error, -EBADF);
	if (fh_check_calls(fr, cq, -EBADF, true) != 0)
		return;
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
		FH_REPORT_FAIL(fr, "destroy of the failed cq returned %d", r);
	fr->cq[VICTIM] = NULL;
	fr->report_ok = 1;
}

/* The victim's ring fd closed under the poller, its number kept taken. */
static void
lose_ring(struct round *rd)
{
	int fd = cqpoll_uring_cq_ring(rd->fr.cq[VICTIM])->ring_fd;

	__atomic_store_n(&rd->fr.t_fail, test_now_ns(), __ATOMIC_RELEASE);
	if (dup2(rd->devnull, fd) < 0)
		fprintf(stderr, "dup2: %s\n", strerror(errno));
	__atomic_store_n(&rd->lost, 1, __ATOMIC_RELEASE);
}

static void *
producer(void *arg)
{
	struct round *rd = arg;
	uint64_t rng = 0x2545f4914f6cdd1dull ^ ((uint64_t)rd->win << 8 | rd->mode);
	unsigned int q, s;
	int r;

	for (s = 0; s < PER_CQ; s++) {
		for (q = 0; q < NCQ; q++) {
			if (q == VICTIM && s >= VICTIM_OK)
				continue;
			while ((r = test_uring_nop(cqpoll_uring_cq_ring(rd->fr.cq[q]), s, 0,
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
		if (s % 8 == 7)
			fh_gap(&rng);
	}
	/* Room for the report: a few nets, which a check that misses it spends. */
	fh_drain(&rd->fr, 4000000000ull, (10ull * TIMEOUT_MS + 200) * 1000000ull, NULL);
	return NULL;
}

static int
run_round(unsigned int win, enum cqpoll_group_mode mode)
{
	struct cqpoll_group_conf conf = { .mode = mode, .cold_us = 100,
					  .wait_timeout_ms = TIMEOUT_MS };
	struct round *rd = calloc(1, sizeof(*rd));
	uint64_t bound;
	unsigned int q;
	int r;

	TEST_ASSERT(rd != NULL, "calloc");
	rd->win = (enum window)win;
	rd->mode = mode;
	fh_init(&rd->fr, VICTIM, VICTIM_OK, VICTIM_OK, PER_CQ, check_failed);
	rd->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	TEST_ASSERT(rd->devnull >= 0, "/dev/null");
	for (q = 0; q < NCQ; q++) {
		struct cqpoll_uring_conf uc = { .size = 4096 };

		rd->fr.cq[q] = cqpoll_uring_cq_create(&uc);
		TEST_ASSERT(rd->fr.cq[q] != NULL, "uring cq: %s", strerror(errno));
	}
	if (fh_group_setup(&rd->fr, &conf) != TEST_PASS ||
	    fh_run(&rd->fr, producer, rd) != TEST_PASS)
		return TEST_FAIL;
	/*
	 * Found by the net (contract.md, 11): at the first sleep that ends by
	 * timeout, which other members' events may put off; the bound
	 * failure-silent-sw asserts, three nets, with slack.
	 */
	bound = 3ull * TIMEOUT_MS * 1000000ull + SLACK_NS;
	printf("  %-7s %-10s: run %d, report after %llu us (bound %llu us), count %llu\n",
	       window_names[win], cqpoll_group_mode_name(mode), rd->fr.run_ret,
	       (unsigned long long)(fh_latency(&rd->fr) / 1000),
	       (unsigned long long)(bound / 1000),
	       (unsigned long long)cqpoll_group_failed_count(rd->fr.g));
	r = fh_judge(&rd->fr, bound);
	if (fh_destroy(&rd->fr) != TEST_PASS)
		r = TEST_FAIL;
	close(rd->devnull);
	free(rd);
	return r;
}

int
main(int argc, char **argv)
{
	unsigned int failed = 0, rounds = 0;
	int a, only_w = -1, only_m = -1;
	bool expect_fail = false;
	char why[256];

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--expect-fail") == 0)
			expect_fail = true;
		else if (!fh_parse_choice(argv[a], "--window=", window_names, WIN_COUNT, &only_w) &&
			 !fh_parse_mode(argv[a], &only_m)) {
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
	fh_sweep(run_round, WIN_COUNT, only_w, only_m, LATE_TRIES, &rounds, &failed);
	return fh_exit("failure-ringloss-uring", rounds, failed, -1, expect_fail);
}
