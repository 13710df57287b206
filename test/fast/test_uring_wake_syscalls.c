/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uring-wake-syscalls: one sleep-and-wake of an io_uring CQ through
 * cqpoll_poll_and_arm() and cqpoll_cq_wait() costs the consumer thread one
 * system call, as io_uring_wait_cqe() does (issue 36): the io_uring_enter()
 * it sleeps in. Counted by the kernel, not by timing: a perf counter on the
 * raw_syscalls:sys_enter tracepoint of this thread only (no ptrace, no
 * seccomp), read before and after each round, less the cost of a read
 * itself. A round counts only when the thread really slept (a voluntary
 * context switch, getrusage(RUSAGE_THREAD)): on a loaded machine the NOP
 * may land before the sleep, and such a round costs nothing at all.
 *
 * --control is the negative control: the same rounds on the same CQ with
 * the driver's own wait taken away (the CQ's driver state wrapped again in a
 * handle whose table has no wait op, without_own_wait()), so that
 * cqpoll_cq_wait() sleeps in poll(2) on the eventfd, reads it, and the arm
 * checks the ring's fd with fstat(2): three calls, which the same check
 * must catch.
 *
 * --group runs the rounds through a poll group of one (interrupt mode,
 * cqpoll_group_run_once()), which sleeps in its lone member's own wait
 * (doc/guides/poll-group.md): one call too. --group --control takes the
 * member's own wait away, so the group sleeps in its epoll: epoll_wait(2),
 * the eventfd's read(2) and the arm's fstat(2), caught the same way.
 *
 * Skips (77) where io_uring or the tracepoint counter is unavailable (not
 * root, perf_event_paranoid, no tracefs).
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_test.h"
#include "uring_test.h"

#define ROUNDS 40
/* Rounds that must have slept for a verdict. */
#define ROUNDS_SLEPT_MIN 10
/* How long the submitter waits after the consumer is about to sleep. */
#define SUBMIT_DELAY_NS 2000000L
#define WAIT_MS 5000

static const char *const tracepoint_ids[] = {
	"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
	"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
};

struct shared {
	struct io_uring *ring;
	int round;       /* the consumer is about to sleep in this round */
	int submitted;   /* the submitter posted the NOP of this round */
	int stop;
};

/* A counter of this thread's system calls, or -1 with the reason. */
static int
syscall_counter(char *why, size_t len)
{
	struct perf_event_attr a;
	unsigned long long id = 0;
	unsigned int i;
	FILE *f = NULL;
	int fd;

	for (i = 0; i < sizeof(tracepoint_ids) / sizeof(tracepoint_ids[0]); i++) {
		f = fopen(tracepoint_ids[i], "r");
		if (f != NULL)
			break;
	}
	if (f == NULL) {
		snprintf(why, len, "no tracefs with raw_syscalls:sys_enter (%s)", strerror(errno));
		return -1;
	}
	if (fscanf(f, "%llu", &id) != 1) {
		fclose(f);
		snprintf(why, len, "unreadable tracepoint id");
		return -1;
	}
	fclose(f);
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = id;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "perf_event_open(raw_syscalls:sys_enter): %s", strerror(errno));
		return -1;
	}
	return fd;
}

static uint64_t
count_now(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return UINT64_MAX;
	return v;
}

static long
voluntary_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

static void *
submitter(void *arg)
{
	struct shared *s = arg;
	const struct timespec delay = { 0, SUBMIT_DELAY_NS };
	int done = 0, want;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		want = __atomic_load_n(&s->round, __ATOMIC_ACQUIRE);
		if (want == done) {
			sched_yield();
			continue;
		}
		nanosleep(&delay, NULL);
		if (test_uring_nop(s->ring, (uint64_t)want, 0, false, 0) != 0)
			break;
		done = want;
		__atomic_store_n(&s->submitted, done, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* The group's callback: what the round's wake delivered. */
struct delivered {
	int n;
	uint64_t wr_id;
};

static void
on_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	       unsigned int n, void *arg)
{
	struct delivered *d = arg;

	(void)cq;
	d->n += (int)n;
	d->wr_id = c[n - 1].wr_id;
}

/* The group member's callback argument. */
static struct delivered delivered;

/*
 * One round's sleep-and-wake: through the CQ API, or through @p g's
 * run_once (a group sleeps only from an empty pass, so it may take two).
 * Stores the round's NOP's wr_id in @p wr_id; returns the completions, or
 * < 0 with the message printed.
 */
static int
sleep_and_wake(struct cqpoll_cq *cq, struct cqpoll_group *g,
	       struct shared *s, int k, uint64_t *wr_id)
{
	struct cqpoll_completion c[4];
	struct delivered *d = &delivered;
	int r, n, i;

	if (g == NULL) {
		r = cqpoll_poll_and_arm(cq, c, 4);
		if (r != 0) {
			printf("FAIL: round %d: poll-and-arm of an empty cq returned %d\n", k, r);
			return -1;
		}
		__atomic_store_n(&s->round, k, __ATOMIC_RELEASE);
		r = cqpoll_cq_wait(cq, WAIT_MS);
		n = cqpoll_poll_burst(cq, c, 4);
		if (r != 1 || n != 1) {
			printf("FAIL: round %d: wait %d, poll %d\n", k, r, n);
			return -1;
		}
		*wr_id = c[0].wr_id;
		return n;
	}
	d->n = 0;
	__atomic_store_n(&s->round, k, __ATOMIC_RELEASE);
	for (i = 0; i < 4 && d->n == 0; i++) {
		r = cqpoll_group_run_once(g);
		if (r < 0) {
			printf("FAIL: round %d: run_once: %s\n", k, strerror(-r));
			return -1;
		}
	}
	if (d->n != 1) {
		printf("FAIL: round %d: the group delivered %d completions\n", k, d->n);
		return -1;
	}
	*wr_id = d->wr_id;
	return d->n;
}

static void
keep_state(void *priv)
{
	/* The io_uring handle owns the driver state and frees it. */
	(void)priv;
}

/*
 * A second handle over @p real's driver state, with the io_uring table less
 * its own wait: what the driver gives a ring whose kernel lacks what that
 * wait needs. Destroyed before @p real.
 */
static struct cqpoll_cq *
without_own_wait(struct cqpoll_cq *real)
{
	static struct cqpoll_driver_ops ops;
	struct cqpoll_cq_params params = { .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_cq_info info;

	ops = *cqpoll_cq_driver(real);
	ops.name = "uring-without-own-wait";
	ops.wait = NULL;
	ops.destroy = keep_state;
	if (cqpoll_cq_info_get(real, &info) == 0) {
		params.arm = info.arm;
		params.size = info.size;
	}
	/* The fast path of the handle (cqpoll_fp.h): its burst poll. */
	return cqpoll_cq_alloc(&ops, ((const struct cqpoll_cq_fp *)(const void *)real)->poll,
			       cqpoll_cq_priv(real), &params);
}

int
main(int argc, char **argv)
{
	bool control = false, group = false;
	struct cqpoll_group_conf gconf = {
		.mode = CQPOLL_GROUP_MODE_INTERRUPT,
		/* No health check (one epoll_wait(0) a period) within the rounds. */
		.wait_timeout_ms = 600000,
	};
	struct cqpoll_group *g = NULL;
	struct shared s = { 0 };
	uint64_t c0, c1, per_read, calls, wr_id = 0, cpu_ns, timed0 = 0, timed1 = 0;
	unsigned int slept = 0, bad = 0;
	struct cqpoll_cq *cq, *real;
	pthread_t tid;
	char why[256];
	long v0;
	int fd, k, i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--control") == 0)
			control = true;
		else if (strcmp(argv[i], "--group") == 0)
			group = true;
		else {
			fprintf(stderr, "usage: %s [--group] [--control]\n", argv[0]);
			return TEST_FAIL;
		}
	}
	if (test_uring_probe(why, sizeof(why)) < 0) {
		printf("skip: %s\n", why);
		return TEST_SKIP;
	}
	fd = syscall_counter(why, sizeof(why));
	if (fd < 0) {
		printf("skip: %s\n", why);
		return TEST_SKIP;
	}
	real = cqpoll_uring_cq_create(NULL);
	if (real == NULL) {
		printf("FAIL: cqpoll_uring_cq_create: %s\n", strerror(errno));
		return TEST_FAIL;
	}
	cq = control ? without_own_wait(real) : real;
	if (cq == NULL) {
		printf("FAIL: a handle without the own wait: %s\n", strerror(errno));
		return TEST_FAIL;
	}
	if (group) {
		g = cqpoll_group_create(&gconf);
		if (g == NULL || cqpoll_group_add(g, cq, on_completions, &delivered) != 0) {
			printf("FAIL: a group of one: %s\n", strerror(errno));
			return TEST_FAIL;
		}
	}
	s.ring = cqpoll_uring_cq_ring(real);
	if (pthread_create(&tid, NULL, submitter, &s) != 0) {
		printf("FAIL: pthread_create\n");
		return TEST_FAIL;
	}
	/* What a read of the counter adds to the next one: its own entry. */
	c0 = count_now(fd);
	c1 = count_now(fd);
	per_read = c1 - c0;
	/* Round 0 warms up (the first arm checks the ring's fd): not judged. */
	for (k = 1; k <= ROUNDS; k++) {
		v0 = voluntary_switches();
		if (g != NULL)
			cqpoll_group_sleep_cpu_get(g, &cpu_ns, &timed0);
		c0 = count_now(fd);
		if (sleep_and_wake(cq, g, &s, k, &wr_id) < 0 || wr_id != (uint64_t)k) {
			printf("FAIL: round %d: woke with wr_id %llu\n", k,
			       (unsigned long long)wr_id);
			bad++;
			break;
		}
		c1 = count_now(fd);
		/* Counted: the read that ends the round (c1), less per_read. */
		calls = c1 - c0 - per_read;
		/*
		 * A sleep the group times (its first 8, then one in 16) reads
		 * the thread's CPU clock before and after: two system calls
		 * (that clock is not in the vDSO) of the measurement, not of
		 * the sleep.
		 */
		if (g != NULL) {
			cqpoll_group_sleep_cpu_get(g, &cpu_ns, &timed1);
			if (calls >= 2 * (timed1 - timed0))
				calls -= 2 * (timed1 - timed0);
		}
		if (k == 1 || voluntary_switches() == v0)
			continue;
		slept++;
		if (calls != 1) {
			if (bad++ < 5)
				printf("round %d: %llu system calls for one sleep-and-wake, want 1 (io_uring_wait_cqe()'s)\n",
				       k, (unsigned long long)calls);
		}
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	if (g != NULL) {
		cqpoll_group_remove(g, cq);
		cqpoll_group_destroy(g);
	}
	if (cq != real)
		cqpoll_cq_destroy(cq);
	cqpoll_cq_destroy(real);
	close(fd);
	printf("%s%s: %u of %d rounds slept, %u cost other than 1 system call\n",
	       group ? "group of one, " : "",
	       control ? (group ? "control (epoll_wait + read on the eventfds)" :
			  "control (poll + read on the eventfd)") :
	       "the ring's own wait", slept, ROUNDS, bad);
	if (bad != 0)
		return TEST_FAIL;
	if (slept < ROUNDS_SLEPT_MIN) {
		printf("FAIL: only %u rounds slept (at least %d needed for a verdict)\n",
		       slept, ROUNDS_SLEPT_MIN);
		return TEST_FAIL;
	}
	return TEST_PASS;
}
