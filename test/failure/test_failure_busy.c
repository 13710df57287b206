/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * failure-busy-uring: a member that dies silently while the others keep
 * the group busy (doc/guides/contract.md, section 11, "Found within a
 * bound"). Eight io_uring CQs in one group; a submitter thread keeps NOPs
 * flowing on seven of them with gaps far shorter than the safety-net period,
 * so that the group never has a sleep that times out; the eighth, idle and
 * armed, dies with nothing to say so:
 *   - ringloss: its ring fd is closed under the poller (its number made to
 *     name /dev/null with dup2(), so nothing else can take it);
 *   - fail: cqpoll_cq_fail() from the submitter thread.
 * In busy, interrupt and adaptive mode, the failure callback must be called
 * once, with the right state, within two safety-net periods of the death,
 * while the seven still have traffic; every completion of the seven must be
 * delivered once and in order, the victim's VICTIM_OK and nothing after.
 *
 * usage: test_failure_busy [--kind=ringloss|fail] [--mode=busy|interrupt|adaptive]
 *                          [--expect-fail]
 *
 * A round counts only if the traffic did keep the group busy: no sleep of
 * the group ended by its timeout between the death and the report (or the
 * end of the traffic), as its counters say. On a machine loaded enough to
 * starve the submitter for a period, the net finds the death at such a
 * timeout whatever the health check does: the round is run again (up to
 * five times), and said to be unjudged if it never holds.
 *
 * --expect-fail is the negative control's verdict: built against a
 * test-only library without the periodic health check
 * (-DCQPOLL_MUTANT_NO_HEALTH_CHECK=1, and for "fail" also without the
 * wake-up of cqpoll_cq_fail(), -DCQPOLL_MUTANT_NO_FAIL_WAKE=1), the death is
 * seen only once the traffic stops (the first quiet timeout), and the checks
 * must fail.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_test.h"
#include "failure_harness.h"
#include "uring_test.h"

#define NCQ FH_NCQ
#define VICTIM 5
#define VICTIM_OK 200
/* The safety-net period; the bound is two of them. */
#define PERIOD_MS 100
#define PERIOD_NS (PERIOD_MS * 1000000ull)
/* Traffic before the death (the victim armed and idle by then)... */
#define BEFORE_NS (PERIOD_NS * 3 / 2)
/* ... and after it: three periods more than the bound... */
#define AFTER_NS (5 * PERIOD_NS)
/*
 * ... or, once the death is reported, two periods more: the others keep
 * flowing past the report, and a second report has two health checks to
 * show up in. A round whose report never comes runs all of AFTER_NS.
 */
#define AFTER_REPORT_NS (2 * PERIOD_NS)
/* A round whose premise (the group kept busy) the machine broke. */
#define TEST_UNJUDGED 3
#define TRIES 5

enum kind { KIND_RINGLOSS = 0, KIND_FAIL, KIND_COUNT };
static const char *const kind_names[] = { "ringloss", "fail" };

struct round {
	struct fh_round fr;       /* first: the harness's callbacks get it */
	enum kind kind;
	enum cqpoll_group_mode mode;
	uint64_t posted[NCQ];
	int devnull;
	int killed;               /* the killing call has returned */
	uint64_t t_traffic_end;
	/* The group's sleeps ended by timeout: at the death, report, end. */
	uint64_t to_fail, to_report, to_end;
};

static uint64_t
timeouts(struct round *rd)
{
	struct cqpoll_group_stats st;

	cqpoll_group_stats_get(rd->fr.g, &st);
	return st.wakeups_timeout;
}

static void
on_report(struct fh_round *fr)
{
	struct round *rd = (struct round *)fr;

	rd->to_report = timeouts(rd);
}

static void
check_failed(struct fh_round *fr, struct cqpoll_cq *cq, const struct cqpoll_cq_failure *f)
{
	struct round *rd = (struct round *)fr;
	int want = rd->kind == KIND_RINGLOSS ? -EBADF : -EIO;
	int r;

	if (cq != fr->cq[VICTIM])
		FH_REPORT_FAIL(fr, "the callback named cq %p, not the victim", (void *)cq);
	if (f->error != want)
		FH_REPORT_FAIL(fr, "reported %s error %d, want %d",
			       cqpoll_cq_state_name(f->state), f->error, want);
	if (fh_check_calls(fr, cq, want, false) != 0)
		return;
	/*
	 * The killing thread may still be inside cqpoll_cq_fail() (its wake-up
	 * woke us): the CQ is destroyed only once that call returned.
	 */
	while (!__atomic_load_n(&rd->killed, __ATOMIC_ACQUIRE))
		test_spin_ns(1000);
	if ((r = cqpoll_cq_destroy(cq)) != 0)
		FH_REPORT_FAIL(fr, "destroy of the failed cq returned %d", r);
	fr->cq[VICTIM] = NULL;
	fr->report_ok = 1;
}

static void
kill_victim(struct round *rd)
{
	rd->to_fail = timeouts(rd);
	__atomic_store_n(&rd->fr.t_fail, test_now_ns(), __ATOMIC_RELEASE);
	if (rd->kind == KIND_RINGLOSS) {
		int fd = cqpoll_uring_cq_ring(rd->fr.cq[VICTIM])->ring_fd;

		if (dup2(rd->devnull, fd) < 0)
			fprintf(stderr, "dup2: %s\n", strerror(errno));
	} else if (cqpoll_cq_fail(rd->fr.cq[VICTIM], -EIO, "killed by the test") != 0) {
		fprintf(stderr, "cqpoll_cq_fail refused\n");
	}
	__atomic_store_n(&rd->killed, 1, __ATOMIC_RELEASE);
}

static void
post(struct round *rd, unsigned int q)
{
	int r;

	while ((r = test_uring_nop(cqpoll_uring_cq_ring(rd->fr.cq[q]), rd->posted[q], 0,
				   false, 0)) == -ENOSPC || r == -EBUSY)
		test_spin_ns(1000);
	if (r != 0)
		fprintf(stderr, "NOP on cq %u: %s\n", q, strerror(-r));
	else
		rd->posted[q]++;
}

static void *
producer(void *arg)
{
	struct round *rd = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)rd->kind << 8 | rd->mode);
	uint64_t t0 = test_now_ns(), now;
	bool killed = false;
	unsigned int q;

	/* The victim's work first, all of it: then it idles, armed. */
	while (rd->posted[VICTIM] < VICTIM_OK)
		post(rd, VICTIM);
	for (;;) {
		now = test_now_ns();
		if (!killed && now - t0 >= BEFORE_NS) {
			kill_victim(rd);
			killed = true;
			now = rd->fr.t_fail;
		}
		if (killed && now - rd->fr.t_fail >= AFTER_NS)
			break;
		if (killed && __atomic_load_n(&rd->fr.reports, __ATOMIC_ACQUIRE) != 0) {
			uint64_t t_rep = __atomic_load_n(&rd->fr.t_report, __ATOMIC_ACQUIRE);

			/* now may predate a report that came since. */
			if (now > t_rep && now - t_rep >= AFTER_REPORT_NS)
				break;
		}
		for (q = 0; q < NCQ; q++)
			if (q != VICTIM)
				post(rd, q);
		/* Gaps of 20-220 us: a sleep never lasts a period. */
		test_spin_ns(20000 + test_rnd(&rng) % 200000);
	}
	rd->to_end = timeouts(rd);
	__atomic_store_n(&rd->t_traffic_end, test_now_ns(), __ATOMIC_RELEASE);
	for (q = 0; q < NCQ; q++)
		if (q != VICTIM)
			__atomic_store_n(&rd->fr.rx[q].want, rd->posted[q], __ATOMIC_RELEASE);
	/* Delivery and report within 4 s in all. */
	fh_drain(&rd->fr, 4000000000ull, 0, NULL);
	return NULL;
}

/*
 * The premise: no sleep ended by its timeout while the traffic flowed after
 * the death (before the report, if it came during the traffic).
 */
static bool
kept_busy(struct round *rd)
{
	bool early = rd->fr.reports != 0 && rd->fr.t_report < rd->t_traffic_end;
	uint64_t to = (early ? rd->to_report : rd->to_end) - rd->to_fail;

	if (to == 0)
		return true;
	printf("  %-8s %-9s: %llu sleeps timed out during the traffic: the "
	       "machine starved the submitter, round not judged\n",
	       kind_names[rd->kind], cqpoll_group_mode_name(rd->mode),
	       (unsigned long long)to);
	return false;
}

static int
judge(struct round *rd)
{
	struct fh_round *fr = &rd->fr;
	uint64_t lat = fh_latency(fr), bound = 2 * PERIOD_NS, others = 0;
	bool during = fr->reports != 0 && fr->t_report < rd->t_traffic_end, busy;
	unsigned int q;
	int r;

	for (q = 0; q < NCQ; q++)
		if (q != VICTIM)
			others += fr->rx[q].got;
	printf("  %-8s %-9s: report after %llu us (bound %llu us), %s the traffic ended, "
	       "%llu completions on the others\n",
	       kind_names[rd->kind], cqpoll_group_mode_name(rd->mode),
	       (unsigned long long)(lat / 1000), (unsigned long long)(bound / 1000),
	       during ? "before" : "after", (unsigned long long)others);
	busy = fr->run_ret != 0 || kept_busy(rd);
	/* Late is failed here: the traffic leaves the net no quiet timeout. */
	r = fh_judge(fr, UINT64_MAX);
	if (rd->posted[VICTIM] != VICTIM_OK) {
		fprintf(stderr, "cq %u: %llu posted, want %u\n", VICTIM,
			(unsigned long long)rd->posted[VICTIM], VICTIM_OK);
		r = TEST_FAIL;
	}
	if (r == TEST_PASS && (!during || lat > bound)) {
		fprintf(stderr, "failure reported after %llu us, %s the traffic ended: bound %llu us\n",
			(unsigned long long)(lat / 1000), during ? "before" : "after",
			(unsigned long long)(bound / 1000));
		r = TEST_FAIL;
	}
	/* A round that passed only where the net could have found the death. */
	return r == TEST_PASS && !busy ? TEST_UNJUDGED : r;
}

static int
run_round(enum kind kind, enum cqpoll_group_mode mode)
{
	struct cqpoll_group_conf conf = { .mode = mode, .wait_timeout_ms = PERIOD_MS };
	struct round *rd = calloc(1, sizeof(*rd));
	unsigned int q;
	int r;

	TEST_ASSERT(rd != NULL, "calloc");
	rd->kind = kind;
	rd->mode = mode;
	/* The others' want is what they were sent, known when the traffic ends. */
	fh_init(&rd->fr, VICTIM, VICTIM_OK, VICTIM_OK, UINT64_MAX, check_failed);
	rd->fr.on_report = on_report;
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
	r = judge(rd);
	if (fh_destroy(&rd->fr) != TEST_PASS)
		r = TEST_FAIL;
	close(rd->devnull);
	free(rd);
	return r;
}

int
main(int argc, char **argv)
{
	unsigned int k, m, failed = 0, rounds = 0, unjudged = 0;
	int a, only_k = -1, only_m = -1;
	bool expect_fail = false;
	char why[256];

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--expect-fail") == 0) {
			expect_fail = true;
			continue;
		}
		if (fh_parse_choice(argv[a], "--kind=", kind_names, KIND_COUNT, &only_k)) {
			if (only_k >= 0)
				continue;
		} else if (fh_parse_mode(argv[a], &only_m) && only_m >= 0) {
			continue;
		}
		fprintf(stderr, "usage: %s [--kind=ringloss|fail] "
			"[--mode=busy|interrupt|adaptive] [--expect-fail]\n", argv[0]);
		return 2;
	}
	if (test_uring_probe(why, sizeof(why)) < 0) {
		printf("failure-busy-uring: skipped: %s\n", why);
		return TEST_SKIP;
	}
	for (k = 0; k < KIND_COUNT; k++) {
		if (only_k >= 0 && (int)k != only_k)
			continue;
		for (m = 0; m < FH_NMODES; m++) {
			if (only_m >= 0 && (int)m != only_m)
				continue;
			int r, t = 0;

			rounds++;
			while ((r = run_round((enum kind)k, fh_modes[m])) == TEST_UNJUDGED &&
			       ++t < TRIES)
				;
			if (r == TEST_UNJUDGED)
				unjudged++;
			else if (r != TEST_PASS)
				failed++;
		}
	}
	return fh_exit("failure-busy-uring", rounds, failed, (int)unjudged, expect_fail);
}
