/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_TEST_FAILURE_HARNESS_H
#define CQPOLL_TEST_FAILURE_HARNESS_H

/*
 * What the failure tests (test/failure/: a CQ that fails in a group of
 * FH_NCQ, contract.md section 11) share; each test keeps its device, its
 * producer and how its victim dies.
 *
 * A round: the test fills the CQs (fh_round::cq), the completions each
 * must deliver (want) and how the failure report is checked (check), then
 * fh_group_setup() and fh_run() with its producer thread; the producer
 * kills the victim (fh_round::t_fail), then fh_drain() and stops the
 * group. fh_on_comps() checks every CQ's completions arrive once and in
 * order (the victim's past victim_ok as flushed), fh_on_failure() counts the
 * reports and checks the first. fh_judge() gives the round's verdict:
 * everything delivered, one report within the bound, the victim out of the
 * group.
 *
 * Built into each failure test's program (test/failure/meson.build), so
 * that a negative control's test-only library serves its calls too.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cqpoll.h"
#include "cqpoll_group.h"

#define FH_NCQ 8
/* fh_judge(): a round whose only fault was a late report. */
#define FH_LATE 2

struct fh_rx {
	uint64_t next;   /* next id expected */
	uint64_t got;    /* completions delivered (atomic: the producer reads) */
	uint64_t want;   /* completions to deliver, set by the test */
	int bad;         /* out of order, duplicate or wrong status */
};

struct fh_round;

/* Check a failure report and destroy the failed CQ (set report_ok then). */
typedef void (*fh_check_fn)(struct fh_round *fr, struct cqpoll_cq *cq,
			    const struct cqpoll_cq_failure *f);

struct fh_round {
	struct cqpoll_group *g;
	struct cqpoll_cq *cq[FH_NCQ];
	struct fh_rx rx[FH_NCQ];
	unsigned int victim;
	/* The victim's completions past this many are its flushed work. */
	uint64_t victim_ok;
	fh_check_fn check;
	/* Called first at each report (NULL: none), on the group's thread. */
	void (*on_report)(struct fh_round *fr);
	uint64_t t_fail;     /* when the victim was killed (atomic) */
	int reports;
	uint64_t t_report;
	int report_ok;
	char report_err[256];
	int group_done;
	int run_ret;
};

/* Say why the report is wrong (the first reason only) and return. */
#define FH_REPORT_FAIL(fr, ...) do { \
	snprintf((fr)->report_err, sizeof((fr)->report_err), __VA_ARGS__); \
	return; \
} while (0)

/* The group's modes, in the order the tests run them. */
#define FH_NMODES 3
extern const enum cqpoll_group_mode fh_modes[FH_NMODES];

/*
 * A round's victim (its first @p victim_ok completions succeed, the rest
 * are flushed), what it must deliver (@p victim_want) and each other CQ
 * (@p others_want), and the check of the report.
 */
void fh_init(struct fh_round *fr, unsigned int victim, uint64_t victim_ok,
	     uint64_t victim_want, uint64_t others_want, fh_check_fn check);

/* The completion callback of every CQ (arg: the fh_round). */
void fh_on_comps(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
		 unsigned int n, void *arg);
/* The group's failure callback (arg: the fh_round). */
void fh_on_failure(struct cqpoll_group *g, struct cqpoll_cq *cq,
		   const struct cqpoll_cq_failure *f, void *arg);

/*
 * The failed CQ's calls return @p error without blocking: its poll and, if
 * @p arm_and_wait, its poll-and-arm and a wait (within 100 ms). 0, or -1
 * with report_err set.
 */
int fh_check_calls(struct fh_round *fr, struct cqpoll_cq *cq, int error,
		   bool arm_and_wait);

/* Every CQ delivered its want, and (if @p report) the failure was reported. */
bool fh_all_delivered(struct fh_round *fr, bool report);

/*
 * The producer's end: wait up to @p deliver_ns for everything to be
 * delivered, then up to @p report_ns more for the report (0: within the
 * same @p deliver_ns), each ending early once the group returned, calling
 * @p idle (NULL: none) in between; then stop the group.
 */
void fh_drain(struct fh_round *fr, uint64_t deliver_ns, uint64_t report_ns,
	      void (*idle)(struct fh_round *fr));

/*
 * The most a negative control (--expect-fail) waits for a report that its
 * test would wait @p report_ns for: five times the longest bound a failure
 * test judges a report by (100 ms). A report later than its bound fails the
 * round all the same (late, and late again on every retry), so a control
 * caught at this wait is caught by the test's own; waiting out the safety
 * nets (seconds) would only say so later.
 */
#define FH_CONTROL_REPORT_NS 500000000ull
static inline uint64_t
fh_report_wait(uint64_t report_ns, bool expect_fail)
{
	return expect_fail && report_ns > FH_CONTROL_REPORT_NS ?
		FH_CONTROL_REPORT_NS : report_ns;
}

/* A pause of the producer: mostly a short spin, one in four long enough to sleep. */
void fh_gap(uint64_t *rng);

/*
 * Create the group with @p conf, register the failure callback, add the
 * CQs. TEST_PASS or TEST_FAIL (said why).
 */
int fh_group_setup(struct fh_round *fr, const struct cqpoll_group_conf *conf);

/* Run the group on this thread with @p producer (arg: @p arg) on another. */
int fh_run(struct fh_round *fr, void *(*producer)(void *), void *arg);

/* The report's latency after the kill (0 if none came after it). */
uint64_t fh_latency(const struct fh_round *fr);

/*
 * The round's verdict: the run returned 0, every CQ delivered its want with
 * nothing bad, one good report within @p bound_ns (UINT64_MAX: any), the
 * group down one member. TEST_PASS, TEST_FAIL or FH_LATE (only late).
 */
int fh_judge(struct fh_round *fr, uint64_t bound_ns);

/* Destroy the group and the CQs left. TEST_PASS or TEST_FAIL. */
int fh_destroy(struct fh_round *fr);

/*
 * "--mode=NAME": *only set to its index in fh_modes. 1 if @p arg starts with
 * "--mode=" (a NAME not among them leaves *only as it was), else 0.
 */
int fh_parse_mode(const char *arg, int *only);

/*
 * "PREFIXNAME" with NAME one of @p names (@p n of them): *only set to its
 * index. 1 if @p arg starts with @p prefix (a NAME not among them leaves
 * *only as it was), else 0.
 */
int fh_parse_choice(const char *arg, const char *prefix, const char *const *names,
		    unsigned int n, int *only);

/*
 * Run @p round (with @p ctx) again while it says FH_LATE, at most @p tries
 * times in all, saying so; its last result.
 */
int fh_retry_late(int (*round)(void *ctx), void *ctx, unsigned int tries);

/*
 * Every window (@p nwin; @p only_w >= 0: that one) in every mode (@p only_m
 * >= 0: that one) by @p round, each again while only late (fh_retry_late()),
 * counted in *rounds and *failed. TEST_SKIP as soon as a round skips, else
 * TEST_PASS.
 */
int fh_sweep(int (*round)(unsigned int win, enum cqpoll_group_mode mode),
	     unsigned int nwin, int only_w, int only_m, unsigned int tries,
	     unsigned int *rounds, unsigned int *failed);

/*
 * The program's exit: a line "NAME: R rounds, F failed[, U not judged]";
 * TEST_PASS when the outcome is the expected one (@p expect_fail: a failed
 * round). @p unjudged < 0: not counted; all rounds unjudged: TEST_SKIP.
 */
int fh_exit(const char *name, unsigned int rounds, unsigned int failed,
	    int unjudged, bool expect_fail);

#endif /* CQPOLL_TEST_FAILURE_HARNESS_H */
