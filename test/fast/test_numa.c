/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NUMA placement without DPDK: a group and a software CQ created on a socket
 * have their memory bound to that node (libnuma), which the kernel confirms
 * (get_mempolicy(MPOL_F_ADDR)); objects created without one keep the default
 * policy (the negative control); a socket that does not exist is refused
 * with EINVAL and a logged reason.
 */

#include <errno.h>
#include <numa.h>
#include <numaif.h>

#include "cqpoll.h"
#include "cqpoll_alloc.h"
#include "cqpoll_group.h"
#include "cqpoll_log.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

static char last_msg[256];

static void
log_write(void *arg, enum cqpoll_log_level level, const char *component,
	  const char *msg)
{
	(void)arg;
	(void)level;
	(void)component;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

static const struct cqpoll_log_hook log_hook = { .write = log_write };

/* The kernel's policy and node of the page holding @p addr. */
static int
placement(const void *addr, int *mode, unsigned long *nodes, int *node)
{
	*nodes = 0;
	if (get_mempolicy(mode, nodes, sizeof(*nodes) * 8, (void *)(uintptr_t)addr,
			  MPOL_F_ADDR) != 0)
		return -errno;
	if (get_mempolicy(node, NULL, 0, (void *)(uintptr_t)addr,
			  MPOL_F_NODE | MPOL_F_ADDR) != 0)
		return -errno;
	return 0;
}

static int
check_bound(const void *addr, int want_node, const char *what)
{
	unsigned long nodes;
	int mode, node;

	TEST_ASSERT_EQ(placement(addr, &mode, &nodes, &node), 0);
	printf("  %s: policy %d nodes 0x%lx node %d\n", what, mode, nodes, node);
	TEST_ASSERT(mode == MPOL_BIND && nodes == (1ul << want_node),
		    "%s: not bound to node %d (policy %d, nodes 0x%lx)", what,
		    want_node, mode, nodes);
	TEST_ASSERT(node == want_node, "%s: on node %d", what, node);
	return TEST_PASS;
}

static int
test_group_on_socket(void)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_BUSY,
					.flags = CQPOLL_GROUP_F_SOCKET_ID,
					.socket_id = 0 };
	struct cqpoll_group *g;
	unsigned long nodes;
	int mode, node, r;

	if (numa_available() < 0)
		return TEST_SKIP;
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(g != NULL, "create on socket 0: %s", strerror(errno));
	r = check_bound(g, 0, "group on socket 0");
	cqpoll_group_destroy(g);
	if (r != TEST_PASS)
		return r;
	/* Negative control: no socket, the default policy, not bound. */
	gc.flags = 0;
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(g != NULL, "create");
	TEST_ASSERT_EQ(placement(g, &mode, &nodes, &node), 0);
	cqpoll_group_destroy(g);
	TEST_ASSERT(mode == MPOL_DEFAULT, "group without socket: policy %d", mode);
	return TEST_PASS;
}

static int
test_sw_cq_on_socket(void)
{
	struct cqpoll_sw_conf conf = { .arm = CQPOLL_ARM_EDGE,
				       .flags = CQPOLL_SW_F_SOCKET_ID,
				       .socket_id = 0 };
	struct cqpoll_completion c = { .wr_id = 7 }, out;
	struct cqpoll_cq *cq;
	int r;

	if (numa_available() < 0)
		return TEST_SKIP;
	cq = cqpoll_sw_cq_create(&conf);
	TEST_ASSERT(cq != NULL, "create on socket 0: %s", strerror(errno));
	r = check_bound(cq, 0, "sw cq handle on socket 0");
	/* And it works. */
	TEST_ASSERT_EQ(cqpoll_sw_post(cq, &c), 0);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, &out, 1), 1);
	TEST_ASSERT_EQ(out.wr_id, 7);
	cqpoll_cq_destroy(cq);
	return r;
}

static int
test_bad_socket(void)
{
	struct cqpoll_group_conf gc = { .flags = CQPOLL_GROUP_F_SOCKET_ID };
	struct cqpoll_sw_conf sc = { .flags = CQPOLL_SW_F_SOCKET_ID };
	int bad = numa_available() < 0 ? 1 : numa_max_node() + 1;
	char want[128];

	cqpoll_log_set_hook(&log_hook);
	gc.socket_id = bad;
	errno = 0;
	TEST_ASSERT(cqpoll_group_create(&gc) == NULL && errno == EINVAL,
		    "group on socket %d", bad);
	snprintf(want, sizeof(want), "group create: socket %d does not exist", bad);
	TEST_ASSERT(strstr(last_msg, want) != NULL, "logged '%s', not '%s'",
		    last_msg, want);
	sc.socket_id = bad;
	errno = 0;
	TEST_ASSERT(cqpoll_sw_cq_create(&sc) == NULL && errno == EINVAL,
		    "sw cq on socket %d", bad);
	snprintf(want, sizeof(want), "sw cq create: socket %d does not exist", bad);
	TEST_ASSERT(strstr(last_msg, want) != NULL, "logged '%s', not '%s'",
		    last_msg, want);
	gc.socket_id = -5;
	TEST_ASSERT(cqpoll_group_create(&gc) == NULL && errno == EINVAL,
		    "socket -5");
	gc.flags = 1u << 7;
	TEST_ASSERT(cqpoll_group_create(&gc) == NULL && errno == EINVAL,
		    "unknown flag");
	cqpoll_log_set_hook(NULL);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_group_on_socket),
	TEST_CASE(test_sw_cq_on_socket),
	TEST_CASE(test_bad_socket),
};

TEST_MAIN("numa", cases)
