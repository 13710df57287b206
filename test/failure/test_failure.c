/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A CQ that fails in a poll group (doc/guides/contract.md, section 11): a
 * group of 8 CQs under traffic, one of which fails mid-run, in the
 * poll-arm-sleep window (inside its arm, before or after the arm takes
 * effect) or from the device thread while the group runs or sleeps. The
 * other seven must deliver every completion exactly once and in order, the
 * failed one what it held before failing (flushed work, once each and in
 * order) and nothing after; the failure must reach the group's failure
 * callback once, at once when the device reports it, within the safety net
 * when it does not; the failed CQ's polls, arm and wait must return its
 * state's errno without blocking, and destroying it must return. Every mode.
 *
 * usage: test_failure --kind=overrun|fatal|flush|silent [--driver=sw|mlx5|verbs]
 *                     [--window=before-arm|after-arm|device|asleep]
 *                     [--expect-fail]
 *
 * sw: the emulated software device, failed inside the arm by its hooks or
 * by the device thread. mlx5: the mlx5 driver over the emulated mlx5
 * device, whose failures come only as async events of its verbs context
 * (the victim on a context of its own, the seven others sharing one channel
 * of another), failed by the device thread mid-traffic or while the group
 * sleeps: then the group must wake within 10 ms of the async event, not at
 * the safety net's 1 s. verbs: the verbs driver over verbs-emu devices (one
 * each), the same failures, and also inside the arm (verbs-emu's hooks).
 *
 * --expect-fail is the negative control's verdict: built against a
 * test-only library where a CQ's error stops the whole group (the old
 * behaviour, -DCQPOLL_MUTANT_NO_ISOLATION=1), or where the async fd is not in
 * the CQs' wait (-DCQPOLL_MUTANT_NO_ASYNC_WAIT=1), the checks must fail.
 */

#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_test.h"
#include "failure_harness.h"
#ifdef CQPOLL_TEST_VERBS
#include <infiniband/verbs.h>

#include "cqpoll_verbs.h"
#include "cqpoll_verbs_emu.h"
#endif
#ifdef CQPOLL_TEST_MLX5
#include "cqpoll_mlx5_emu.h"
#endif

#define NCQ FH_NCQ
#define VICTIM 3
#define PER_CQ 1000
#define VICTIM_OK (PER_CQ / 2)  /* completions the victim delivers before it fails */
#define NFLUSH 16

enum window {
	WIN_BEFORE_ARM = 0,  /* inside the arm, before it takes effect (sw) */
	WIN_AFTER_ARM,       /* inside the arm, after it took effect (sw) */
	WIN_DEVICE,          /* from the device thread, wherever the group is */
	WIN_ASLEEP,          /* from the device thread, the traffic paused */
	WIN_COUNT,
};

static const char *const window_names[] = {
	"before-arm", "after-arm", "device", "asleep",
};

/* How long the traffic pauses before a failure in WIN_ASLEEP. */
#define ASLEEP_PAUSE_NS 30000000ull
/* The group must wake on an async event within this (the bound). */
#define ASYNC_WAKE_NS 10000000ull

enum driver { DRV_SW = 0, DRV_MLX5, DRV_VERBS };

/*
 * A round whose only fault was a late report: tried again, up to three
 * times, since two cores shared with other work can stall any thread for
 * milliseconds. A wake-up that waits for the safety net is late every time.
 */
#define LATE_TRIES 3

struct kind {
	const char *name;
	int error;
	enum cqpoll_cq_state state;
	unsigned int nflush;
	uint32_t flags;
	int ibv_event;   /* enum ibv_event_type for mlx5; -1: none there */
};

#ifdef CQPOLL_TEST_VERBS
#define EV(x) (x)
#else
#define EV(x) (-1)
#endif

/* --expect-fail: a negative control. */
static bool expect_fail;

static const struct kind kinds[] = {
	{ "overrun", -EOVERFLOW, CQPOLL_CQ_STATE_OVERRUN, 0, 0, EV(IBV_EVENT_CQ_ERR) },
	{ "fatal", -ENODEV, CQPOLL_CQ_STATE_DEVICE_LOST, 0, 0, EV(IBV_EVENT_DEVICE_FATAL) },
	{ "flush", -ENETDOWN, CQPOLL_CQ_STATE_PORT_DOWN, NFLUSH, 0, EV(IBV_EVENT_PORT_ERR) },
	{ "silent", -ENODEV, CQPOLL_CQ_STATE_DEVICE_LOST, 0, CQPOLL_SW_EMU_FAIL_F_SILENT, -1 },
};

struct round {
	struct fh_round fr;  /* first: the harness's callbacks get it */
	enum driver drv;
	const struct kind *k;
	enum window win;
	enum cqpoll_group_mode mode;
	uint32_t timeout_ms;
	uint64_t flush_ids[NFLUSH];
	/* The producer stopped posting to the victim: the hook may fail it. */
	int handoff;
	int fired;           /* the failure was injected (once) */
	int injected;        /* ... and the injecting call has returned */
	int fired_in_window; /* by the arm hook */
#ifdef CQPOLL_TEST_MLX5
	/* mlx5: the victim's context and channel, and the others'. */
	struct ibv_context *ctx[2];
	struct ibv_comp_channel *ch[2];
#endif
};

static void
inject(struct round *rd)
{
	int r;

	__atomic_store_n(&rd->fr.t_fail, test_now_ns(), __ATOMIC_RELEASE);
#ifdef CQPOLL_TEST_MLX5
	if (rd->drv == DRV_MLX5)
		r = cqpoll_mlx5_emu_fail(rd->fr.cq[VICTIM], (enum ibv_event_type)rd->k->ibv_event,
					 rd->flush_ids, rd->k->nflush);
	else
#endif
#ifdef CQPOLL_TEST_VERBS
	if (rd->drv == DRV_VERBS)
		r = cqpoll_verbs_emu_fail(rd->fr.cq[VICTIM], (enum ibv_event_type)rd->k->ibv_event,
					  rd->flush_ids, rd->k->nflush);
	else
#endif
	r = cqpoll_sw_emu_fail(rd->fr.cq[VICTIM], rd->k->error, rd->flush_ids,
			       rd->k->nflush, rd->k->flags);
	if (r != 0)
		fprintf(stderr, "injecting the failure: %s\n", strerror(-r));
	__atomic_store_n(&rd->injected, 1, __ATOMIC_RELEASE);
}

/* Runs inside the victim's arm, on the group's thread. */
static void
arm_hook(void *arg)
{
	struct round *rd = arg;

	if (!__atomic_load_n(&rd->handoff, __ATOMIC_ACQUIRE) ||
	    __atomic_exchange_n(&rd->fired, 1, __ATOMIC_ACQ_REL))
		return;
	rd->fired_in_window = 1;
	inject(rd);
}

/* What an application does when told: look, then destroy the CQ. */
static void
check_failed(struct fh_round *fr, struct cqpoll_cq *cq, const struct cqpoll_cq_failure *f)
{
	struct round *rd = (struct round *)fr;
	struct cqpoll_cq_info info;
	uint64_t t0;
	int r;

	if (cq != fr->cq[VICTIM])
		FH_REPORT_FAIL(fr, "the callback named cq %p, not the victim", (void *)cq);
	if (f->state != rd->k->state || f->error != rd->k->error || f->cause == NULL)
		FH_REPORT_FAIL(fr, "reported state %s error %d cause %s, want %s %d",
			       cqpoll_cq_state_name(f->state), f->error,
			       f->cause != NULL ? f->cause : "NULL",
			       cqpoll_cq_state_name(rd->k->state), rd->k->error);
	if (cqpoll_cq_info_get(cq, &info) != 0 || info.state != rd->k->state)
		FH_REPORT_FAIL(fr, "cqpoll_cq_info_get: state %s", cqpoll_cq_state_name(info.state));
	if (fh_check_calls(fr, cq, rd->k->error, true) != 0)
		return;
	/*
	 * Out of the group already: the application owns it again. But the
	 * emulated device (the producer thread) may still be inside the call
	 * that failed it, writing the CQ's event fd after the core learned the
	 * state: a CQ is destroyed only once its device lets go of it.
	 */
	t0 = test_now_ns();
	while (!__atomic_load_n(&rd->injected, __ATOMIC_ACQUIRE)) {
		if (test_now_ns() - t0 > 5000000000ull) {
			FH_REPORT_FAIL(fr, "the injecting call did not return within 5 s");
		}
		sched_yield();
	}
	if ((r = cqpoll_cq_destroy(cq)) != 0)
		FH_REPORT_FAIL(fr, "destroy of the failed cq returned %d", r);
	fr->cq[VICTIM] = NULL;
	fr->report_ok = 1;
}

static int
post(struct round *rd, unsigned int q, const struct cqpoll_completion *c)
{
#ifdef CQPOLL_TEST_MLX5
	if (rd->drv == DRV_MLX5)
		return cqpoll_mlx5_emu_post(rd->fr.cq[q], c);
#endif
#ifdef CQPOLL_TEST_VERBS
	if (rd->drv == DRV_VERBS)
		return cqpoll_verbs_emu_cq_post(rd->fr.cq[q], c);
#endif
	return cqpoll_sw_emu_post(rd->fr.cq[q], c);
}

static void *
producer(void *arg)
{
	struct round *rd = arg;
	struct cqpoll_completion c;
	uint64_t rng = 0x2545f4914f6cdd1dull ^ ((uint64_t)rd->win << 8 | rd->mode);
	uint64_t deadline;
	unsigned int q;
	uint32_t s;
	int r;

	for (s = 0; s < PER_CQ; s++) {
		for (q = 0; q < NCQ; q++) {
			if (q == VICTIM && s >= VICTIM_OK)
				continue;
			memset(&c, 0, sizeof(c));
			c.wr_id = s;
			c.status = CQPOLL_STATUS_SUCCESS;
			while ((r = post(rd, q, &c)) == -ENOSPC)
				test_spin_ns(1000);
			if (r != 0)
				fprintf(stderr, "post to cq %u: %s\n", q, strerror(-r));
		}
		if (s + 1 == VICTIM_OK) {
			if (rd->win == WIN_ASLEEP) {
				/* Nothing posted for a while: the group sleeps (or is cold). */
				test_spin_ns(ASLEEP_PAUSE_NS);
			}
			if (rd->win == WIN_DEVICE || rd->win == WIN_ASLEEP) {
				__atomic_store_n(&rd->fired, 1, __ATOMIC_RELEASE);
				inject(rd);
			} else {
				/* From here the group's thread alone touches the victim. */
				__atomic_store_n(&rd->handoff, 1, __ATOMIC_RELEASE);
			}
		}
		if (s % 8 == 7)
			fh_gap(&rng);
	}
	/*
	 * The victim's last arm may have come before the handoff: then no arm
	 * follows, and the device fails it itself (counted as out of window).
	 */
	deadline = test_now_ns() + 200000000ull;
	while (!__atomic_load_n(&rd->fired, __ATOMIC_ACQUIRE) && test_now_ns() < deadline)
		test_spin_ns(100000);
	if (!__atomic_exchange_n(&rd->fired, 1, __ATOMIC_ACQ_REL))
		inject(rd);
	/*
	 * Everything delivered, then the report: it gets two safety-net
	 * periods and a half-second more, which a group that never hears of
	 * the failure would spend asleep (a control waits less: failure
	 * harness).
	 */
	fh_drain(&rd->fr, 4000000000ull,
		 fh_report_wait((2ull * rd->timeout_ms + 500) * 1000000ull, expect_fail), NULL);
	return NULL;
}

static struct cqpoll_cq *
create_cq(struct round *rd, unsigned int q)
{
	struct cqpoll_sw_emu_conf cc;

#ifdef CQPOLL_TEST_MLX5
	if (rd->drv == DRV_MLX5) {
		struct cqpoll_mlx5_emu_conf mc;
		unsigned int i = q == VICTIM ? 0 : 1;

		if (rd->ctx[i] == NULL) {
			rd->ctx[i] = cqpoll_verbs_emu_open(NULL, 0);
			rd->ch[i] = rd->ctx[i] != NULL ?
				cqpoll_verbs_emu_ibv_create_comp_channel(rd->ctx[i]) : NULL;
			if (rd->ch[i] == NULL)
				return NULL;
		}
		memset(&mc, 0, sizeof(mc));
		mc.size = 4096;
		mc.arm = q % 2 ? CQPOLL_ARM_EDGE : CQPOLL_ARM_LEVEL;
		mc.channel = rd->ch[i];
		/* Eight device threads share two cores with the test: look less often. */
		mc.doorbell_poll_us = 200;
		return cqpoll_mlx5_emu_cq_create(&mc);
	}
#endif
#ifdef CQPOLL_TEST_VERBS
	if (rd->drv == DRV_VERBS) {
		/* A device of its own each: a device fatal kills this one only. */
		struct cqpoll_verbs_emu_conf vc = { .size = 4096 };

		return cqpoll_verbs_emu_cq_create(&vc);
	}
#endif
	(void)rd; /* the sw CQ needs nothing of the round */
	memset(&cc, 0, sizeof(cc));
	cc.size = 4096;
	cc.arm = (enum cqpoll_arm_semantics)(q % 3);
	return cqpoll_sw_emu_cq_create(&cc);
}

static int
run_round(enum driver drv, const struct kind *k, enum window win,
	  enum cqpoll_group_mode mode)
{
	struct cqpoll_group_conf conf = { .mode = mode, .cold_us = 100 };
	struct round *rd = calloc(1, sizeof(*rd));
	uint64_t bound, acked0 = 0;
	unsigned int q, i;
	int failed;

	TEST_ASSERT(rd != NULL, "calloc");
	rd->drv = drv;
	rd->k = k;
	rd->win = win;
	rd->mode = mode;
	fh_init(&rd->fr, VICTIM, VICTIM_OK, VICTIM_OK + k->nflush, PER_CQ, check_failed);
	/* A long net when the device reports: a report must beat it by far. */
	rd->timeout_ms = (k->flags & CQPOLL_SW_EMU_FAIL_F_SILENT) ? 20 : 1000;
	conf.wait_timeout_ms = rd->timeout_ms;
	for (i = 0; i < NFLUSH; i++)
		rd->flush_ids[i] = VICTIM_OK + i;
	for (q = 0; q < NCQ; q++) {
		rd->fr.cq[q] = create_cq(rd, q);
		TEST_ASSERT(rd->fr.cq[q] != NULL, "cq create: %s", strerror(errno));
	}
	if (fh_group_setup(&rd->fr, &conf) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT_EQ(cqpoll_group_failure_cb_register(rd->fr.g, fh_on_failure, rd), -EEXIST);
#ifdef CQPOLL_TEST_VERBS
	if (drv == DRV_VERBS && (win == WIN_BEFORE_ARM || win == WIN_AFTER_ARM))
		TEST_ASSERT_EQ(cqpoll_verbs_emu_set_hook(cqpoll_verbs_cq_ibv(rd->fr.cq[VICTIM]),
			win == WIN_BEFORE_ARM ? CQPOLL_VERBS_EMU_HOOK_BEFORE_ARM :
			CQPOLL_VERBS_EMU_HOOK_AFTER_ARM, arm_hook, rd), 0);
#endif
	if (drv == DRV_SW && (win == WIN_BEFORE_ARM || win == WIN_AFTER_ARM))
		TEST_ASSERT_EQ(cqpoll_sw_emu_set_hook(rd->fr.cq[VICTIM],
			win == WIN_BEFORE_ARM ? CQPOLL_SW_HOOK_BEFORE_ARM :
			CQPOLL_SW_HOOK_AFTER_ARM, arm_hook, rd), 0);
#ifdef CQPOLL_TEST_VERBS
	acked0 = cqpoll_verbs_emu_async_acked();
#endif
	if (fh_run(&rd->fr, producer, rd) != TEST_PASS)
		return TEST_FAIL;
	/*
	 * Reported by the device: at once, far within the 1 s net. Silent:
	 * found by the safety net (a polling group's runs once per timeout
	 * over CQs cold for a whole timeout: two), with slack for sanitizers.
	 */
	bound = (k->flags & CQPOLL_SW_EMU_FAIL_F_SILENT) ?
		(3ull * rd->timeout_ms + 100) * 1000000ull : 100000000ull;
	/*
	 * Asleep on a dead device: its async event must wake the group within
	 * 10 ms, not its 1 s net (the bound, for a group that sleeps).
	 */
	if (win == WIN_ASLEEP && drv != DRV_SW && k->state == CQPOLL_CQ_STATE_DEVICE_LOST &&
	    mode != CQPOLL_GROUP_MODE_BUSY)
		bound = ASYNC_WAKE_NS;
	printf("  %-8s %-10s %-9s: run %d, report after %llu us%s, count %llu\n",
	       k->name, window_names[win], cqpoll_group_mode_name(mode), rd->fr.run_ret,
	       (unsigned long long)(fh_latency(&rd->fr) / 1000),
	       win <= WIN_AFTER_ARM && !rd->fired_in_window ? " (out of window)" : "",
	       (unsigned long long)cqpoll_group_failed_count(rd->fr.g));
	failed = fh_judge(&rd->fr, bound);
#ifdef CQPOLL_TEST_VERBS
	/* Every async event raised was acknowledged (one per round). */
	if (drv != DRV_SW && rd->fr.reports == 1 &&
	    cqpoll_verbs_emu_async_acked() != acked0 + 1) {
		fprintf(stderr, "%llu async events acknowledged, want 1\n",
			(unsigned long long)(cqpoll_verbs_emu_async_acked() - acked0));
		failed = TEST_FAIL;
	}
#else
	(void)acked0;
#endif
	if (fh_destroy(&rd->fr) != TEST_PASS)
		failed = TEST_FAIL;
#ifdef CQPOLL_TEST_MLX5
	for (q = 0; q < 2; q++) {
		if (rd->ch[q] != NULL)
			TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_comp_channel(rd->ch[q]), 0);
		if (rd->ctx[q] != NULL)
			TEST_ASSERT_EQ(cqpoll_verbs_emu_close(rd->ctx[q]), 0);
	}
#endif
	free(rd);
	return failed;
}

struct round_args {
	enum driver drv;
	const struct kind *k;
	enum window win;
	enum cqpoll_group_mode mode;
};

static int
round_again(void *ctx)
{
	struct round_args *ra = ctx;

	return run_round(ra->drv, ra->k, ra->win, ra->mode);
}

int
main(int argc, char **argv)
{
	const struct kind *k = NULL;
	char name[64];
	const char *driver = "sw";
	enum driver drv = DRV_SW;
	unsigned int w, m, i, failed = 0, rounds = 0;
	int a, only = -1;

	for (a = 1; a < argc; a++) {
		if (strncmp(argv[a], "--kind=", 7) == 0) {
			for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
				if (strcmp(argv[a] + 7, kinds[i].name) == 0)
					k = &kinds[i];
		} else if (strncmp(argv[a], "--driver=", 9) == 0) {
			driver = argv[a] + 9;
		} else if (strcmp(argv[a], "--expect-fail") == 0) {
			expect_fail = true;
		} else if (fh_parse_choice(argv[a], "--window=", window_names, WIN_COUNT,
					   &only)) {
			continue;
		} else {
			k = NULL;
			break;
		}
	}
	if (strcmp(driver, "mlx5") == 0)
		drv = DRV_MLX5;
	else if (strcmp(driver, "verbs") == 0)
		drv = DRV_VERBS;
	if (k == NULL || (drv == DRV_SW && strcmp(driver, "sw") != 0)) {
		fprintf(stderr, "usage: %s --kind=overrun|fatal|flush|silent [--driver=sw|mlx5|verbs] [--window=W] [--expect-fail]\n",
			argv[0]);
		return 2;
	}
#ifndef CQPOLL_TEST_MLX5
	if (drv == DRV_MLX5) {
		printf("failure-%s-mlx5: the mlx5 driver is not in this build\n", k->name);
		return TEST_SKIP;
	}
#endif
#ifndef CQPOLL_TEST_VERBS
	if (drv == DRV_VERBS) {
		printf("failure-%s-verbs: the verbs driver is not in this build\n", k->name);
		return TEST_SKIP;
	}
#endif
	if (drv != DRV_SW && k->ibv_event < 0) {
		fprintf(stderr, "%s: no such failure on mlx5 (its device always reports)\n",
			k->name);
		return 2;
	}
	for (w = 0; w < WIN_COUNT; w++) {
		/* The mlx5 arm is the driver's doorbell: no hook inside it. */
		if ((drv == DRV_MLX5 && w < WIN_DEVICE) || (only >= 0 && (int)w != only))
			continue;
		for (m = 0; m < FH_NMODES; m++) {
			struct round_args ra = { drv, k, (enum window)w, fh_modes[m] };

			rounds++;
			if (fh_retry_late(round_again, &ra, LATE_TRIES) != TEST_PASS)
				failed++;
			/*
			 * A negative control is caught by its first failed
			 * round: the rounds after it would only wait out
			 * their safety nets (seconds each) to say so again.
			 */
			if (expect_fail && failed != 0)
				goto done;
		}
	}
done:
	snprintf(name, sizeof(name), "failure-%s-%s", k->name, driver);
	return fh_exit(name, rounds, failed, -1, expect_fail);
}
