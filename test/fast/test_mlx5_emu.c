/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mlx5 driver on the emulated mlx5 device, through the public API:
 * round trips, level and lazy arms, the stale-ci negative control, event
 * delay (on the CQ's own fd and on a shared emulated channel), overrun, error
 * CQEs, 128-byte CQEs, solicited-only and stale-sn arms.
 * Most cases run the device without its thread (CQPOLL_MLX5_EMU_F_MANUAL), so
 * that when the device reads a doorbell is decided by the test.
 */

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#include "cq_event_test.h"
#include "cqpoll_test.h"
#include "cqpoll_verbs_emu.h"

static struct cqpoll_cq *
emu(enum cqpoll_arm_semantics arm, uint32_t size, uint32_t flags, uint32_t emu_flags)
{
	struct cqpoll_mlx5_emu_conf conf = {
		.size = size, .arm = arm, .flags = flags,
		.emu_flags = emu_flags | CQPOLL_MLX5_EMU_F_MANUAL,
	};

	return cqpoll_mlx5_emu_cq_create(&conf);
}

static int
post(struct cqpoll_cq *cq, uint64_t wr_id)
{
	struct cqpoll_completion c = {
		.wr_id = wr_id, .byte_len = 64, .qp_num = 0x77, .opcode = CQPOLL_OP_RECV,
	};

	return cqpoll_mlx5_emu_post(cq, &c);
}

static struct mlx5_cqe64 *
cqpoll_mlx5_cqe_at(const struct mlx5dv_cq *dv, uint32_t i)
{
	return (struct mlx5_cqe64 *)(void *)((uint8_t *)dv->buf +
		(size_t)(i & (dv->cqe_cnt - 1)) * dv->cqe_size + dv->cqe_size - 64);
}

static int
drain(struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[64];
	int r, n = 0;

	while ((r = cqpoll_poll_burst(cq, c, 64)) > 0)
		n += r;
	return r < 0 ? r : n;
}

static int
test_round_trip(void)
{
	static const struct cqpoll_completion in[] = {
		{ .wr_id = 1, .byte_len = 10, .qp_num = 5, .opcode = CQPOLL_OP_SEND },
		{ .wr_id = 2, .byte_len = 11, .qp_num = 5, .opcode = CQPOLL_OP_RDMA_WRITE,
		  .flags = CQPOLL_COMPLETION_F_IMM, .imm_data = 0x01020304 },
		{ .wr_id = 3, .byte_len = 12, .qp_num = 5, .opcode = CQPOLL_OP_RDMA_READ },
		{ .wr_id = 4, .qp_num = 5, .opcode = CQPOLL_OP_FETCH_ADD },
		{ .wr_id = 5, .byte_len = 13, .qp_num = 6, .opcode = CQPOLL_OP_RECV,
		  .flags = CQPOLL_COMPLETION_F_IMM, .imm_data = 0xa0b0c0d0 },
		{ .wr_id = 6, .byte_len = 14, .qp_num = 6, .opcode = CQPOLL_OP_RECV_RDMA_WITH_IMM,
		  .flags = CQPOLL_COMPLETION_F_IMM, .imm_data = 7 },
		{ .wr_id = 7, .byte_len = 15, .qp_num = 6, .opcode = CQPOLL_OP_RECV,
		  .flags = CQPOLL_COMPLETION_F_SOLICITED },
		{ .wr_id = 0x10008, .qp_num = 6, .opcode = CQPOLL_OP_RECV,
		  .status = CQPOLL_STATUS_WR_FLUSH_ERR, .vendor_err = 0x42 },
		{ .wr_id = 9, .qp_num = 5, .opcode = CQPOLL_OP_SEND,
		  .status = CQPOLL_STATUS_RETRY_EXC_ERR, .vendor_err = 0x81 },
		/* The invalidated rkey is a host value in and out (rdma-core be32toh). */
		{ .wr_id = 10, .byte_len = 16, .qp_num = 6, .opcode = CQPOLL_OP_RECV,
		  .flags = CQPOLL_COMPLETION_F_INV, .imm_data = 0x11223344 },
		{ .wqe_counter = 11, .qp_num = 5, .opcode = CQPOLL_OP_SEND,
		  .flags = CQPOLL_COMPLETION_F_WQE_COUNTER },
	};
	const unsigned int n = sizeof(in) / sizeof(in[0]);
	struct cqpoll_completion out[16];
	struct cqpoll_cq *cq;
	struct mlx5dv_cq dv;
	unsigned int i;
	int req;

	cq = emu(CQPOLL_ARM_LEVEL, 16, 0, 0);
	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	for (i = 0; i < n; i++)
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &in[i]), 0);
	/* In the CQE the rkey is big-endian, as the wire and the PRM have it. */
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_dv(cq, &dv), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_cqe_at(&dv, 9)->imm_inval_pkey, htobe32(0x11223344));
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, out, 16), n);
	for (i = 0; i < n; i++) {
		/* The CQE has the WQE index, not the caller's wr_id. */
		TEST_ASSERT_EQ(out[i].wr_id, 0);
		TEST_ASSERT_EQ(out[i].wqe_counter, (in[i].wr_id & 0xffff) | in[i].wqe_counter);
		TEST_ASSERT(out[i].flags & CQPOLL_COMPLETION_F_WQE_COUNTER, "F_WQE_COUNTER");
		TEST_ASSERT(!(out[i].flags & CQPOLL_COMPLETION_F_WR_ID), "no F_WR_ID");
		TEST_ASSERT_EQ(out[i].status, in[i].status);
		TEST_ASSERT_EQ(out[i].opcode, in[i].opcode);
		TEST_ASSERT_EQ(out[i].qp_num, in[i].qp_num);
		if (in[i].status != CQPOLL_STATUS_SUCCESS) {
			TEST_ASSERT_EQ(out[i].vendor_err, in[i].vendor_err); /* syndrome */
			TEST_ASSERT_EQ(out[i].imm_data, 0);
			continue;
		}
		/* Requester CQEs carry no immediate (rdma-core fills none). */
		req = in[i].opcode < CQPOLL_OP_RECV;
		TEST_ASSERT_EQ(out[i].flags & ~(CQPOLL_COMPLETION_F_TIMESTAMP_RAW |
						CQPOLL_COMPLETION_F_WQE_COUNTER),
			       (req ? in[i].flags & ~CQPOLL_COMPLETION_F_IMM : in[i].flags) &
			       ~CQPOLL_COMPLETION_F_WQE_COUNTER);
		TEST_ASSERT_EQ(out[i].byte_len, in[i].opcode == CQPOLL_OP_FETCH_ADD ? 8 : in[i].byte_len);
		TEST_ASSERT_EQ(out[i].imm_data, req ? 0 : in[i].imm_data);
		/* Device ticks, never host ns: the emulated clock is neither. */
		TEST_ASSERT(out[i].flags & CQPOLL_COMPLETION_F_TIMESTAMP_RAW, "raw timestamp");
		TEST_ASSERT(!(out[i].flags & CQPOLL_COMPLETION_F_TIMESTAMP), "no host timestamp");
		TEST_ASSERT(out[i].timestamp != 0, "timestamp");
	}
	/* Statuses mlx5 has no syndrome for are refused, not invented. */
	out[0] = in[0];
	out[0].status = CQPOLL_STATUS_LOC_EEC_OP_ERR;
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &out[0]), -EINVAL);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/*
 * A CQE between the last empty poll and the arm: a level arm fires at once
 * (§5.3); a lazy arm never does, which the oracle reports as stranded.
 */
static int
test_level_and_lazy_arm(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq;
	int lazy;

	for (lazy = 0; lazy <= 1; lazy++) {
		cq = emu(lazy ? CQPOLL_ARM_EDGE : CQPOLL_ARM_LEVEL, 16, 0, 0);
		TEST_ASSERT(cq != NULL, "create");
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
		TEST_ASSERT_EQ(post(cq, 1), 0);
		TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_service(cq), 1);
		TEST_ASSERT_EQ(test_cq_event_within(cq, 20), !lazy);
		TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), lazy);
		/* After the arm, both fire. */
		if (lazy) {
			TEST_ASSERT_EQ(post(cq, 2), 0);
			TEST_ASSERT(test_cq_event_within(cq, 20), "lazy arm fires for a later CQE");
			TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 0);
		}
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 100), 1);
		TEST_ASSERT_EQ(drain(cq), 1 + lazy);
		cqpoll_cq_destroy(cq);
	}
	return TEST_PASS;
}

/* The core's transition on a lazy CQ: the poll after the arm finds the CQE. */
static int
test_lazy_poll_and_arm(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq = emu(CQPOLL_ARM_EDGE, 16, 0, 0);
	struct cqpoll_cq_info info;

	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.arm, CQPOLL_ARM_EDGE);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(post(cq, 1), 0);
	TEST_ASSERT(test_cq_event_within(cq, 20), "armed before the CQE");
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 100), 1);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 1);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* rdma-core's mlx5_arm_cq with its own (stale) consumer index and sn (§5.1). */
static void
provider_arm(struct cqpoll_cq *cq, uint32_t cons_index, uint32_t arm_sn)
{
	struct mlx5dv_cq dv;
	uint32_t hi;

	cqpoll_mlx5_emu_dv(cq, &dv);
	hi = (arm_sn & 3) << 28 | MLX5_CQ_DB_REQ_NOT | (cons_index & 0xffffff);
	dv.dbrec[1] = htobe32(hi);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*(volatile uint64_t *)(void *)((uint8_t *)dv.cq_uar + MLX5_CQ_DOORBELL) =
		htobe64((uint64_t)hi << 32 | dv.cqn);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * Negative control (UCX #11728): after direct polling, an arm through the
 * provider carries its stale index. Behind by more than the ring, or ahead,
 * the arm covers nothing: the next CQE raises no event and the oracle says
 * the consumer is stranded. The driver's own arm, same situation, wakes.
 */
static int
test_stale_ci_loses_wakeup(void)
{
	struct cqpoll_cq *cq;
	int own, i, stale, ev;

	for (stale = 0; stale < 2; stale++) {
		for (own = 0; own <= 1; own++) {
			cq = emu(CQPOLL_ARM_LEVEL, 16, 0, 0);
			TEST_ASSERT(cq != NULL, "create");
			for (i = 0; i < 40; i++) { /* more than twice the ring */
				TEST_ASSERT_EQ(post(cq, (uint64_t)i), 0);
				TEST_ASSERT_EQ(drain(cq), 1);
			}
			if (own)
				TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
			else /* provider cons_index 0 (never saw DV polls), or ahead */
				provider_arm(cq, stale == 0 ? 0 : 42, 0);
			TEST_ASSERT_EQ(cqpoll_mlx5_emu_service(cq), 1);
			TEST_ASSERT_EQ(post(cq, 40), 0);
			ev = test_cq_event_within(cq, 50);
			if (own) {
				TEST_ASSERT(ev, "the driver's arm must wake");
				TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 0);
			} else {
				TEST_ASSERT(!ev, "stale-ci arm (%s) must lose the wake-up",
					    stale == 0 ? "behind" : "ahead");
				TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 1);
			}
			TEST_ASSERT_EQ(drain(cq), 1);
			cqpoll_cq_destroy(cq);
		}
	}
	return TEST_PASS;
}

/* The device thread reads the doorbell on its own: no service call. */
static int
test_device_thread(void)
{
	struct cqpoll_mlx5_emu_conf conf = { .size = 16, .arm = CQPOLL_ARM_LEVEL };
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq = cqpoll_mlx5_emu_cq_create(&conf);

	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	TEST_ASSERT_EQ(post(cq, 1), 0);
	TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 0); /* due: the doorbell is in flight */
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
	TEST_ASSERT_EQ(drain(cq), 1);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/*
 * On a shared emulated channel the delayed event is queued by the device's
 * doorbell check once due: not before (the fd stays quiet, the oracle counts
 * it as on its way), then it names this CQ, is taken, and its ack lets the
 * device's ibv_cq go (no busy destroy).
 */
static int
test_channel_event_delay(void)
{
	struct cqpoll_mlx5_emu_conf conf = {
		.size = 16, .event_delay_us = 30000, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	uint64_t busy = cqpoll_verbs_emu_busy_destroys();
	struct cqpoll_completion c[4];
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct cqpoll_cq *cq;
	int manual;

	ctx = cqpoll_verbs_emu_open(NULL, 0);
	TEST_ASSERT(ctx != NULL, "open");
	ch = cqpoll_verbs_emu_ibv_create_comp_channel(ctx);
	TEST_ASSERT(ch != NULL, "channel");
	conf.channel = ch;
	for (manual = 1; manual >= 0; manual--) {
		conf.emu_flags = manual ? CQPOLL_MLX5_EMU_F_MANUAL : 0;
		cq = cqpoll_mlx5_emu_cq_create(&conf);
		TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		TEST_ASSERT_EQ(post(cq, 1), 0);
		TEST_ASSERT(!test_cq_event_within(cq, 5), "event delivered late");
		TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 0); /* on its way: not lost */
		if (manual) {
			TEST_ASSERT(cqpoll_mlx5_emu_service(cq) >= 0, "service");
			TEST_ASSERT(!test_cq_event_within(cq, 0), "not due yet");
			usleep(40000);
			TEST_ASSERT(cqpoll_mlx5_emu_service(cq) >= 0, "service");
		}
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
		TEST_ASSERT_EQ(drain(cq), 1);
		cqpoll_cq_destroy(cq);
	}
	TEST_ASSERT_EQ(cqpoll_verbs_emu_busy_destroys(), busy);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_ibv_destroy_comp_channel(ch), 0);
	/* A channel of no emulated context: refused. */
	{
		struct ibv_comp_channel other = { .context = NULL, .fd = -1 };

		conf.channel = &other;
		errno = 0;
		TEST_ASSERT(cqpoll_mlx5_emu_cq_create(&conf) == NULL && errno == EINVAL,
			    "foreign channel");
	}
	TEST_ASSERT_EQ(cqpoll_verbs_emu_close(ctx), 0);
	return TEST_PASS;
}

static int
test_event_delay(void)
{
	struct cqpoll_mlx5_emu_conf conf = {
		.size = 16, .event_delay_us = 30000, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq;
	uint64_t t0, t1;
	int attempt, early;

	/*
	 * "Not readable 5 ms after the post" says something only if those
	 * 5 ms ended before the 30 ms delay did: a thread descheduled that
	 * long on a loaded machine sees the event on time. Such a sample is
	 * retried, not judged.
	 */
	for (attempt = 0; attempt < 10; attempt++) {
		cq = cqpoll_mlx5_emu_cq_create(&conf);
		TEST_ASSERT(cq != NULL, "create");
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		t0 = test_now_ns();
		TEST_ASSERT_EQ(post(cq, 1), 0);
		early = test_cq_event_within(cq, 5);
		t1 = test_now_ns();
		if (t1 - t0 < 20000000ull) {
			TEST_ASSERT(!early, "event delivered %" PRIu64 " us after the post, not late",
				    (t1 - t0) / 1000);
			/* On its way: not lost. */
			TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 0);
		}
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
		TEST_ASSERT_EQ(drain(cq), 1);
		cqpoll_cq_destroy(cq);
		if (t1 - t0 < 20000000ull)
			return TEST_PASS;
	}
	TEST_ASSERT(0, "no sample within 20 ms of its post in %d attempts", attempt);
	return TEST_FAIL;
}

static int
test_overrun(void)
{
	struct cqpoll_cq *cq;
	struct cqpoll_completion c[8];
	int i;

	/* Back-pressure: refused, nothing lost. */
	cq = emu(CQPOLL_ARM_LEVEL, 4, 0, 0);
	TEST_ASSERT(cq != NULL, "create");
	for (i = 0; i < 4; i++)
		TEST_ASSERT_EQ(post(cq, (uint64_t)i), 0);
	TEST_ASSERT_EQ(post(cq, 4), -ENOSPC);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 8), 4);
	TEST_ASSERT_EQ(post(cq, 4), 0);
	cqpoll_cq_destroy(cq);

	/* Hardware-like: an overrun breaks the CQ, and the consumer hears it. */
	cq = emu(CQPOLL_ARM_LEVEL, 4, 0, CQPOLL_MLX5_EMU_F_OVERRUN_ERROR);
	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
	for (i = 0; i < 4; i++)
		TEST_ASSERT_EQ(post(cq, (uint64_t)i), 0);
	TEST_ASSERT_EQ(post(cq, 4), -EOVERFLOW);
	TEST_ASSERT_EQ(post(cq, 5), -EOVERFLOW);
	TEST_ASSERT(test_cq_event_within(cq, 10), "woken");
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 8), 4); /* what came before */
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 8), -EOVERFLOW);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), -EOVERFLOW);
	{
		struct cqpoll_cq_info info;

		TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
		TEST_ASSERT_EQ(info.state, CQPOLL_CQ_STATE_OVERRUN);
	}
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_cqe128(void)
{
	struct cqpoll_completion c[4];
	struct mlx5dv_cq dv;
	struct cqpoll_cq *cq = emu(CQPOLL_ARM_LEVEL, 4, CQPOLL_MLX5_F_CQE128, 0);
	uint8_t *slot;
	int i;

	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_dv(cq, &dv), 0);
	TEST_ASSERT_EQ(dv.cqe_size, 128);
	for (i = 0; i < 10; i++) {
		TEST_ASSERT_EQ(post(cq, (uint64_t)i), 0);
		slot = (uint8_t *)dv.buf + (size_t)(i % 4) * 128;
		TEST_ASSERT_EQ(slot[127], MLX5_CQE_RESP_SEND << 4 | ((i / 4) & 1));
		TEST_ASSERT_EQ(be16toh(((struct mlx5_cqe64 *)(void *)(slot + 64))->wqe_counter), i);
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
		TEST_ASSERT_EQ(c[0].wqe_counter, i);
	}
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_solicited_only(void)
{
	struct cqpoll_completion c[4], sol = {
		.wr_id = 2, .opcode = CQPOLL_OP_RECV, .flags = CQPOLL_COMPLETION_F_SOLICITED,
	}, err = { .wr_id = 3, .opcode = CQPOLL_OP_SEND, .status = CQPOLL_STATUS_LOC_PROT_ERR };
	struct cqpoll_cq_info info;
	struct cqpoll_cq *cq;
	int k;

	for (k = 0; k < 2; k++) {
		cq = emu(CQPOLL_ARM_LEVEL, 16, CQPOLL_MLX5_F_SOLICITED_ONLY, 0);
		TEST_ASSERT(cq != NULL, "create");
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		cqpoll_mlx5_emu_service(cq);
		TEST_ASSERT_EQ(post(cq, 1), 0);
		TEST_ASSERT(!test_cq_event_within(cq, 10), "unsolicited CQE must not fire");
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, k == 0 ? &sol : &err), 0);
		TEST_ASSERT(test_cq_event_within(cq, 10), "solicited or error CQE fires");
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 100), 1);
		TEST_ASSERT_EQ(drain(cq), 2);
		cqpoll_cq_destroy(cq);
	}
	/*
	 * Whether a solicited CQE already there when the arm comes fires it is
	 * [UNCONFIRMED]; the device assumes not. The driver declares such a
	 * CQ edge, so poll-and-arm polls after arming and finds the CQE.
	 */
	cq = emu(CQPOLL_ARM_LEVEL, 16, CQPOLL_MLX5_F_SOLICITED_ONLY, 0);
	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT_EQ(info.arm, CQPOLL_ARM_EDGE);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &sol), 0);
	/* An arm the device reads after the CQE, with no poll after it: no event. */
	TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
	cqpoll_mlx5_emu_service(cq);
	TEST_ASSERT(!test_cq_event_within(cq, 10), "no event for an earlier solicited CQE");
	/* Negative control: trusting the arm (level) strands the CQE. */
	TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 1);
	cqpoll_cq_destroy(cq);
	cq = emu(CQPOLL_ARM_LEVEL, 16, CQPOLL_MLX5_F_SOLICITED_ONLY, 0);
	TEST_ASSERT(cq != NULL, "create");
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &sol), 0);
	/* The edge treatment: the poll after the arm takes it. */
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 1);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	cqpoll_mlx5_emu_service(cq);
	TEST_ASSERT_EQ(cqpoll_cq_stranded(cq), 0);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* sn must advance once per consumed event; a stale one is reported (or ignored). */
static int
test_stale_sn(void)
{
	struct cqpoll_mlx5_emu_stats st;
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq;
	int strict;

	for (strict = 0; strict <= 1; strict++) {
		cq = emu(CQPOLL_ARM_LEVEL, 16, 0, strict ? CQPOLL_MLX5_EMU_F_STRICT_SN : 0);
		TEST_ASSERT(cq != NULL, "create");
		/* Two honest cycles: sn 0 then 1. */
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		TEST_ASSERT_EQ(post(cq, 1), 0);
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 100), 1);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 1);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		cqpoll_mlx5_emu_service(cq);
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_stats_get(cq, &st), 0);
		TEST_ASSERT_EQ(st.arms, 2);
		TEST_ASSERT_EQ(st.stale_sn_arms, 0);
		TEST_ASSERT_EQ(st.dbrec_mismatches, 0);
		TEST_ASSERT_EQ(post(cq, 2), 0);
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 100), 1);
		TEST_ASSERT_EQ(drain(cq), 1);
		/* Two events fired: an arm with sn 0 is stale. */
		provider_arm(cq, 2, 0);
		cqpoll_mlx5_emu_service(cq);
		TEST_ASSERT_EQ(post(cq, 3), 0);
		TEST_ASSERT_EQ(test_cq_event_within(cq, 10), !strict);
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_stats_get(cq, &st), 0);
		TEST_ASSERT_EQ(st.stale_sn_arms, 1);
		TEST_ASSERT_EQ(st.arms, 3 - strict);
		cqpoll_cq_destroy(cq);
	}
	return TEST_PASS;
}

/* Start near the 24-bit wrap: record, arm and device agree across it. */
static int
test_wrap_end_to_end(void)
{
	struct cqpoll_mlx5_emu_conf conf = {
		.size = 16, .start_index = 0xfffff0, .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL,
	};
	struct cqpoll_completion c[8];
	struct mlx5dv_cq dv;
	struct cqpoll_cq *cq = cqpoll_mlx5_emu_cq_create(&conf);
	int i, r;

	TEST_ASSERT(cq != NULL, "create");
	cqpoll_mlx5_emu_dv(cq, &dv);
	for (i = 0; i < 40; i++) {
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
		TEST_ASSERT_EQ(post(cq, (uint64_t)i), 0);
		TEST_ASSERT(test_cq_event_within(cq, 50), "event at %d", i);
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 100), 1);
		r = cqpoll_poll_burst(cq, c, 8);
		TEST_ASSERT_EQ(r, 1);
		TEST_ASSERT_EQ(c[0].wqe_counter, i);
		TEST_ASSERT_EQ(be32toh(dv.dbrec[0]), (0xfffff0u + (uint32_t)i + 1) & 0xffffff);
	}
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

/* The device scatters payloads into the CQE; the driver hands them back. */
static int
test_inline_payloads(void)
{
	static const struct { uint8_t op; uint32_t len; uint32_t flags; } t[] = {
		{ CQPOLL_OP_RECV, 20, 0 },                       /* format 1 */
		{ CQPOLL_OP_RECV, 50, CQPOLL_MLX5_F_CQE128 },    /* format 2 */
		{ CQPOLL_OP_RDMA_READ, 16, CQPOLL_MLX5_F_CQE128 },
		{ CQPOLL_OP_FETCH_ADD, 8, 0 },
		{ CQPOLL_OP_RECV_RDMA_WITH_IMM, 64, CQPOLL_MLX5_F_CQE128 },
	};
	struct cqpoll_completion c[4], in;
	uint8_t payload[80];
	struct cqpoll_cq *cq;
	unsigned int i, k;

	for (k = 0; k < sizeof(payload); k++)
		payload[k] = (uint8_t)(k * 11 + 3);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cq = emu(CQPOLL_ARM_LEVEL, 8, t[i].flags, 0);
		TEST_ASSERT(cq != NULL, "create");
		memset(&in, 0, sizeof(in));
		in.opcode = t[i].op;
		in.byte_len = t[i].len;
		in.qp_num = 3;
		in.wr_id = 40 + i;
		in.flags = CQPOLL_COMPLETION_F_INLINE;
		in.inline_data = payload;
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &in), 0);
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 1);
		TEST_ASSERT(c[0].flags & CQPOLL_COMPLETION_F_INLINE, "F_INLINE %u", i);
		TEST_ASSERT_EQ(c[0].byte_len, t[i].len);
		TEST_ASSERT(memcmp(c[0].inline_data, payload, t[i].len) == 0, "payload %u", i);
		TEST_ASSERT_EQ(c[0].wqe_counter, 40 + i);
		TEST_ASSERT_EQ(c[0].opcode, t[i].op);
		/* More than the CQE holds, or an opcode hardware never scatters. */
		in.byte_len = t[i].flags ? 65 : 33;
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &in), in.opcode == CQPOLL_OP_FETCH_ADD ? 0 : -EINVAL);
		in.byte_len = 8;
		in.opcode = CQPOLL_OP_SEND;
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &in), -EINVAL);
		cqpoll_cq_destroy(cq);
	}
	return TEST_PASS;
}

/*
 * The device compresses runs of like completions into sessions; the driver
 * expands them into the same completions, in order.
 */
static int
compressed_sessions(uint32_t flags)
{
	struct cqpoll_mlx5_emu_stats st;
	struct cqpoll_completion c[64 + 3], in;
	struct cqpoll_cq *cq;
	unsigned int i;
	int n;

	cq = emu(CQPOLL_ARM_LEVEL, 64, flags, 0);
	TEST_ASSERT(cq != NULL, "create");
	for (i = 0; i < 37; i++) {
		memset(&in, 0, sizeof(in));
		in.qp_num = i < 20 ? 6 : 5;
		in.wr_id = 100 + i;
		in.byte_len = 200 + i;
		in.opcode = i < 20 ? CQPOLL_OP_RECV :
			i % 2 ? CQPOLL_OP_RDMA_WRITE : CQPOLL_OP_SEND;
		if (i == 36) {
			/* Immediate data never goes into a mini CQE. */
			in.opcode = CQPOLL_OP_RECV;
			in.flags = CQPOLL_COMPLETION_F_IMM;
			in.imm_data = 0x01020304;
		}
		TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &in), 0);
	}
	/* The last one is written at once; held ones wait for the window. */
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.sessions, 2);
	TEST_ASSERT_EQ(st.cqes, 37);
	/* A run of one is held for its window, then written as a plain CQE. */
	in.opcode = CQPOLL_OP_RECV;
	in.flags = 0;
	in.wr_id = 137;
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &in), 0);
	test_spin_ns(30000);
	cqpoll_mlx5_emu_service(cq);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.sessions, 2);
	TEST_ASSERT_EQ(st.cqes, 38);
	/* Small bursts: most end inside a session. */
	for (i = 0; i < 38; i += (unsigned int)n) {
		n = cqpoll_poll_burst(cq, &c[i], 3);
		TEST_ASSERT(n > 0, "poll at %u: %d", i, n);
	}
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	for (i = 0; i < 37; i++) {
		TEST_ASSERT_EQ(c[i].status, CQPOLL_STATUS_SUCCESS);
		TEST_ASSERT_EQ(c[i].wqe_counter, 100 + i);
		TEST_ASSERT_EQ(c[i].qp_num, i < 20 ? 6 : 5);
		TEST_ASSERT_EQ(c[i].opcode, i < 20 || i == 36 ? CQPOLL_OP_RECV :
			       i % 2 ? CQPOLL_OP_RDMA_WRITE : CQPOLL_OP_SEND);
		if (i < 20 || i == 36)
			TEST_ASSERT_EQ(c[i].byte_len, 200 + i);
	}
	TEST_ASSERT_EQ(c[36].imm_data, 0x01020304);
	TEST_ASSERT_EQ(c[37].wqe_counter, 137);
	cqpoll_cq_destroy(cq);
	return TEST_PASS;
}

static int
test_compressed_sessions(void)
{
	if (compressed_sessions(CQPOLL_MLX5_F_CQE_COMPRESS) != TEST_PASS ||
	    compressed_sessions(CQPOLL_MLX5_F_CQE_COMPRESS | CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED |
				CQPOLL_MLX5_F_CQE128) != TEST_PASS)
		return TEST_FAIL;
	/* The enhanced layout needs compression. */
	TEST_ASSERT(emu(CQPOLL_ARM_LEVEL, 64, CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED, 0) == NULL &&
		    errno == EINVAL, "enhanced without compression");
	return TEST_PASS;
}

static int
test_bad_args(void)
{
	struct cqpoll_mlx5_emu_conf conf = { .arm = CQPOLL_ARM_REPORT_MISSED };
	struct cqpoll_completion c = { 0 };

	TEST_ASSERT(cqpoll_mlx5_emu_cq_create(&conf) == NULL && errno == EINVAL, "report-missed");
	conf.arm = CQPOLL_ARM_LEVEL;
	conf.size = (1u << 24) + 1;
	TEST_ASSERT(cqpoll_mlx5_emu_cq_create(&conf) == NULL && errno == EINVAL, "size");
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(NULL, &c), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_service(NULL), -EINVAL);
	TEST_ASSERT(cqpoll_mlx5_cq_create(NULL, NULL) == NULL && errno == EINVAL, "ctx");
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_round_trip),
	TEST_CASE(test_level_and_lazy_arm),
	TEST_CASE(test_lazy_poll_and_arm),
	TEST_CASE(test_stale_ci_loses_wakeup),
	TEST_CASE(test_device_thread),
	TEST_CASE(test_event_delay),
	TEST_CASE(test_overrun),
	TEST_CASE(test_cqe128),
	TEST_CASE(test_solicited_only),
	TEST_CASE(test_stale_sn),
	TEST_CASE(test_wrap_end_to_end),
	TEST_CASE(test_inline_payloads),
	TEST_CASE(test_compressed_sessions),
	TEST_CASE(test_bad_args),
	TEST_CASE(test_channel_event_delay),
};

TEST_MAIN("mlx5-emu", cases)
