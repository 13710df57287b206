/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libcqpoll's messages in DPDK's log, and rte_errno from every failing
 * libcqpoll_dpdk call, under a real EAL (--no-huge --no-pci). The log goes
 * to a memory stream (rte_openlog_stream()) that each case reads back.
 */

#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_epoll.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_memory.h>
#include <rte_cpuflags.h>
#include <rte_power_intrinsics.h>

#include "cqpoll.h"
#include "cqpoll_dpdk.h"
#include "cqpoll_dpdk_epoll.h"
#include "cqpoll_dpdk_handoff.h"
#include "cqpoll_dpdk_lcore.h"
#include "cqpoll_group.h"
#include "cqpoll_log.h"
#include "cqpoll_monitor.h"
#include "cqpoll_dpdk_private.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"

static char *log_buf;
static size_t log_len;
static FILE *log_f;

/* Start capturing DPDK's log from scratch. */
static int
log_capture(void)
{
	if (log_f != NULL)
		fclose(log_f);
	free(log_buf);
	log_buf = NULL;
	log_f = open_memstream(&log_buf, &log_len);
	if (log_f == NULL)
		return -1;
	return rte_openlog_stream(log_f);
}

/* What was logged since log_capture(). */
static const char *
log_text(void)
{
	fflush(log_f);
	return log_buf != NULL ? log_buf : "";
}

static void
log_show(void)
{
	fprintf(stderr, "--- log ---\n%s--- end ---\n", log_text());
}

/* A driver's failure is logged, with the reason, under pmd.cqpoll.DRIVER. */
static int
test_driver_error_logged(void)
{
	struct cqpoll_sw_conf conf = { .arm = CQPOLL_ARM_EDGE,
				       .size = (1u << 24) + 1 };
	const char *want = "CQPOLL sw: cq create: size over 2^24 entries";

	TEST_ASSERT(log_capture() == 0, "memstream");
	rte_log_set_level_pattern("pmd.cqpoll.*", RTE_LOG_NOTICE);
	TEST_ASSERT(cqpoll_sw_cq_create(&conf) == NULL && errno == EINVAL,
		    "size refused");
	if (strstr(log_text(), want) == NULL) {
		log_show();
		TEST_ASSERT(0, "no '%s' in the log", want);
	}
	/* Negative control: the driver's logtype silenced, nothing shows. */
	TEST_ASSERT(log_capture() == 0, "memstream");
	rte_log_set_level_pattern("pmd.cqpoll.sw", RTE_LOG_CRIT);
	TEST_ASSERT(cqpoll_sw_cq_create(&conf) == NULL, "size refused");
	rte_log_set_level_pattern("pmd.cqpoll.sw", RTE_LOG_NOTICE);
	if (strstr(log_text(), "CQPOLL") != NULL) {
		log_show();
		TEST_ASSERT(0, "logged though pmd.cqpoll.sw is at crit");
	}
	return TEST_PASS;
}

/* A bad argument to a core create call says why under lib.cqpoll. */
static int
test_core_error_logged(void)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_BUSY,
					.burst = 5000 };
	const char *want = "CQPOLL: group create: burst out of range 1..1024";

	TEST_ASSERT(log_capture() == 0, "memstream");
	TEST_ASSERT(cqpoll_group_create(&gc) == NULL && errno == EINVAL,
		    "burst refused");
	if (strstr(log_text(), want) == NULL) {
		log_show();
		TEST_ASSERT(0, "no '%s' in the log", want);
	}
	return TEST_PASS;
}

static void
on_comp(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	*(unsigned int *)arg += n;
}

/* One iteration of @g, which sleeps until its 1 ms timeout. */
static int
sleep_once(struct cqpoll_group *g)
{
	return cqpoll_group_run_once(g);
}

/*
 * lib.cqpoll:debug shows the group's transition, sleep and wake-up and its
 * mode changes; at the default level none of them is even formatted.
 */
static int
test_debug_transitions(void)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_INTERRUPT,
					.wait_timeout_ms = 1 };
	const char *want[] = { "transition, poll-and-arm on",
			       "every cq empty and armed, sleeping",
			       "woken by the 1 ms timeout",
			       "mode interrupt -> busy" };
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	unsigned int got = 0, i;

	cq = cqpoll_sw_cq_create(NULL);
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(cq != NULL && g != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, on_comp, &got), 0);

	TEST_ASSERT(log_capture() == 0, "memstream");
	TEST_ASSERT_EQ(sleep_once(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_BUSY), 0);
	TEST_ASSERT(sleep_once(g) >= 0, "busy iteration");
	/* Negative control: at the default level nothing of this shows. */
	if (strstr(log_text(), "CQPOLL") != NULL) {
		log_show();
		TEST_ASSERT(0, "debug messages at the default level");
	}

	TEST_ASSERT_EQ(cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_INTERRUPT), 0);
	TEST_ASSERT(sleep_once(g) >= 0, "mode back");
	rte_log_set_level_pattern("lib.cqpoll", RTE_LOG_DEBUG);
	/*
	 * The sleep paths ask whether debug messages are wanted once per
	 * 100 ms (cqpoll_log_lib_debug()): a level raised now shows after it.
	 */
	usleep(110 * 1000);
	TEST_ASSERT(log_capture() == 0, "memstream");
	TEST_ASSERT_EQ(sleep_once(g), 0);
	TEST_ASSERT_EQ(cqpoll_group_set_mode(g, CQPOLL_GROUP_MODE_BUSY), 0);
	TEST_ASSERT(sleep_once(g) >= 0, "busy iteration");
	rte_log_set_level_pattern("lib.cqpoll", RTE_LOG_NOTICE);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (strstr(log_text(), want[i]) == NULL) {
			log_show();
			TEST_ASSERT(0, "no '%s' at debug level", want[i]);
		}
	}
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* Without a hook the core says nothing, even at debug. */
static int
test_no_hook_silent(void)
{
	const struct cqpoll_log_hook *h = cqpoll_log_get_hook();
	struct cqpoll_group_conf gc = { .burst = 5000 };

	TEST_ASSERT(h != NULL, "libcqpoll_dpdk installed no hook at start-up");
	TEST_ASSERT_EQ(cqpoll_log_set_hook(NULL), 0);
	TEST_ASSERT(log_capture() == 0, "memstream");
	TEST_ASSERT(cqpoll_group_create(&gc) == NULL, "burst refused");
	TEST_ASSERT_EQ(cqpoll_log_set_hook(h), 0);
	if (strstr(log_text(), "CQPOLL") != NULL) {
		log_show();
		TEST_ASSERT(0, "logged without a hook");
	}
	return TEST_PASS;
}

#define EXPECT_RTE_ERRNO(call, err) do {				\
	rte_errno = 0;							\
	(void)(call);							\
	TEST_ASSERT(rte_errno == (err), "%s: rte_errno %d, not %d",	\
		    #call, rte_errno, (err));				\
} while (0)

/* Every failing libcqpoll_dpdk call sets rte_errno. */
static int
test_rte_errno(void)
{
	struct cqpoll_dpdk_handoff_conf hc = { .name = "errno" };
	struct cqpoll_dpdk_handoff_stats hs;
	struct cqpoll_group_conf bad = { .burst = 5000 };
	struct cqpoll_dpdk_handoff *h;
	struct cqpoll_completion c;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;

	cq = cqpoll_sw_cq_create(NULL);
	g = cqpoll_group_create(NULL);
	TEST_ASSERT(cq != NULL && g != NULL, "create");
	EXPECT_RTE_ERRNO(cqpoll_dpdk_handoff_create(NULL, -1), EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_handoff_create(&hc, -2), EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_handoff_dequeue(NULL, &c, 1), EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_handoff_stats_get(NULL, &hs), EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_handoff_ring(NULL), EINVAL);
	h = cqpoll_dpdk_handoff_create(&hc, -1);
	TEST_ASSERT(h != NULL, "handoff");
	EXPECT_RTE_ERRNO(cqpoll_dpdk_handoff_create(&hc, -1), EEXIST);
	cqpoll_dpdk_handoff_destroy(h);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_telemetry_register_group(NULL, g), EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_telemetry_register_group("g", NULL), EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_telemetry_unregister_group("none"), ENOENT);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_telemetry_unregister_group(NULL), EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_telemetry_register_cq("", cq), EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_telemetry_unregister_cq("none"), ENOENT);
	TEST_ASSERT_EQ(cqpoll_dpdk_telemetry_register_cq("c", cq), 0);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_telemetry_register_cq("c", cq), EEXIST);
	TEST_ASSERT_EQ(cqpoll_dpdk_telemetry_unregister_cq("c"), 0);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_group_create_on_lcore(NULL, RTE_MAX_LCORE),
			 EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_group_create_on_lcore(&bad, rte_lcore_id()),
			 EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_epoll_add_cq(RTE_EPOLL_PER_THREAD, NULL, NULL),
			 EINVAL);
	EXPECT_RTE_ERRNO(cqpoll_dpdk_epoll_add_group(RTE_EPOLL_PER_THREAD, NULL,
						     NULL), EINVAL);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/*
 * Through libcqpoll_dpdk's allocator hook, a group or CQ created on a socket
 * lives in DPDK's heap on that socket; without a socket, in the C library's
 * (the negative control); a socket the EAL does not know is refused, and
 * says so.
 */
static int
test_numa_dpdk(void)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_BUSY,
					.flags = CQPOLL_GROUP_F_SOCKET_ID,
					.socket_id = (int)rte_socket_id() };
	struct cqpoll_sw_conf sc = { .flags = CQPOLL_SW_F_SOCKET_ID,
				     .socket_id = (int)rte_socket_id() };
	struct cqpoll_dpdk_handoff_conf hc = { .name = "numa-bad" };
	const struct rte_memseg_list *msl;
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	int bad = RTE_MAX_NUMA_NODES - 1;

	g = cqpoll_group_create(&gc);
	cq = cqpoll_sw_cq_create(&sc);
	TEST_ASSERT(g != NULL && cq != NULL, "create on socket %d: %s",
		    gc.socket_id, strerror(errno));
	msl = rte_mem_virt2memseg_list(g);
	TEST_ASSERT(msl != NULL && msl->socket_id == gc.socket_id,
		    "group not in DPDK's heap on socket %d", gc.socket_id);
	msl = rte_mem_virt2memseg_list(cq);
	TEST_ASSERT(msl != NULL && msl->socket_id == gc.socket_id,
		    "cq not in DPDK's heap on socket %d", gc.socket_id);
	cqpoll_cq_destroy(cq);
	cqpoll_group_destroy(g);
	gc.flags = 0;
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(g != NULL, "create");
	TEST_ASSERT(rte_mem_virt2memseg_list(g) == NULL,
		    "a group without socket in DPDK's heap");
	cqpoll_group_destroy(g);

	TEST_ASSERT(log_capture() == 0, "memstream");
	gc.flags = CQPOLL_GROUP_F_SOCKET_ID;
	gc.socket_id = bad;
	TEST_ASSERT(cqpoll_group_create(&gc) == NULL && errno == EINVAL,
		    "group on socket %d", bad);
	TEST_ASSERT(cqpoll_dpdk_handoff_create(&hc, bad) == NULL &&
		    rte_errno == EINVAL, "handoff on socket %d", bad);
	if (strstr(log_text(), "group create: socket") == NULL ||
	    strstr(log_text(), "does not exist") == NULL ||
	    strstr(log_text(), "handoff create: no such socket in the EAL") == NULL) {
		log_show();
		TEST_ASSERT(0, "the bad socket's reason is not logged");
	}
	return TEST_PASS;
}

/*
 * The power-monitor tier on DPDK: on or off as rte_cpu_get_intrinsics_support()
 * says, with the reason when off; and the conditions handed to
 * rte_power_monitor() abort the wait exactly when a completion is there
 * (checked through DPDK's callback, since this CPU cannot wait).
 */
static int
test_monitor_dpdk(void)
{
	struct cqpoll_monitor_cond c = { .mask = 1, .val = 1, .size = 1,
					 .match = CQPOLL_MONITOR_EQUAL };
	struct rte_power_monitor_cond pmc;
	struct rte_cpu_intrinsics intr;
	const char *why = NULL;
	uint8_t byte = 0xf0;
	int on;

	rte_cpu_get_intrinsics_support(&intr);
	on = cqpoll_monitor_available(1, &why);
	printf("  power monitor: %s%s\n", on ? "on" : "off: ", on ? "" : why);
	TEST_ASSERT_EQ(on, intr.power_monitor);
	if (!on)
		TEST_ASSERT(why != NULL && strstr(why, "neither WAITPKG") != NULL,
			    "reason: %s", why != NULL ? why : "(none)");
	TEST_ASSERT_EQ(cqpoll_monitor_available(2, NULL), intr.power_monitor_multi);

	c.addr = &byte;
	cqpoll_dpdk_monitor_cond(&c, &pmc);
	TEST_ASSERT(pmc.addr == &byte && pmc.size == 1, "address, size");
	TEST_ASSERT_EQ(cqpoll_dpdk_monitor_cond_clb(&pmc, 0xf0), 0);
	TEST_ASSERT_EQ(cqpoll_dpdk_monitor_cond_clb(&pmc, 0x21), -1);
	c.match = CQPOLL_MONITOR_NOT_EQUAL;
	c.mask = 0xff;
	c.val = 0xf0;
	cqpoll_dpdk_monitor_cond(&c, &pmc);
	TEST_ASSERT_EQ(cqpoll_dpdk_monitor_cond_clb(&pmc, 0xf0), 0);
	TEST_ASSERT_EQ(cqpoll_dpdk_monitor_cond_clb(&pmc, 0x20), -1);
	return TEST_PASS;
}

/*
 * Every driver of the tree logs under its own pmd.cqpoll.DRIVER, so that
 * --log-level=pmd.cqpoll.DRIVER:LEVEL governs it: silenced there, a
 * driver's message is not wanted, though lib.cqpoll still takes notices (a
 * driver without a logtype would fall back to lib.cqpoll: ucx did).
 */
static int
test_every_driver_logtype(void)
{
	static const char *const names[] = { "sw", "mlx5", "verbs", "uring", "ofi", "ucx" };
	const struct cqpoll_log_hook *h = cqpoll_log_get_hook();
	char type[64];
	unsigned int i;

	TEST_ASSERT(h != NULL && h->enabled != NULL, "no DPDK log hook");
	rte_log_set_level_pattern("lib.cqpoll", RTE_LOG_NOTICE);
	for (i = 0; i < RTE_DIM(names); i++) {
		snprintf(type, sizeof(type), "pmd.cqpoll.%s", names[i]);
		rte_log_set_level_pattern(type, RTE_LOG_CRIT);
		TEST_ASSERT(!h->enabled(h->arg, CQPOLL_LOG_ERR, names[i]),
			    "%s: an error wanted though %s is at crit", names[i], type);
		rte_log_set_level_pattern(type, RTE_LOG_DEBUG);
		TEST_ASSERT(h->enabled(h->arg, CQPOLL_LOG_DEBUG, names[i]),
			    "%s: a debug message not wanted though %s is at debug", names[i], type);
		rte_log_set_level_pattern(type, RTE_LOG_NOTICE);
	}
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_every_driver_logtype),
	TEST_CASE(test_driver_error_logged),
	TEST_CASE(test_core_error_logged),
	TEST_CASE(test_debug_transitions),
	TEST_CASE(test_no_hook_silent),
	TEST_CASE(test_rte_errno),
	TEST_CASE(test_numa_dpdk),
	TEST_CASE(test_monitor_dpdk),
};

int
main(int argc, char **argv)
{
	char *eal[] = { argv[0], "-l", "0", "--no-huge", "--no-pci",
			"--no-shconf", "--no-telemetry", "-m", "64",
			"--log-level=lib.eal:error" };
	cpu_set_t set;
	char lcore[32];
	int r, i;

	(void)argc;
	/* One lcore, on a CPU this process may use. */
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set)) {
				snprintf(lcore, sizeof(lcore), "0@%d", i);
				eal[1] = "--lcores";
				eal[2] = lcore;
				break;
			}
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])), eal) < 0) {
		fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return TEST_FAIL;
	}
	r = test_run("dpdk-log", cases, sizeof(cases) / sizeof(cases[0]));
	rte_openlog_stream(NULL);
	if (log_f != NULL)
		fclose(log_f);
	free(log_buf);
	rte_eal_cleanup();
	return r;
}
