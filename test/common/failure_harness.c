/* SPDX-License-Identifier: BSD-3-Clause */
/* The failure tests' shared part: see failure_harness.h. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cqpoll_test.h"
#include "failure_harness.h"

const enum cqpoll_group_mode fh_modes[FH_NMODES] = {
	CQPOLL_GROUP_MODE_BUSY, CQPOLL_GROUP_MODE_INTERRUPT,
	CQPOLL_GROUP_MODE_ADAPTIVE,
};

void
fh_init(struct fh_round *fr, unsigned int victim, uint64_t victim_ok,
	uint64_t victim_want, uint64_t others_want, fh_check_fn check)
{
	unsigned int q;

	fr->victim = victim;
	fr->victim_ok = victim_ok;
	fr->check = check;
	for (q = 0; q < FH_NCQ; q++)
		fr->rx[q].want = q == victim ? victim_want : others_want;
}

void
fh_on_comps(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	    unsigned int n, void *arg)
{
	struct fh_round *fr = arg;
	struct fh_rx *rx;
	unsigned int i, q;

	for (q = 0; q < FH_NCQ && fr->cq[q] != cq; q++)
		;
	if (q == FH_NCQ)
		return;
	rx = &fr->rx[q];
	for (i = 0; i < n; i++) {
		uint8_t want = q == fr->victim && rx->next >= fr->victim_ok ?
			CQPOLL_STATUS_WR_FLUSH_ERR : CQPOLL_STATUS_SUCCESS;
		/* mlx5 names the request by its WQE counter (contract.md, 10). */
		uint64_t id = (c[i].flags & CQPOLL_COMPLETION_F_WQE_COUNTER) ?
			c[i].wqe_counter : c[i].wr_id;

		if (id != rx->next || c[i].status != want) {
			if (rx->bad++ == 0)
				fprintf(stderr, "cq %u: got id %llu status %u, want %llu status %u\n",
					q, (unsigned long long)id, c[i].status,
					(unsigned long long)rx->next, want);
		}
		rx->next = id + 1;
		__atomic_store_n(&rx->got, rx->got + 1, __ATOMIC_RELEASE);
	}
}

void
fh_on_failure(struct cqpoll_group *g, struct cqpoll_cq *cq,
	      const struct cqpoll_cq_failure *f, void *arg)
{
	struct fh_round *fr = arg;

	(void)g;
	__atomic_store_n(&fr->t_report, test_now_ns(), __ATOMIC_RELEASE);
	if (fr->on_report != NULL)
		fr->on_report(fr);
	if (__atomic_add_fetch(&fr->reports, 1, __ATOMIC_ACQ_REL) == 1)
		fr->check(fr, cq, f);
}

int
fh_check_calls(struct fh_round *fr, struct cqpoll_cq *cq, int error,
	       bool arm_and_wait)
{
	struct cqpoll_completion c[4];
	uint64_t t0;
	int r;

	if ((r = cqpoll_poll_burst(cq, c, 4)) != error) {
		snprintf(fr->report_err, sizeof(fr->report_err),
			 "poll of the failed cq returned %d", r);
		return -1;
	}
	if (!arm_and_wait)
		return 0;
	if ((r = cqpoll_poll_and_arm(cq, c, 4)) != error) {
		snprintf(fr->report_err, sizeof(fr->report_err),
			 "poll-and-arm of the failed cq returned %d", r);
		return -1;
	}
	t0 = test_now_ns();
	r = cqpoll_cq_wait(cq, 2000);
	if (r != error || test_now_ns() - t0 > 100000000ull) {
		snprintf(fr->report_err, sizeof(fr->report_err),
			 "wait on the failed cq returned %d after %llu us", r,
			 (unsigned long long)((test_now_ns() - t0) / 1000));
		return -1;
	}
	return 0;
}

bool
fh_all_delivered(struct fh_round *fr, bool report)
{
	unsigned int q;

	for (q = 0; q < FH_NCQ; q++)
		if (__atomic_load_n(&fr->rx[q].got, __ATOMIC_ACQUIRE) < fr->rx[q].want)
			return false;
	return !report || __atomic_load_n(&fr->reports, __ATOMIC_ACQUIRE) != 0;
}

void
fh_drain(struct fh_round *fr, uint64_t deliver_ns, uint64_t report_ns,
	 void (*idle)(struct fh_round *fr))
{
	uint64_t deadline = test_now_ns() + deliver_ns;

	while (!fh_all_delivered(fr, false) &&
	       !__atomic_load_n(&fr->group_done, __ATOMIC_ACQUIRE) &&
	       test_now_ns() < deadline) {
		if (idle != NULL)
			idle(fr);
		test_spin_ns(200000);
	}
	if (report_ns != 0)
		deadline = test_now_ns() + report_ns;
	while (!fh_all_delivered(fr, true) &&
	       !__atomic_load_n(&fr->group_done, __ATOMIC_ACQUIRE) &&
	       test_now_ns() < deadline)
		test_spin_ns(200000);
	cqpoll_group_stop(fr->g);
}

void
fh_gap(uint64_t *rng)
{
	uint64_t x = test_rnd(rng);
	struct timespec ts;

	if (x % 4 != 0) {
		test_spin_ns(x % 2000);
		return;
	}
	/* Long enough for interrupt and adaptive groups to fall asleep. */
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(100000 + (x >> 8) % 300000);
	nanosleep(&ts, NULL);
}

int
fh_group_setup(struct fh_round *fr, const struct cqpoll_group_conf *conf)
{
	unsigned int q;

	fr->g = cqpoll_group_create(conf);
	TEST_ASSERT(fr->g != NULL, "group create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_register(fr->g, fh_on_failure, fr), 0);
	for (q = 0; q < FH_NCQ; q++)
		TEST_ASSERT_EQ(cqpoll_group_add(fr->g, fr->cq[q], fh_on_comps, fr), 0);
	return TEST_PASS;
}

int
fh_run(struct fh_round *fr, void *(*producer)(void *), void *arg)
{
	pthread_t th;

	TEST_ASSERT_EQ(pthread_create(&th, NULL, producer, arg), 0);
	fr->run_ret = cqpoll_group_run(fr->g);
	__atomic_store_n(&fr->group_done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	return TEST_PASS;
}

uint64_t
fh_latency(const struct fh_round *fr)
{
	return fr->t_report > fr->t_fail ? fr->t_report - fr->t_fail : 0;
}

int
fh_judge(struct fh_round *fr, uint64_t bound_ns)
{
	uint64_t lat = fh_latency(fr);
	int failed = 0;
	unsigned int q;

	if (fr->run_ret != 0) {
		fprintf(stderr, "group run returned %d: %s\n", fr->run_ret,
			strerror(-fr->run_ret));
		failed = 1;
	}
	for (q = 0; q < FH_NCQ; q++) {
		if (fr->rx[q].got != fr->rx[q].want || fr->rx[q].bad != 0) {
			fprintf(stderr, "cq %u: %llu of %llu delivered, %d bad\n", q,
				(unsigned long long)fr->rx[q].got,
				(unsigned long long)fr->rx[q].want, fr->rx[q].bad);
			failed = 1;
		}
	}
	if (fr->reports != 1 || !fr->report_ok) {
		fprintf(stderr, "%d failure reports; %s\n", fr->reports, fr->report_err);
		failed = 1;
	} else if (lat > bound_ns) {
		fprintf(stderr, "failure reported after %llu us, bound %llu us\n",
			(unsigned long long)(lat / 1000), (unsigned long long)(bound_ns / 1000));
		/* Only late: the caller may try again (a loaded machine's hiccup). */
		if (failed == 0)
			failed = FH_LATE;
	} else if (cqpoll_group_failed_count(fr->g) != 1 ||
		   cqpoll_group_count(fr->g) != FH_NCQ - 1) {
		fprintf(stderr, "group: %llu failed, %d members left\n",
			(unsigned long long)cqpoll_group_failed_count(fr->g),
			cqpoll_group_count(fr->g));
		failed = 1;
	}
	return failed == FH_LATE ? FH_LATE : failed ? TEST_FAIL : TEST_PASS;
}

int
fh_destroy(struct fh_round *fr)
{
	unsigned int q;

	cqpoll_group_destroy(fr->g);
	fr->g = NULL;
	for (q = 0; q < FH_NCQ; q++)
		if (fr->cq[q] != NULL)
			TEST_ASSERT_EQ(cqpoll_cq_destroy(fr->cq[q]), 0);
	return TEST_PASS;
}

int
fh_parse_mode(const char *arg, int *only)
{
	unsigned int m;

	if (strncmp(arg, "--mode=", 7) != 0)
		return 0;
	for (m = 0; m < FH_NMODES; m++)
		if (strcmp(arg + 7, cqpoll_group_mode_name(fh_modes[m])) == 0)
			*only = (int)m;
	return 1;
}

int
fh_parse_choice(const char *arg, const char *prefix, const char *const *names,
		unsigned int n, int *only)
{
	size_t len = strlen(prefix);
	unsigned int i;

	if (strncmp(arg, prefix, len) != 0)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(arg + len, names[i]) == 0)
			*only = (int)i;
	return 1;
}

struct sweep_round {
	int (*round)(unsigned int win, enum cqpoll_group_mode mode);
	unsigned int win;
	enum cqpoll_group_mode mode;
};

static int
sweep_round(void *ctx)
{
	struct sweep_round *sr = ctx;

	return sr->round(sr->win, sr->mode);
}

int
fh_sweep(int (*round)(unsigned int win, enum cqpoll_group_mode mode),
	 unsigned int nwin, int only_w, int only_m, unsigned int tries,
	 unsigned int *rounds, unsigned int *failed)
{
	unsigned int w, m;
	int r;

	for (w = 0; w < nwin; w++) {
		if (only_w >= 0 && (int)w != only_w)
			continue;
		for (m = 0; m < FH_NMODES; m++) {
			struct sweep_round sr = { round, w, fh_modes[m] };

			if (only_m >= 0 && (int)m != only_m)
				continue;
			(*rounds)++;
			r = fh_retry_late(sweep_round, &sr, tries);
			if (r == TEST_SKIP)
				return TEST_SKIP;
			if (r != TEST_PASS)
				(*failed)++;
		}
	}
	return TEST_PASS;
}

int
fh_retry_late(int (*round)(void *ctx), void *ctx, unsigned int tries)
{
	unsigned int t = 0;
	int r;

	while ((r = round(ctx)) == FH_LATE && ++t < tries)
		printf("  late: again\n");
	return r;
}

int
fh_exit(const char *name, unsigned int rounds, unsigned int failed,
	int unjudged, bool expect_fail)
{
	char more[64] = "";

	if (unjudged >= 0)
		snprintf(more, sizeof(more), ", %d not judged", unjudged);
	printf("%s: %u rounds, %u failed%s%s\n", name, rounds, failed, more,
	       expect_fail ? " (negative control: failures expected)" : "");
	if (unjudged >= 0 && (unsigned int)unjudged == rounds)
		return TEST_SKIP;
	if (expect_fail)
		return failed != 0 ? TEST_PASS : TEST_FAIL;
	return failed != 0 ? TEST_FAIL : TEST_PASS;
}
