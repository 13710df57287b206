/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * group-lone-kick: a poll group of one io_uring CQ sleeps in its member's
 * own wait (io_uring_enter(GETEVENTS) on the ring), not in its epoll, where
 * the group's eventfd is not watched. Every cross-thread request must still
 * end that sleep at once: cqpoll_group_wakeup(), cqpoll_group_set_mode(),
 * cqpoll_group_stop() and cqpoll_group_move_request(), each sent while the
 * group sleeps. Judged by the group's counters, not by time: each sleep
 * must end by the request (wakeups_xthread or wakeups_event), never by the
 * safety net's timeout (wakeups_timeout), which is set far above any
 * scheduling delay (2 s).
 *
 * Built twice: against libcqpoll, and as the negative control against a
 * test-only build whose kick does not wake a lone sleeper
 * (CQPOLL_MUTANT_NO_LONE_KICK), where each request waits for the timeout
 * and the same check must fail.
 *
 * --dev=uring (the default) runs it on an io_uring CQ (the wake-up: a CQE
 * posted with IORING_OP_MSG_RING), --dev=ucx-tcp on a UCX worker over tcp
 * (the wait: poll(2) on the worker's fd; the wake-up: ucp_worker_signal()),
 * --dev=ethdev-virtio on a virtio_user Rx queue fed by vhost (the wait:
 * epoll_wait() on the driver's set; the wake-up: an eventfd in that set;
 * built in test/ethdev/, where DPDK is), --dev=ofi-tcp on a libfabric CQ
 * of ofi_rxm over tcp on loopback, its endpoint connected (the wait:
 * poll(2) on the CQ's wait fd; the wake-up: fi_cq_signal()).
 *
 * Skips (77) where io_uring, UCX's tcp transport or libfabric's tcp
 * provider is unavailable. On a kernel where the driver
 * has no own wait (no IORING_FEAT_EXT_ARG or IORING_OP_MSG_RING) the group
 * sleeps in its epoll: this test passes there, and so does its control,
 * which meson then reports as an unexpected pass.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_test.h"
#include "uring_test.h"
#ifdef TEST_HAVE_UCX
#include "ucx_test.h"
#endif
#ifdef TEST_HAVE_ETHDEV
#include "cqpoll_ethdev.h"
#include "ethdev_test.h"
#endif
#ifdef TEST_HAVE_OFI
#include "ofi_test.h"
#endif

/* Far above any wake-up, even under the sanitizers: a sleep this long was
 * ended by the safety net, not by the kick. */
#define TIMEOUT_MS 500
/* Let the group reach its sleep before the request (a head start, not a verdict). */
#define SETTLE_NS 50000000L

enum kick { KICK_WAKEUP, KICK_MODE, KICK_STOP, KICK_MOVE, KICK_N };

static const char *const kick_names[KICK_N] = {
	"cqpoll_group_wakeup()", "cqpoll_group_set_mode()",
	"cqpoll_group_stop()", "cqpoll_group_move_request()",
};

struct runner {
	struct cqpoll_group *g;
	int round;	/* written by main: run this round */
	int done;	/* written by the runner: that round returned */
	enum kick kick;
	int result;
};

static void
on_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	       unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	(void)n;
	(void)arg;
}

/* The group's thread: one sleep per round, ended by main's request. */
static void *
run_rounds(void *arg)
{
	struct runner *rn = arg;
	int done = 0, want, r;

	if (cqpoll_group_adopt(rn->g) < 0) {
		rn->result = -EPERM;
		return NULL;
	}
	for (;;) {
		want = __atomic_load_n(&rn->round, __ATOMIC_ACQUIRE);
		if (want < 0)
			break;
		if (want == done) {
			sched_yield();
			continue;
		}
		if (rn->kick == KICK_STOP || rn->kick == KICK_MOVE) {
			r = cqpoll_group_run(rn->g);
			if (r == CQPOLL_GROUP_RUN_RELEASED)
				r = cqpoll_group_adopt(rn->g);
		} else {
			r = cqpoll_group_run_once(rn->g);
		}
		rn->result = r;
		done = want;
		__atomic_store_n(&rn->done, done, __ATOMIC_RELEASE);
	}
	/* Back to main, which destroys it. */
	cqpoll_group_release(rn->g);
	return NULL;
}

static uint64_t
sleeps_of(struct cqpoll_group *g)
{
	struct cqpoll_group_stats st;

	cqpoll_group_stats_get(g, &st);
	return st.sleeps;
}

static int
send_kick(struct cqpoll_group *g, enum kick k)
{
	switch (k) {
	case KICK_WAKEUP:
		return cqpoll_group_wakeup(g);
	case KICK_MODE:
		/* The mode it has: the request, not the change, is tested. */
		return cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_INTERRUPT);
	case KICK_STOP:
		return cqpoll_group_stop(g);
	case KICK_MOVE:
		return cqpoll_group_move_request(g);
	default:
		return -EINVAL;
	}
}

#ifdef TEST_HAVE_UCX
static struct test_ucx ux;
#endif
#ifdef TEST_HAVE_ETHDEV
static struct te_pair tp;
#endif
#ifdef TEST_HAVE_OFI
static struct test_ofi ofi;
#endif

/* The CQ under test, or NULL with the reason (-ENODATA in @p r: skip). */
static struct cqpoll_cq *
open_cq(const char *dev, int *r, char *why, size_t len)
{
	struct cqpoll_cq *cq;

	*r = 0;
	if (strcmp(dev, "uring") == 0) {
		if (test_uring_probe(why, len) < 0) {
			*r = -ENODATA;
			return NULL;
		}
		cq = cqpoll_uring_cq_create(NULL);
		if (cq == NULL)
			snprintf(why, len, "cqpoll_uring_cq_create: %s", strerror(errno));
		return cq;
	}
#ifdef TEST_HAVE_UCX
	if (strcmp(dev, "ucx-tcp") == 0) {
		*r = test_ucx_open(&ux, "tcp", why, len);
		if (*r == 0)
			*r = test_ucx_hello(&ux, why, len);
		if (*r != 0)
			return NULL;
		cq = cqpoll_ucx_cq_create(ux.b, NULL);
		if (cq == NULL)
			snprintf(why, len, "cqpoll_ucx_cq_create: %s", strerror(errno));
		return cq;
	}
#endif
#ifdef TEST_HAVE_OFI
	if (strcmp(dev, "ofi-tcp") == 0) {
		*r = test_ofi_open(&ofi, "tcp", why, len);
		if (*r != 0)
			return NULL;
		cq = cqpoll_ofi_cq_open(ofi.fabric, ofi.domain, NULL);
		if (cq == NULL) {
			snprintf(why, len, "cqpoll_ofi_cq_open: %s", strerror(errno));
			return NULL;
		}
		/* Connected first: the sleeps are a live endpoint's. */
		*r = test_ofi_attach(&ofi, cqpoll_ofi_cq_fid(cq), why, len);
		if (*r != 0) {
			cqpoll_cq_destroy(cq);
			return NULL;
		}
		return cq;
	}
#endif
#ifdef TEST_HAVE_ETHDEV
	if (strcmp(dev, "ethdev-virtio") == 0) {
		struct rte_mempool *mp;

		if (te_eal_init("test_group_lone_kick") < 0 || (mp = te_pool()) == NULL) {
			snprintf(why, len, "DPDK's EAL or its mbuf pool: %s",
				 rte_strerror(rte_errno));
			*r = -EIO;
			return NULL;
		}
		*r = te_pair_open(&tp, mp, why, len);
		if (*r != 0)
			return NULL;
		cq = cqpoll_ethdev_cq_create(tp.virtio, 0, NULL);
		if (cq == NULL)
			snprintf(why, len, "cqpoll_ethdev_cq_create: %s", strerror(errno));
		return cq;
	}
#endif
	snprintf(why, len, "unknown --dev=%s (uring%s%s)", dev,
#ifdef TEST_HAVE_UCX
		 ", ucx-tcp",
#else
		 "",
#endif
#ifdef TEST_HAVE_ETHDEV
		 ", ethdev-virtio"
#else
		 ""
#endif
#ifdef TEST_HAVE_OFI
		 ", ofi-tcp"
#else
		 ""
#endif
		 );
	return NULL;
}

int
main(int argc, char **argv)
{
	const struct timespec settle = { 0, SETTLE_NS };
	struct cqpoll_group_conf conf = {
		.mode = CQPOLL_GROUP_MODE_INTERRUPT,
		.wait_timeout_ms = TIMEOUT_MS,
	};
	struct cqpoll_group_stats st0, st1;
	struct runner rn = { 0 };
	unsigned int bad = 0;
	struct cqpoll_cq *cq;
	pthread_t tid;
	uint64_t s0;
	char why[256];
	int k, r;

	const char *dev = "uring";

	if (argc > 1 && strncmp(argv[1], "--dev=", 6) == 0)
		dev = argv[1] + 6;
	else if (argc > 1) {
		fprintf(stderr, "usage: %s [--dev=uring|ucx-tcp|ethdev-virtio|ofi-tcp]\n", argv[0]);
		return TEST_FAIL;
	}
	cq = open_cq(dev, &r, why, sizeof(why));
	if (cq == NULL) {
		printf("%s: %s\n", r == -ENODATA ? "skip" : "FAIL", why);
		return r == -ENODATA ? TEST_SKIP : TEST_FAIL;
	}
	rn.g = cqpoll_group_create(&conf);
	if (rn.g == NULL || cqpoll_group_add(rn.g, cq, on_completions, NULL) != 0) {
		printf("FAIL: a group of one: %s\n", strerror(errno));
		return TEST_FAIL;
	}
	/* The group's thread is the runner's from here: it adopts it. */
	if (cqpoll_group_release(rn.g) != 0) {
		printf("FAIL: cqpoll_group_release\n");
		return TEST_FAIL;
	}
	if (pthread_create(&tid, NULL, run_rounds, &rn) != 0) {
		printf("FAIL: pthread_create\n");
		return TEST_FAIL;
	}
	for (k = 0; k < KICK_N; k++) {
		rn.kick = (enum kick)k;
		cqpoll_group_stats_get(rn.g, &st0);
		s0 = st0.sleeps;
		__atomic_store_n(&rn.round, k + 1, __ATOMIC_RELEASE);
		/* Asleep (counted before the wait), then a head start into it. */
		while (sleeps_of(rn.g) == s0 &&
		       __atomic_load_n(&rn.done, __ATOMIC_ACQUIRE) != k + 1)
			sched_yield();
		nanosleep(&settle, NULL);
		r = send_kick(rn.g, (enum kick)k);
		if (r != 0) {
			printf("FAIL: %s: %s\n", kick_names[k], strerror(-r));
			bad++;
		}
		while (__atomic_load_n(&rn.done, __ATOMIC_ACQUIRE) != k + 1)
			sched_yield();
		cqpoll_group_stats_get(rn.g, &st1);
		if (rn.result < 0) {
			printf("FAIL: %s: the group's run returned %s\n", kick_names[k],
			       strerror(-rn.result));
			bad++;
		}
		printf("%s: %llu sleeps, woken by another thread %llu, by an event %llu, by the %d ms timeout %llu\n",
		       kick_names[k], (unsigned long long)(st1.sleeps - st0.sleeps),
		       (unsigned long long)(st1.wakeups_xthread - st0.wakeups_xthread),
		       (unsigned long long)(st1.wakeups_event - st0.wakeups_event),
		       TIMEOUT_MS,
		       (unsigned long long)(st1.wakeups_timeout - st0.wakeups_timeout));
		if (st1.wakeups_timeout != st0.wakeups_timeout) {
			printf("FAIL: %s left the group asleep until its timeout\n",
			       kick_names[k]);
			bad++;
		}
	}
	__atomic_store_n(&rn.round, -1, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	if (cqpoll_group_adopt(rn.g) < 0) {
		printf("FAIL: the runner did not give the group back\n");
		return TEST_FAIL;
	}
	cqpoll_group_remove(rn.g, cq);
	cqpoll_group_destroy(rn.g);
#ifdef TEST_HAVE_OFI
	/* A CQ still bound to an endpoint cannot be closed. */
	if (strcmp(dev, "ofi-tcp") == 0)
		test_ofi_close_eps(&ofi);
#endif
	cqpoll_cq_destroy(cq);
#ifdef TEST_HAVE_OFI
	if (strcmp(dev, "ofi-tcp") == 0)
		test_ofi_close(&ofi);
#endif
#ifdef TEST_HAVE_UCX
	if (strcmp(dev, "ucx-tcp") == 0)
		test_ucx_close(&ux);
#endif
#ifdef TEST_HAVE_ETHDEV
	if (strcmp(dev, "ethdev-virtio") == 0) {
		te_pair_close(&tp);
		rte_eal_cleanup();
	}
#endif
	if (bad != 0)
		return TEST_FAIL;
	printf("every request ended the lone member's sleep\n");
	return TEST_PASS;
}
