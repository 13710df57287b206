/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libcqpoll_dpdk under a real EAL without hugepages (--no-huge --no-pci):
 * completions handed to a worker lcore through the rte_ring handoff (drop
 * and wait on a full ring), a group created on a worker lcore with its
 * memory on that lcore's socket, and a CQ's events in the lcore's rte_epoll
 * next to another fd, as an ethdev Rx interrupt would be.
 */

#include <inttypes.h>
#include <numaif.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_epoll.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "cqpoll.h"
#include "cqpoll_dpdk_epoll.h"
#include "cqpoll_dpdk_handoff.h"
#include "cqpoll_dpdk_lcore.h"
#include "cqpoll_group.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

static unsigned int worker = RTE_MAX_LCORE;

/* Post wr_ids [*next, end) on @cq, running @g whenever the CQ is full. */
static int
post_range(struct cqpoll_group *g, struct cqpoll_cq *cq, uint64_t *next,
	   uint64_t end)
{
	int r;

	while (*next < end) {
		struct cqpoll_completion c = { .wr_id = *next, .byte_len = 8 };

		r = cqpoll_sw_emu_post(cq, &c);
		if (r == -ENOSPC) {
			r = cqpoll_group_run_once(g);
			if (r < 0)
				return r;
			continue;
		}
		if (r != 0)
			return r;
		(*next)++;
	}
	return 0;
}

static int
test_handoff_bad_args(void)
{
	struct cqpoll_dpdk_handoff_conf hc = { .name = "bad" };
	struct cqpoll_dpdk_handoff_stats st;
	struct cqpoll_completion c;

	errno = 0;
	TEST_ASSERT(cqpoll_dpdk_handoff_create(NULL, -1) == NULL && errno == EINVAL,
		    "NULL conf");
	hc.name = NULL;
	TEST_ASSERT(cqpoll_dpdk_handoff_create(&hc, -1) == NULL && errno == EINVAL,
		    "NULL name");
	hc = (struct cqpoll_dpdk_handoff_conf){ .name = "bad", .size = (1u << 24) + 1 };
	TEST_ASSERT(cqpoll_dpdk_handoff_create(&hc, -1) == NULL && errno == EINVAL,
		    "size");
	hc = (struct cqpoll_dpdk_handoff_conf){ .name = "bad",
		.full = (enum cqpoll_dpdk_handoff_full)7 };
	TEST_ASSERT(cqpoll_dpdk_handoff_create(&hc, -1) == NULL && errno == EINVAL,
		    "full mode");
	hc = (struct cqpoll_dpdk_handoff_conf){ .name = "bad" };
	TEST_ASSERT(cqpoll_dpdk_handoff_create(&hc, -2) == NULL && errno == EINVAL,
		    "socket -2");
	TEST_ASSERT(cqpoll_dpdk_handoff_create(&hc, RTE_MAX_NUMA_NODES) == NULL &&
		    errno == EINVAL, "socket too large");
	TEST_ASSERT_EQ(cqpoll_dpdk_handoff_dequeue(NULL, &c, 1), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_dpdk_handoff_stats_get(NULL, &st), -EINVAL);
	TEST_ASSERT(cqpoll_dpdk_handoff_ring(NULL) == NULL, "ring of NULL");
	cqpoll_dpdk_handoff_destroy(NULL);
	return TEST_PASS;
}

/*
 * No worker, a ring of 64, 100 completions in bursts of 32: the first 64
 * go through in order, the other 36 are dropped and counted.
 */
static int
test_handoff_drop(void)
{
	struct cqpoll_dpdk_handoff_conf hc = { .name = "drop", .size = 64 };
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_BUSY, .burst = 32 };
	struct cqpoll_dpdk_handoff_stats st;
	struct cqpoll_completion c[128];
	struct cqpoll_dpdk_handoff *h;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	uint64_t next = 0;
	int i, n;

	h = cqpoll_dpdk_handoff_create(&hc, -1);
	TEST_ASSERT(h != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(rte_ring_get_capacity(cqpoll_dpdk_handoff_ring(h)), 64);
	g = cqpoll_group_create(&gc);
	cq = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(g != NULL && cq != NULL, "group, cq");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, cqpoll_dpdk_handoff_cb, h), 0);
	TEST_ASSERT_EQ(post_range(g, cq, &next, 100), 0);
	for (i = 0; i < 4; i++)
		TEST_ASSERT(cqpoll_group_run_once(g) > 0, "iteration %d", i);
	TEST_ASSERT_EQ(cqpoll_group_run_once(g), 0);
	TEST_ASSERT_EQ(cqpoll_dpdk_handoff_stats_get(h, &st), 0);
	TEST_ASSERT_EQ(st.enqueued, 64);
	TEST_ASSERT_EQ(st.dropped, 36);
	TEST_ASSERT_EQ(st.full, 2);
	n = cqpoll_dpdk_handoff_dequeue(h, c, 128);
	TEST_ASSERT_EQ(n, 64);
	for (i = 0; i < n; i++)
		TEST_ASSERT_EQ(c[i].wr_id, i);
	TEST_ASSERT_EQ(cqpoll_dpdk_handoff_dequeue(h, c, 128), 0);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	cqpoll_dpdk_handoff_destroy(h);
	return TEST_PASS;
}

struct consumer {
	struct cqpoll_dpdk_handoff *h;
	uint64_t want;
	uint64_t got;
	uint64_t errors;
};

static int
consume(void *arg)
{
	struct consumer *w = arg;
	struct cqpoll_completion c[32];
	int i, n;

	while (w->got < w->want) {
		n = cqpoll_dpdk_handoff_dequeue(w->h, c, 32);
		for (i = 0; i < n; i++) {
			if (c[i].wr_id != w->got)
				w->errors++;
			w->got = c[i].wr_id + 1;
		}
	}
	return 0;
}

/*
 * A worker lcore consumes through a ring far smaller than the traffic, in
 * wait mode: everything arrives, in order, nothing is dropped, and the ring
 * lives on the socket asked for.
 */
static int
test_handoff_wait_worker(void)
{
	struct cqpoll_dpdk_handoff_conf hc = { .name = "wait", .size = 64,
		.full = CQPOLL_DPDK_HANDOFF_WAIT, .single_producer = 1,
		.single_consumer = 1 };
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_BUSY };
	struct cqpoll_dpdk_handoff_stats st;
	struct consumer w = { .want = 200000 };
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	uint64_t next = 0;
	int socket;

	if (worker == RTE_MAX_LCORE)
		return TEST_SKIP;
	socket = (int)rte_lcore_to_socket_id(worker);
	w.h = cqpoll_dpdk_handoff_create(&hc, socket);
	TEST_ASSERT(w.h != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_dpdk_handoff_ring(w.h)->memzone->socket_id, socket);
	g = cqpoll_group_create(&gc);
	cq = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(g != NULL && cq != NULL, "group, cq");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, cqpoll_dpdk_handoff_cb, w.h), 0);
	TEST_ASSERT_EQ(rte_eal_remote_launch(consume, &w, worker), 0);
	TEST_ASSERT_EQ(post_range(g, cq, &next, w.want), 0);
	while (cqpoll_group_run_once(g) > 0)
		;
	TEST_ASSERT_EQ(rte_eal_wait_lcore(worker), 0);
	TEST_ASSERT_EQ(cqpoll_dpdk_handoff_stats_get(w.h, &st), 0);
	printf("  wait: enqueued %" PRIu64 " dropped %" PRIu64 " full %" PRIu64 "\n",
	       st.enqueued, st.dropped, st.full);
	TEST_ASSERT_EQ(w.got, w.want);
	TEST_ASSERT_EQ(w.errors, 0);
	TEST_ASSERT_EQ(st.enqueued, w.want);
	TEST_ASSERT_EQ(st.dropped, 0);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	cqpoll_dpdk_handoff_destroy(w.h);
	return TEST_PASS;
}

static int
hold(void *arg)
{
	while (!__atomic_load_n((int *)arg, __ATOMIC_ACQUIRE))
		rte_pause();
	return 0;
}

/* The node of the page at @p, or -1. */
static int
node_of(const void *p)
{
	int node = -1;

	if (get_mempolicy(&node, NULL, 0, (void *)(uintptr_t)p,
			  MPOL_F_NODE | MPOL_F_ADDR) != 0)
		return -1;
	return node;
}

static int
test_group_on_lcore(void)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_ADAPTIVE,
		.policy = cqpoll_policy_hybrid() };
	struct cqpoll_group *g;
	int release = 0, node;

	errno = 0;
	TEST_ASSERT(cqpoll_dpdk_group_create_on_lcore(&gc, RTE_MAX_LCORE) == NULL &&
		    errno == EINVAL, "lcore out of range");
	/* The calling lcore: created directly. */
	g = cqpoll_dpdk_group_create_on_lcore(&gc, rte_lcore_id());
	TEST_ASSERT(g != NULL, "here: %s", strerror(errno));
	cqpoll_group_destroy(g);
	/* The group's own errors come back through errno. */
	gc.policy_args = "nap_pct=0";
	errno = 0;
	TEST_ASSERT(cqpoll_dpdk_group_create_on_lcore(&gc, rte_lcore_id()) == NULL &&
		    errno == EINVAL, "bad policy args");
	gc.policy_args = NULL;
	if (worker == RTE_MAX_LCORE)
		return TEST_SKIP;
	g = cqpoll_dpdk_group_create_on_lcore(&gc, worker);
	TEST_ASSERT(g != NULL, "on lcore %u: %s", worker, strerror(errno));
	node = node_of(g);
	printf("  group on lcore %u: node %d, lcore socket %u\n", worker, node,
	       rte_lcore_to_socket_id(worker));
	/* -1: no NUMA support here (ENOSYS), nothing to compare. */
	if (node >= 0)
		TEST_ASSERT_EQ(node, (int)rte_lcore_to_socket_id(worker));
	cqpoll_group_destroy(g);
	/* A busy worker cannot create it. */
	TEST_ASSERT_EQ(rte_eal_remote_launch(hold, &release, worker), 0);
	errno = 0;
	g = cqpoll_dpdk_group_create_on_lcore(&gc, worker);
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(worker);
	TEST_ASSERT(g == NULL && errno == EBUSY, "busy lcore: %p %d", (void *)g, errno);
	return TEST_PASS;
}

/*
 * A CQ in the lcore's rte_epoll next to an eventfd (a stand-in for an Rx
 * interrupt fd): nothing ready while the CQ is armed and empty; a completion
 * makes one rte_epoll_wait() return the CQ's data; once removed, the CQ no
 * longer wakes it, while the other fd still does.
 */
static int
test_epoll_cq(void)
{
	struct rte_epoll_event other = { .epdata = { .event = EPOLLIN } };
	struct cqpoll_completion c = { .wr_id = 7 }, out[4];
	struct cqpoll_dpdk_epoll_cq *e;
	struct rte_epoll_event ev[4];
	struct cqpoll_cq *cq;
	int efd, marker = 0, other_marker = 0;
	uint64_t one = 1;

	errno = 0;
	TEST_ASSERT(cqpoll_dpdk_epoll_add_cq(RTE_EPOLL_PER_THREAD, NULL, NULL) == NULL &&
		    errno == EINVAL, "NULL cq");
	TEST_ASSERT_EQ(cqpoll_dpdk_epoll_del_cq(NULL), 0);
	cq = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(cq != NULL, "cq");
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	TEST_ASSERT(efd >= 0, "eventfd");
	other.epdata.data = &other_marker;
	TEST_ASSERT_EQ(rte_epoll_ctl(RTE_EPOLL_PER_THREAD, EPOLL_CTL_ADD, efd, &other), 0);
	e = cqpoll_dpdk_epoll_add_cq(RTE_EPOLL_PER_THREAD, cq, &marker);
	TEST_ASSERT(e != NULL, "add: %s", strerror(errno));
	errno = 0;
	TEST_ASSERT(cqpoll_dpdk_epoll_add_cq(RTE_EPOLL_PER_THREAD, cq, &marker) == NULL &&
		    errno == EEXIST, "twice: %d", errno);

	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, out, 4), 0);
	TEST_ASSERT_EQ(rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 4, 0), 0);
	TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq, &c), 0);
	TEST_ASSERT_EQ(rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 4, 1000), 1);
	TEST_ASSERT(ev[0].epdata.data == &marker, "data of the CQ's event");
	TEST_ASSERT_EQ(ev[0].fd, cqpoll_cq_event_fd(cq));
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 1);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, out, 4), 1);
	TEST_ASSERT_EQ(out[0].wr_id, 7);

	TEST_ASSERT_EQ(cqpoll_dpdk_epoll_del_cq(e), 0);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, out, 4), 0);
	TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq, &c), 0);
	TEST_ASSERT_EQ(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	TEST_ASSERT_EQ(rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 4, 1000), 1);
	TEST_ASSERT(ev[0].epdata.data == &other_marker, "only the other fd");
	TEST_ASSERT_EQ(rte_epoll_ctl(RTE_EPOLL_PER_THREAD, EPOLL_CTL_DEL, efd, &other), 0);
	close(efd);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static uint64_t group_seen;

static void
count_cb(struct cqpoll_cq *cq, const struct cqpoll_completion *c, unsigned int n,
	 void *arg)
{
	(void)cq;
	(void)c;
	(void)arg;
	group_seen += n;
}

/*
 * A whole poll group in the lcore's rte_epoll, next to a stand-in Rx
 * interrupt fd: the group sleeps through cqpoll_group_sleep_prepare(), one
 * rte_epoll_wait() covers its three CQs and the other fd, and
 * cqpoll_group_sleep_finish() takes whatever woke.
 */
static int
test_epoll_group(void)
{
	struct rte_epoll_event other = { .epdata = { .event = EPOLLIN } };
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_BUSY };
	struct cqpoll_completion c = { .wr_id = 1 };
	struct cqpoll_dpdk_epoll_cq *e;
	struct cqpoll_group_stats st;
	struct rte_epoll_event ev[4];
	struct cqpoll_group *g;
	struct cqpoll_cq *cq[3];
	int efd, other_marker = 0;
	uint64_t one = 1, v;
	unsigned int i;

	group_seen = 0;
	errno = 0;
	TEST_ASSERT(cqpoll_dpdk_epoll_add_group(RTE_EPOLL_PER_THREAD, NULL, NULL) == NULL &&
		    errno == EINVAL, "NULL group");
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(g != NULL, "group");
	for (i = 0; i < 3; i++) {
		struct cqpoll_sw_emu_conf sw = { .arm = (enum cqpoll_arm_semantics)i };

		cq[i] = cqpoll_sw_emu_cq_create(&sw);
		TEST_ASSERT(cq[i] != NULL, "cq");
		TEST_ASSERT_EQ(cqpoll_group_add(g, cq[i], count_cb, NULL), 0);
	}
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	TEST_ASSERT(efd >= 0, "eventfd");
	other.epdata.data = &other_marker;
	TEST_ASSERT_EQ(rte_epoll_ctl(RTE_EPOLL_PER_THREAD, EPOLL_CTL_ADD, efd, &other), 0);
	e = cqpoll_dpdk_epoll_add_group(RTE_EPOLL_PER_THREAD, g, g);
	TEST_ASSERT(e != NULL, "add: %s", strerror(errno));

	for (i = 0; i < 3; i++) {
		TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 0);
		TEST_ASSERT_EQ(rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 4, 0), 0);
		TEST_ASSERT_EQ(cqpoll_sw_emu_post(cq[i], &c), 0);
		TEST_ASSERT_EQ(rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 4, 1000), 1);
		TEST_ASSERT(ev[0].epdata.data == g, "the group's event");
		TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), 1);
	}
	TEST_ASSERT_EQ(group_seen, 3);
	/* The Rx stand-in wakes the same wait; the group finds nothing. */
	TEST_ASSERT_EQ(cqpoll_group_sleep_prepare(g), 0);
	TEST_ASSERT_EQ(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	TEST_ASSERT_EQ(rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 4, 1000), 1);
	TEST_ASSERT(ev[0].epdata.data == &other_marker, "the other fd");
	TEST_ASSERT_EQ(read(efd, &v, sizeof(v)), (ssize_t)sizeof(v));
	TEST_ASSERT_EQ(cqpoll_group_sleep_finish(g), 0);
	cqpoll_group_stats_get(g, &st);
	TEST_ASSERT_EQ(st.sleeps, 4);
	TEST_ASSERT_EQ(st.wakeups_event, 3);
	TEST_ASSERT_EQ(st.lost_wakeups, 0);

	TEST_ASSERT_EQ(cqpoll_dpdk_epoll_del_cq(e), 0);
	TEST_ASSERT_EQ(rte_epoll_ctl(RTE_EPOLL_PER_THREAD, EPOLL_CTL_DEL, efd, &other), 0);
	close(efd);
	cqpoll_group_destroy(g);
	for (i = 0; i < 3; i++)
		cqpoll_cq_destroy(cq[i]);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_handoff_bad_args),
	TEST_CASE(test_handoff_drop),
	TEST_CASE(test_handoff_wait_worker),
	TEST_CASE(test_group_on_lcore),
	TEST_CASE(test_epoll_cq),
	TEST_CASE(test_epoll_group),
};

/* The first two CPUs this process may use; one lcore each if there are two. */
static void
lcore_map(char *buf, size_t len)
{
	int cpus[2] = { 0, 0 }, n = 0, i;
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (i = 0; i < CPU_SETSIZE && n < 2; i++)
			if (CPU_ISSET(i, &set))
				cpus[n++] = i;
	if (n == 1)
		cpus[1] = cpus[0];
	snprintf(buf, len, "0@%d,1@%d", cpus[0], cpus[1]);
}

int
main(int argc, char **argv)
{
	char lcores[64];
	char *eal[] = { argv[0], "--lcores", lcores, "--no-huge", "--no-pci",
			"--no-shconf", "--no-telemetry", "-m", "64",
			"--log-level=lib.eal:error" };
	int r;

	(void)argc;
	lcore_map(lcores, sizeof(lcores));
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])), eal) < 0) {
		fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return TEST_FAIL;
	}
	worker = rte_get_next_lcore(-1, 1, 0);
	r = test_run("dpdk", cases, sizeof(cases) / sizeof(cases[0]));
	rte_eal_cleanup();
	return r;
}
