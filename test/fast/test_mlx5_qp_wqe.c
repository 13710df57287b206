/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The WQEs a cqpoll mlx5 QP writes, byte for byte against the model written
 * from rdma-core's post path (test/mlx5_wqe_model.h), for every opcode and
 * every segment kind: scatter/gather lists with empty entries, inline data
 * (none, small, over the ring's end), fences, solicited, signalled and not;
 * the doorbell record and the register write (last WQE's first 8 bytes, the
 * halves alternating); the counter's wrap; a full queue (max_send_wr
 * outstanding) refused with -ENOMEM and never overwritten; and the CQ's
 * poll, swapped only while it
 * serves such a QP.
 */

#include <endian.h>
#include <stdio.h>

#include "cqpoll_test.h"
#include "mlx5_qp_test.h"
#include "mlx5_wqe_model.h"

/* Compare the ring at @p counter with the model of @p wr: 0 or the first byte off + 1. */
static int
wqe_diff(struct cqpoll_mlx5_qp *qp, const struct cqpoll_mlx5_send_wr *wr, uint32_t counter,
	 uint32_t qpn, struct model_wqe *m)
{
	uint8_t ring[MODEL_WQE_MAX];
	uint32_t i;

	model_wqe_build(m, wr, counter, qpn);
	qp_ring_read(qp, counter, ring, m->ds * 16);
	for (i = 0; i < m->ds * 16; i++) {
		if (m->mask[i] && ring[i] != m->bytes[i]) {
			fprintf(stderr, "WQE at %u, byte %u: ring %02x, model %02x\n",
				counter, i, ring[i], m->bytes[i]);
			return (int)i + 1;
		}
	}
	return 0;
}

/* Drain @p cq with the device running; completions read. */
static int
drain(struct qp_pair *p, struct cqpoll_cq *cq, struct cqpoll_completion *c, int max)
{
	int n = 0, r, rounds = 0;

	while (n < max && rounds++ < 1000) {
		cqpoll_mlx5_emu_run(p->ctx);
		r = cqpoll_poll_burst(cq, c + n, (unsigned int)(max - n));
		if (r < 0)
			return r;
		n += r;
		if (r == 0 && rounds > 10)
			break;
	}
	return n;
}

static int
test_every_opcode(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 64, .max_send_sge = 4,
					    .max_inline_data = 64 };
	struct cqpoll_completion c[64];
	struct cqpoll_mlx5_sge sg[4];
	struct cqpoll_mlx5_send_wr wr;
	struct model_wqe m;
	struct mlx5dv_qp dv;
	struct qp_pair p;
	uint32_t counter = 0, qpn, k;
	uint64_t reg;
	int n, half = 0, signalled = 0;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	qpn = p.caps[0].qp_num;
	cqpoll_mlx5_emu_qp_dv(cqpoll_mlx5_qp_ibv(p.qp[0]), &dv);
	for (k = 0; k < 4; k++)
		sg[k] = (struct cqpoll_mlx5_sge){ .addr = (uintptr_t)p.buf + 1024 * k + 3,
			.length = 13 + 40 * k, .lkey = p.mr->lkey };
	for (k = 0; k < 4 * 100; k++)
		p.buf[k] = (uint8_t)(k * 7 + 1);
	/* Receives at B for the sends and writes with immediate. */
	for (k = 0; k < 16; k++) {
		struct cqpoll_mlx5_sge rs = { (uintptr_t)p.buf + 32768 + k * 1024, 1024, p.mr->lkey };
		struct cqpoll_mlx5_recv_wr rw = { .wr_id = 1000 + k, .sg_list = &rs, .num_sge = 1 };

		TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_recv(p.qp[1], &rw, 1), 1);
	}
	for (k = 0; k < 19; k++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0xabc000 + k;
		wr.sg_list = sg;
		wr.remote_addr = (uintptr_t)p.buf + 49152 + 64 * k;
		wr.rkey = p.mr->rkey;
		wr.imm_data = htobe32(0x11223344u + k);
		switch (k) {
		case 0: wr.opcode = CQPOLL_MLX5_WR_SEND; wr.num_sge = 1; break;
		/* An empty entry gets no segment. */
		case 1: wr.opcode = CQPOLL_MLX5_WR_SEND; wr.num_sge = 4;
			sg[2].length = 0; break;
		case 2: wr.opcode = CQPOLL_MLX5_WR_SEND_IMM; wr.num_sge = 2;
			sg[2].length = 93; wr.flags = CQPOLL_MLX5_SEND_F_SOLICITED; break;
		/* Inline: 5 bytes, 1 DS; two entries; none (no header). */
		case 3: wr.opcode = CQPOLL_MLX5_WR_SEND; wr.num_sge = 1; sg[0].length = 5;
			wr.flags = CQPOLL_MLX5_SEND_F_INLINE; break;
		case 4: wr.opcode = CQPOLL_MLX5_WR_RDMA_WRITE; wr.num_sge = 2; sg[0].length = 13;
			wr.flags = CQPOLL_MLX5_SEND_F_INLINE; break;
		case 5: wr.opcode = CQPOLL_MLX5_WR_RDMA_WRITE; wr.num_sge = 0;
			wr.flags = CQPOLL_MLX5_SEND_F_INLINE; break;
		case 6: wr.opcode = CQPOLL_MLX5_WR_RDMA_WRITE; wr.num_sge = 3; break;
		case 7: wr.opcode = CQPOLL_MLX5_WR_RDMA_WRITE_IMM; wr.num_sge = 1;
			wr.flags = CQPOLL_MLX5_SEND_F_INLINE | CQPOLL_MLX5_SEND_F_SOLICITED; break;
		case 8: wr.opcode = CQPOLL_MLX5_WR_RDMA_WRITE_IMM; wr.num_sge = 2; break;
		case 9: wr.opcode = CQPOLL_MLX5_WR_RDMA_READ; wr.num_sge = 2; break;
		case 10: wr.opcode = CQPOLL_MLX5_WR_ATOMIC_CS; wr.num_sge = 1; sg[0].length = 8;
			wr.compare_add = 0x0102030405060708ull; wr.swap = 0xa1a2a3a4a5a6a7a8ull;
			wr.remote_addr = (uintptr_t)p.buf + 60000; break;
		case 11: wr.opcode = CQPOLL_MLX5_WR_ATOMIC_FA; wr.num_sge = 1; sg[0].length = 8;
			wr.compare_add = 0x55; wr.remote_addr = (uintptr_t)p.buf + 60008;
			wr.flags = CQPOLL_MLX5_SEND_F_FENCE; break;
		/* Up to the QP's inline size, over several blocks. */
		case 12: wr.opcode = CQPOLL_MLX5_WR_SEND; wr.num_sge = 2; sg[0].length = 60;
			sg[1].length = p.caps[0].max_inline_data - 60;
			wr.flags = CQPOLL_MLX5_SEND_F_INLINE; break;
		case 13: wr.opcode = CQPOLL_MLX5_WR_RDMA_READ; wr.num_sge = 1; sg[0].length = 1;
			wr.flags = CQPOLL_MLX5_SEND_F_FENCE; break;
		/* One entry, not inline: the post's one-WQEBB path, with and without imm. */
		case 14: wr.opcode = CQPOLL_MLX5_WR_RDMA_WRITE; wr.num_sge = 1; break;
		case 15: wr.opcode = CQPOLL_MLX5_WR_RDMA_WRITE_IMM; wr.num_sge = 1;
			wr.flags = CQPOLL_MLX5_SEND_F_FENCE | CQPOLL_MLX5_SEND_F_SOLICITED; break;
		/* One empty entry: no data segment, DS 1. */
		case 16: wr.opcode = CQPOLL_MLX5_WR_SEND; wr.num_sge = 1; sg[0].length = 0; break;
		default: wr.opcode = CQPOLL_MLX5_WR_SEND; wr.num_sge = 4; sg[0].length = 0;
			sg[1].length = 0; sg[2].length = 0; sg[3].length = 7; break;
		}
		/* Every other one signalled; each posted alone, so its doorbell names it. */
		if (k % 2 == 0) {
			wr.flags |= CQPOLL_MLX5_SEND_F_SIGNALED;
			signalled++;
		}
		n = cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1);
		TEST_ASSERT(n == 1, "opcode case %u: %d", k, n);
		TEST_ASSERT(wqe_diff(p.qp[0], &wr, counter, qpn, &m) == 0, "opcode case %u", k);
		counter += m.nbb;
		/* Record: the counter past the WQE; register: its first 8 bytes (§4.1). */
		TEST_ASSERT_EQ(be32toh(dv.dbrec[1]), counter);
		memcpy(&reg, (uint8_t *)dv.bf.reg + half * dv.bf.size, 8);
		TEST_ASSERT(memcmp(&reg, m.bytes, 8) == 0, "register of case %u", k);
		half ^= 1;
		/* Restore the entries changed for this case. */
		for (uint32_t j = 0; j < 4; j++)
			sg[j].length = 13 + 40 * j;
	}
	/* The device carried them out; every signalled one came back with its wr_id. */
	n = drain(&p, p.cq[0], c, 64);
	TEST_ASSERT_EQ(n, signalled);
	for (k = 0; k < (uint32_t)n; k++) {
		TEST_ASSERT_EQ(c[k].status, CQPOLL_STATUS_SUCCESS);
		TEST_ASSERT(c[k].flags & CQPOLL_COMPLETION_F_WR_ID, "flag");
		TEST_ASSERT_EQ(c[k].wr_id, 0xabc000 + 2 * k);
	}
	qp_pair_close(&p);
	return TEST_PASS;
}

/* Bursts: one doorbell for many WQEs, the last one's bytes; wrap of ring and counter. */
static int
test_burst_and_wrap(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 8, .max_send_sge = 4,
					    .max_inline_data = 100 };
	struct cqpoll_mlx5_send_wr wr[8];
	struct cqpoll_completion c[64];
	struct cqpoll_mlx5_sge sg[8][4];
	struct model_wqe m;
	struct mlx5dv_qp dv;
	struct qp_pair p;
	uint32_t counter = 0, i, round, doorbells = 0;
	uint64_t reg;
	int n, k, off;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 4096, 65536, 7), 0);
	cqpoll_mlx5_emu_qp_dv(cqpoll_mlx5_qp_ibv(p.qp[0]), &dv);
	for (i = 0; i < 65536 / 2; i++)
		p.buf[i] = (uint8_t)(i ^ (i >> 8));
	/*
	 * 70000 blocks: the 16-bit counter wraps; inline sizes put WQEs across
	 * the end, and the common path's WQEs up to it.
	 */
	for (round = 0; counter < 70000; round++) {
		k = 1 + (int)(round % 8);
		for (i = 0; i < (uint32_t)k; i++) {
			/*
			 * One in three by pointer, 1 to 4 entries (1 or 2 blocks):
			 * the post's common path up to the ring's end.
			 */
			const int ptr = (round + i) % 3 == 0;
			uint32_t j;

			for (j = 0; j < 4; j++)
				sg[i][j] = (struct cqpoll_mlx5_sge){
					(uintptr_t)p.buf + (round * 37 + i * 101 + j * 7) % 30000,
					(round + i * 13 + j) % (p.caps[0].max_inline_data + 1),
					p.mr->lkey };
			wr[i] = (struct cqpoll_mlx5_send_wr){ .wr_id = round * 8 + i, .sg_list = sg[i],
				.num_sge = ptr ? 1 + (round / 3 + i) % 4 : 1,
				.opcode = CQPOLL_MLX5_WR_RDMA_WRITE,
				.flags = (ptr ? 0 : CQPOLL_MLX5_SEND_F_INLINE) |
					(i == (uint32_t)k - 1 ? CQPOLL_MLX5_SEND_F_SIGNALED : 0),
				.remote_addr = (uintptr_t)p.buf + 32768, .rkey = p.mr->rkey };
		}
		/*
		 * A burst cut short (max_send_wr outstanding) goes on with its
		 * rest after a drain: its signalled last request then fits.
		 */
		for (off = 0; off < k; off += n) {
			n = cqpoll_mlx5_qp_post_send(p.qp[0], wr + off, (unsigned int)(k - off));
			if (n == -ENOMEM) {
				drain(&p, p.cq[0], c, 64);
				n = 0;
				continue;
			}
			TEST_ASSERT(n > 0, "round %u: %d", round, n);
			for (i = (uint32_t)off; i < (uint32_t)(off + n); i++) {
				TEST_ASSERT(wqe_diff(p.qp[0], &wr[i], counter, p.caps[0].qp_num,
						     &m) == 0, "round %u WQE %u", round, i);
				counter += m.nbb;
			}
			TEST_ASSERT_EQ(be32toh(dv.dbrec[1]), counter & 0xffff);
			memcpy(&reg, (uint8_t *)dv.bf.reg + (doorbells++ % 2) * dv.bf.size, 8);
			TEST_ASSERT(memcmp(&reg, m.bytes, 8) == 0, "round %u: register", round);
			if (off + n < k)
				drain(&p, p.cq[0], c, 64);
		}
		if (round % 3 == 0)
			drain(&p, p.cq[0], c, 64);
	}
	qp_pair_close(&p);
	return TEST_PASS;
}

/* A full queue is refused and left as it was; one completion frees it all. */
static int
test_full_ring(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16 };
	struct cqpoll_mlx5_sge sg;
	struct cqpoll_mlx5_send_wr wr;
	struct cqpoll_completion c[4];
	struct model_wqe m;
	struct qp_pair p;
	uint32_t i, cnt;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	cnt = p.caps[0].max_send_wr;
	sg = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 8, p.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = CQPOLL_MLX5_WR_RDMA_WRITE;
	wr.remote_addr = (uintptr_t)p.buf + 4096;
	wr.rkey = p.mr->rkey;
	for (i = 0; i < cnt; i++) {
		wr.wr_id = i;
		wr.flags = i == cnt - 1 ? CQPOLL_MLX5_SEND_F_SIGNALED : 0;
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), 1);
	}
	wr.wr_id = 999;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), -ENOMEM);
	/* The first WQE is still there, untouched. */
	wr.wr_id = 0;
	wr.flags = 0;
	TEST_ASSERT(wqe_diff(p.qp[0], &wr, 0, p.caps[0].qp_num, &m) == 0, "overwritten");
	TEST_ASSERT_EQ(drain(&p, p.cq[0], c, 4), 1);
	TEST_ASSERT_EQ(c[0].wr_id, cnt - 1);
	/* Retired up to the signalled one: the whole ring again. */
	for (i = 0; i < cnt; i++)
		TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), 1);
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), -ENOMEM);
	qp_pair_close(&p);
	return TEST_PASS;
}

/* Invalid requests are refused before anything is written. */
static int
test_invalid(void)
{
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16 };
	struct cqpoll_mlx5_sge sg[2];
	struct cqpoll_mlx5_send_wr wr;
	struct mlx5dv_qp dv;
	struct qp_pair p;

	TEST_ASSERT_EQ(qp_pair_open(&p, &conf, 256, 65536, 7), 0);
	cqpoll_mlx5_emu_qp_dv(cqpoll_mlx5_qp_ibv(p.qp[0]), &dv);
	sg[0] = sg[1] = (struct cqpoll_mlx5_sge){ (uintptr_t)p.buf, 16, p.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sg;
	wr.num_sge = 2;  /* over max_send_sge 1 */
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), -EINVAL);
	wr.num_sge = 1;
	wr.opcode = CQPOLL_MLX5_WR_ATOMIC_FA;  /* entry not 8 bytes */
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), -EINVAL);
	wr.opcode = CQPOLL_MLX5_WR_RDMA_READ;
	wr.flags = CQPOLL_MLX5_SEND_F_INLINE;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), -EINVAL);
	wr.opcode = CQPOLL_MLX5_WR_SEND;
	sg[0].length = p.caps[0].max_inline_data + 1;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), -EINVAL);
	wr.opcode = 77;
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_post_send(p.qp[0], &wr, 1), -EINVAL);
	TEST_ASSERT_EQ(be32toh(dv.dbrec[1]), 0);
	qp_pair_close(&p);
	return TEST_PASS;
}

/* The CQ's poll changes only while it serves a cqpoll QP. */
static int
test_poll_swap(void)
{
	struct cqpoll_mlx5_emu_conf cc = { .arm = CQPOLL_ARM_LEVEL,
					   .emu_flags = CQPOLL_MLX5_EMU_F_MANUAL };
	struct cqpoll_mlx5_qp_conf conf = { .max_send_wr = 16 };
	struct cqpoll_completion in = { .opcode = CQPOLL_OP_RECV, .wr_id = 5, .qp_num = 77 }, out;
	struct ibv_context *ctx = cqpoll_mlx5_emu_open();
	struct ibv_pd *pd = cqpoll_mlx5_emu_alloc_pd(ctx);
	struct cqpoll_cq *cq = cqpoll_mlx5_emu_cq_create(&cc);
	const struct cqpoll_cq_fp *fp = (const struct cqpoll_cq_fp *)(const void *)cq;
	cqpoll_poll_burst_t bare = fp->poll;
	struct cqpoll_mlx5_qp *qp;

	conf.send_cq = conf.recv_cq = cq;
	qp = cqpoll_mlx5_qp_create(pd, &conf);
	TEST_ASSERT(qp != NULL, "create: %s", strerror(errno));
	TEST_ASSERT(fp->poll != bare, "poll not swapped");
	/* Another QP's completions keep the CQE's WQE counter only. */
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_post(cq, &in), 0);
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, &out, 1), 1);
	TEST_ASSERT(!(out.flags & CQPOLL_COMPLETION_F_WR_ID) && out.wr_id == 0, "foreign wr_id");
	TEST_ASSERT_EQ(cqpoll_mlx5_qp_destroy(qp), 0);
	TEST_ASSERT(fp->poll == bare, "bare poll not restored");
	/* Not an mlx5 CQ: refused. */
	conf.send_cq = conf.recv_cq = cqpoll_sw_emu_cq_create(NULL);
	TEST_ASSERT(cqpoll_mlx5_qp_create(pd, &conf) == NULL && errno == EINVAL, "sw CQ taken");
	cqpoll_cq_destroy(conf.send_cq);
	cqpoll_cq_destroy(cq);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_dealloc_pd(pd), 0);
	TEST_ASSERT_EQ(cqpoll_mlx5_emu_close(ctx), 0);
	return TEST_PASS;
}

int
main(void)
{
	static const struct test_case cases[] = {
		TEST_CASE(test_every_opcode),
		TEST_CASE(test_burst_and_wrap),
		TEST_CASE(test_full_ring),
		TEST_CASE(test_invalid),
		TEST_CASE(test_poll_swap),
	};

	return test_run("mlx5-qp-wqe", cases, sizeof(cases) / sizeof(cases[0]));
}
