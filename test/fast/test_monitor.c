/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The power-monitor tier without the instructions (this machine has neither
 * UMWAIT nor MONITORX): each driver's monitor address and value, lap after
 * lap (a wrong phase fails at once on the second lap); the adaptive policy's
 * choice of "monitor" on a synthetic clock, against the same policy without
 * it (the negative control); a group's monitor waits through a fake hook,
 * its fallback to polling where the tier is off, with the reason logged
 * once, and no completion lost either way.
 */

#include <errno.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_group.h"
#include "cqpoll_log.h"
#include "cqpoll_monitor.h"
#include "cqpoll_sw.h"
#include "cqpoll_test.h"
#ifdef CQPOLL_TEST_MLX5
#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#endif

typedef int (*post_fn)(struct cqpoll_cq *cq, uint64_t id);

static int
sw_post(struct cqpoll_cq *cq, uint64_t id)
{
	struct cqpoll_completion c = { .wr_id = id, .byte_len = 8 };

	return cqpoll_sw_post(cq, &c);
}

/*
 * Over several laps of a small CQ: empty, the condition is false and the
 * driver gives an address; once an entry is posted the same condition is
 * true and the driver says "poll" (-EAGAIN).
 */
static int
laps(struct cqpoll_cq *cq, post_fn post, unsigned int n, const char *what)
{
	struct cqpoll_monitor_cond cond;
	struct cqpoll_completion c;
	unsigned int i;

	for (i = 0; i < n; i++) {
		TEST_ASSERT(cqpoll_cq_get_monitor_addr(cq, &cond) == 0,
			    "%s: entry %u: no address on an empty CQ", what, i);
		TEST_ASSERT(cqpoll_monitor_cond_met(&cond) == 0,
			    "%s: entry %u: condition true on an empty CQ", what, i);
		TEST_ASSERT_EQ(post(cq, i), 0);
		TEST_ASSERT(cqpoll_monitor_cond_met(&cond) == 1,
			    "%s: entry %u: condition false after the write", what, i);
		TEST_ASSERT(cqpoll_cq_get_monitor_addr(cq, &cond) == -EAGAIN,
			    "%s: entry %u: no -EAGAIN with an entry there", what, i);
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, &c, 1), 1);
		/* mlx5 leaves wr_id to the QP's owner. */
		if (c.flags & CQPOLL_COMPLETION_F_WR_ID)
			TEST_ASSERT_EQ(c.wr_id, i);
	}
	return TEST_PASS;
}

static int
test_sw_address(void)
{
	struct cqpoll_sw_conf conf = { .size = 4, .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_cq *cq = cqpoll_sw_cq_create(&conf);
	int r;

	TEST_ASSERT(cq != NULL, "create");
	r = laps(cq, sw_post, 4 * 5 + 1, "sw");
	cqpoll_cq_destroy(cq);
	return r;
}

#ifdef CQPOLL_TEST_MLX5
static int
mlx5_post(struct cqpoll_cq *cq, uint64_t id)
{
	struct cqpoll_completion c = { .wr_id = id, .byte_len = 64, .qp_num = 7,
				       .opcode = CQPOLL_OP_RECV };

	return cqpoll_mlx5_emu_post(cq, &c);
}

/* Immediate data: never held for a compressed session, written at once. */
static int
mlx5_post_imm(struct cqpoll_cq *cq, uint64_t id)
{
	struct cqpoll_completion c = { .wr_id = id, .byte_len = 64, .qp_num = 7,
				       .opcode = CQPOLL_OP_RECV,
				       .flags = CQPOLL_COMPLETION_F_IMM, .imm_data = 1 };

	return cqpoll_mlx5_emu_post(cq, &c);
}

/*
 * mlx5: the first lap's slots hold the INVALID mark (owner 0, the owner of
 * the first lap), later laps the owner bit; 64- and 128-byte CQEs; the
 * enhanced compression layout watches the iteration-count byte instead.
 */
static int
test_mlx5_address(void)
{
	static const char *const what[] = { "mlx5", "mlx5 cqe128", "mlx5 enhanced" };
	uint32_t flags[] = { 0, CQPOLL_MLX5_F_CQE128,
			     CQPOLL_MLX5_F_CQE_COMPRESS | CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED };
	struct cqpoll_mlx5_emu_conf conf = { .size = 4, .arm = CQPOLL_ARM_LEVEL,
					     .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };
	struct cqpoll_cq *cq;
	unsigned int i;
	int r;

	for (i = 0; i < 3; i++) {
		conf.flags = flags[i];
		cq = cqpoll_mlx5_emu_cq_create(&conf);
		TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
		r = laps(cq, i == 2 ? mlx5_post_imm : mlx5_post, 4 * 5 + 1, what[i]);
		cqpoll_cq_destroy(cq);
		if (r != TEST_PASS)
			return r;
	}
	return TEST_PASS;
}
#endif

/* A driver without get_monitor_addr (as verbs) cannot tell. */
static int
noop_arm(void *p)
{
	(void)p;
	return 0;
}

static int
noop_fd(void *p)
{
	(void)p;
	return 0;
}

static void
noop_destroy(void *p)
{
	(void)p;
}

static int
noop_poll(void *p, struct cqpoll_completion *c, unsigned int n)
{
	(void)p;
	(void)c;
	(void)n;
	return 0;
}

static int
test_no_address(void)
{
	static const struct cqpoll_driver_ops ops = {
		.size = CQPOLL_DRIVER_OPS_SIZE,
		.name = "opaque", .arm = noop_arm, .event_fd = noop_fd,
		.event_get = noop_fd, .destroy = noop_destroy,
	};
	struct cqpoll_cq_params p = { .arm = CQPOLL_ARM_EDGE, .size = 4 };
	struct cqpoll_monitor_cond cond = { .size = 3 };
	struct cqpoll_cq *cq = cqpoll_cq_alloc(&ops, noop_poll, NULL, &p);

	TEST_ASSERT(cq != NULL, "alloc");
	TEST_ASSERT_EQ(cqpoll_cq_get_monitor_addr(cq, &cond), -ENOTSUP);
	TEST_ASSERT_EQ(cqpoll_cq_get_monitor_addr(NULL, &cond), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_monitor_cond_met(&cond), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_monitor_cond_met(NULL), -EINVAL);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/*
 * The adaptive policy on a synthetic clock: arrivals every 5 us, wake-ups
 * costing 30 us. 6 us into a silence a sleep is not worth it (30 x 30/5 us),
 * so it polls on, or with monitor_us=1 waits in a monitor; 2 ms in, past
 * max_spin_us, it sleeps either way. Gaps of 500 ns are shorter than the
 * monitor's wake-up: it polls.
 */
static int
decide_after(const char *args, uint64_t gap_ns, uint64_t idle_ns,
	     enum cqpoll_policy_action *a)
{
	const struct cqpoll_policy_ops *ops = cqpoll_policy_adaptive();
	uint64_t state[512], t = 1000000000ull;
	unsigned int i;

	if (ops->state_size > sizeof(state) || ops->init(state, args) != 0)
		return -1;
	for (i = 0; i < 64; i++, t += gap_ns)
		ops->decide(state, 1, t);
	*a = ops->decide(state, 0, t - gap_ns + idle_ns);
	return 0;
}

static int
test_policy_choice(void)
{
	const char *mon = "monitor_us=1,probe_ms=0";
	enum cqpoll_policy_action a;

	TEST_ASSERT_EQ(decide_after(mon, 5000, 6000, &a), 0);
	TEST_ASSERT(a == CQPOLL_POLICY_MONITOR, "5 us gaps, 6 us idle: %d", a);
	TEST_ASSERT_EQ(decide_after(mon, 5000, 2000000, &a), 0);
	TEST_ASSERT(a == CQPOLL_POLICY_SLEEP, "2 ms idle: %d", a);
	TEST_ASSERT_EQ(decide_after(mon, 500, 600, &a), 0);
	TEST_ASSERT(a == CQPOLL_POLICY_KEEP_POLLING, "500 ns gaps: %d", a);
	/* Negative control: without monitor_us, the same silence polls. */
	TEST_ASSERT_EQ(decide_after("probe_ms=0", 5000, 6000, &a), 0);
	TEST_ASSERT(a == CQPOLL_POLICY_KEEP_POLLING, "no monitor_us: %d", a);
	TEST_ASSERT(decide_after("monitor_us=x", 5000, 6000, &a) < 0,
		    "bad monitor_us accepted");
	return TEST_PASS;
}

/* A fake tier: counts waits, returns at once. */
static unsigned int waits, wait_n, available = 1;
static const volatile void *wait_addr;

static int
fake_available(void *arg, unsigned int n, const char **reason)
{
	(void)arg;
	(void)n;
	if (!available)
		*reason = "the fake CPU has no monitor";
	return (int)available;
}

static int
fake_wait(void *arg, const struct cqpoll_monitor_cond *conds, unsigned int n,
	  uint64_t timeout_ns)
{
	(void)arg;
	if (timeout_ns == 0 || timeout_ns > CQPOLL_MONITOR_WAIT_MAX_NS)
		return -EINVAL;
	waits++;
	wait_n = n;
	wait_addr = conds[0].addr;
	return 0;
}

static const struct cqpoll_monitor_hook fake_hook = {
	.available = fake_available,
	.wait = fake_wait,
};

static char notice[256];

static void
log_write(void *arg, enum cqpoll_log_level level, const char *component,
	  const char *msg)
{
	(void)arg;
	(void)component;
	if (level == CQPOLL_LOG_NOTICE)
		snprintf(notice, sizeof(notice), "%s", msg);
}

static const struct cqpoll_log_hook log_hook = { .write = log_write };

static void
on_comp(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	unsigned int n, void *arg)
{
	(void)cq;
	(void)c;
	*(unsigned int *)arg += n;
}

/*
 * A group whose policy never finds a sleep worth it (wake-ups "cost"
 * 100 ms) but monitors any silence: 200 iterations, one completion every
 * 10, all delivered; monitor waits as the tier allows.
 */
static int
group_run(const char *policy_args, unsigned int *got)
{
	struct cqpoll_group_conf gc = { .mode = CQPOLL_GROUP_MODE_ADAPTIVE,
					.policy = cqpoll_policy_adaptive(),
					.policy_args = policy_args };
	struct cqpoll_group *g;
	struct cqpoll_cq *cq;
	unsigned int i;

	*got = 0;
	waits = 0;
	cq = cqpoll_sw_cq_create(NULL);
	g = cqpoll_group_create(&gc);
	TEST_ASSERT(cq != NULL && g != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_group_add(g, cq, on_comp, got), 0);
	for (i = 0; i < 200; i++) {
		if (i % 10 == 0)
			TEST_ASSERT_EQ(sw_post(cq, i), 0);
		/* Let a silence of more than 1 us pass. */
		test_spin_ns(2000);
		TEST_ASSERT(cqpoll_group_run_once(g) >= 0, "run");
	}
	TEST_ASSERT_EQ(*got, 20);
	if (waits > 0)
		TEST_ASSERT(wait_n == 1 && wait_addr != NULL, "monitored %u", wait_n);
	cqpoll_group_destroy(g);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_group_monitor(void)
{
	const char *mon = "monitor_us=1,wake_us=100000,max_spin_us=10000000,probe_ms=0";
	const char *why;
	unsigned int got;
	int r;

	TEST_ASSERT_EQ(cqpoll_monitor_set_hook(&fake_hook), 0);
	cqpoll_log_set_hook(&log_hook);
	available = 1;
	TEST_ASSERT(cqpoll_monitor_available(1, &why) == 1, "fake tier on");
	r = group_run(mon, &got);
	if (r != TEST_PASS)
		return r;
	printf("  tier on: %u monitor waits\n", waits);
	TEST_ASSERT(waits >= 100, "only %u monitor waits in 180 silences", waits);
	/* Negative control: no monitor_us, no monitor wait. */
	r = group_run("wake_us=100000,max_spin_us=10000000,probe_ms=0", &got);
	if (r != TEST_PASS)
		return r;
	TEST_ASSERT_EQ(waits, 0);
	/* The tier off: the group polls instead, and the reason is logged once. */
	available = 0;
	TEST_ASSERT(cqpoll_monitor_available(1, &why) == 0 &&
		    strcmp(why, "the fake CPU has no monitor") == 0, "reason");
	r = group_run(mon, &got);
	if (r != TEST_PASS)
		return r;
	TEST_ASSERT_EQ(waits, 0);
	TEST_ASSERT(strstr(notice, "power-monitor tier off, polling instead: "
			   "the fake CPU has no monitor") != NULL,
		    "notice: '%s'", notice);
	cqpoll_log_set_hook(NULL);
	TEST_ASSERT_EQ(cqpoll_monitor_set_hook(NULL), 0);
	TEST_ASSERT(cqpoll_monitor_available(1, &why) == 0 &&
		    strstr(why, "no monitor hook") != NULL, "no hook: %s", why);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_sw_address),
#ifdef CQPOLL_TEST_MLX5
	TEST_CASE(test_mlx5_address),
#endif
	TEST_CASE(test_no_address),
	TEST_CASE(test_policy_choice),
	TEST_CASE(test_group_monitor),
};

TEST_MAIN("monitor", cases)
