/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stress of the transition into sleep on real completion queues written by
 * others: io_uring (the running kernel) and libfabric (a provider over
 * loopback). A device thread posts in bursts with random gaps, waiting for
 * each burst to be consumed, so that completions land all around the
 * consumer's transitions; the kernel or the provider decides when. The
 * consumer cycles busy poll -> poll-and-arm -> sleep -> event.
 *
 * --dev=uring: NOPs. Who posts the CQE (--producer):
 *   submit  the device thread, inside its io_uring_enter() (inline NOP)
 *   iowq    an io-wq worker thread (IOSQE_ASYNC): its own CPU and timing
 *   sqpoll  the ring's SQPOLL kernel thread
 *
 * --dev=ofi-tcp: a message from endpoint A to endpoint B (ofi_rxm over
 * tcp), B's receive completing on the cqpoll CQ; the device thread waits
 * for A's send completion, driving both endpoints' progress, and so does
 * the consumer's poll.
 *
 * Checked: every completion exactly once (and in order, but from io-wq,
 * whose workers run NOPs concurrently), and no lost wake-up:
 * a sleep ended by its safety-net timeout must not find a completion that
 * was posted before the sleep began (for uring's "submit" the CQE is
 * visible when io_uring_submit() returns, so this is exact; for the others
 * it bounds from below when it became visible).
 *
 * --dev=ucx-tcp, ucx-posix, ucx-sysv: a tagged message from worker A to
 * worker B (ucx_test.h), B's receive completing on the cqpoll CQ; the
 * consumer keeps receives posted ahead (tag = wr_id = sequence number), the
 * device thread progresses A until its send completed.
 *
 * --naive goes to sleep with cqpoll_cq_arm_naive() (clear the flag, sleep,
 * no poll after) and --naive-delay-ns sleeps between its last poll and the
 * arm (a sleep, so that the device runs meanwhile even on one CPU): a
 * thread preempted there; with --expect-lost the test passes only if
 * lost wake-ups are seen: the negative control. On UCX the window also
 * progresses the receiver's worker (an application's own progress or
 * post), since only a progress on this thread brings a completion into
 * the CQ: the driver's arm no longer progresses after an idle poll.
 *
 * Skips (77) where io_uring or the provider is unavailable.
 *
 * Usage: test_stress_real [--dev=uring|ofi-tcp]
 *        [--producer=submit|iowq|sqpoll] [--transitions=N]
 *        [--naive [--naive-delay-ns=NS]] [--expect-lost] [--timeout-ms=MS]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_test.h"
#include "uring_test.h"
#ifdef CQPOLL_TEST_OFI
#include "ofi_test.h"
#endif
#ifdef CQPOLL_TEST_UCX
#include "ucx_test.h"
#endif

#define BURST 32
#define VISIBLE_SLOTS 1024u  /* > the largest burst: a slot is reused only after use */
#define NAIVE_ENOUGH 5
#define SEEN_BITS (1ull << 26) /* wr_ids the exactly-once check can follow */

enum producer { PRODUCER_SUBMIT, PRODUCER_IOWQ, PRODUCER_SQPOLL };

static const char *const producer_names[] = { "submit", "iowq", "sqpoll" };

struct shared {
	struct io_uring *ring;
	struct test_ofi *ofi;    /* --dev=ofi-tcp */
	struct test_ucx *ucx;    /* --dev=ucx-* */
	struct cqpoll_cq *cq;
	enum producer producer;
	uint64_t visible_ns[VISIBLE_SLOTS]; /* by wr_id: when submit returned */
	uint64_t consumed;  /* consumer to device */
	uint64_t posted;    /* device's final count */
	int stop;
	int error;
};

static void *
device_thread(void *arg)
{
	struct shared *sh = arg;
	uint64_t seq = 0, rng = 0x243f6a8885a308d3ull;
	unsigned int burst, i;
	int r;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		burst = 1 + (unsigned int)(test_rnd(&rng) % 4);
		for (i = 0; i < burst; i++) {
#ifdef CQPOLL_TEST_OFI
			if (sh->ofi != NULL)
				r = test_ofi_post(sh->ofi, seq, 8);
			else
#endif
#ifdef CQPOLL_TEST_UCX
			if (sh->ucx != NULL)
				r = test_ucx_send(sh->ucx, seq, 8);
			else
#endif
				r = test_uring_nop(sh->ring, seq, 8, false,
						   sh->producer == PRODUCER_IOWQ ?
						   IOSQE_ASYNC : 0);
			if (r != 0) {
				__atomic_store_n(&sh->error, r, __ATOMIC_RELEASE);
				goto out;
			}
			__atomic_store_n(&sh->visible_ns[seq % VISIBLE_SLOTS],
					 test_now_ns(), __ATOMIC_RELEASE);
			seq++;
			if (test_rnd(&rng) % 4 == 0)
				test_spin_ns(test_rnd(&rng) % 2000);
		}
		while (__atomic_load_n(&sh->consumed, __ATOMIC_ACQUIRE) != seq &&
		       !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE))
			;
		test_spin_ns(test_rnd(&rng) % (test_rnd(&rng) % 2 ? 5000 : 30000));
	}
out:
	__atomic_store_n(&sh->posted, seq, __ATOMIC_RELEASE);
	return NULL;
}

struct result {
	uint64_t transitions, consumed, order_errors, timeout_lost, expected;
	uint64_t duplicates;
	uint64_t timeout_found; /* timeouts whose poll found completions at all */
	bool in_order;      /* the producer completes in submission order */
	uint8_t *seen;      /* bit per wr_id */
	struct cqpoll_cq_stats st;
};

static void
consume(struct shared *sh, struct result *res, const struct cqpoll_completion *c,
	int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uint64_t id = c[i].wr_id;

		if ((res->in_order && id != res->expected) ||
		    c[i].status != CQPOLL_STATUS_SUCCESS || id >= SEEN_BITS)
			res->order_errors++;
		res->expected = id + 1;
		if (id < SEEN_BITS) {
			if (res->seen[id / 8] & (1u << (id % 8)))
				res->duplicates++;
			res->seen[id / 8] |= (uint8_t)(1u << (id % 8));
		}
	}
	res->consumed += (uint64_t)n;
#ifdef CQPOLL_TEST_UCX
	/* Receives ahead of the device, posted before it may send for them. */
	if (sh->ucx != NULL && test_ucx_post_recvs(sh->ucx, sh->cq,
						   res->consumed + TEST_UCX_WINDOW) != 0)
		res->order_errors++;
#endif
	__atomic_store_n(&sh->consumed, res->consumed, __ATOMIC_RELEASE);
}

/*
 * The consumer thread descheduled for @p ns: the device thread then runs even
 * when both share a CPU, as on a loaded machine. A spin would not let it.
 */
static void
preempted(uint64_t ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ns };

	if (ns != 0)
		nanosleep(&ts, NULL);
}

static struct cqpoll_cq *
open_cq(enum producer producer, struct io_uring *user_ring, struct test_ofi *ofi,
	struct test_ucx *ucx)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL, .sq_thread_idle = 10 };
	int r;

	if (ucx != NULL) {
#ifdef CQPOLL_TEST_UCX
		struct cqpoll_cq *cq = cqpoll_ucx_cq_create(ucx->b, NULL);

		if (cq != NULL && test_ucx_post_recvs(ucx, cq, TEST_UCX_WINDOW) != 0) {
			cqpoll_cq_destroy(cq);
			errno = EIO;
			return NULL;
		}
		return cq;
#endif
	}
	if (ofi != NULL) {
#ifdef CQPOLL_TEST_OFI
		struct cqpoll_cq *cq = cqpoll_ofi_cq_open(ofi->fabric, ofi->domain, NULL);
		char why[256];

		if (cq != NULL && test_ofi_attach(ofi, cqpoll_ofi_cq_fid(cq), why,
						  sizeof(why)) != 0) {
			fprintf(stderr, "%s\n", why);
			test_ofi_close_eps(ofi);
			cqpoll_cq_destroy(cq);
			errno = EIO;
			return NULL;
		}
		return cq;
#endif
	}
	if (producer != PRODUCER_SQPOLL)
		return cqpoll_uring_cq_create(NULL);
	r = io_uring_queue_init_params(256, user_ring, &p);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return cqpoll_uring_cq_attach(user_ring, NULL);
}

static int
run(struct test_ofi *ofi, struct test_ucx *ucx, enum producer producer, uint64_t transitions, int naive,
    uint64_t naive_delay_ns, int timeout_ms, struct result *res)
{
	struct cqpoll_completion c[BURST];
	struct io_uring user_ring;
	struct shared *sh;
	struct cqpoll_cq *cq;
	uint64_t sleep_start, rng = 0x9e3779b97f4a7c15ull;
	pthread_t dev;
	int r, w, i;

	memset(res, 0, sizeof(*res));
	res->in_order = producer != PRODUCER_IOWQ;
	res->seen = calloc(SEEN_BITS / 8, 1);
	sh = calloc(1, sizeof(*sh));
	TEST_ASSERT(sh != NULL && res->seen != NULL, "calloc");
	cq = open_cq(producer, &user_ring, ofi, ucx);
	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	sh->ofi = ofi;
	sh->ucx = ucx;
	sh->cq = cq;
	if (ofi == NULL && ucx == NULL)
		sh->ring = cqpoll_uring_cq_ring(cq);
	sh->producer = producer;
	TEST_ASSERT_EQ(pthread_create(&dev, NULL, device_thread, sh), 0);
	while (res->transitions < transitions &&
	       !__atomic_load_n(&sh->error, __ATOMIC_ACQUIRE)) {
		for (i = (int)(test_rnd(&rng) % 4); i > 0; i--) {
			r = cqpoll_poll_burst(cq, c, BURST);
			TEST_ASSERT(r >= 0, "poll: %d", r);
			consume(sh, res, c, r);
		}
		if (naive) {
			r = cqpoll_poll_burst(cq, c, BURST);
			if (r == 0) {
				preempted(naive_delay_ns);
				/*
				 * UCX completions reach the CQ only through this
				 * thread's progress: the application's own, in
				 * the window, is how one lands there.
				 */
				if (ucx != NULL)
					ucp_worker_progress(ucx->b);
				TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
			}
		} else {
			r = cqpoll_poll_and_arm(cq, c, BURST);
			/* Not armed, misses kept being reported: poll on. */
			if (r == -EAGAIN)
				continue;
		}
		TEST_ASSERT(r >= 0, "poll: %d", r);
		if (r > 0) {
			consume(sh, res, c, r);
			continue;
		}
		sleep_start = test_now_ns();
		w = cqpoll_cq_wait(cq, timeout_ms);
		TEST_ASSERT(w >= 0, "wait: %d", w);
		res->transitions++;
		if (w == 0) {
			/* Only the timeout woke us: was something there before? */
			r = cqpoll_poll_burst(cq, c, BURST);
			TEST_ASSERT(r >= 0, "poll: %d", r);
			res->timeout_found += r > 0;
			if (r > 0 && __atomic_load_n(&sh->visible_ns[c[0].wr_id % VISIBLE_SLOTS],
						     __ATOMIC_ACQUIRE) < sleep_start)
				res->timeout_lost++;
			consume(sh, res, c, r);
			if (naive && res->timeout_lost >= NAIVE_ENOUGH)
				break;
		}
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev, NULL);
	TEST_ASSERT_EQ(sh->error, 0);
	/* Async producers may still be posting: drain until every one arrived. */
	sleep_start = test_now_ns();
	while (res->consumed < sh->posted && test_now_ns() - sleep_start < 5000000000ull) {
		r = cqpoll_poll_burst(cq, c, BURST);
		TEST_ASSERT(r >= 0, "poll: %d", r);
		consume(sh, res, c, r);
	}
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, BURST), 0);
	cqpoll_cq_stats_get(cq, &res->st);
	printf("dev=%s producer=%s naive=%d naive_delay_ns=%" PRIu64 " transitions=%" PRIu64
	       " posted=%" PRIu64 " consumed=%" PRIu64 " duplicates=%" PRIu64
	       " order_errors=%" PRIu64
	       " lost_timeout=%" PRIu64 " timeout_found=%" PRIu64 " waits=%" PRIu64 " wait_timeouts=%" PRIu64
	       " events=%" PRIu64 " spurious=%" PRIu64 " arms=%" PRIu64 "\n",
	       ofi != NULL ? "ofi-tcp" : ucx != NULL ? ucx->tls : "uring",
	       ofi != NULL || ucx != NULL ? "device-thread" : producer_names[producer], naive, naive_delay_ns, res->transitions,
	       sh->posted, res->consumed, res->duplicates, res->order_errors,
	       res->timeout_lost, res->timeout_found,
	       res->st.waits, res->st.wait_timeouts, res->st.events,
	       res->st.spurious_events, res->st.arms);
	TEST_ASSERT_EQ(res->consumed, sh->posted);
#ifdef CQPOLL_TEST_OFI
	if (ofi != NULL)
		test_ofi_close_eps(ofi);
#endif
	cqpoll_cq_destroy(cq);
#ifdef CQPOLL_TEST_UCX
	/* B's receives still posted were cancelled by the destroy. */
	if (ucx != NULL)
		ucx->next_recv = 0;
#endif
	if (producer == PRODUCER_SQPOLL && ofi == NULL && ucx == NULL)
		io_uring_queue_exit(&user_ring);
	free(sh);
	free(res->seen);
	res->seen = NULL;
	return TEST_PASS;
}

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'D' },
		{ "producer", required_argument, NULL, 'p' },
		{ "transitions", required_argument, NULL, 't' },
		{ "naive", no_argument, NULL, 'n' },
		{ "naive-delay-ns", required_argument, NULL, 'd' },
		{ "expect-lost", no_argument, NULL, 'x' },
		{ "timeout-ms", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	enum producer producer = PRODUCER_SUBMIT;
	uint64_t transitions = 1000000, delay = 0, tmo = 100;
	int naive = 0, expect_lost = 0, o, k;
	struct test_ofi *ofi = NULL;
	struct test_ucx *ucx = NULL;
	const char *ucx_tls = NULL;
	struct result res;
	char why[256];
	int ofi_dev = 0, rc;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'D':
			if (strcmp(optarg, "ofi-tcp") == 0) {
				ofi_dev = 1;
			} else if (strncmp(optarg, "ucx-", 4) == 0) {
				ucx_tls = optarg + 4;
			} else if (strcmp(optarg, "uring") != 0) {
				fprintf(stderr, "bad --dev: %s\n", optarg);
				return TEST_FAIL;
			}
			break;
		case 'p':
			for (k = 0; k < 3 && strcmp(optarg, producer_names[k]) != 0; k++)
				;
			if (k == 3) {
				fprintf(stderr, "bad --producer: %s\n", optarg);
				return TEST_FAIL;
			}
			producer = (enum producer)k;
			break;
		case 't':
			if (parse_u64(optarg, &transitions) != 0 || transitions == 0) {
				fprintf(stderr, "bad --transitions: %s\n", optarg);
				return TEST_FAIL;
			}
			break;
		case 'n':
			naive = 1;
			break;
		case 'd':
			if (parse_u64(optarg, &delay) != 0 || delay >= 1000000000ull) {
				fprintf(stderr, "bad --naive-delay-ns: %s\n", optarg);
				return TEST_FAIL;
			}
			break;
		case 'x':
			expect_lost = 1;
			break;
		case 'm':
			if (parse_u64(optarg, &tmo) != 0 || tmo == 0 || tmo > 60000) {
				fprintf(stderr, "bad --timeout-ms: %s\n", optarg);
				return TEST_FAIL;
			}
			break;
		default:
			return TEST_FAIL;
		}
	}
	if (ofi_dev) {
#ifdef CQPOLL_TEST_OFI
		ofi = calloc(1, sizeof(*ofi));
		TEST_ASSERT(ofi != NULL, "calloc");
		if (test_ofi_open(ofi, "tcp", why, sizeof(why)) != 0) {
			printf("skip: %s\n", why);
			test_ofi_close(ofi);
			free(ofi);
			return TEST_SKIP;
		}
#else
		printf("skip: this build has no libfabric driver\n");
		return TEST_SKIP;
#endif
	} else if (ucx_tls != NULL) {
#ifdef CQPOLL_TEST_UCX
		ucx = calloc(1, sizeof(*ucx));
		TEST_ASSERT(ucx != NULL, "calloc");
		rc = test_ucx_open(ucx, ucx_tls, why, sizeof(why));
		if (rc == 0)
			rc = test_ucx_hello(ucx, why, sizeof(why));
		if (rc != 0) {
			printf("%s: %s\n", rc == -ENODATA ? "skip" : "FAIL", why);
			test_ucx_close(ucx);
			free(ucx);
			return rc == -ENODATA ? TEST_SKIP : TEST_FAIL;
		}
#else
		printf("skip: this build has no UCX driver\n");
		return TEST_SKIP;
#endif
	} else if (test_uring_probe(why, sizeof(why)) < 0) {
		printf("skip: %s\n", why);
		return TEST_SKIP;
	}
	rc = run(ofi, ucx, producer, transitions, naive, delay, (int)tmo, &res);
#ifdef CQPOLL_TEST_UCX
	if (ucx != NULL) {
		test_ucx_close(ucx);
		free(ucx);
	}
#endif
#ifdef CQPOLL_TEST_OFI
	if (ofi != NULL) {
		test_ofi_close(ofi);
		free(ofi);
	}
#endif
	if (rc != TEST_PASS)
		return TEST_FAIL;
	TEST_ASSERT_EQ(res.order_errors, 0);
	TEST_ASSERT_EQ(res.duplicates, 0);
	if (expect_lost) {
		TEST_ASSERT(res.timeout_lost > 0,
			    "the negative control must lose wake-ups");
		printf("negative control: lost wake-ups detected, as expected\n");
		return TEST_PASS;
	}
	TEST_ASSERT_EQ(res.timeout_lost, 0);
	TEST_ASSERT(res.transitions >= transitions, "too few transitions");
	return TEST_PASS;
}
