/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stress of the transition into sleep on the emulated mlx5 device, the design
 * of test_stress_transition.c: a producer thread writes bursts of CQEs with
 * gaps of random length, the consumer cycles busy poll -> poll-and-arm ->
 * sleep -> event, and the device thread reads arm doorbells on its own.
 *
 * Checked: every completion once and in order (wqe_counter), and no lost
 * wake-up by two detectors: the device oracle, and a sleep ended by its
 * timeout that finds a CQE written before the sleep began.
 *
 * --naive arms and sleeps without the core's transition (after a random
 * pause between the last poll and the arm, as preemption would make); with --arm=edge
 * (lazy arm) it must lose wake-ups, and --expect-lost passes only if both
 * detectors catch it. With --arm=level the naive transition is safe on mlx5.
 *
 * Usage: test_mlx5_stress --arm=level|edge [--transitions=N] [--naive]
 *        [--expect-lost] [--cqe128] [--compress] [--enhanced]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#include "cq_event_test.h"
#include "cqpoll_test.h"

#define BURST 32
#define WAIT_TIMEOUT_MS 50
#define NAIVE_ENOUGH 10
/* How long after a timeout a late event may still come. */
#define LATE_EVENT_MS 200

struct shared {
	struct cqpoll_cq *cq;
	uint64_t consumed;
	uint64_t posted;
	int stop;
};

static void *
producer(void *arg)
{
	struct shared *sh = arg;
	uint64_t seq = 0, rng = 0x243f6a8885a308d3ull;
	unsigned int burst, i;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		burst = 1 + (unsigned int)(test_rnd(&rng) % 4);
		for (i = 0; i < burst; i++) {
			struct cqpoll_completion c = {
				.wr_id = seq, .byte_len = 8, .opcode = CQPOLL_OP_RECV,
			};
			int r;

			while ((r = cqpoll_mlx5_emu_post(sh->cq, &c)) == -ENOSPC)
				;
			if (r != 0) {
				fprintf(stderr, "post: %d\n", r);
				abort();
			}
			seq++;
			if (test_rnd(&rng) % 4 == 0)
				test_spin_ns(test_rnd(&rng) % 2000);
		}
		while (__atomic_load_n(&sh->consumed, __ATOMIC_ACQUIRE) != seq &&
		       !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE))
			;
		test_spin_ns(test_rnd(&rng) % (test_rnd(&rng) % 2 ? 5000 : 60000));
	}
	__atomic_store_n(&sh->posted, seq, __ATOMIC_RELEASE);
	return NULL;
}

struct result {
	uint64_t transitions, order_errors, timeout_lost, timeout_late, consumed, expected;
	struct cqpoll_cq_stats st;
};

static void
take(struct result *res, struct shared *sh, const struct cqpoll_completion *c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (c[i].wqe_counter != (res->expected & 0xffff))
			res->order_errors++;
		res->expected++;
	}
	res->consumed += (uint64_t)n;
	__atomic_store_n(&sh->consumed, res->consumed, __ATOMIC_RELEASE);
}

static int
run(enum cqpoll_arm_semantics arm, uint64_t transitions, int naive, uint32_t flags,
    struct result *res)
{
	struct cqpoll_mlx5_emu_conf conf = {
		.size = 256, .arm = arm, .flags = flags,
	};
	struct cqpoll_completion c[BURST];
	struct shared sh = { 0 };
	uint64_t rng = 0x9e3779b97f4a7c15ull, sleep_start;
	pthread_t th;
	int r, w, i;

	memset(res, 0, sizeof(*res));
	sh.cq = cqpoll_mlx5_emu_cq_create(&conf);
	TEST_ASSERT(sh.cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(pthread_create(&th, NULL, producer, &sh), 0);
	while (res->transitions < transitions) {
		for (i = (int)(test_rnd(&rng) % 4); i > 0; i--) {
			r = cqpoll_poll_burst(sh.cq, c, BURST);
			TEST_ASSERT(r >= 0, "poll: %d", r);
			take(res, &sh, c, r);
		}
		if (naive) {
			r = cqpoll_poll_burst(sh.cq, c, BURST);
			/*
			 * Between the last poll and the arm, a thread can be
			 * preempted or busy: widen that window here, in the
			 * consumer, since the driver's arm must stay as on
			 * hardware. The core's transition needs no such help.
			 */
			if (r == 0) {
				test_spin_ns(test_rnd(&rng) % 3000);
				TEST_ASSERT_EQ(cqpoll_cq_arm_naive(sh.cq), 0);
			}
		} else {
			r = cqpoll_poll_and_arm(sh.cq, c, BURST);
		}
		TEST_ASSERT(r >= 0, "poll: %d", r);
		if (r > 0) {
			take(res, &sh, c, r);
			continue;
		}
		sleep_start = test_now_ns();
		w = cqpoll_cq_wait(sh.cq, WAIT_TIMEOUT_MS);
		TEST_ASSERT(w >= 0, "wait: %d", w);
		res->transitions++;
		if (w == 0) {
			r = cqpoll_poll_burst(sh.cq, c, BURST);
			TEST_ASSERT(r >= 0, "poll: %d", r);
			/* Device ticks, converted by the emulator's own clock info. */
			/*
			 * Visible before the sleep, and no event within the
			 * timeout: lost, or only late (a device thread starved
			 * on a loaded machine reads the arm late). An event
			 * that still comes was late: that is not a loss.
			 */
			if (r > 0 && cqpoll_mlx5_emu_ticks_to_ns(c[0].timestamp) < sleep_start) {
				if (test_cq_event_within(sh.cq, LATE_EVENT_MS))
					res->timeout_late++;
				else
					res->timeout_lost++;
			}
			take(res, &sh, c, r);
		}
		if (naive) {
			cqpoll_cq_stats_get(sh.cq, &res->st);
			if (res->st.lost_wakeups >= NAIVE_ENOUGH &&
			    res->timeout_lost >= NAIVE_ENOUGH)
				break;
		}
	}
	__atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	while ((r = cqpoll_poll_burst(sh.cq, c, BURST)) > 0)
		take(res, &sh, c, r);
	TEST_ASSERT_EQ(r, 0);
	cqpoll_cq_stats_get(sh.cq, &res->st);
	printf("arm=%s naive=%d cqe=%d transitions=%" PRIu64 " posted=%" PRIu64
	       " consumed=%" PRIu64 " order_errors=%" PRIu64 " lost_oracle=%" PRIu64
	       " lost_timeout=%" PRIu64 " late_timeout=%" PRIu64 " waits=%" PRIu64
	       " wait_timeouts=%" PRIu64
	       " events=%" PRIu64 " spurious=%" PRIu64 " arms=%" PRIu64 "\n",
	       cqpoll_arm_semantics_name(arm), naive,
	       (flags & CQPOLL_MLX5_F_CQE128) ? 128 : 64, res->transitions,
	       sh.posted, res->consumed, res->order_errors, res->st.lost_wakeups,
	       res->timeout_lost, res->timeout_late, res->st.waits, res->st.wait_timeouts, res->st.events,
	       res->st.spurious_events, res->st.arms);
	TEST_ASSERT_EQ(res->consumed, sh.posted);
	cqpoll_cq_destroy(sh.cq);
	return TEST_PASS;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "arm", required_argument, NULL, 'a' },
		{ "transitions", required_argument, NULL, 't' },
		{ "naive", no_argument, NULL, 'n' },
		{ "expect-lost", no_argument, NULL, 'x' },
		{ "cqe128", no_argument, NULL, 'c' },
		{ "compress", no_argument, NULL, 'z' },
		{ "enhanced", no_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	enum cqpoll_arm_semantics arm = CQPOLL_ARM_LEVEL;
	uint64_t transitions = 20000;
	int naive = 0, expect_lost = 0, o;
	uint32_t flags = 0;
	struct result res;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'a':
			if (cqpoll_arm_semantics_parse(optarg, &arm) != 0) {
				fprintf(stderr, "bad --arm: %s\n", optarg);
				return TEST_FAIL;
			}
			break;
		case 't':
			transitions = strtoull(optarg, NULL, 10);
			break;
		case 'n':
			naive = 1;
			break;
		case 'x':
			expect_lost = 1;
			break;
		case 'c':
			flags |= CQPOLL_MLX5_F_CQE128;
			break;
		case 'e':
			/* The enhanced layout is compression's. */
			flags |= CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED | CQPOLL_MLX5_F_CQE_COMPRESS;
			break;
		case 'z':
			flags |= CQPOLL_MLX5_F_CQE_COMPRESS;
			break;
		default:
			return TEST_FAIL;
		}
	}
	if (transitions == 0 || run(arm, transitions, naive, flags, &res) != TEST_PASS)
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
	return TEST_PASS;
}
