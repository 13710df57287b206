/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated device carries out the work its QPs posted: it reads the
 * doorbell register and record, parses each send WQE in the ring as the
 * device would (doc/guides/mlx5-wqe-contract.md §2, its own parser, not the driver's
 * writers), moves the data between two of its QPs, and writes the CQEs
 * (§6; error syndromes as rdma-core maps them, CQ contract §7).
 *
 * What it assumes where no source settles it [INFERRED]: an unsignalled WQE
 * (CE 0) gets a CQE only when it fails or is flushed; after an error the QP
 * is in error and every later WQE, and every posted receive, is flushed with
 * a CQE of its own (WR_FLUSH_ERR); a responder-side error (receive too
 * small, bad lkey in the receive) fails both ends; a send to a QP that is
 * not ready, or in error, exhausts the transport retries.
 */

#include <errno.h>
#include <string.h>

#include "mlx5_emu_wq.h"
#include "mlx5_prm.h"

/* What carrying out one WQE came to. */
enum exec_res {
	EXEC_DONE,   /* done, or failed with its CQE written: next WQE */
	EXEC_WAIT,   /* not now (no receive yet, a CQ full): the same WQE next look */
};

/* A send WQE as the device reads it. */
struct wqe {
	uint32_t at;      /* WQEBB counter of its first block */
	uint8_t opcode;
	uint8_t fm_ce_se;
	uint16_t idx;
	uint32_t qpn;
	uint32_t ds;
	uint32_t imm;     /* as written (network order) */
};

static uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static uint64_t
rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

/* Byte @p off of the WQE at counter @p at, the ring wrapping (§1.2). */
static const uint8_t *
wqe_byte(const struct emu_wq_qp *qp, uint32_t at, size_t off)
{
	size_t ring = (size_t)qp->dv.sq.wqe_cnt * MLX5_SEND_WQE_BB;

	return (const uint8_t *)qp->dv.sq.buf +
		((size_t)(at & (qp->dv.sq.wqe_cnt - 1)) * MLX5_SEND_WQE_BB + off) % ring;
}

/* @p len bytes from byte @p off of the WQE, across the ring's end. */
static void
wqe_copy(const struct emu_wq_qp *qp, uint32_t at, size_t off, uint8_t *dst, uint32_t len)
{
	size_t ring = (size_t)qp->dv.sq.wqe_cnt * MLX5_SEND_WQE_BB;
	const uint8_t *p = wqe_byte(qp, at, off);
	size_t room = ring - (size_t)(p - (const uint8_t *)qp->dv.sq.buf);

	if (room >= len) {
		memcpy(dst, p, len);
		return;
	}
	memcpy(dst, p, room);
	memcpy(dst + room, qp->dv.sq.buf, len - room);
}

static struct emu_wq_qp *
qp_by_num(struct emu_wq_ctx *c, uint32_t qpn)
{
	struct emu_wq_qp *qp;

	for (qp = c->qps; qp != NULL; qp = qp->next)
		if (qp->ibqp.qp_num == qpn)
			return qp;
	return NULL;
}

/* The registered memory @p key names, covering [addr, addr + len) with @p access. */
static uint8_t *
mr_map(struct emu_wq_ctx *c, struct ibv_pd *pd, uint32_t key, int remote, uint64_t addr,
       uint64_t len, int access)
{
	const struct emu_wq_mr *m;

	for (m = c->mrs; m != NULL; m = m->next) {
		if ((remote ? m->mr.rkey : m->mr.lkey) != key || m->mr.pd != pd)
			continue;
		if (addr < (uintptr_t)m->mr.addr ||
		    addr + len > (uintptr_t)m->mr.addr + m->mr.length ||
		    (m->access & access) != access)
			return NULL;
		return (uint8_t *)(uintptr_t)addr;
	}
	return NULL;
}

static void
cqe_stamp(struct mlx5_cqe64 *cqe, uint32_t sop, uint16_t idx)
{
	cqe->timestamp = htobe64(cqpoll_mlx5_emu_clock_ticks());
	cqe->sop_drop_qpn = htobe32(sop);
	cqe->wqe_counter = htobe16(idx);
}

/* An error CQE (§2.5): requester with the WQE's opcode, or responder. */
static void
cqe_err(struct cqpoll_mlx5_emu_dev *cq, int req, uint8_t wop, uint32_t qpn, uint16_t idx,
	uint8_t syndrome)
{
	struct mlx5_cqe64 cqe;
	struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)(void *)&cqe;

	memset(&cqe, 0, sizeof(cqe));
	e->syndrome = syndrome;
	e->s_wqe_opcode_qpn = htobe32((req ? (uint32_t)wop << 24 : 0) | qpn);
	e->wqe_counter = htobe16(idx);
	/* Room was checked by the caller; the device is this thread only. */
	(void)cqpoll_mlx5_emu_cq_write(cq, &cqe, (uint8_t)((req ? MLX5_CQE_REQ_ERR :
							    MLX5_CQE_RESP_ERR) << 4), 1);
}

static void
cqe_req(struct emu_wq_qp *qp, const struct wqe *w, uint32_t byte_cnt)
{
	struct mlx5_cqe64 cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.byte_cnt = htobe32(byte_cnt);
	cqe_stamp(&cqe, (uint32_t)w->opcode << 24 | qp->ibqp.qp_num, w->idx);
	(void)cqpoll_mlx5_emu_cq_write(qp->scq, &cqe, MLX5_CQE_REQ << 4, 0);
}

/* A receive's CQE: an SRQ's names the SRQ (CQE version 0) and its WQE index (§6). */
static void
cqe_resp(struct emu_wq_qp *peer, uint16_t idx, uint8_t opcode, uint32_t byte_cnt, uint32_t imm,
	 int se, uint32_t src_qpn)
{
	struct mlx5_cqe64 cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.byte_cnt = htobe32(byte_cnt);
	cqe.imm_inval_pkey = imm;
	cqe.flags_rqpn = htobe32(src_qpn & 0xffffff);
	if (peer->srq != NULL)
		cqe.srqn_uidx = htobe32(peer->srq->dv.srqn);
	cqe_stamp(&cqe, peer->ibqp.qp_num, idx);
	(void)cqpoll_mlx5_emu_cq_write(peer->rcq, &cqe, (uint8_t)(opcode << 4 |
				       (se ? CQPOLL_MLX5_OP_OWN_SE : 0)), se);
}

static void
qp_error(struct emu_wq_qp *qp)
{
	qp->state = IBV_QPS_ERR;
	qp->ibqp.state = IBV_QPS_ERR;
}

/*
 * Gather the WQE's data from unit @p k on (data segments or inline data)
 * into the scratch buffer: the length, or -syndrome.
 */
static int64_t
gather(struct emu_wq_ctx *c, struct emu_wq_qp *qp, const struct wqe *w, uint32_t k)
{
	uint64_t total = 0, addr;
	uint32_t bc, len, lkey;
	const uint8_t *u, *src;

	while (k < w->ds) {
		u = wqe_byte(qp, w->at, (size_t)k * 16);
		bc = rd32(u);
		if (bc & MLX5_INLINE_SEG) {
			len = bc & ~MLX5_INLINE_SEG;
			if (total + len > EMU_WQ_MSG_MAX || 4 + len > (w->ds - k) * 16u)
				return -MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
			wqe_copy(qp, w->at, (size_t)k * 16 + 4, c->scratch + total, len);
			total += len;
			k += (4 + len + 15) / 16;
			continue;
		}
		lkey = rd32(u + 4);
		addr = rd64(u + 8);
		if (total + bc > EMU_WQ_MSG_MAX)
			return -MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
		src = mr_map(c, qp->ibqp.pd, lkey, 0, addr, bc, 0);
		if (src == NULL)
			return -MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
		memcpy(c->scratch + total, src, bc);
		total += bc;
		k++;
	}
	return (int64_t)total;
}

/* Scatter @p len scratch bytes over a receive WQE (§5): 0 or the responder's syndrome. */
static int
scatter_recv(struct emu_wq_ctx *c, struct emu_wq_qp *peer, const uint8_t *rwqe, uint32_t nseg,
	     uint32_t len)
{
	uint32_t i, bc, lkey, done = 0, take;
	uint8_t *dst;

	for (i = 0; i < nseg && done < len; i++) {
		bc = rd32(rwqe + i * 16);
		lkey = rd32(rwqe + i * 16 + 4);
		if (lkey == MLX5_INVALID_LKEY)
			break;
		take = len - done < bc ? len - done : bc;
		dst = mr_map(c, peer->ibqp.pd, lkey, 0, rd64(rwqe + i * 16 + 8), take,
			     IBV_ACCESS_LOCAL_WRITE);
		if (dst == NULL)
			return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
		memcpy(dst, c->scratch + done, take);
		done += take;
	}
	return done < len ? MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR : 0;
}

/* Sum and check the local destination segments of a read or atomic. */
static int64_t
local_dst(struct emu_wq_ctx *c, struct emu_wq_qp *qp, const struct wqe *w, uint32_t k)
{
	uint64_t total = 0;
	const uint8_t *u;

	for (; k < w->ds; k++) {
		u = wqe_byte(qp, w->at, (size_t)k * 16);
		if (mr_map(c, qp->ibqp.pd, rd32(u + 4), 0, rd64(u + 8), rd32(u),
			   IBV_ACCESS_LOCAL_WRITE) == NULL)
			return -MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
		total += rd32(u);
	}
	return (int64_t)total;
}

/* Copy @p src over the local segments from unit @p k (checked by local_dst()). */
static void
local_put(struct emu_wq_qp *qp, const struct wqe *w, uint32_t k, const uint8_t *src)
{
	const uint8_t *u;

	for (; k < w->ds; k++) {
		u = wqe_byte(qp, w->at, (size_t)k * 16);
		memcpy((void *)(uintptr_t)rd64(u + 8), src, rd32(u));
		src += rd32(u);
	}
}

/*
 * The responder of a message that consumes a receive. 0: placed, its CQE
 * written; > 0: the requester's syndrome; -1: wait for a receive.
 */
static int
to_receive(struct emu_wq_ctx *c, struct emu_wq_qp *qp, struct emu_wq_qp *peer,
	   const struct wqe *w, uint32_t len, int with_data)
{
	uint32_t nseg = 0;
	uint16_t idx = 0;
	const uint8_t *rwqe = cqpoll_mlx5_emu_wq_recv_wqe(peer, &nseg, &idx);
	uint8_t op;
	int syn;

	if (rwqe == NULL) {
		/* rnr_retry 7 retries for ever; anything else gives up here. */
		if (qp->rnr_retry == 7) {
			c->stats.rnr_waits++;
			return -1;
		}
		return MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR;
	}
	syn = with_data ? scatter_recv(c, peer, rwqe, nseg, len) : 0;
	if (syn != 0) {
		cqe_err(peer->rcq, 0, 0, peer->ibqp.qp_num, idx, (uint8_t)syn);
		cqpoll_mlx5_emu_wq_recv_take(c, peer);
		c->stats.errors++;
		qp_error(peer);
		/* The requester hears a NAK: invalid request or operational error. */
		return syn == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR ?
			MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR : MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
	}
	op = w->opcode == MLX5_OPCODE_RDMA_WRITE_IMM ? MLX5_CQE_RESP_WR_IMM :
		w->opcode == MLX5_OPCODE_SEND_IMM ? MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND;
	cqe_resp(peer, idx, op, len, op == MLX5_CQE_RESP_SEND ? 0 : w->imm,
		 (w->fm_ce_se & MLX5_WQE_CTRL_SOLICITED) != 0, qp->ibqp.qp_num);
	cqpoll_mlx5_emu_wq_recv_take(c, peer);
	c->stats.recvs++;
	return 0;
}

/* An atomic on host-endian remote memory (atomic_req_8B_endianness_mode 1, §2.4). */
static void
atomic_do(struct emu_wq_qp *qp, const struct wqe *w, uint8_t *target)
{
	uint64_t swap_add = rd64(wqe_byte(qp, w->at, 32));
	uint64_t compare = rd64(wqe_byte(qp, w->at, 40));
	uint64_t old;

	memcpy(&old, target, sizeof(old));
	if (w->opcode == MLX5_OPCODE_ATOMIC_FA) {
		uint64_t v = old + swap_add;

		memcpy(target, &v, sizeof(v));
	} else if (old == compare) {
		memcpy(target, &swap_add, sizeof(swap_add));
	}
	local_put(qp, w, 3, (const uint8_t *)&old);
}

/* Carry out a parsed, valid WQE: 0 done, > 0 syndrome, -1 wait. */
static int
exec(struct emu_wq_ctx *c, struct emu_wq_qp *qp, const struct wqe *w, uint32_t *byte_cnt)
{
	struct emu_wq_qp *peer = qp_by_num(c, qp->dest_qpn);
	uint64_t raddr = 0;
	uint32_t rkey = 0, nseg;
	uint16_t idx;
	uint8_t *target;
	int64_t len;

	if (peer == NULL || (peer->state != IBV_QPS_RTR && peer->state != IBV_QPS_RTS))
		return MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
	if (w->opcode != MLX5_OPCODE_SEND && w->opcode != MLX5_OPCODE_SEND_IMM) {
		if (w->ds < 2)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		raddr = rd64(wqe_byte(qp, w->at, 16));
		rkey = rd32(wqe_byte(qp, w->at, 24));
	}
	switch (w->opcode) {
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_IMM:
		len = gather(c, qp, w, 1);
		if (len < 0)
			return (int)-len;
		return to_receive(c, qp, peer, w, (uint32_t)len, 1);
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		len = gather(c, qp, w, 2);
		if (len < 0)
			return (int)-len;
		target = mr_map(c, peer->ibqp.pd, rkey, 1, raddr, (uint64_t)len,
				IBV_ACCESS_REMOTE_WRITE);
		if ((target == NULL && len != 0) || !(peer->access & IBV_ACCESS_REMOTE_WRITE))
			return MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
		/* The receive first: no byte lands before the write can complete. */
		if (w->opcode == MLX5_OPCODE_RDMA_WRITE_IMM &&
		    cqpoll_mlx5_emu_wq_recv_wqe(peer, &nseg, &idx) == NULL)
			return to_receive(c, qp, peer, w, (uint32_t)len, 0);
		if (len != 0)
			memcpy(target, c->scratch, (size_t)len);
		if (w->opcode == MLX5_OPCODE_RDMA_WRITE_IMM)
			return to_receive(c, qp, peer, w, (uint32_t)len, 0);
		return 0;
	case MLX5_OPCODE_RDMA_READ:
		len = local_dst(c, qp, w, 2);
		if (len < 0)
			return (int)-len;
		target = mr_map(c, peer->ibqp.pd, rkey, 1, raddr, (uint64_t)len,
				IBV_ACCESS_REMOTE_READ);
		if ((target == NULL && len != 0) || !(peer->access & IBV_ACCESS_REMOTE_READ))
			return MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
		if (len != 0)
			local_put(qp, w, 2, target);
		*byte_cnt = (uint32_t)len;
		return 0;
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA:
		if (w->ds != 4 || rd32(wqe_byte(qp, w->at, 48)) != 8)
			return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		if (local_dst(c, qp, w, 3) < 0)
			return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
		target = (raddr & 7) != 0 ? NULL :
			mr_map(c, peer->ibqp.pd, rkey, 1, raddr, 8, IBV_ACCESS_REMOTE_ATOMIC);
		if (target == NULL || !(peer->access & IBV_ACCESS_REMOTE_ATOMIC))
			return MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
		atomic_do(qp, w, target);
		*byte_cnt = 8;
		return 0;
	default:
		return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	}
}

/* CQEs WQE @p w may write on @p cq: room for them now? */
static int
room_for(struct emu_wq_ctx *c, struct emu_wq_qp *qp, const struct wqe *w)
{
	struct emu_wq_qp *peer = qp_by_num(c, qp->dest_qpn);
	int recv = w->opcode == MLX5_OPCODE_SEND || w->opcode == MLX5_OPCODE_SEND_IMM ||
		w->opcode == MLX5_OPCODE_RDMA_WRITE_IMM;
	uint32_t need = 1;

	if (qp->state != IBV_QPS_ERR && recv && peer != NULL) {
		if (peer->rcq == qp->scq)
			need = 2;
		else if (cqpoll_mlx5_emu_cq_room(peer->rcq, 1) != 1)
			return 0;
	}
	return cqpoll_mlx5_emu_cq_room(qp->scq, need) == 1;
}

static enum exec_res
exec_one(struct emu_wq_ctx *c, struct emu_wq_qp *qp)
{
	const uint8_t *ctrl = wqe_byte(qp, qp->sq_ci, 0);
	uint32_t w0 = rd32(ctrl), w1 = rd32(ctrl + 4), byte_cnt = 0;
	struct wqe w = {
		.at = qp->sq_ci,
		.opcode = (uint8_t)w0,
		.idx = (uint16_t)(w0 >> 8),
		.qpn = w1 >> 8,
		.ds = w1 & 0x3f,
		.fm_ce_se = ctrl[11],
	};
	int syn;

	memcpy(&w.imm, ctrl + 12, sizeof(w.imm));
	if (!room_for(c, qp, &w)) {
		c->stats.cq_waits++;
		return EXEC_WAIT;
	}
	if (qp->state == IBV_QPS_ERR) {
		/* The WQE's own counter, whatever its index field says. */
		cqe_err(qp->scq, 1, w.opcode, qp->ibqp.qp_num, (uint16_t)qp->sq_ci,
			MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
		c->stats.flushed++;
		qp->sq_ci += w.ds != 0 ? (w.ds + 3) / 4 : 1;
		return EXEC_DONE;
	}
	/* §7 "DS or a WQEBB advance": a WQE the device cannot place fails the QP. */
	if (w.idx != (uint16_t)qp->sq_ci || w.qpn != qp->ibqp.qp_num || w.ds == 0 ||
	    qp->state != IBV_QPS_RTS)
		syn = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	else
		syn = exec(c, qp, &w, &byte_cnt);
	if (syn < 0)
		return EXEC_WAIT;
	if (syn > 0) {
		cqe_err(qp->scq, 1, w.opcode, qp->ibqp.qp_num, (uint16_t)qp->sq_ci, (uint8_t)syn);
		c->stats.errors++;
		qp_error(qp);
	} else {
		/* CE 2 asks for a CQE (§2.2); 0 only on error. */
		if ((w.fm_ce_se & 0x0c) >= MLX5_WQE_CTRL_CQ_UPDATE)
			cqe_req(qp, &w, byte_cnt);
		c->stats.wqes++;
	}
	qp->sq_ci += w.ds != 0 ? (w.ds + 3) / 4 : 1;
	return EXEC_DONE;
}

/* Read the register's two halves: the doorbells written since the last look. */
static void
read_doorbells(struct emu_wq_ctx *c, struct emu_wq_qp *qp)
{
	uint16_t rec = (uint16_t)be32toh(__atomic_load_n(&qp->dv.dbrec[MLX5_SND_DBR],
							 __ATOMIC_ACQUIRE));
	uint64_t v, *reg;
	uint32_t h, w0, w1;
	uint16_t dist;
	int seen = 0;

	for (h = 0; h < 2; h++) {
		reg = (uint64_t *)(void *)(qp->uar + EMU_WQ_BF_OFFSET + h * EMU_WQ_BF_SIZE);
		v = __atomic_exchange_n(reg, 0, __ATOMIC_ACQ_REL);
		if (v == 0)
			continue;
		c->stats.doorbells++;
		w0 = rd32((const uint8_t *)&v);
		w1 = rd32((const uint8_t *)&v + 4);
		/* The last WQE announced lies within one ring before the record. */
		dist = (uint16_t)(rec - (uint16_t)(w0 >> 8));
		if ((w1 >> 8) != qp->ibqp.qp_num || dist == 0 || dist > qp->dv.sq.wqe_cnt) {
			c->stats.bad_doorbells++;
			continue;
		}
		seen = 1;
	}
	if (seen)
		qp->sq_target = rec;
	else if (rec != qp->sq_target)
		c->stats.record_only++;
}

/*
 * An errored QP's posted receives, one flush CQE each. A QP on an SRQ has
 * none: what it has not taken is the SRQ's, and stays posted for the others.
 */
static void
flush_recvs(struct emu_wq_ctx *c, struct emu_wq_qp *qp)
{
	uint32_t nseg;
	uint16_t idx;

	if (qp->srq != NULL)
		return;
	while (cqpoll_mlx5_emu_wq_recv_wqe(qp, &nseg, &idx) != NULL &&
	       cqpoll_mlx5_emu_cq_room(qp->rcq, 1) == 1) {
		cqe_err(qp->rcq, 0, 0, qp->ibqp.qp_num, idx, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
		qp->rq_ci++;
		c->stats.flushed++;
	}
}

uint32_t
cqpoll_mlx5_emu_wq_service(struct emu_wq_ctx *c, struct emu_wq_qp *qp)
{
	uint32_t n = 0;

	if (qp->state == IBV_QPS_RESET)
		return 0;
	read_doorbells(c, qp);
	while ((uint16_t)qp->sq_ci != qp->sq_target && exec_one(c, qp) == EXEC_DONE)
		n++;
	if (qp->state == IBV_QPS_ERR)
		flush_recvs(c, qp);
	return n;
}

void
cqpoll_mlx5_emu_wq_reset(struct emu_wq_qp *qp)
{
	/* rdma-core zeroes the record with the indices (§1.3); the device forgets. */
	qp->dv.dbrec[MLX5_RCV_DBR] = 0;
	qp->dv.dbrec[MLX5_SND_DBR] = 0;
	memset(qp->uar + EMU_WQ_BF_OFFSET, 0, 2 * EMU_WQ_BF_SIZE);
	qp->sq_ci = 0;
	qp->sq_target = 0;
	qp->rq_ci = 0;
}
