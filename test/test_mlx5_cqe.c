/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mlx5 poll and arm code on CQ memory built by hand from the mlx5dv.h
 * structures, as a device would leave it: CQE decode, owner bit at wrap, the
 * 24-bit consumer index in the doorbell record, and the doorbell encoding.
 * The driver's poll and arm are compiled in; no device, no emulator.
 */

#include <endian.h>
#include <errno.h>
#include <stdlib.h>

#include <infiniband/mlx5dv.h>

#include "cqpoll_test.h"
#include "mlx5_prm.h"
#include "mlx5_private.h"

struct ring {
	struct cqpoll_mlx5_cq q;
	uint8_t *buf;
	uint32_t dbrec[2];
	uint64_t uar[512];
};

static void
ring_init(struct ring *r, uint32_t n, uint32_t cqe_size, uint32_t ci)
{
	uint32_t i;

	memset(r, 0, sizeof(*r));
	r->buf = aligned_alloc(4096, (size_t)n * cqe_size < 4096 ? 4096 : (size_t)n * cqe_size);
	memset(r->buf, 0xa5, (size_t)n * cqe_size); /* junk: only op_own may matter */
	for (i = 0; i < n; i++)
		cqpoll_mlx5_cqe(r->buf, i, n, cqe_size)->op_own = MLX5_CQE_INVALID << 4;
	r->q.buf = r->buf;
	r->q.dbrec = r->dbrec;
	r->q.cqe_cnt = n;
	r->q.cqe_size = cqe_size;
	r->q.ci = ci;
	r->q.cqn = 0x1234;
	r->q.uar_db = (volatile uint64_t *)&r->uar[MLX5_CQ_DOORBELL / 8];
}

/* A CQE as the device writes it at counter @p idx: owner from the lap. */
static struct mlx5_cqe64 *
put(struct ring *r, uint32_t idx, uint8_t opcode, uint8_t wqe_op, uint32_t qpn,
    uint16_t wqe_counter, uint32_t bytes)
{
	struct mlx5_cqe64 *c = cqpoll_mlx5_cqe(r->buf, idx, r->q.cqe_cnt, r->q.cqe_size);

	memset(c, 0, 63);
	c->sop_drop_qpn = htobe32((uint32_t)wqe_op << 24 | qpn);
	c->wqe_counter = htobe16(wqe_counter);
	c->byte_cnt = htobe32(bytes);
	c->timestamp = htobe64(0x0102030405060708ull);
	c->op_own = (uint8_t)(opcode << 4 | cqpoll_mlx5_sw_owner(idx, r->q.cqe_cnt));
	return c;
}

static int
poll(struct ring *r, struct cqpoll_completion *c, unsigned int n)
{
	return cqpoll_mlx5_poll_select(r->q.cqe_size)(&r->q, c, n);
}

static int
test_requester_opcodes(void)
{
	static const struct { uint8_t wop; uint8_t op; uint16_t flags; uint32_t len; } t[] = {
		{ MLX5_OPCODE_SEND, CQPOLL_OP_SEND, 0, 100 },
		{ MLX5_OPCODE_SEND_IMM, CQPOLL_OP_SEND, 0, 100 },
		{ MLX5_OPCODE_RDMA_WRITE, CQPOLL_OP_RDMA_WRITE, 0, 100 },
		{ MLX5_OPCODE_RDMA_WRITE_IMM, CQPOLL_OP_RDMA_WRITE, 0, 100 },
		{ MLX5_OPCODE_RDMA_READ, CQPOLL_OP_RDMA_READ, 0, 100 },
		{ MLX5_OPCODE_ATOMIC_CS, CQPOLL_OP_COMP_SWAP, 0, 8 },
		{ MLX5_OPCODE_ATOMIC_FA, CQPOLL_OP_FETCH_ADD, 0, 8 },
		{ MLX5_OPCODE_TSO, CQPOLL_OP_TSO, 0, 100 },
		{ MLX5_OPCODE_LOCAL_INVAL, CQPOLL_OP_LOCAL_INV, 0, 100 },
	};
	struct cqpoll_completion c[16];
	struct ring r;
	unsigned int i;

	ring_init(&r, 16, 64, 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		put(&r, i, MLX5_CQE_REQ, t[i].wop, 0xabcdef, (uint16_t)(1000 + i), 100);
	TEST_ASSERT_EQ(poll(&r, c, 16), sizeof(t) / sizeof(t[0]));
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		TEST_ASSERT_EQ(c[i].status, CQPOLL_STATUS_SUCCESS);
		TEST_ASSERT_EQ(c[i].opcode, t[i].op);
		TEST_ASSERT_EQ(c[i].flags, t[i].flags | CQPOLL_COMPLETION_F_TIMESTAMP);
		TEST_ASSERT_EQ(c[i].byte_len, t[i].len);
		TEST_ASSERT_EQ(c[i].qp_num, 0xabcdef);
		TEST_ASSERT_EQ(c[i].wr_id, 1000 + i);
		TEST_ASSERT(c[i].timestamp == 0x0102030405060708ull, "timestamp");
	}
	TEST_ASSERT_EQ(be32toh(r.dbrec[0]), sizeof(t) / sizeof(t[0]));
	TEST_ASSERT_EQ(poll(&r, c, 16), 0);
	free(r.buf);
	return TEST_PASS;
}

static int
test_responder_opcodes(void)
{
	struct cqpoll_completion c[8];
	struct mlx5_cqe64 *e;
	struct ring r;

	ring_init(&r, 8, 64, 0);
	put(&r, 0, MLX5_CQE_RESP_SEND, 0, 7, 1, 64);
	e = put(&r, 1, MLX5_CQE_RESP_SEND_IMM, 0, 7, 2, 65);
	e->imm_inval_pkey = htobe32(0xdeadbeef);
	e = put(&r, 2, MLX5_CQE_RESP_WR_IMM, 0, 7, 3, 66);
	e->imm_inval_pkey = htobe32(0x11223344);
	e = put(&r, 3, MLX5_CQE_RESP_SEND_INV, 0, 7, 4, 67);
	e->imm_inval_pkey = htobe32(0x5566);
	e = put(&r, 4, MLX5_CQE_RESP_SEND, 0, 7, 5, 68);
	e->imm_inval_pkey = htobe32(0xffff); /* a P_Key, not immediate data */
	e->op_own |= CQPOLL_MLX5_OP_OWN_SE;
	TEST_ASSERT_EQ(poll(&r, c, 8), 5);
	TEST_ASSERT_EQ(c[0].opcode, CQPOLL_OP_RECV);
	TEST_ASSERT_EQ(c[0].byte_len, 64);
	TEST_ASSERT_EQ(c[1].opcode, CQPOLL_OP_RECV);
	TEST_ASSERT(c[1].flags & CQPOLL_COMPLETION_F_IMM, "imm flag");
	TEST_ASSERT_EQ(c[1].imm_data, htobe32(0xdeadbeef)); /* network order, as ibv_wc */
	TEST_ASSERT_EQ(c[2].opcode, CQPOLL_OP_RECV_RDMA_WITH_IMM);
	TEST_ASSERT_EQ(c[2].imm_data, htobe32(0x11223344));
	TEST_ASSERT(c[3].flags & CQPOLL_COMPLETION_F_INV, "inv flag");
	TEST_ASSERT_EQ(c[3].imm_data, htobe32(0x5566));
	TEST_ASSERT_EQ(c[4].imm_data, 0);
	TEST_ASSERT(c[4].flags & CQPOLL_COMPLETION_F_SOLICITED, "SE bit");
	TEST_ASSERT(!(c[0].flags & CQPOLL_COMPLETION_F_SOLICITED), "no SE bit");
	free(r.buf);
	return TEST_PASS;
}

static int
test_error_syndromes(void)
{
	static const struct { uint8_t syn; uint8_t status; } t[] = {
		{ 0x01, CQPOLL_STATUS_LOC_LEN_ERR }, { 0x02, CQPOLL_STATUS_LOC_QP_OP_ERR },
		{ 0x04, CQPOLL_STATUS_LOC_PROT_ERR }, { 0x05, CQPOLL_STATUS_WR_FLUSH_ERR },
		{ 0x06, CQPOLL_STATUS_MW_BIND_ERR }, { 0x10, CQPOLL_STATUS_BAD_RESP_ERR },
		{ 0x11, CQPOLL_STATUS_LOC_ACCESS_ERR }, { 0x12, CQPOLL_STATUS_REM_INV_REQ_ERR },
		{ 0x13, CQPOLL_STATUS_REM_ACCESS_ERR }, { 0x14, CQPOLL_STATUS_REM_OP_ERR },
		{ 0x15, CQPOLL_STATUS_RETRY_EXC_ERR }, { 0x16, CQPOLL_STATUS_RNR_RETRY_EXC_ERR },
		{ 0x22, CQPOLL_STATUS_REM_ABORT_ERR }, { 0x03, CQPOLL_STATUS_GENERAL_ERR },
		{ 0x99, CQPOLL_STATUS_GENERAL_ERR },
	};
	struct cqpoll_completion c[32];
	struct mlx5_err_cqe *e;
	struct ring r;
	unsigned int i, n = sizeof(t) / sizeof(t[0]);

	ring_init(&r, 32, 64, 0);
	for (i = 0; i < n; i++) {
		e = (struct mlx5_err_cqe *)(void *)put(&r, i, i % 2 ? MLX5_CQE_RESP_ERR :
						       MLX5_CQE_REQ_ERR, 0, 0, 0, 0);
		e->syndrome = t[i].syn;
		e->vendor_err_synd = (uint8_t)(0x40 + i);
		e->s_wqe_opcode_qpn = htobe32((uint32_t)MLX5_OPCODE_RDMA_READ << 24 | 0x42);
		e->wqe_counter = htobe16((uint16_t)i);
	}
	TEST_ASSERT_EQ(poll(&r, c, 32), n);
	for (i = 0; i < n; i++) {
		TEST_ASSERT_EQ(c[i].status, t[i].status);
		TEST_ASSERT_EQ(c[i].vendor_err, 0x40 + i);
		TEST_ASSERT_EQ(c[i].imm_data, 0);
		TEST_ASSERT_EQ(c[i].qp_num, 0x42);
		TEST_ASSERT_EQ(c[i].wr_id, i);
		TEST_ASSERT_EQ(c[i].opcode, i % 2 ? CQPOLL_OP_RECV : CQPOLL_OP_RDMA_READ);
	}
	free(r.buf);
	return TEST_PASS;
}

/* Owner bit by lap: a slot left from the previous lap is not a new CQE. */
static int
test_owner_wrap(void)
{
	struct cqpoll_completion c[4];
	uint32_t i, lap;
	struct ring r;

	ring_init(&r, 4, 64, 0);
	for (lap = 0; lap < 3; lap++) {
		TEST_ASSERT_EQ(poll(&r, c, 4), 0);
		for (i = 0; i < 4; i++)
			put(&r, lap * 4 + i, MLX5_CQE_REQ, MLX5_OPCODE_SEND, 1,
			    (uint16_t)(lap * 4 + i), 0);
		/* Owner bit alternates: 0 on even laps, 1 on odd ones. */
		TEST_ASSERT_EQ(cqpoll_mlx5_cqe(r.buf, 0, 4, 64)->op_own & 1, lap & 1);
		TEST_ASSERT_EQ(poll(&r, c, 3), 3);
		TEST_ASSERT_EQ(c[0].wr_id, lap * 4);
		TEST_ASSERT_EQ(poll(&r, c, 4), 1);
		TEST_ASSERT_EQ(c[0].wr_id, lap * 4 + 3);
		/* Every slot now holds last lap's owner: nothing is valid. */
		TEST_ASSERT_EQ(poll(&r, c, 4), 0);
	}
	/* Owner right but INVALID opcode: the fresh-buffer mark is not a CQE. */
	cqpoll_mlx5_cqe(r.buf, 12, 4, 64)->op_own = MLX5_CQE_INVALID << 4 | 1;
	TEST_ASSERT_EQ(poll(&r, c, 4), 0);
	free(r.buf);
	return TEST_PASS;
}

/* The record carries 24 bits; the driver's counter keeps 32 across both wraps. */
static int
test_ci_wrap(void)
{
	static const uint32_t starts[] = { 0xfffffe, 0xfffffffe };
	struct cqpoll_completion c[4];
	struct ring r;
	uint32_t i, s, idx;

	for (s = 0; s < 2; s++) {
		ring_init(&r, 4, 64, starts[s]);
		for (i = 0; i < 4; i++) {
			idx = starts[s] + i;
			put(&r, idx, MLX5_CQE_REQ, MLX5_OPCODE_SEND, 1, (uint16_t)idx, 0);
		}
		TEST_ASSERT_EQ(poll(&r, c, 1), 1);
		TEST_ASSERT_EQ(be32toh(r.dbrec[0]), (starts[s] + 1) & 0xffffff);
		TEST_ASSERT_EQ(poll(&r, c, 4), 3);
		TEST_ASSERT_EQ(c[2].wr_id, (uint16_t)(starts[s] + 3));
		TEST_ASSERT_EQ(be32toh(r.dbrec[0]), (starts[s] + 4) & 0xffffff);
		TEST_ASSERT(be32toh(r.dbrec[0]) == 2, "wrapped to 2");
		TEST_ASSERT_EQ(r.q.ci, starts[s] + 4);
		/* Arm after the wrap carries the 24-bit index. */
		cqpoll_mlx5_arm(&r.q);
		TEST_ASSERT_EQ(be32toh(r.dbrec[1]) & 0xffffff, 2);
		free(r.buf);
	}
	return TEST_PASS;
}

static int
test_cqe128(void)
{
	struct cqpoll_completion c[4];
	uint8_t *slot;
	struct ring r;

	ring_init(&r, 4, 128, 0);
	put(&r, 0, MLX5_CQE_RESP_SEND, 0, 9, 77, 1500);
	slot = r.buf;
	/* The descriptor is the second half of the slot (§2.1). */
	TEST_ASSERT(slot[127] == (MLX5_CQE_RESP_SEND << 4), "op_own last byte: %x", slot[127]);
	TEST_ASSERT_EQ(poll(&r, c, 4), 1);
	TEST_ASSERT_EQ(c[0].byte_len, 1500);
	TEST_ASSERT_EQ(c[0].wr_id, 77);
	TEST_ASSERT_EQ(c[0].qp_num, 9);
	/* A 64-byte reading of the same memory would see slot 1's first half. */
	put(&r, 1, MLX5_CQE_REQ, MLX5_OPCODE_SEND, 9, 78, 0);
	put(&r, 2, MLX5_CQE_REQ, MLX5_OPCODE_SEND, 9, 79, 0);
	TEST_ASSERT_EQ(poll(&r, c, 4), 2);
	TEST_ASSERT_EQ(c[1].wr_id, 79);
	free(r.buf);
	return TEST_PASS;
}

/* What the driver cannot decode stops the CQ there, with an error. */
static int
test_unsupported_cqe(void)
{
	static const uint8_t bad[] = { MLX5_CQE_RESIZE_CQ, MLX5_CQE_NO_PACKET,
				       MLX5_CQE_SIG_ERR, 7 };
	struct cqpoll_completion c[4];
	struct ring r;
	unsigned int i;

	for (i = 0; i < sizeof(bad) + 1; i++) {
		ring_init(&r, 4, 64, 0);
		put(&r, 0, MLX5_CQE_REQ, MLX5_OPCODE_SEND, 1, 1, 0);
		if (i < sizeof(bad))
			put(&r, 1, bad[i], 0, 1, 2, 0);
		else /* inline-scattered data (format 1) */
			put(&r, 1, MLX5_CQE_RESP_SEND, 0, 1, 2, 0)->op_own |= MLX5_INLINE_SCATTER_32;
		TEST_ASSERT_EQ(poll(&r, c, 4), 1);
		TEST_ASSERT_EQ(poll(&r, c, 4), -EPROTO);
		TEST_ASSERT_EQ(poll(&r, c, 4), -EPROTO);
		TEST_ASSERT_EQ(r.q.ci, 1);
		free(r.buf);
	}
	return TEST_PASS;
}

static int
test_device_error_after_drain(void)
{
	struct cqpoll_completion c[4];
	struct ring r;

	ring_init(&r, 4, 64, 0);
	put(&r, 0, MLX5_CQE_REQ, MLX5_OPCODE_SEND, 1, 1, 0);
	r.q.dev_err = -EIO;
	TEST_ASSERT_EQ(poll(&r, c, 4), 1);
	TEST_ASSERT_EQ(poll(&r, c, 4), -EIO);
	free(r.buf);
	return TEST_PASS;
}

/* Byte for byte what rdma-core's mlx5_arm_cq writes (§5.1). */
static int
test_doorbell_encoding(void)
{
	static const uint8_t want_uar[8] = { 0x11, 0x34, 0x56, 0x78, 0x00, 0xab, 0xcd, 0xef };
	static const uint8_t want_rec[4] = { 0x11, 0x34, 0x56, 0x78 };
	struct cqpoll_mlx5_doorbell d;
	struct ring r;

	ring_init(&r, 4, 64, 0x12345678);
	r.q.sn = 5; /* mod 4 -> 1 */
	r.q.cqn = 0xabcdef;
	r.q.arm_cmd = MLX5_CQ_DB_REQ_NOT_SOL;
	TEST_ASSERT_EQ(cqpoll_mlx5_arm(&r.q), 0);
	TEST_ASSERT(memcmp(&r.uar[MLX5_CQ_DOORBELL / 8], want_uar, 8) == 0, "UAR bytes");
	TEST_ASSERT(memcmp(&r.dbrec[1], want_rec, 4) == 0, "record bytes");
	TEST_ASSERT_EQ(r.dbrec[0], 0); /* arming never touches SET_CI */
	d = cqpoll_mlx5_doorbell_decode(r.uar[MLX5_CQ_DOORBELL / 8]);
	TEST_ASSERT_EQ(d.sn, 1);
	TEST_ASSERT_EQ(d.cmd, 1);
	TEST_ASSERT_EQ(d.ci, 0x345678);
	TEST_ASSERT_EQ(d.cqn, 0xabcdef);
	TEST_ASSERT_EQ(d.reserved_bits, 0);
	/* Any-completion arm, and sn advancing once per consumed event. */
	r.q.arm_cmd = MLX5_CQ_DB_REQ_NOT;
	cqpoll_mlx5_events_consumed(&r.q, 2);
	cqpoll_mlx5_arm(&r.q);
	d = cqpoll_mlx5_doorbell_decode(r.uar[MLX5_CQ_DOORBELL / 8]);
	TEST_ASSERT_EQ(d.sn, 3);
	TEST_ASSERT_EQ(d.cmd, 0);
	TEST_ASSERT_EQ(be32toh(r.dbrec[1]), 3u << 28 | 0x345678);
	/* Re-arming without an event keeps the sn. */
	cqpoll_mlx5_arm(&r.q);
	TEST_ASSERT_EQ(cqpoll_mlx5_doorbell_decode(r.uar[MLX5_CQ_DOORBELL / 8]).sn, 3);
	free(r.buf);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_requester_opcodes),
	TEST_CASE(test_responder_opcodes),
	TEST_CASE(test_error_syndromes),
	TEST_CASE(test_owner_wrap),
	TEST_CASE(test_ci_wrap),
	TEST_CASE(test_cqe128),
	TEST_CASE(test_unsupported_cqe),
	TEST_CASE(test_device_error_after_drain),
	TEST_CASE(test_doorbell_encoding),
};

TEST_MAIN("mlx5-cqe", cases)
