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
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_test.h"
#include "uring_test.h"

#define NCQ 8
#define VICTIM 5
#define VICTIM_OK 200
/* The safety-net period; the bound is two of them. */
#define PERIOD_MS 100
#define PERIOD_NS (PERIOD_MS * 1000000ull)
/* Traffic before the death (the victim armed and idle by then)... */
#define BEFORE_NS (PERIOD_NS * 3 / 2)
/* ... and after it: three periods more than the bound. */
#define AFTER_NS (5 * PERIOD_NS)
/* A round whose premise (the group kept busy) the machine broke. */
#define TEST_UNJUDGED 3
#define TRIES 5

enum kind { KIND_RINGLOSS = 0, KIND_FAIL, KIND_COUNT };
static const char *const kind_names[] = { "ringloss", "fail" };

struct cq_rx {
	uint64_t next;
	uint64_t got;
	uint64_t posted;
	int bad;
};

struct round {
	enum kind kind;
	enum cqpoll_group_mode mode;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq[NCQ];
	struct cq_rx rx[NCQ];
	int devnull;
	uint64_t t_fail;
	int killed;               /* the killing call has returned */
	uint64_t t_traffic_end;
	/* The group's sleeps ended by timeout: at the death, report, end. */
	uint64_t to_fail, to_report, to_end;
	int reports;
	uint64_t t_report;
	int report_ok;
	char report_err[256];
	int group_done;
	int run_ret;
};

static uint64_t
timeouts(struct round *rd)
{
	struct cqpoll_group_stats st;

	cqpoll_group_stats_get(rd->g, &st);
	return st.wakeups_timeout;
}

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
on_failure(struct cqpoll_group *g, struct cqpoll_cq *cq,
	   const struct cqpoll_cq_failure *f, void *arg)
{
	struct round *rd = arg;
	int want = rd->kind == KIND_RINGLOSS ? -EBADF : -EIO;
	struct cqpoll_completion c[4];
	int r;

	(void)g;
	__atomic_store_n(&rd->t_report, test_now_ns(), __ATOMIC_RELEASE);
	rd->to_report = timeouts(rd);
	if (__atomic_add_fetch(&rd->reports, 1, __ATOMIC_ACQ_REL) != 1)
		return;
	if (cq != rd->cq[VICTIM])
		REPORT_FAIL("the callback named cq %p, not the victim", (void *)cq);
	if (f->error != want)
		REPORT_FAIL("reported %s error %d, want %d", cqpoll_cq_state_name(f->state),
			    f->error, want);
	if ((r = cqpoll_poll_burst(cq, c, 4)) != want)
		REPORT_FAIL("poll of the failed cq returned %d", r);
	/*
	 * The killing thread may still be inside cqpoll_cq_fail() (its wake-up
	 * woke us): the CQ is destroyed only once that call returned.
	 */
	while (!__atomic_load_n(&rd->killed, __ATOMIC_ACQUIRE))
		test_spin_ns(1000);
	if ((r = cqpoll_cq_destroy(cq)) != 0)
		REPORT_FAIL("destroy of the failed cq returned %d", r);
	rd->cq[VICTIM] = NULL;
	rd->report_ok = 1;
}

static bool
all_delivered(struct round *rd)
{
	unsigned int q;

	for (q = 0; q < NCQ; q++)
		if (__atomic_load_n(&rd->rx[q].got, __ATOMIC_ACQUIRE) < rd->rx[q].posted)
			return false;
	return true;
}

static void
kill_victim(struct round *rd)
{
	rd->to_fail = timeouts(rd);
	__atomic_store_n(&rd->t_fail, test_now_ns(), __ATOMIC_RELEASE);
	if (rd->kind == KIND_RINGLOSS) {
		int fd = cqpoll_uring_cq_ring(rd->cq[VICTIM])->ring_fd;

		if (dup2(rd->devnull, fd) < 0)
			fprintf(stderr, "dup2: %s\n", strerror(errno));
	} else if (cqpoll_cq_fail(rd->cq[VICTIM], -EIO, "killed by the test") != 0) {
		fprintf(stderr, "cqpoll_cq_fail refused\n");
	}
	__atomic_store_n(&rd->killed, 1, __ATOMIC_RELEASE);
}

static void
post(struct round *rd, unsigned int q)
{
	int r;

	while ((r = test_uring_nop(cqpoll_uring_cq_ring(rd->cq[q]), rd->rx[q].posted, 0,
				   false, 0)) == -ENOSPC || r == -EBUSY)
		test_spin_ns(1000);
	if (r != 0)
		fprintf(stderr, "NOP on cq %u: %s\n", q, strerror(-r));
	else
		rd->rx[q].posted++;
}

static void *
producer(void *arg)
{
	struct round *rd = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)rd->kind << 8 | rd->mode);
	uint64_t t0 = test_now_ns(), now, deadline;
	bool killed = false;
	unsigned int q;

	/* The victim's work first, all of it: then it idles, armed. */
	while (rd->rx[VICTIM].posted < VICTIM_OK)
		post(rd, VICTIM);
	for (;;) {
		now = test_now_ns();
		if (!killed && now - t0 >= BEFORE_NS) {
			kill_victim(rd);
			killed = true;
			now = rd->t_fail;
		}
		if (killed && now - rd->t_fail >= AFTER_NS)
			break;
		for (q = 0; q < NCQ; q++)
			if (q != VICTIM)
				post(rd, q);
		/* Gaps of 20-220 us: a sleep never lasts a period. */
		test_spin_ns(20000 + test_rnd(&rng) % 200000);
	}
	rd->to_end = timeouts(rd);
	__atomic_store_n(&rd->t_traffic_end, test_now_ns(), __ATOMIC_RELEASE);
	deadline = test_now_ns() + 4000000000ull;
	while ((!all_delivered(rd) || !__atomic_load_n(&rd->reports, __ATOMIC_ACQUIRE)) &&
	       !__atomic_load_n(&rd->group_done, __ATOMIC_ACQUIRE) &&
	       test_now_ns() < deadline)
		test_spin_ns(200000);
	cqpoll_group_stop(rd->g);
	return NULL;
}

static int
run_round(enum kind kind, enum cqpoll_group_mode mode)
{
	struct cqpoll_group_conf conf = { .mode = mode, .wait_timeout_ms = PERIOD_MS };
	struct round *rd = calloc(1, sizeof(*rd));
	uint64_t lat, bound = 2 * PERIOD_NS;
	pthread_t th;
	unsigned int q;
	int failed = 0;

	TEST_ASSERT(rd != NULL, "calloc");
	rd->kind = kind;
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
	printf("  %-8s %-9s: report after %llu us (bound %llu us), %s the traffic ended, "
	       "%llu completions on the others\n",
	       kind_names[kind], cqpoll_group_mode_name(mode),
	       (unsigned long long)(lat / 1000), (unsigned long long)(bound / 1000),
	       rd->reports != 0 && rd->t_report < rd->t_traffic_end ? "before" : "after",
	       (unsigned long long)(rd->rx[0].got + rd->rx[1].got + rd->rx[2].got +
				    rd->rx[3].got + rd->rx[4].got + rd->rx[6].got +
				    rd->rx[7].got));
	if (rd->run_ret != 0) {
		fprintf(stderr, "group run returned %d\n", rd->run_ret);
		failed = 1;
	}
	/*
	 * The premise: no sleep ended by its timeout while the traffic flowed
	 * after the death (before the report, if it came during the traffic).
	 */
	{
		bool early = rd->reports != 0 && rd->t_report < rd->t_traffic_end;
		uint64_t to = (early ? rd->to_report : rd->to_end) - rd->to_fail;

		if (to != 0 && failed == 0) {
			printf("  %-8s %-9s: %llu sleeps timed out during the traffic: the "
			       "machine starved the submitter, round not judged\n",
			       kind_names[kind], cqpoll_group_mode_name(mode),
			       (unsigned long long)to);
			failed = 2;
		}
	}
	for (q = 0; q < NCQ; q++) {
		uint64_t want = q == VICTIM ? VICTIM_OK : rd->rx[q].posted;

		if (rd->rx[q].got != want || rd->rx[q].bad != 0 ||
		    (q == VICTIM && rd->rx[q].posted != VICTIM_OK)) {
			fprintf(stderr, "cq %u: %llu of %llu delivered (%llu posted), %d bad\n", q,
				(unsigned long long)rd->rx[q].got,
				(unsigned long long)want,
				(unsigned long long)rd->rx[q].posted, rd->rx[q].bad);
			failed = 1;
		}
	}
	if (rd->reports != 1 || !rd->report_ok) {
		fprintf(stderr, "%d failure reports; %s\n", rd->reports, rd->report_err);
		failed = 1;
	} else if (rd->t_report >= rd->t_traffic_end || lat > bound) {
		fprintf(stderr, "failure reported after %llu us, %s the traffic ended: bound %llu us\n",
			(unsigned long long)(lat / 1000),
			rd->t_report < rd->t_traffic_end ? "before" : "after",
			(unsigned long long)(bound / 1000));
		failed = 1;
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
	return failed == 2 ? TEST_UNJUDGED : failed ? TEST_FAIL : TEST_PASS;
}

int
main(int argc, char **argv)
{
	static const enum cqpoll_group_mode modes[] = {
		CQPOLL_GROUP_MODE_BUSY, CQPOLL_GROUP_MODE_INTERRUPT,
		CQPOLL_GROUP_MODE_ADAPTIVE,
	};
	unsigned int k, m, failed = 0, rounds = 0, unjudged = 0;
	int a, only_k = -1, only_m = -1;
	bool expect_fail = false;
	char why[256];

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--expect-fail") == 0) {
			expect_fail = true;
			continue;
		}
		if (strncmp(argv[a], "--kind=", 7) == 0) {
			for (k = 0; k < KIND_COUNT; k++)
				if (strcmp(argv[a] + 7, kind_names[k]) == 0)
					only_k = (int)k;
			if (only_k >= 0)
				continue;
		} else if (strncmp(argv[a], "--mode=", 7) == 0) {
			for (m = 0; m < 3; m++)
				if (strcmp(argv[a] + 7, cqpoll_group_mode_name(modes[m])) == 0)
					only_m = (int)m;
			if (only_m >= 0)
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
		for (m = 0; m < 3; m++) {
			if (only_m >= 0 && (int)m != only_m)
				continue;
			int r, t = 0;

			rounds++;
			while ((r = run_round((enum kind)k, modes[m])) == TEST_UNJUDGED &&
			       ++t < TRIES)
				;
			if (r == TEST_UNJUDGED)
				unjudged++;
			else if (r != TEST_PASS)
				failed++;
		}
	}
	printf("failure-busy-uring: %u rounds, %u failed, %u not judged%s\n", rounds,
	       failed, unjudged,
	       expect_fail ? " (negative control: failures expected)" : "");
	if (unjudged == rounds)
		return TEST_SKIP;
	if (expect_fail)
		return failed != 0 ? TEST_PASS : TEST_FAIL;
	return failed != 0 ? TEST_FAIL : TEST_PASS;
}
