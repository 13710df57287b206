/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_GROUP_COMMON_H
#define TEST_GROUP_COMMON_H

/*
 * What the poll-group tests share: per-CQ order checking callbacks, a
 * producer thread posting bursts with gaps to random CQs, and the naive group
 * transition (re-poll only one CQ after arming) used as negative control.
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_test.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"

#define TG_MAX_CQS 64

/* Per-CQ receiver: checks exactly-once, in-order delivery. */
struct tg_rx {
	uint64_t expected;
	uint64_t errors;
	uint64_t *consumed; /* group-wide, read by the producer */
};

struct tg_prod {
	struct cqpoll_cq **cqs;
	unsigned int ncqs;
	/* Post as the device of CQ q; NULL: cqpoll_sw_emu_post() on cqs[q]. */
	int (*post)(void *arg, unsigned int q, const struct cqpoll_completion *c);
	void *post_arg;
	uint64_t total;          /* stop after this many; 0: until stop */
	uint64_t *consumed;
	uint64_t posted[TG_MAX_CQS];
	uint64_t seed;
	uint32_t max_gap_ns;
	int wait_drain;          /* let the consumer drain before each gap */
	int stop;
	uint64_t posted_total;   /* written at exit */
	/*
	 * Drain waits that ran out (1 s): reported, not judged (a loaded
	 * machine can starve the group that long; the oracle judges).
	 */
	uint64_t stalls;
};

static inline void
tg_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
      void *arg)
{
	struct tg_rx *rx = arg;
	unsigned int i;

	(void)cq;
	for (i = 0; i < n; i++) {
		/*
		 * What the completion identifies, by its flags only: the wr_id,
		 * or (mlx5 direct) the WQE counter, the request's index mod 2^16.
		 */
		if (c[i].flags & CQPOLL_COMPLETION_F_WR_ID) {
			if (c[i].wr_id != rx->expected)
				rx->errors++;
		} else if (c[i].wqe_counter != (uint16_t)rx->expected) {
			rx->errors++;
		}
		rx->expected++;
	}
	__atomic_fetch_add(rx->consumed, n, __ATOMIC_RELEASE);
}

/* What each CQ looked like when a drain wait ran out: for the log. */
/*
 * Everything posted is in the CQs, or on its way: drain in busy mode. A cold
 * CQ's work shows up at the group's next look at its events, so an
 * iteration that finds nothing does not end the drain while *@p consumed
 * is below @p posted; a bounded wait (2 s) for the rest does.
 * Returns what the last cqpoll_group_run_once() returned (< 0: an error).
 */
static inline int
tg_drain(struct cqpoll_group *g, const uint64_t *consumed, uint64_t posted)
{
	uint64_t t1;
	int r;

	if ((r = cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_BUSY)) != 0)
		return r;
	t1 = test_now_ns();
	while ((r = cqpoll_group_run_once(g)) >= 0 &&
	       (r > 0 || (__atomic_load_n(consumed, __ATOMIC_ACQUIRE) < posted &&
			  test_now_ns() - t1 < 2000000000ull)))
		;
	return r;
}

static inline void
tg_stall_report(const struct tg_prod *p)
{
	struct cqpoll_cq_stats cs;
	struct cqpoll_cq_info ci;
	unsigned int q;

	for (q = 0; q < p->ncqs; q++) {
		if (cqpoll_cq_stats_get(p->cqs[q], &cs) != 0 ||
		    cqpoll_cq_info_get(p->cqs[q], &ci) != 0)
			continue;
		fprintf(stderr, "stall: cq %u (%s) posted %" PRIu64 " polled %" PRIu64
			" arms %" PRIu64 " events %" PRIu64 " spurious %" PRIu64
			" lost %" PRIu64 "\n", q, ci.driver, p->posted[q], cs.completions,
			cs.arms, cs.events, cs.spurious_events, cs.lost_wakeups);
	}
}

static inline void *
tg_producer(void *arg)
{
	struct tg_prod *p = arg;
	uint64_t seq = 0, t0;
	unsigned int burst, i, q;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE) &&
	       (p->total == 0 || seq < p->total)) {
		burst = 1 + (unsigned int)(test_rnd(&p->seed) % 8);
		for (i = 0; i < burst && (p->total == 0 || seq < p->total); i++) {
			struct cqpoll_completion c = { .byte_len = 8 };
			int r;

			q = (unsigned int)(test_rnd(&p->seed) % p->ncqs);
			c.wr_id = p->posted[q];
			while ((r = p->post != NULL ? p->post(p->post_arg, q, &c) :
				    cqpoll_sw_emu_post(p->cqs[q], &c)) == -ENOSPC)
				;
			if (r != 0) {
				fprintf(stderr, "post: %d\n", r);
				abort();
			}
			/* Read by the test thread while running (stall detection). */
			__atomic_store_n(&p->posted[q], p->posted[q] + 1, __ATOMIC_RELEASE);
			seq++;
			if (test_rnd(&p->seed) % 4 == 0)
				test_spin_ns(test_rnd(&p->seed) % 2000);
		}
		t0 = test_now_ns();
		while (p->wait_drain &&
		       __atomic_load_n(p->consumed, __ATOMIC_ACQUIRE) != seq &&
		       !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
			if (test_now_ns() - t0 >= 1000000000ull) {
				p->stalls++;
				tg_stall_report(p);
				break;
			}
		}
		/* Gaps from none to longer than a wake-up. */
		test_spin_ns(test_rnd(&p->seed) %
			   (test_rnd(&p->seed) % 2 ? 5000 : p->max_gap_ns));
	}
	__atomic_store_n(&p->posted_total, seq, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The naive group transition, with the public per-CQ API only: poll every CQ,
 * arm every CQ, re-poll only the first one, then (if it is empty) check the
 * device oracle on every CQ and sleep on all fds. Returns completions found
 * (> 0), 0 after a sleep, < 0 on error; adds to *lost when the oracle shows a
 * completion stranded at the moment of going to sleep.
 */

/*
 * Called by the naive transition between its empty polls and its arms, when
 * set: a stress test aims some transitions at the race window (waits there
 * for the producer's next post), so that the control is caught whatever
 * the scheduler does with the two threads.
 */
static void (*tg_naive_aim)(void *arg) __attribute__((unused));
static void *tg_naive_aim_arg __attribute__((unused));
static inline int
tg_naive_run_once(struct cqpoll_cq **cqs, unsigned int n, struct tg_rx *rx,
		  int timeout_ms, uint64_t *lost)
{
	struct cqpoll_completion c[32];
	struct pollfd pfd[TG_MAX_CQS];
	unsigned int i;
	int r, total = 0;

	for (i = 0; i < n; i++) {
		r = cqpoll_poll_burst(cqs[i], c, 32);
		if (r < 0)
			return r;
		if (r > 0)
			tg_cb(cqs[i], c, (unsigned int)r, &rx[i]);
		total += r;
	}
	if (total > 0)
		return total;
	if (tg_naive_aim != NULL)
		tg_naive_aim(tg_naive_aim_arg);
	for (i = 0; i < n; i++) {
		if (!cqpoll_cq_is_armed(cqs[i])) {
			r = cqpoll_cq_arm_naive(cqs[i]);
			if (r < 0)
				return r;
		}
	}
	/* Deliberately wrong: only the first CQ is polled after the arms. */
	r = cqpoll_poll_burst(cqs[0], c, 32);
	if (r != 0) {
		if (r > 0)
			tg_cb(cqs[0], c, (unsigned int)r, &rx[0]);
		return r;
	}
	for (i = 0; i < n; i++) {
		if (cqpoll_cq_stranded(cqs[i]) == 1) {
			(*lost)++;
			break;
		}
	}
	for (i = 0; i < n; i++) {
		pfd[i].fd = cqpoll_cq_event_fd(cqs[i]);
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	r = poll(pfd, n, timeout_ms);
	if (r < 0)
		return -errno;
	for (i = 0; i < n && r > 0; i++) {
		if (pfd[i].revents != 0 && cqpoll_cq_event_get(cqs[i]) < 0)
			return -EIO;
	}
	return 0;
}

#endif /* TEST_GROUP_COMMON_H */
