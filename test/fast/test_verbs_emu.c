/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs driver on verbs-emu, beyond what the conformance suite checks:
 * the completion record on each poll variant, the create fallbacks, the edge
 * window placed exactly with the emulator's hooks, channels shared by several
 * CQs, acknowledgements (no destroy that would hang), solicited-only arms,
 * and driver selection.
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_ibv.h"
#include "cqpoll_test.h"
#include "cqpoll_verbs.h"
#include "cqpoll_verbs_emu.h"

static struct cqpoll_cq *
emu_cq(uint32_t emu_flags, uint32_t verbs_flags)
{
	struct cqpoll_verbs_emu_conf conf = {
		.size = 64, .emu_flags = emu_flags, .verbs_flags = verbs_flags,
	};

	return cqpoll_verbs_emu_cq_create(&conf);
}

static int
fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* Every field through each poll variant; timestamps only where asked for. */
static int
check_fields(uint32_t emu_flags, int want_ex, int want_ts)
{
	struct cqpoll_completion in[4] = {
		{ .wr_id = 1, .byte_len = 100, .qp_num = 7, .opcode = CQPOLL_OP_RECV },
		{ .wr_id = 2, .byte_len = 8, .qp_num = 8, .opcode = CQPOLL_OP_RECV_RDMA_WITH_IMM,
		  .imm_data = 0x11223344, .flags = CQPOLL_COMPLETION_F_IMM },
		{ .wr_id = 3, .qp_num = 9, .opcode = CQPOLL_OP_LOCAL_INV,
		  .imm_data = 0xabcd, .flags = CQPOLL_COMPLETION_F_INV },
		{ .wr_id = 4, .qp_num = 10, .status = CQPOLL_STATUS_REM_ACCESS_ERR,
		  .vendor_err = 0x55 },
	};
	struct cqpoll_completion out[8];
	struct cqpoll_cq *cq;
	int i, r;

	cq = emu_cq(emu_flags, 0);
	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_verbs_cq_is_ex(cq), want_ex);
	for (i = 0; i < 4; i++)
		TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(cq, &in[i]), 0);
	r = cqpoll_poll_burst(cq, out, 8);
	TEST_ASSERT_EQ(r, 4);
	for (i = 0; i < 4; i++) {
		TEST_ASSERT_EQ(out[i].wr_id, in[i].wr_id);
		TEST_ASSERT_EQ(out[i].status, in[i].status);
		TEST_ASSERT_EQ(out[i].qp_num, in[i].qp_num);
		TEST_ASSERT_EQ(out[i].imm_data, in[i].imm_data);
		TEST_ASSERT_EQ(out[i].vendor_err, in[i].vendor_err);
		TEST_ASSERT(out[i].flags & CQPOLL_COMPLETION_F_WR_ID, "verbs knows wr_id");
		if (in[i].status != CQPOLL_STATUS_SUCCESS)
			continue;
		TEST_ASSERT_EQ(out[i].opcode, in[i].opcode);
		TEST_ASSERT_EQ(out[i].byte_len, in[i].byte_len);
		TEST_ASSERT_EQ(out[i].flags & ~(CQPOLL_COMPLETION_F_TIMESTAMP |
						CQPOLL_COMPLETION_F_WR_ID), in[i].flags);
		TEST_ASSERT_EQ(!!(out[i].flags & CQPOLL_COMPLETION_F_TIMESTAMP), want_ts);
		TEST_ASSERT(!want_ts || out[i].timestamp != 0, "timestamp set");
	}
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_fields_ex_ts(void)
{
	return check_fields(0, 1, 1);
}

static int
test_fields_ex_no_ts(void)
{
	return check_fields(CQPOLL_VERBS_EMU_F_NO_TIMESTAMP, 1, 0);
}

static int
test_fields_poll_cq(void)
{
	return check_fields(CQPOLL_VERBS_EMU_F_NO_CQ_EX, 0, 0);
}

static int
test_create_flags(void)
{
	struct cqpoll_cq_info info;
	struct cqpoll_cq *cq;

	cq = emu_cq(0, CQPOLL_VERBS_F_NO_CQ_EX);
	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_verbs_cq_is_ex(cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT(strcmp(info.driver, "verbs") == 0, "driver %s", info.driver);
	TEST_ASSERT_EQ(info.arm, CQPOLL_ARM_EDGE);
	TEST_ASSERT_EQ(info.size, 64);
	cqpoll_cq_destroy(cq);
	TEST_ASSERT(cqpoll_verbs_cq_ibv(NULL) == NULL, "NULL handle");
	TEST_ASSERT_EQ(cqpoll_verbs_cq_is_ex(NULL), -EINVAL);
	return TEST_PASS;
}

static void
post_one(void *arg)
{
	struct cqpoll_completion c = { .wr_id = 42, .opcode = CQPOLL_OP_RECV };

	if (cqpoll_verbs_emu_cq_post(arg, &c) != 0)
		abort();
}

/*
 * A completion that lands between the last empty poll and the arm: the
 * double poll returns it; the naive transition strands it, and the oracle
 * and the safety-net timeout both see the loss.
 */
static int
test_edge_window(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	struct cqpoll_cq *cq;
	int naive;

	for (naive = 0; naive <= 1; naive++) {
		cq = emu_cq(0, 0);
		TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
		TEST_ASSERT_EQ(cqpoll_verbs_emu_set_hook(cqpoll_verbs_cq_ibv(cq),
				CQPOLL_VERBS_EMU_HOOK_BEFORE_ARM, post_one, cq), 0);
		if (!naive) {
			TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 1);
			TEST_ASSERT_EQ(c[0].wr_id, 42);
			TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 0);
		} else {
			TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
			TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
			TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 1);
			TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 20), 0);
			TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
			TEST_ASSERT_EQ(st.lost_wakeups, 1);
			TEST_ASSERT_EQ(st.wait_timeouts, 1);
		}
		cqpoll_cq_destroy(cq);
	}
	return TEST_PASS;
}

/* Two CQs on one channel: each event reaches its own CQ, whoever reads it. */
static int
test_shared_channel(void)
{
	struct cqpoll_verbs_conf vconf = { 0 };
	struct cqpoll_completion c[4], p = { .wr_id = 9 };
	uint64_t busy = cqpoll_verbs_emu_busy_destroys();
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct cqpoll_cq *a, *b;
	int round;

	ctx = cqpoll_verbs_emu_open(NULL, 0);
	TEST_ASSERT(ctx != NULL, "open");
	ch = cqpoll_verbs_emu_ibv_create_comp_channel(ctx);
	TEST_ASSERT(ch != NULL, "channel");
	vconf.channel = ch;
	vconf.size = 64;
	a = cqpoll_verbs_cq_create(ctx, &vconf);
	b = cqpoll_verbs_cq_create(ctx, &vconf);
	TEST_ASSERT(a != NULL && b != NULL, "create: %s", strerror(errno));
	TEST_ASSERT(cqpoll_cq_event_fd(a) != cqpoll_cq_event_fd(b), "an fd per CQ");
	for (round = 0; round < 10; round++) {
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(a, c, 4), 0);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(b, c, 4), 0);
		TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(b, &p), 0);
		/* A reads B's event off the channel: nothing for A, B keeps it. */
		TEST_ASSERT_EQ(cqpoll_cq_wait(a, 1000), 0);
		TEST_ASSERT(cqpoll_cq_is_armed(a), "A still armed");
		TEST_ASSERT(!fd_readable(cqpoll_cq_event_fd(a)), "A's fd quiet");
		TEST_ASSERT(fd_readable(cqpoll_cq_event_fd(b)), "B's fd readable");
		TEST_ASSERT_EQ(cqpoll_cq_stranded(b), 0);
		TEST_ASSERT_EQ(cqpoll_cq_wait(b, 1000), 1);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(b, c, 4), 1);
		/* And the other way round, read by its own CQ. */
		TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(a, &p), 0);
		TEST_ASSERT_EQ(cqpoll_cq_wait(a, 1000), 1);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(a, c, 4), 1);
	}
	/* B's event read by A and never consumed: destroy must ack it. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(b, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(b, &p), 0);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(a), 0);
	cqpoll_cq_destroy(b);
	cqpoll_cq_destroy(a);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_busy_destroys(), busy);
	/* The channel is the caller's, and free now. */
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_comp_channel(ch), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_close(ctx), 0);
	return TEST_PASS;
}

/*
 * Events consumed but not yet acknowledged (under the batch): a raw destroy
 * would hang, cqpoll_cq_destroy() acks first. An event for a CQ on the
 * channel that is not attached is acked by the reader.
 */
static int
test_acks(void)
{
	struct cqpoll_verbs_conf vconf = { .event_ack_batch = 64 };
	struct cqpoll_completion c[4], p = { .wr_id = 1 };
	uint64_t busy = cqpoll_verbs_emu_busy_destroys();
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_cq *vcq, *raw;
	struct cqpoll_cq *cq;
	int i;

	ctx = cqpoll_verbs_emu_open(NULL, 0);
	TEST_ASSERT(ctx != NULL, "open");
	ch = cqpoll_verbs_emu_ibv_create_comp_channel(ctx);
	vcq = cqpoll_verbs_emu_ibv_create_cq(ctx, 64, NULL, ch, 0);
	raw = cqpoll_verbs_emu_ibv_create_cq(ctx, 64, NULL, ch, 0);
	TEST_ASSERT(ch != NULL && vcq != NULL && raw != NULL, "verbs objects");
	cq = cqpoll_verbs_cq_attach(vcq, ch, &vconf);
	TEST_ASSERT(cq != NULL, "attach: %s", strerror(errno));
	for (i = 0; i < 5; i++) {
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(cq, &p), 0);
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
	}
	/* Not attached: armed and fired behind cqpoll's back. */
	TEST_ASSERT_EQ(ibv_req_notify_cq(raw, 0), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_post(raw, &p), 0);
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_cq(raw), 0);
	/* Five events unacked: the emulator refuses, where verbs would hang. */
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_cq(vcq), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_busy_destroys(), busy + 1);
	cqpoll_cq_destroy(cq);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_cq(vcq), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_comp_channel(ch), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_close(ctx), 0);
	return TEST_PASS;
}

/* Solicited-only: unsolicited completions wait; a solicited one wakes. */
static int
test_solicited_only(void)
{
	struct cqpoll_completion c[4], p = { .wr_id = 1, .opcode = CQPOLL_OP_RECV };
	struct cqpoll_cq_stats st;
	struct cqpoll_cq *cq;

	cq = emu_cq(0, CQPOLL_VERBS_F_SOLICITED_ONLY);
	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(cq, &p), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 20), 0);
	p.wr_id = 2;
	p.flags = CQPOLL_COMPLETION_F_SOLICITED;
	TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(cq, &p), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 2);
	/* A failed completion fires a solicited-only arm too. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	p.flags = 0;
	p.status = CQPOLL_STATUS_WR_FLUSH_ERR;
	TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(cq, &p), 0);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.lost_wakeups, 0);
	TEST_ASSERT_EQ(st.wait_timeouts, 1);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_attach_args(void)
{
	struct cqpoll_verbs_conf vconf = { .wc_flags = IBV_WC_EX_WITH_BYTE_LEN };
	struct ibv_comp_channel *ch, *other;
	struct ibv_context *ctx;
	struct ibv_cq *vcq;

	ctx = cqpoll_verbs_emu_open(NULL, 0);
	ch = cqpoll_verbs_emu_ibv_create_comp_channel(ctx);
	other = cqpoll_verbs_emu_ibv_create_comp_channel(ctx);
	vcq = cqpoll_verbs_emu_ibv_create_cq(ctx, 16, NULL, ch, 0);
	TEST_ASSERT(vcq != NULL && other != NULL, "verbs objects");
	errno = 0;
	TEST_ASSERT(cqpoll_verbs_cq_attach(vcq, other, NULL) == NULL && errno == EINVAL,
		    "wrong channel");
	TEST_ASSERT(cqpoll_verbs_cq_attach(vcq, NULL, NULL) == NULL, "no channel");
	TEST_ASSERT(cqpoll_verbs_cq_attach_ex((struct ibv_cq_ex *)(void *)vcq, ch, &vconf) == NULL &&
		    errno == EINVAL, "wc_flags lack fields");
	TEST_ASSERT(cqpoll_verbs_cq_create(NULL, NULL) == NULL && errno == EINVAL, "no ctx");
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_comp_channel(ch), -EBUSY);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_cq(vcq), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_comp_channel(ch), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_comp_channel(other), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_close(ctx), 0);
	return TEST_PASS;
}

/* Selection on emulated CQs: always verbs, extended when told so. */
static int
test_select(void)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 32, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct cqpoll_ibv_conf conf = { 0 };
	struct cqpoll_completion c[2], p = { .wr_id = 5 };
	struct cqpoll_cq_info info;
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_cq_ex *ex;
	struct cqpoll_cq *cq;
	int pass;

	ctx = cqpoll_verbs_emu_open(NULL, 0);
	ch = cqpoll_verbs_emu_ibv_create_comp_channel(ctx);
	TEST_ASSERT(ch != NULL, "channel");
	attr.channel = ch;
	for (pass = 0; pass < 3; pass++) {
		/* The real inline, through the emulated verbs_context. */
		ex = ibv_create_cq_ex(ctx, &attr);
		TEST_ASSERT(ex != NULL, "ibv_create_cq_ex: %s", strerror(errno));
		/* WQE counters accepted, but an emulated verbs device has none. */
		conf.flags = pass == 1 ? CQPOLL_IBV_F_WQE_COUNTER :
			     pass == 2 ? CQPOLL_IBV_F_CQ_EX : 0;
		conf.wc_flags = attr.wc_flags;
		cq = cqpoll_cq_from_ibv(ibv_cq_ex_to_cq(ex), ch, &conf);
		TEST_ASSERT(cq != NULL, "select: %s", strerror(errno));
		TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
		TEST_ASSERT(strcmp(info.driver, "verbs") == 0, "driver %s", info.driver);
		TEST_ASSERT_EQ(cqpoll_verbs_cq_is_ex(cq), pass == 2);
		TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(cq, &p), 0);
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 2), 1);
		TEST_ASSERT_EQ(c[0].wr_id, 5);
		TEST_ASSERT(c[0].flags & CQPOLL_COMPLETION_F_WR_ID, "wr_id valid");
		cqpoll_cq_destroy(cq);
		TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);
	}
	TEST_ASSERT(cqpoll_cq_from_ibv(NULL, ch, NULL) == NULL && errno == EINVAL, "NULL cq");
	/*
	 * One ibv_cq wrapped twice would have two owners of one consumer
	 * index: refused, by either driver's attach, until the first goes.
	 */
	ex = ibv_create_cq_ex(ctx, &attr);
	TEST_ASSERT(ex != NULL, "ibv_create_cq_ex");
	cq = cqpoll_cq_from_ibv(ibv_cq_ex_to_cq(ex), ch, NULL);
	TEST_ASSERT(cq != NULL, "first wrap: %s", strerror(errno));
	errno = 0;
	TEST_ASSERT(cqpoll_cq_from_ibv(ibv_cq_ex_to_cq(ex), ch, NULL) == NULL &&
		    errno == EBUSY, "second wrap: errno %d", errno);
	errno = 0;
	TEST_ASSERT(cqpoll_verbs_cq_attach(ibv_cq_ex_to_cq(ex), ch, NULL) == NULL &&
		    errno == EBUSY, "second attach: errno %d", errno);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	cq = cqpoll_cq_from_ibv(ibv_cq_ex_to_cq(ex), ch, NULL);
	TEST_ASSERT(cq != NULL, "wrap after destroy: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);
	/* Unknown flags (bit 0 was a "force verbs" now the default): refused. */
	ex = ibv_create_cq_ex(ctx, &attr);
	TEST_ASSERT(ex != NULL, "ibv_create_cq_ex");
	conf.flags = 1u << 0;
	errno = 0;
	TEST_ASSERT(cqpoll_cq_from_ibv(ibv_cq_ex_to_cq(ex), ch, &conf) == NULL &&
		    errno == EINVAL, "unknown flag");
	conf.flags = 1u << 31;
	TEST_ASSERT(cqpoll_cq_from_ibv(ibv_cq_ex_to_cq(ex), ch, &conf) == NULL &&
		    errno == EINVAL, "unknown flag");
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_comp_channel(ch), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_close(ctx), 0);
	return TEST_PASS;
}

/* Host clock of a test, read directly (not through the library). */
static uint64_t
host_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The device's raw clock now, through rdma-core's API for it. */
static uint64_t
raw_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v) != 0 ||
	    !(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		return 0;
	/* mlx5_query_rt_values(): cycles in tv_nsec, tv_sec 0. */
	return (uint64_t)v.raw_clock.tv_sec * 1000000000ull + (uint64_t)v.raw_clock.tv_nsec;
}

/*
 * Bound of the wall-clock conversion here: the offset is sampled once per
 * burst between two monotonic reads, and the post is bracketed by two more;
 * 1 ms leaves room for a loaded machine and none for a wrong clock (a raw
 * tick count, or wall time taken as monotonic, is off by far more).
 */
#define TS_SLACK_NS 1000000ull

/*
 * Timestamps say their clock (rdma-core ibv_create_cq_ex(3)):
 * ibv_wc_read_completion_ts() is "in HCA clock units", the device's raw
 * clock, so it becomes F_TIMESTAMP_RAW and must lie within two readings of
 * that clock (ibv_query_rt_values_ex()); ibv_wc_read_completion_wallclock_ns()
 * is wall-clock ns, converted to host CLOCK_MONOTONIC: F_TIMESTAMP, within
 * the monotonic readings around the post. A device with neither gives none.
 */
static int
test_timestamps(void)
{
	static const uint32_t kinds[] = {
		0, CQPOLL_VERBS_EMU_F_NO_WALLCLOCK, CQPOLL_VERBS_EMU_F_NO_TIMESTAMP,
	};
	struct cqpoll_verbs_conf vconf = { .size = 64 };
	struct cqpoll_completion c[2], p = { .wr_id = 1, .byte_len = 8 };
	uint64_t m0, m1, r0, r1;
	struct ibv_context *ctx;
	struct cqpoll_cq *cq;
	unsigned int k;

	for (k = 0; k < 3; k++) {
		ctx = cqpoll_verbs_emu_open(NULL, kinds[k]);
		TEST_ASSERT(ctx != NULL, "open");
		cq = cqpoll_verbs_cq_create(ctx, &vconf);
		TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
		m0 = host_ns(CLOCK_MONOTONIC);
		r0 = raw_clock(ctx);
		TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(cq, &p), 0);
		r1 = raw_clock(ctx);
		m1 = host_ns(CLOCK_MONOTONIC);
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 2), 1);
		TEST_ASSERT(!((c[0].flags & CQPOLL_COMPLETION_F_TIMESTAMP) &&
			      (c[0].flags & CQPOLL_COMPLETION_F_TIMESTAMP_RAW)), "one clock");
		if (kinds[k] == 0) {
			TEST_ASSERT(c[0].flags & CQPOLL_COMPLETION_F_TIMESTAMP, "host ns");
			TEST_ASSERT(c[0].timestamp + TS_SLACK_NS >= m0 &&
				    c[0].timestamp <= m1 + TS_SLACK_NS,
				    "wall clock to monotonic: %" PRIu64 " not in [%" PRIu64
				    ", %" PRIu64 "]", c[0].timestamp, m0, m1);
		} else if (kinds[k] == CQPOLL_VERBS_EMU_F_NO_WALLCLOCK) {
			TEST_ASSERT(c[0].flags & CQPOLL_COMPLETION_F_TIMESTAMP_RAW, "raw");
			TEST_ASSERT(r0 != 0 && c[0].timestamp >= r0 && c[0].timestamp <= r1,
				    "device clock: %" PRIu64 " not in [%" PRIu64 ", %" PRIu64 "]",
				    c[0].timestamp, r0, r1);
		} else {
			TEST_ASSERT_EQ(c[0].flags & (CQPOLL_COMPLETION_F_TIMESTAMP |
						     CQPOLL_COMPLETION_F_TIMESTAMP_RAW), 0);
			TEST_ASSERT_EQ(c[0].timestamp, 0);
		}
		cqpoll_cq_destroy(cq);
		TEST_ASSERT_EQ(cqpoll_verbs_emu_close(ctx), 0);
	}
	return TEST_PASS;
}

/*
 * A CQ the caller made with wall-clock timestamps: attached with its
 * wc_flags, it reports host monotonic ns; with the raw flag only, the device
 * clock.
 */
static int
test_timestamps_attach(void)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 32 };
	struct cqpoll_verbs_conf vconf = { 0 };
	struct cqpoll_completion c[2], p = { .wr_id = 3 };
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_cq_ex *ex;
	struct cqpoll_cq *cq;
	uint64_t m0, m1;
	int pass;

	ctx = cqpoll_verbs_emu_open(NULL, 0);
	ch = cqpoll_verbs_emu_ibv_create_comp_channel(ctx);
	TEST_ASSERT(ch != NULL, "channel");
	attr.channel = ch;
	for (pass = 0; pass < 2; pass++) {
		attr.wc_flags = IBV_WC_STANDARD_FLAGS |
			(pass == 0 ? IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK :
				     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
		ex = ibv_create_cq_ex(ctx, &attr);
		TEST_ASSERT(ex != NULL, "ibv_create_cq_ex: %s", strerror(errno));
		vconf.wc_flags = attr.wc_flags;
		cq = cqpoll_verbs_cq_attach_ex(ex, ch, &vconf);
		TEST_ASSERT(cq != NULL, "attach: %s", strerror(errno));
		m0 = host_ns(CLOCK_MONOTONIC);
		TEST_ASSERT_EQ(cqpoll_verbs_emu_cq_post(cq, &p), 0);
		m1 = host_ns(CLOCK_MONOTONIC);
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 2), 1);
		if (pass == 0) {
			TEST_ASSERT(c[0].flags & CQPOLL_COMPLETION_F_TIMESTAMP, "host ns");
			TEST_ASSERT(c[0].timestamp + TS_SLACK_NS >= m0 &&
				    c[0].timestamp <= m1 + TS_SLACK_NS, "converted");
		} else {
			TEST_ASSERT(c[0].flags & CQPOLL_COMPLETION_F_TIMESTAMP_RAW, "raw");
			TEST_ASSERT(!(c[0].flags & CQPOLL_COMPLETION_F_TIMESTAMP), "not host");
		}
		cqpoll_cq_destroy(cq);
		TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_cq(ibv_cq_ex_to_cq(ex)), 0);
	}
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_comp_channel(ch), 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_close(ctx), 0);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_fields_ex_ts),
	TEST_CASE(test_fields_ex_no_ts),
	TEST_CASE(test_fields_poll_cq),
	TEST_CASE(test_create_flags),
	TEST_CASE(test_edge_window),
	TEST_CASE(test_shared_channel),
	TEST_CASE(test_acks),
	TEST_CASE(test_solicited_only),
	TEST_CASE(test_attach_args),
	TEST_CASE(test_select),
	TEST_CASE(test_timestamps),
	TEST_CASE(test_timestamps_attach),
};

TEST_MAIN("verbs-emu", cases)
