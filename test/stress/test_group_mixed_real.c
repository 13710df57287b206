/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One poll group holding queues written by others and emulated ones
 * (test_mixed_real.h): a software CQ, an io_uring CQ (the kernel posts its
 * CQEs), a libfabric tcp CQ (the provider writes its completions, from a
 * socket), a UCX worker over posix shared memory (request completions in
 * the driver's ring) and, where built, an emulated mlx5 CQ. Their arms
 * differ (edge, edge, report-missed, report-missed, level) and so do their
 * event fds (eventfd, the ring's registered eventfd, the provider's wait
 * fd, the worker's epoll set, the device's fd), all in the group's one
 * epoll set. The UCX member's receives are posted again by its callback,
 * on the group's thread, before the producer learns of what it consumed.
 *
 * A producer thread posts bursts to random members, waits for each burst to
 * be consumed, then leaves a random gap, from none to longer than the
 * group's way into sleep: posts land before, inside and after the
 * transition. The group runs in one --mode:
 *   interrupt  poll-and-arm on every member and sleep as soon as a pass
 *              finds nothing
 *   adaptive   the adaptive policy spins (max_spin_us=20), then sleeps;
 *              members idle for --cold-us go cold meanwhile
 *   busy       never sleeps: members idle for --cold-us are armed and left
 *              to their events (cold), which the loop looks for
 *
 * Checked: every completion delivered exactly once, in order, to its own
 * CQ's callback (each wr_id carries its CQ's tag); no lost wake-up, by the
 * emulated devices' oracle (group lost_wakeups) and, on every member, by the
 * safety net's recoveries told late from lost (below); and that the run did
 * what it was for: the group slept (interrupt, adaptive) or CQs went cold
 * (busy), and every real member was armed and woken by its events.
 *
 * Late or lost (recovery_judge.h): a real queue's completions carry no
 * host timestamp, so the library counts a recovery whether its event was
 * lost or its work was posted as the timeout ran out; the test knows when
 * each post returned and fails only on the lost ones.
 *
 * --naive-uring [--naive-delay-ns=NS] puts the io_uring CQ behind a handle
 * that declares its arm level: the group's poll-and-arm then clears the flag
 * and sleeps with no poll after it (the naive transition), after sleeping NS
 * (a thread preempted between its last poll and its arm). With --expect-lost
 * the test passes only if the same checks catch it: the negative control.
 *
 * A member that does not run here (io_uring disabled, no tcp provider, no
 * mlx5 build) is left out with the reason; skips (77) if neither real one
 * is left, or if the control has no io_uring.
 *
 * Usage: test_group_mixed_real --mode=interrupt|adaptive|busy
 *        [--transitions=N] [--cold-us=US] [--timeout-ms=MS]
 *        [--naive-uring [--naive-delay-ns=NS] --expect-lost]
 */

#include <getopt.h>
#include <inttypes.h>
#include <unistd.h>

#include "recovery_judge.h"
#include "test_group_common.h"
#include "test_mixed_real.h"

/* Each run stays well inside meson's timeout on 2 cores. */
#define DEADLINE_NS (60ull * 1000000000ull)
/* A negative control stops once caught this often. */
#define NAIVE_ENOUGH 5
/* wr_id = CQ tag << MR_TAG_SHIFT | the CQ's own sequence number. */
#define MR_TAG_SHIFT 48

struct mr_rx {
	uint64_t tag;      /* this CQ's, in every wr_id it should get */
	uint64_t expected; /* next sequence number */
	uint64_t errors;   /* out of order, or not successful */
	uint64_t wrong_cq; /* another CQ's completion */
	uint64_t *consumed;
};

static struct mr_member members[MR_KINDS];
static struct mr_rx rx[MR_KINDS];
static unsigned int nmembers;
static uint64_t consumed;

/* rx[i].expected, for the recovery judge. */
static uint64_t next_seq[MR_KINDS];

static void
mr_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
      void *arg)
{
	struct mr_rx *r = arg;
	unsigned int i;

	(void)cq;
	for (i = 0; i < n; i++) {
		if (c[i].status != CQPOLL_STATUS_SUCCESS)
			r->errors++;
		if (c[i].flags & CQPOLL_COMPLETION_F_WR_ID) {
			if (c[i].wr_id >> MR_TAG_SHIFT != r->tag)
				r->wrong_cq++;
			else if ((c[i].wr_id & ((1ull << MR_TAG_SHIFT) - 1)) != r->expected)
				r->errors++;
		} else if (c[i].wqe_counter != (uint16_t)r->expected) {
			/* mlx5 direct: the WQE counter, the index mod 2^16. */
			r->errors++;
		}
		r->expected++;
	}
	__atomic_store_n(&next_seq[r - rx], r->expected, __ATOMIC_RELEASE);
	/* Before the producer learns of them: its next sends find receives. */
	if (mr_consumed(&members[r - rx], r->tag << MR_TAG_SHIFT, r->expected) != 0)
		r->errors++;
	__atomic_fetch_add(r->consumed, n, __ATOMIC_RELEASE);
}

static int
mr_post_cb(void *arg, unsigned int q, const struct cqpoll_completion *c)
{
	int r;

	(void)arg;
	rj_post_begin(q, c->wr_id);
	r = mr_post(&members[q], rx[q].tag << MR_TAG_SHIFT | c->wr_id);
	if (r == 0)
		rj_post_end(q, c->wr_id);
	return r;
}


static void *
run_thread(void *arg)
{
	return (void *)(intptr_t)cqpoll_group_run(arg);
}

struct opts {
	enum cqpoll_group_mode mode;
	uint64_t transitions;
	uint32_t cold_us, timeout_ms;
	int naive, expect_lost;
	uint64_t naive_delay_ns;
};

/* What the mode counts as one transition: sleeps, or CQs going cold. */
static uint64_t
done(const struct opts *o, const struct cqpoll_group_stats *st)
{
	return o->mode == CQPOLL_GROUP_MODE_BUSY ? st->cold_arms : st->sleeps;
}

/* TEST_SKIP if nothing real runs here, or the control has no io_uring. */
static int
open_members(const struct opts *o)
{
	char why[256];
	unsigned int k, real = 0;
	int r;

	for (k = 0; k < MR_KINDS; k++) {
		why[0] = '\0';
		r = mr_open(&members[nmembers], (enum mr_kind)k, o->naive,
			    o->naive_delay_ns, why, sizeof(why));
		if (r == -ENOTSUP) {
			printf("%s: left out: %s\n", mr_kind_names[k], why);
			if (o->naive && k == MR_URING)
				return TEST_SKIP;
			continue;
		}
		TEST_ASSERT(r == 0, "%s: %s", mr_kind_names[k], why);
		rx[nmembers] = (struct mr_rx){ .tag = k + 1, .consumed = &consumed };
		real += k == MR_URING || k == MR_OFI || k == MR_UCX;
		if (mr_consumed(&members[nmembers], rx[nmembers].tag << MR_TAG_SHIFT, 0) != 0) {
			printf("%s: posting its receives failed\n", mr_kind_names[k]);
			nmembers++;
			return TEST_FAIL;
		}
		nmembers++;
	}
	if (real == 0)
		printf("no real queue runs here\n");
	return real > 0 ? TEST_PASS : TEST_SKIP;
}

static void
print_members(const struct tg_prod *prod)
{
	struct cqpoll_cq_stats cs;
	unsigned int i;

	for (i = 0; i < nmembers; i++) {
		cqpoll_cq_stats_get(members[i].cq, &cs);
		printf("  %-9s posted=%" PRIu64 " delivered=%" PRIu64 " arms=%" PRIu64
		       " events=%" PRIu64 " spurious=%" PRIu64 " lost_oracle=%" PRIu64
		       " timeout_recoveries=%" PRIu64 " (late=%" PRIu64 " lost=%"
		       PRIu64 ", worst %" PRIu64 " us before its deadline) errors=%"
		       PRIu64 " wrong_cq=%" PRIu64 "\n", mr_kind_names[members[i].kind],
		       prod->posted[i], rx[i].expected, cs.arms, cs.events,
		       cs.spurious_events, cs.lost_wakeups, cs.timeout_recoveries,
		       rj_late(i), rj_lost(i), rj_worst_ns(i) / 1000,
		       rx[i].errors, rx[i].wrong_cq);
	}
}

/*
 * Lost wake-ups on the io_uring member itself: a recovery counted on another
 * member can follow one of its own (a CQE delivered by the safety net lets
 * the producer post before the net polls the next member, and a completion
 * with no host timestamp found there counts), so the control judges this one.
 */
static uint64_t
uring_caught(void)
{
	struct cqpoll_cq_stats cs;
	unsigned int i;

	for (i = 0; i < nmembers; i++) {
		if (members[i].kind != MR_URING)
			continue;
		cqpoll_cq_stats_get(members[i].cq, &cs);
		return rj_lost(i) + cs.lost_wakeups;
	}
	return 0;
}

/* Every member armed and woken by its own events: it took part. */
static int
check_members(const struct opts *o, const struct tg_prod *prod)
{
	struct cqpoll_cq_stats cs;
	unsigned int i;

	for (i = 0; i < nmembers; i++) {
		TEST_ASSERT(rx[i].errors == 0 && rx[i].wrong_cq == 0,
			    "%s: %" PRIu64 " out of order, %" PRIu64 " of another cq",
			    mr_kind_names[members[i].kind], rx[i].errors, rx[i].wrong_cq);
		if (o->expect_lost)
			continue;
		TEST_ASSERT(rx[i].expected == prod->posted[i], "%s: got %" PRIu64
			    " of %" PRIu64, mr_kind_names[members[i].kind],
			    rx[i].expected, prod->posted[i]);
		cqpoll_cq_stats_get(members[i].cq, &cs);
		TEST_ASSERT(cs.arms > 0 && cs.events > 0, "%s: %" PRIu64 " arms, %"
			    PRIu64 " events", mr_kind_names[members[i].kind],
			    cs.arms, cs.events);
	}
	return TEST_PASS;
}

static int
run(const struct opts *o)
{
	struct cqpoll_group_conf conf = { .mode = o->mode, .wait_timeout_ms = o->timeout_ms,
					  .cold_us = o->cold_us };
	static struct cqpoll_cq *cqs[MR_KINDS];
	struct cqpoll_group_stats st;
	struct cqpoll_group *g;
	struct tg_prod prod;
	uint64_t t0;
	pthread_t pt, gt;
	unsigned int i;
	void *ret;
	int r;

	conf.policy = cqpoll_policy_find("adaptive:max_spin_us=20", &conf.policy_args);
	g = cqpoll_group_create(&conf);
	TEST_ASSERT(g != NULL, "group: %s", strerror(errno));
	for (i = 0; i < nmembers; i++) {
		cqs[i] = members[i].cq;
		TEST_ASSERT_EQ(cqpoll_group_add(g, cqs[i], mr_cb, &rx[i]), 0);
	}
	rj_init(cqs, nmembers, next_seq);
	/*
	 * Gaps up to 30 us straddle a sleeping group's transition, 100 us the
	 * adaptive spin's end, 60 us a member going cold after 20 us.
	 */
	prod = (struct tg_prod){ .cqs = cqs, .ncqs = nmembers, .post = mr_post_cb,
		.consumed = &consumed, .seed = 0x9e3779b97f4a7c15ull, .wait_drain = 1,
		.max_gap_ns = o->mode == CQPOLL_GROUP_MODE_INTERRUPT ? 30000 :
			      o->mode == CQPOLL_GROUP_MODE_ADAPTIVE ? 100000 :
			      3 * o->cold_us * 1000 };
	TEST_ASSERT_EQ(pthread_create(&pt, NULL, tg_producer, &prod), 0);
	TEST_ASSERT_EQ(pthread_create(&gt, NULL, run_thread, g), 0);
	t0 = test_now_ns();
	do {
		usleep(10000);
		cqpoll_group_stats_get(g, &st);
	} while (done(o, &st) < o->transitions && test_now_ns() - t0 < DEADLINE_NS &&
		 !(o->expect_lost && uring_caught() >= NAIVE_ENOUGH));
	__atomic_store_n(&prod.stop, 1, __ATOMIC_RELEASE);
	pthread_join(pt, NULL);
	TEST_ASSERT_EQ(cqpoll_group_stop(g), 0);
	pthread_join(gt, &ret);
	TEST_ASSERT_EQ((intptr_t)ret, 0);
	/* What is still on its way through a socket is waited for too. */
	r = tg_drain(g, &consumed, prod.posted_total);
	TEST_ASSERT(r >= 0, "drain: %d", r);
	cqpoll_group_stats_get(g, &st);
	printf("mode=%s members=%u naive_uring=%d naive_delay_ns=%" PRIu64
	       " posted=%" PRIu64 " consumed=%" PRIu64 " sleeps=%" PRIu64
	       " transitions=%" PRIu64 " cold_arms=%" PRIu64 " event_checks=%" PRIu64
	       " wake_event=%" PRIu64 " wake_timeout=%" PRIu64 " lost_oracle=%" PRIu64
	       " timeout_recoveries=%" PRIu64 " drain_stalls=%" PRIu64
	       " elapsed_ms=%" PRIu64 "\n",
	       cqpoll_group_mode_name(o->mode), nmembers, o->naive, o->naive_delay_ns,
	       prod.posted_total, consumed, st.sleeps, st.transitions, st.cold_arms,
	       st.event_checks, st.wakeups_event, st.wakeups_timeout, st.lost_wakeups,
	       st.timeout_recoveries, prod.stalls, (test_now_ns() - t0) / 1000000);
	print_members(&prod);
	if (check_members(o, &prod) != TEST_PASS)
		return TEST_FAIL;
	if (o->expect_lost) {
		TEST_ASSERT(uring_caught() > 0,
			    "the naive transition on io_uring was not caught");
		printf("negative control: lost wake-ups caught, as expected\n");
	} else {
		TEST_ASSERT_EQ(consumed, prod.posted_total);
		TEST_ASSERT_EQ(st.lost_wakeups, 0);
		/* Late recoveries are allowed; lost ones are not (see the top). */
		for (i = 0; i < nmembers; i++)
			TEST_ASSERT(rj_lost(i) == 0, "%s: %" PRIu64 " lost wake-ups "
				    "found by the safety net (posted up to %" PRIu64
				    " us before the deadline of their event)",
				    mr_kind_names[members[i].kind], rj_lost(i),
				    rj_worst_ns(i) / 1000);
		/* On a loaded machine the deadline may come first: a tenth will do. */
		TEST_ASSERT(done(o, &st) >= o->transitions / 10, "only %" PRIu64
			    " %s", done(o, &st), o->mode == CQPOLL_GROUP_MODE_BUSY ?
			    "cold arms" : "sleeps");
		if (o->mode == CQPOLL_GROUP_MODE_BUSY)
			TEST_ASSERT(st.sleeps == 0 && st.cold_arms > 0,
				    "busy: %" PRIu64 " sleeps, %" PRIu64 " cold arms",
				    st.sleeps, st.cold_arms);
		else
			TEST_ASSERT(st.sleeps > 0, "the group never slept");
		if (o->mode == CQPOLL_GROUP_MODE_ADAPTIVE)
			TEST_ASSERT(st.cold_arms > 0, "adaptive: no member went cold");
	}
	cqpoll_group_destroy(g);
	return TEST_PASS;
}

static int
parse_u64(const char *s, uint64_t *v, uint64_t max)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno != 0 || *end != '\0' || *v > max ? -1 : 0;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "transitions", required_argument, NULL, 't' },
		{ "cold-us", required_argument, NULL, 'c' },
		{ "timeout-ms", required_argument, NULL, 'w' },
		{ "naive-uring", no_argument, NULL, 'n' },
		{ "naive-delay-ns", required_argument, NULL, 'd' },
		{ "expect-lost", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, mode_given = 0;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			for (v = 0; v < 3 && strcmp(optarg,
				cqpoll_group_mode_name((enum cqpoll_group_mode)v)) != 0; v++)
				;
			if (v == 3) {
				fprintf(stderr, "bad --mode: %s\n", optarg);
				return -1;
			}
			o->mode = (enum cqpoll_group_mode)v;
			mode_given = 1;
			break;
		case 't':
			if (parse_u64(optarg, &o->transitions, UINT64_MAX) != 0 ||
			    o->transitions == 0) {
				fprintf(stderr, "bad --transitions: %s\n", optarg);
				return -1;
			}
			break;
		case 'c':
			if (parse_u64(optarg, &v, 1000000) != 0 || v == 0) {
				fprintf(stderr, "bad --cold-us: %s\n", optarg);
				return -1;
			}
			o->cold_us = (uint32_t)v;
			break;
		case 'w':
			if (parse_u64(optarg, &v, 60000) != 0 || v == 0) {
				fprintf(stderr, "bad --timeout-ms: %s\n", optarg);
				return -1;
			}
			o->timeout_ms = (uint32_t)v;
			break;
		case 'n':
			o->naive = 1;
			break;
		case 'd':
			if (parse_u64(optarg, &o->naive_delay_ns, 999999999) != 0) {
				fprintf(stderr, "bad --naive-delay-ns: %s\n", optarg);
				return -1;
			}
			break;
		case 'x':
			o->expect_lost = 1;
			break;
		default:
			return -1;
		}
	}
	if (!mode_given || (o->expect_lost && !o->naive)) {
		fprintf(stderr, "need --mode=interrupt|adaptive|busy; --expect-lost "
			"needs --naive-uring\n");
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o = { .transitions = 5000, .cold_us = 20, .timeout_ms = 100 };
	unsigned int i;
	int rc;

	if (parse(argc, argv, &o) != 0)
		return TEST_FAIL;
	rc = open_members(&o);
	if (rc == TEST_PASS)
		rc = run(&o);
	for (i = 0; i < nmembers; i++)
		mr_close(&members[i]);
	printf("group-mixed-real: %s\n", rc == TEST_PASS ? "ok" :
	       rc == TEST_SKIP ? "skip" : "FAIL");
	return rc;
}
