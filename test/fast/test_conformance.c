/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: the same cases on every device that can run here. A device is
 * a way to create a CQ and a way to post to it as the hardware would; the
 * cases use only the generic API on the consumer side, so whatever passes
 * here behaves the same for an application, whichever driver is underneath.
 */

#include <errno.h>
#include <inttypes.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_sw.h"
#ifdef CQPOLL_TEST_MLX5
#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#include "test_mixed_channel.h"
#endif
#include "cqpoll_test.h"
#ifdef CQPOLL_TEST_VERBS
#include "cqpoll_verbs.h"
#include "cqpoll_verbs_emu.h"
#endif
#ifdef CQPOLL_TEST_URING
#include "uring_test.h"
#endif
#ifdef CQPOLL_TEST_OFI
#include "ofi_test.h"
#endif
#ifdef CQPOLL_TEST_UCX
#include "ucx_test.h"
#endif

struct conf_device {
	const char *name;
	/* A CQ of at least @p size entries; NULL with errno, or errno ENODEV: skip. */
	struct cqpoll_cq *(*create)(uint32_t size);
	/* Post as the device; 0, or -ENOSPC when full. */
	int (*post)(struct cqpoll_cq *cq, const struct cqpoll_completion *c);
	/* Destroy what create made; NULL: cqpoll_cq_destroy(). TEST_PASS or not. */
	int (*destroy)(struct cqpoll_cq *cq);
	/*
	 * Its entries carry only wr_id, status and (where it can) byte_len: no
	 * opcode or QP, as an io_uring CQE or a libfabric receive.
	 */
	bool wr_id_only;
	/* A full CQ keeps the excess and delivers it later (io_uring's NODROP). */
	bool keeps_overflow;
};

static struct cqpoll_cq *
sw_create(uint32_t size, enum cqpoll_arm_semantics arm, uint32_t keeps)
{
	struct cqpoll_sw_emu_conf conf = { .size = size, .arm = arm };

	conf.faults.report_missed_keeps_armed = keeps;
	return cqpoll_sw_emu_cq_create(&conf);
}

static struct cqpoll_cq *
sw_level(uint32_t size)
{
	return sw_create(size, CQPOLL_ARM_LEVEL, 0);
}

static struct cqpoll_cq *
sw_edge(uint32_t size)
{
	return sw_create(size, CQPOLL_ARM_EDGE, 0);
}

static struct cqpoll_cq *
sw_report_missed(uint32_t size)
{
	return sw_create(size, CQPOLL_ARM_REPORT_MISSED, 0);
}

static struct cqpoll_cq *
sw_report_missed_keeps(uint32_t size)
{
	return sw_create(size, CQPOLL_ARM_REPORT_MISSED, 1);
}

#ifdef CQPOLL_TEST_VERBS
/* The verbs driver on verbs-emu: extended CQ with timestamps, then ibv_poll_cq(). */
static struct cqpoll_cq *
verbs_emu_create(uint32_t size, uint32_t emu_flags)
{
	struct cqpoll_verbs_emu_conf conf = { .size = size, .emu_flags = emu_flags };

	return cqpoll_verbs_emu_cq_create(&conf);
}

static struct cqpoll_cq *
verbs_emu_ex(uint32_t size)
{
	return verbs_emu_create(size, 0);
}

static struct cqpoll_cq *
verbs_emu_wc(uint32_t size)
{
	/* A device without create_cq_ex: the driver falls back to ibv_poll_cq(). */
	return verbs_emu_create(size, CQPOLL_VERBS_EMU_F_NO_CQ_EX);
}
#endif

#ifdef CQPOLL_TEST_MLX5
static struct cqpoll_cq *
mlx5_emu_create(uint32_t size, enum cqpoll_arm_semantics arm, uint32_t flags,
		uint32_t start)
{
	struct cqpoll_mlx5_emu_conf conf = {
		.size = size, .arm = arm, .flags = flags, .start_index = start,
	};

	return cqpoll_mlx5_emu_cq_create(&conf);
}

static struct cqpoll_cq *
mlx5_emu_level(uint32_t size)
{
	return mlx5_emu_create(size, CQPOLL_ARM_LEVEL, 0, 0);
}

static struct cqpoll_cq *
mlx5_emu_lazy(uint32_t size)
{
	return mlx5_emu_create(size, CQPOLL_ARM_EDGE, 0, 0);
}

static struct cqpoll_cq *
mlx5_emu_cqe128(uint32_t size)
{
	return mlx5_emu_create(size, CQPOLL_ARM_LEVEL, CQPOLL_MLX5_F_CQE128, 0);
}

/* Start just short of the 24-bit consumer-index wrap of the doorbell record. */
static struct cqpoll_cq *
mlx5_emu_ci_wrap(uint32_t size)
{
	return mlx5_emu_create(size, CQPOLL_ARM_LEVEL, 0, (1u << 24) - 3 * size / 2);
}
#endif

#ifdef CQPOLL_TEST_MLX5
/*
 * The CQ under test shares ONE completion channel with a CQ of the other
 * driver, armed, whose event waits on the channel from the start: whatever
 * the case does, the CQ under test reads the other's event first and must
 * hand it over (the demux), and its own events must reach it the same way.
 */
static struct mix shared;
/* --old-routing: the mlx5 CQ takes every event of the channel (the control). */
static int old_routing;

static struct cqpoll_cq *
shared_create(uint32_t size, int first_mlx5)
{
	struct cqpoll_completion c[2], p = { .wr_id = 0, .byte_len = 8 };
	int r = mix_create(&shared, 2, size, first_mlx5, old_routing, NULL, 0, 0);

	if (r == 0 && cqpoll_poll_and_arm(shared.cq[1], c, 2) != 0)
		r = -EIO;
	if (r == 0)
		r = mix_post(&shared, 1, &p);
	if (r != 0) {
		mix_destroy(&shared);
		errno = -r;
		return NULL;
	}
	return shared.cq[0];
}

static struct cqpoll_cq *
shared_mlx5(uint32_t size)
{
	return shared_create(size, 1);
}

static struct cqpoll_cq *
shared_verbs(uint32_t size)
{
	return shared_create(size, 0);
}

static int
shared_post(struct cqpoll_cq *cq, const struct cqpoll_completion *c)
{
	(void)cq;
	return mix_post(&shared, 0, c);
}

static int
shared_destroy(struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[2];
	uint64_t busy = cqpoll_verbs_emu_busy_destroys();
	int r, n, d;

	(void)cq;
	/* The other CQ's event reached it, whoever read it off the channel. */
	r = cqpoll_cq_event_get(shared.cq[1]);
	if (r == 0) {
		/* Not read by anyone yet: the fd says it is there, at once. */
		r = cqpoll_cq_wait(shared.cq[1], 200);
	}
	n = cqpoll_poll_burst(shared.cq[1], c, 2);
	/* Torn down whatever happened, so that a failed case leaks nothing. */
	d = mix_destroy(&shared);
	TEST_ASSERT_EQ(r, 1);
	TEST_ASSERT_EQ(n, 1);
	TEST_ASSERT_EQ(d, 0);
	TEST_ASSERT_EQ(cqpoll_verbs_emu_busy_destroys(), busy);
	return TEST_PASS;
}
#endif

#ifdef CQPOLL_TEST_URING
/* 1 if NOPs carry byte_len here, else 0; < 0: io_uring unavailable. */
static int uring_inject = -1;
static char uring_why[256];

static struct cqpoll_cq *
uring_create(uint32_t size)
{
	struct cqpoll_uring_conf conf = { .size = size };

	if (uring_inject < 0) {
		errno = ENODEV;
		return NULL;
	}
	return cqpoll_uring_cq_create(&conf);
}

/* A NOP completes in the kernel, which writes its CQE as for real I/O. */
static int
uring_post(struct cqpoll_cq *cq, const struct cqpoll_completion *c)
{
	return test_uring_nop(cqpoll_uring_cq_ring(cq), c->wr_id,
			      (int32_t)c->byte_len, uring_inject == 1, 0);
}
#endif

#ifdef CQPOLL_TEST_OFI
/* One libfabric CQ at a time: the endpoints that feed it. */
static struct test_ofi ofi;

static struct cqpoll_cq *
ofi_create(uint32_t size, const char *prov)
{
	struct cqpoll_ofi_conf conf = { .size = size };
	struct cqpoll_cq *cq;
	char why[256];
	int r;

	r = test_ofi_open(&ofi, prov, why, sizeof(why));
	if (r != 0) {
		printf("ofi-%s: %s\n", prov, why);
		test_ofi_close(&ofi);
		errno = ENODEV;
		return NULL;
	}
	cq = cqpoll_ofi_cq_open(ofi.fabric, ofi.domain, &conf);
	if (cq == NULL) {
		r = errno;
		printf("ofi-%s: cqpoll_ofi_cq_open: %s\n", prov, strerror(r));
		test_ofi_close(&ofi);
		errno = r;
		return NULL;
	}
	if (test_ofi_attach(&ofi, cqpoll_ofi_cq_fid(cq), why, sizeof(why)) != 0) {
		printf("ofi-%s: %s\n", prov, why);
		test_ofi_close_eps(&ofi);
		cqpoll_cq_destroy(cq);
		test_ofi_close(&ofi);
		errno = EIO;
		return NULL;
	}
	return cq;
}

static struct cqpoll_cq *
ofi_tcp_create(uint32_t size)
{
	return ofi_create(size, "tcp");
}

static struct cqpoll_cq *
ofi_shm_create(uint32_t size)
{
	return ofi_create(size, "shm");
}

/* The provider writes B's receive completion when A's message arrives. */
static int
ofi_post(struct cqpoll_cq *cq, const struct cqpoll_completion *c)
{
	(void)cq;
	return test_ofi_post(&ofi, c->wr_id, c->byte_len);
}

static int
ofi_destroy(struct cqpoll_cq *cq)
{
	test_ofi_close_eps(&ofi);
	cqpoll_cq_destroy(cq);
	test_ofi_close(&ofi);
	return TEST_PASS;
}
#endif

#ifdef CQPOLL_TEST_UCX
/*
 * UCX: the device is worker A (ucx_test.h). A post is B's receive for the
 * tag wr_id, then A's message of byte_len bytes with that tag, sent once
 * A's progress completed it; B's progress, in the consumer's polls and
 * arms, completes the receive. A full CQ refuses the receive (-ENOBUFS).
 */
static struct test_ucx ux;

static struct cqpoll_cq *
ucx_create(uint32_t size, const char *tls)
{
	struct cqpoll_ucx_conf conf = { .size = size };
	struct cqpoll_cq *cq;
	char why[256];
	int r;

	r = test_ucx_open(&ux, tls, why, sizeof(why));
	if (r == 0)
		r = test_ucx_hello(&ux, why, sizeof(why));
	if (r != 0) {
		printf("ucx-%s: %s\n", tls, why);
		test_ucx_close(&ux);
		errno = r == -ENODATA ? ENODEV : EIO;
		return NULL;
	}
	/*
	 * A fresh worker has events pending from its wire-up (its internal
	 * eventfd, a signal datagram): its first arms say BUSY. Drained here,
	 * outside cqpoll, so the cases start from a quiet worker as they do on
	 * the sw CQ (single-arm counts one arm per sleep).
	 */
	for (r = 0; r < 16 && ucp_worker_arm(ux.b) != UCS_OK; r++)
		ucp_worker_progress(ux.b);
	cq = cqpoll_ucx_cq_create(ux.b, &conf);
	if (cq == NULL) {
		r = errno;
		test_ucx_close(&ux);
		errno = r;
	}
	return cq;
}

static struct cqpoll_cq *
ucx_tcp_create(uint32_t size)
{
	return ucx_create(size, "tcp");
}

static struct cqpoll_cq *
ucx_posix_create(uint32_t size)
{
	return ucx_create(size, "posix");
}

static int
ucx_post(struct cqpoll_cq *cq, const struct cqpoll_completion *c)
{
	int r = cqpoll_ucx_tag_recv(cq, ux.buf_b[c->wr_id % TEST_UCX_WINDOW],
				    TEST_UCX_BUF, c->wr_id, UINT64_MAX, c->wr_id);

	if (r == -ENOBUFS)
		return -ENOSPC;
	if (r != 0)
		return r;
	return test_ucx_send(&ux, c->wr_id, c->byte_len);
}

static int
ucx_destroy(struct cqpoll_cq *cq)
{
	cqpoll_cq_destroy(cq);
	test_ucx_close(&ux);
	return TEST_PASS;
}
#endif

static const struct conf_device devices[] = {
	{ "sw-level", sw_level, cqpoll_sw_emu_post, NULL, false, false },
	{ "sw-edge", sw_edge, cqpoll_sw_emu_post, NULL, false, false },
	{ "sw-report-missed", sw_report_missed, cqpoll_sw_emu_post, NULL, false, false },
	{ "sw-report-missed-keeps-armed", sw_report_missed_keeps, cqpoll_sw_emu_post, NULL, false, false },
#ifdef CQPOLL_TEST_VERBS
	{ "verbs-emu", verbs_emu_ex, cqpoll_verbs_emu_cq_post, NULL, false, false },
	{ "verbs-emu-poll-cq", verbs_emu_wc, cqpoll_verbs_emu_cq_post, NULL, false, false },
#endif
#ifdef CQPOLL_TEST_MLX5
	{ "mlx5-emu-level", mlx5_emu_level, cqpoll_mlx5_emu_post, NULL, false, false },
	{ "mlx5-emu-lazy", mlx5_emu_lazy, cqpoll_mlx5_emu_post, NULL, false, false },
	{ "mlx5-emu-cqe128", mlx5_emu_cqe128, cqpoll_mlx5_emu_post, NULL, false, false },
	{ "mlx5-emu-ci-wrap", mlx5_emu_ci_wrap, cqpoll_mlx5_emu_post, NULL, false, false },
	{ "mlx5-emu-channel-shared", shared_mlx5, shared_post, shared_destroy, false, false },
	{ "verbs-emu-channel-shared", shared_verbs, shared_post, shared_destroy, false, false },
#endif
#ifdef CQPOLL_TEST_OFI
	{ "ofi-tcp", ofi_tcp_create, ofi_post, ofi_destroy, true, true },
	{ "ofi-shm", ofi_shm_create, ofi_post, ofi_destroy, true, true },
#endif
#ifdef CQPOLL_TEST_URING
	{ "uring", uring_create, uring_post, NULL, true, true },
#endif
#ifdef CQPOLL_TEST_UCX
	{ "ucx-tcp", ucx_tcp_create, ucx_post, ucx_destroy, true, false },
	{ "ucx-posix", ucx_posix_create, ucx_post, ucx_destroy, true, false },
#endif
};

static struct cqpoll_completion
make_comp(uint64_t id)
{
	struct cqpoll_completion c = {
		.wr_id = id,
		.byte_len = (uint32_t)(64 + id % 4096),
		.qp_num = 0x1234 + (uint32_t)(id % 3),
		.opcode = id % 2 ? CQPOLL_OP_RECV : CQPOLL_OP_SEND,
		.status = CQPOLL_STATUS_SUCCESS,
	};

	return c;
}

/*
 * Which request a completion names, read as any program must: wr_id where
 * the driver knows it (F_WR_ID), else the WQE index (F_WQE_COUNTER, mlx5).
 */
static int
names(const struct cqpoll_completion *c, uint64_t id)
{
	if (c->flags & CQPOLL_COMPLETION_F_WR_ID)
		return c->wr_id == id;
	return (c->flags & CQPOLL_COMPLETION_F_WQE_COUNTER) && c->wr_id == 0 &&
		c->wqe_counter == (uint16_t)id;
}

static int
check_comp(const struct conf_device *d, const struct cqpoll_completion *c,
	   uint64_t id)
{
	struct cqpoll_completion e = make_comp(id);

	if (d->wr_id_only) {
		TEST_ASSERT_EQ(c->wr_id, e.wr_id);
		TEST_ASSERT(c->flags & CQPOLL_COMPLETION_F_WR_ID, "wr_id flagged");
		TEST_ASSERT_EQ(c->status, e.status);
#ifdef CQPOLL_TEST_URING
		/* NOPs carry a length only where they can inject results. */
		if (d->create == uring_create && uring_inject != 1)
			return TEST_PASS;
#endif
		TEST_ASSERT_EQ(c->byte_len, e.byte_len);
		return TEST_PASS;
	}
	TEST_ASSERT(names(c, id), "completion of %" PRIu64 ": flags %x wr_id %" PRIu64
		    " wqe_counter %u", id, c->flags, c->wr_id, c->wqe_counter);
	TEST_ASSERT_EQ(c->status, e.status);
	TEST_ASSERT_EQ(c->opcode, e.opcode);
	TEST_ASSERT_EQ(c->qp_num, e.qp_num);
	if (e.opcode == CQPOLL_OP_RECV)
		TEST_ASSERT_EQ(c->byte_len, e.byte_len);
	return TEST_PASS;
}

static int
case_empty(const struct conf_device *d, struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[4];

	(void)d;
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	TEST_ASSERT(!cqpoll_cq_is_armed(cq), "not armed before poll-and-arm");
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 10), -EAGAIN);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT(cqpoll_cq_is_armed(cq), "armed");
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stranded(cq) == 1, 0);
	return TEST_PASS;
}

/* Many laps of the ring, bursts of every size, fields intact and in order. */
static int
case_laps(const struct conf_device *d, struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[16];
	struct cqpoll_cq_info info;
	uint64_t posted = 0, polled = 0;
	unsigned int burst;
	int r, i;

	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	for (burst = 1; posted < 4ull * info.size; burst = burst % 16 + 1) {
		for (i = 0; i < (int)burst; i++) {
			struct cqpoll_completion p = make_comp(posted);

			TEST_ASSERT_EQ(d->post(cq, &p), 0);
			posted++;
		}
		while ((r = cqpoll_poll_burst(cq, c, 7)) > 0)
			for (i = 0; i < r; i++)
				if (check_comp(d, &c[i], polled++) != TEST_PASS)
					return TEST_FAIL;
		TEST_ASSERT_EQ(r, 0);
	}
	TEST_ASSERT_EQ(polled, posted);
	return TEST_PASS;
}

/* Full: the device is refused (or the driver reports an error), never silent. */
static int
case_full(const struct conf_device *d, struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[16];
	struct cqpoll_cq_info info;
	uint32_t i;
	int r, got = 0;

	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	for (i = 0; i < info.size; i++) {
		struct cqpoll_completion p = make_comp(i);

		TEST_ASSERT_EQ(d->post(cq, &p), 0);
	}
	{
		struct cqpoll_completion p = make_comp(i);

		r = d->post(cq, &p);
	}
	if (r == -ENOSPC) {
		while ((r = cqpoll_poll_burst(cq, c, 16)) > 0)
			for (int k = 0; k < r; k++)
				if (check_comp(d, &c[k], (uint64_t)got++) != TEST_PASS)
					return TEST_FAIL;
		TEST_ASSERT_EQ(got, info.size);
	} else if (d->keeps_overflow) {
		/* Kept aside while the CQ was full: every entry, once, in order. */
		TEST_ASSERT_EQ(r, 0);
		while ((r = cqpoll_poll_burst(cq, c, 16)) > 0)
			for (int k = 0; k < r; k++)
				if (check_comp(d, &c[k], (uint64_t)got++) != TEST_PASS)
					return TEST_FAIL;
		TEST_ASSERT_EQ(r, 0);
		TEST_ASSERT_EQ(got, info.size + 1);
	} else {
		/* A device that overruns: the consumer must be told. */
		TEST_ASSERT_EQ(r, 0);
		while ((r = cqpoll_poll_burst(cq, c, 16)) > 0)
			got += r;
		TEST_ASSERT(r < 0, "overrun must surface as an error, got %d", r);
	}
	return TEST_PASS;
}

/* Armed, then a completion: the wait ends by an event, not by the timeout. */
static int
case_event(const struct conf_device *d, struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[4];
	struct cqpoll_completion p = make_comp(0);
	struct cqpoll_cq_stats st;
	int round;

	for (round = 0; round < 50; round++) {
		p.wr_id = (uint64_t)round;
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		TEST_ASSERT_EQ(d->post(cq, &p), 0);
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 2000), 1);
		TEST_ASSERT(!cqpoll_cq_is_armed(cq), "the event disarms");
		TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 10), -EAGAIN);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 1);
		TEST_ASSERT(names(&c[0], (uint64_t)round), "round %d", round);
	}
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.events, 50);
	TEST_ASSERT_EQ(st.completions, 50);
	TEST_ASSERT_EQ(st.wait_timeouts, 0);
	TEST_ASSERT_EQ(st.lost_wakeups, 0);
	return TEST_PASS;
}

/* Completions before the transition are returned by it, never slept on. */
static int
case_transition_returns_pending(const struct conf_device *d, struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[8];
	int n, r, i;

	for (n = 1; n <= 4; n++) {
		for (i = 0; i < n; i++) {
			struct cqpoll_completion p = make_comp((uint64_t)i);

			TEST_ASSERT_EQ(d->post(cq, &p), 0);
		}
		r = cqpoll_poll_and_arm(cq, c, 8);
		TEST_ASSERT_EQ(r, n);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
		TEST_ASSERT_EQ(cqpoll_cq_stranded(cq) == 1, 0);
		/* Consume whatever event the device raised, to start clean. */
		cqpoll_cq_event_get(cq);
	}
	return TEST_PASS;
}

/*
 * Repeated poll-and-arm on an armed, empty CQ rings the device once. A
 * report-missed device may answer an arm with "missed" (UCX's posix
 * transport does so for a signal datagram left unread): the first call then
 * arms again, once per reported miss, and from then on never.
 */
static int
case_single_arm(const struct conf_device *d, struct cqpoll_cq *cq)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq_stats st;
	uint64_t arms;
	int i;

	(void)d;
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.arms, 1 + st.missed_reports);
	arms = st.arms;
	for (i = 1; i < 10; i++)
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT_EQ(cqpoll_cq_stats_get(cq, &st), 0);
	TEST_ASSERT_EQ(st.arms, arms);
	return TEST_PASS;
}

struct conf_case {
	const char *name;
	int (*fn)(const struct conf_device *d, struct cqpoll_cq *cq);
};

static const struct conf_case conf_cases[] = {
	{ "empty", case_empty },
	{ "laps", case_laps },
	{ "full", case_full },
	{ "event", case_event },
	{ "transition-returns-pending", case_transition_returns_pending },
	{ "single-arm", case_single_arm },
};

/*
 * With --old-routing only the shared-channel devices run, their mlx5 CQ with
 * the routing it had before the channel demux: the run passes only if some
 * case fails (the negative control).
 */
int
main(int argc, char **argv)
{
	size_t di, ci;
	int failed = 0, ran = 0;

#ifdef CQPOLL_TEST_URING
	uring_inject = test_uring_probe(uring_why, sizeof(uring_why));
	if (uring_inject < 0)
		printf("uring: %s\n", uring_why);
#endif

	if (argc > 1 && strcmp(argv[1], "--old-routing") == 0) {
#ifdef CQPOLL_TEST_MLX5
		old_routing = 1;
#else
		printf("no mlx5 driver in this build: skipped\n");
		return TEST_SKIP;
#endif
	} else if (argc > 1) {
		fprintf(stderr, "usage: %s [--old-routing]\n", argv[0]);
		return TEST_FAIL;
	}
	for (di = 0; di < sizeof(devices) / sizeof(devices[0]); di++) {
		const struct conf_device *d = &devices[di];

#ifdef CQPOLL_TEST_MLX5
		if (old_routing && d->destroy != shared_destroy)
			continue;
#endif
		for (ci = 0; ci < sizeof(conf_cases) / sizeof(conf_cases[0]); ci++) {
			struct cqpoll_cq *cq;
			int r;

			errno = 0;
			cq = d->create(64);
			if (cq == NULL) {
				printf("%-30s %-28s skip (%s)\n", d->name, conf_cases[ci].name,
				       strerror(errno));
				continue;
			}
			r = conf_cases[ci].fn(d, cq);
			if (d->destroy == NULL)
				cqpoll_cq_destroy(cq);
			else if (d->destroy(cq) != TEST_PASS)
				r = TEST_FAIL;
			printf("%-30s %-28s %s\n", d->name, conf_cases[ci].name,
			       r == TEST_PASS ? "ok" : "FAIL");
			failed += r != TEST_PASS;
			ran++;
		}
	}
	printf("conformance: %d runs, %d failed\n", ran, failed);
#ifdef CQPOLL_TEST_MLX5
	if (old_routing) {
		printf("old routing %s\n", failed != 0 ? "caught" : "NOT caught");
		return failed != 0 ? TEST_PASS : TEST_FAIL;
	}
#endif
	if (failed != 0)
		return TEST_FAIL;
	return ran == 0 ? TEST_SKIP : TEST_PASS;
}
