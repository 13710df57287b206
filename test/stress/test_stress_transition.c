/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stress of the transition into sleep: a device thread posts bursts with gaps
 * of random length, so that completions land all around the consumer's
 * transitions, while the software device injects delays into the race windows
 * (before and after the arm takes effect, before an entry becomes visible) and
 * spurious and duplicated events. The consumer cycles busy poll ->
 * poll-and-arm -> sleep -> event.
 *
 * Checked: every completion delivered exactly once and in order, and no lost
 * wake-up, by two independent detectors: the device's oracle (a sleep began
 * while a completion was visible with no event pending or due), and a black
 * box one (a sleep ended by its safety-net timeout found a completion that was
 * visible before the sleep began).
 *
 * With --naive the consumer arms and sleeps without the final poll, and with
 * --expect-lost the test passes only if a lost wake-up is detected: the
 * negative control that shows this harness can fail.
 *
 * --dev=verbs-emu runs the same on the verbs driver over the emulated verbs
 * device (edge arm only), with the same faults.
 *
 * Usage: test_stress_transition [--dev=sw|verbs-emu]
 *        --arm=level|edge|report-missed
 *        [--keeps-armed] [--transitions=N] [--naive] [--expect-lost]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"
#ifdef CQPOLL_TEST_VERBS
#include "cqpoll_verbs_emu.h"
#endif

#define BURST 32
#define WAIT_TIMEOUT_MS 100
/* In naive mode, stop once this many losses prove the point. */
#define NAIVE_ENOUGH 5
/*
 * In naive mode, one transition in AIM_EVERY waits, between its empty poll
 * and its arm, for the device's next post (at most AIM_MAX_NS). Random
 * timing hits the window only while both threads run at once: under CI's
 * own background builds (load average 8 on 2 CPUs) the naive edge arm was
 * caught 0 times in 500000 transitions. Aimed, the race is hit whatever the
 * scheduler does; the real transition, which polls after its arm, is never
 * aimed (it has no such window to aim at).
 */
#define AIM_EVERY 1000
#define AIM_MAX_NS 20000000ull

struct shared {
	struct cqpoll_cq *cq;
	int (*post)(struct cqpoll_cq *cq, const struct cqpoll_completion *c);
	uint64_t consumed;  /* written by the consumer, read by the device */
	uint64_t posted_now; /* completions posted so far, for the naive aim */
	uint64_t posted;    /* final count, written by the device at exit */
	int stop;
	uint64_t drain_stalls; /* device waited over 10 ms for a drain */
};

static void *
device_thread(void *arg)
{
	struct shared *sh = arg;
	uint64_t seq = 0, rng = 0x243f6a8885a308d3ull, t0;
	unsigned int burst, i;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		burst = 1 + (unsigned int)(test_rnd(&rng) % 4);
		for (i = 0; i < burst; i++) {
			struct cqpoll_completion c = { .wr_id = seq, .byte_len = 8 };
			int r;

			while ((r = sh->post(sh->cq, &c)) == -ENOSPC)
				;
			if (r != 0) {
				fprintf(stderr, "post: %d\n", r);
				abort();
			}
			seq++;
			__atomic_store_n(&sh->posted_now, seq, __ATOMIC_RELEASE);
			if (test_rnd(&rng) % 4 == 0)
				test_spin_ns(test_rnd(&rng) % 2000);
		}
		/* Let the consumer drain, so that what follows is a gap. */
		t0 = test_now_ns();
		while (__atomic_load_n(&sh->consumed, __ATOMIC_ACQUIRE) != seq &&
		       !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE))
			;
		if (test_now_ns() - t0 > 10000000)
			sh->drain_stalls++;
		/* Gaps from none to longer than a wake-up. */
		test_spin_ns(test_rnd(&rng) % (test_rnd(&rng) % 2 ? 5000 : 30000));
	}
	__atomic_store_n(&sh->posted, seq, __ATOMIC_RELEASE);
	return NULL;
}

struct result {
	uint64_t transitions, order_errors, timeout_lost, consumed;
	struct cqpoll_cq_stats st;
};

struct completion_check {
	uint64_t expected;
	uint64_t order_errors;
};

static void
check_order(struct completion_check *chk, const struct cqpoll_completion *c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (c[i].wr_id != chk->expected)
			chk->order_errors++;
		chk->expected = c[i].wr_id + 1;
	}
}

#ifdef CQPOLL_TEST_VERBS
/* The same device faults on the verbs emulator (which is edge-only). */
static struct cqpoll_cq *
verbs_emu_create(const struct cqpoll_sw_emu_conf *sw)
{
	struct cqpoll_verbs_emu_conf conf = {
		.size = sw->size,
		.faults = {
			.visibility_delay_ns = sw->faults.visibility_delay_ns,
			.visibility_delay_pct = sw->faults.visibility_delay_pct,
			.arm_delay_ns = sw->faults.arm_delay_ns,
			.arm_delay_pct = sw->faults.arm_delay_pct,
			.spurious_event_pct = sw->faults.spurious_event_pct,
			.duplicate_event_pct = sw->faults.duplicate_event_pct,
			.seed = sw->faults.seed,
		},
	};

	return cqpoll_verbs_emu_cq_create(&conf);
}
#else
/* Built without the verbs driver: no such device. */
static struct cqpoll_cq *
verbs_emu_create(const struct cqpoll_sw_emu_conf *sw)
{
	(void)sw;
	errno = ENODEV;
	return NULL;
}
#define cqpoll_verbs_emu_cq_post cqpoll_sw_emu_post
#endif

static int
run(enum cqpoll_arm_semantics arm, int keeps_armed, uint64_t transitions,
    int naive, int verbs_emu, struct result *res)
{
	struct cqpoll_sw_emu_conf conf = {
		.size = 256,
		.arm = arm,
		.faults = {
			.visibility_delay_ns = 1000, .visibility_delay_pct = 20,
			.arm_delay_ns = 5000, .arm_delay_pct = 50,
			.spurious_event_pct = 1, .duplicate_event_pct = 1,
			.report_missed_keeps_armed = (uint32_t)keeps_armed,
			.seed = 0x1234567,
		},
	};
	struct completion_check chk = { 0 };
	struct cqpoll_completion c[BURST];
	struct shared sh = { 0 };
	pthread_t dev;
	uint64_t rng = 0x9e3779b97f4a7c15ull, sleep_start, aim = 0, aim_start;
	int r, w, i;

	sh.cq = verbs_emu ? verbs_emu_create(&conf) : cqpoll_sw_emu_cq_create(&conf);
	sh.post = verbs_emu ? cqpoll_verbs_emu_cq_post : cqpoll_sw_emu_post;
	TEST_ASSERT(sh.cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(pthread_create(&dev, NULL, device_thread, &sh), 0);
	memset(res, 0, sizeof(*res));
	while (res->transitions < transitions) {
		/* Busy phase of random length: the transition starts anywhere. */
		for (i = (int)(test_rnd(&rng) % 4); i > 0; i--) {
			r = cqpoll_poll_burst(sh.cq, c, BURST);
			TEST_ASSERT(r >= 0, "poll: %d", r);
			check_order(&chk, c, r);
			res->consumed += (uint64_t)r;
			__atomic_store_n(&sh.consumed, res->consumed, __ATOMIC_RELEASE);
		}
		if (naive) {
			r = cqpoll_poll_burst(sh.cq, c, BURST);
			if (r == 0 && ++aim % AIM_EVERY == 0) {
				aim_start = test_now_ns();
				while (__atomic_load_n(&sh.posted_now, __ATOMIC_ACQUIRE) ==
				       res->consumed &&
				       test_now_ns() - aim_start < AIM_MAX_NS)
					sched_yield();
			}
			if (r == 0)
				TEST_ASSERT_EQ(cqpoll_cq_arm_naive(sh.cq), 0);
		} else {
			r = cqpoll_poll_and_arm(sh.cq, c, BURST);
		}
		TEST_ASSERT(r >= 0, "poll: %d", r);
		if (r > 0) {
			check_order(&chk, c, r);
			res->consumed += (uint64_t)r;
			__atomic_store_n(&sh.consumed, res->consumed, __ATOMIC_RELEASE);
			continue;
		}
		sleep_start = test_now_ns();
		w = cqpoll_cq_wait(sh.cq, WAIT_TIMEOUT_MS);
		TEST_ASSERT(w >= 0, "wait: %d", w);
		res->transitions++;
		if (w == 0) {
			/* Only the timeout woke us: was something already there? */
			r = cqpoll_poll_burst(sh.cq, c, BURST);
			TEST_ASSERT(r >= 0, "poll: %d", r);
			if (r > 0 && c[0].timestamp < sleep_start)
				res->timeout_lost++;
			check_order(&chk, c, r);
			res->consumed += (uint64_t)r;
			__atomic_store_n(&sh.consumed, res->consumed, __ATOMIC_RELEASE);
		}
		if (naive) {
			cqpoll_cq_stats_get(sh.cq, &res->st);
			if (res->st.lost_wakeups >= NAIVE_ENOUGH &&
			    res->timeout_lost >= NAIVE_ENOUGH)
				break;
		}
	}
	__atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev, NULL);
	/* Everything posted is in the CQ now: drain it. */
	while ((r = cqpoll_poll_burst(sh.cq, c, BURST)) > 0) {
		check_order(&chk, c, r);
		res->consumed += (uint64_t)r;
	}
	TEST_ASSERT_EQ(r, 0);
	res->order_errors = chk.order_errors;
	cqpoll_cq_stats_get(sh.cq, &res->st);
	printf("dev=%s arm=%s keeps_armed=%d naive=%d transitions=%" PRIu64 " posted=%" PRIu64
	       " consumed=%" PRIu64 " order_errors=%" PRIu64 " lost_oracle=%" PRIu64
	       " lost_timeout=%" PRIu64 " waits=%" PRIu64 " wait_timeouts=%" PRIu64
	       " events=%" PRIu64 " spurious=%" PRIu64 " arms=%" PRIu64
	       " missed_reports=%" PRIu64 " drain_stalls=%" PRIu64 "\n",
	       verbs_emu ? "verbs-emu" : "sw", cqpoll_arm_semantics_name(arm), keeps_armed, naive, res->transitions,
	       sh.posted, res->consumed, res->order_errors, res->st.lost_wakeups,
	       res->timeout_lost, res->st.waits, res->st.wait_timeouts, res->st.events,
	       res->st.spurious_events, res->st.arms, res->st.missed_reports,
	       sh.drain_stalls);
	TEST_ASSERT_EQ(res->consumed, sh.posted);
	cqpoll_cq_destroy(sh.cq);
	return TEST_PASS;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "arm", required_argument, NULL, 'a' },
		{ "keeps-armed", no_argument, NULL, 'k' },
		{ "transitions", required_argument, NULL, 't' },
		{ "naive", no_argument, NULL, 'n' },
		{ "expect-lost", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	enum cqpoll_arm_semantics arm = CQPOLL_ARM_EDGE;
	uint64_t transitions = 1000000;
	int keeps = 0, naive = 0, expect_lost = 0, verbs_emu = 0, o;
	struct result res;
	char *end;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			if (strcmp(optarg, "verbs-emu") == 0) {
				verbs_emu = 1;
			} else if (strcmp(optarg, "sw") != 0) {
				fprintf(stderr, "bad --dev: %s\n", optarg);
				return TEST_FAIL;
			}
			break;
		case 'a':
			if (cqpoll_arm_semantics_parse(optarg, &arm) != 0) {
				fprintf(stderr, "bad --arm: %s\n", optarg);
				return TEST_FAIL;
			}
			break;
		case 'k':
			keeps = 1;
			break;
		case 't':
			errno = 0;
			transitions = strtoull(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || transitions == 0) {
				fprintf(stderr, "bad --transitions: %s\n", optarg);
				return TEST_FAIL;
			}
			break;
		case 'n':
			naive = 1;
			break;
		case 'x':
			expect_lost = 1;
			break;
		default:
			return TEST_FAIL;
		}
	}
	if (verbs_emu && (arm != CQPOLL_ARM_EDGE || keeps)) {
		fprintf(stderr, "verbs-emu: verbs arms are edge only\n");
		return TEST_FAIL;
	}
	if (run(arm, keeps, transitions, naive, verbs_emu, &res) != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT_EQ(res.order_errors, 0);
	if (expect_lost) {
		TEST_ASSERT(res.st.lost_wakeups > 0 && res.timeout_lost > 0,
			    "the negative control must be caught by both detectors");
		printf("negative control: lost wake-ups detected, as expected\n");
		return TEST_PASS;
	}
	TEST_ASSERT_EQ(res.st.lost_wakeups, 0);
	TEST_ASSERT_EQ(res.timeout_lost, 0);
	TEST_ASSERT(res.transitions >= transitions, "too few transitions");
	return TEST_PASS;
}
