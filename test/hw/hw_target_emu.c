/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated target: mlx5-emu CQs under the mlx5 driver and verbs CQs
 * made by the production cqpoll_verbs_cq_create() on a verbs-emu context.
 * A step writes the completions the traffic model expects, as the device
 * would: the mlx5 device scatters receives that fit into the CQE (rdma-core
 * turns scatter-to-CQE on by default: 32 bytes in a 64-byte CQE, 64 in a
 * 128-byte one) and carries WQE indices, the verbs device carries wr_ids.
 * It has no QP and no receive buffer: payloads exist only where the CQE
 * holds them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll_mlx5.h"
#include "cqpoll_mlx5_emu.h"
#include "cqpoll_verbs.h"
#include "cqpoll_verbs_emu.h"
#include "hw_check.h"

struct hw_lane {
	struct hw_target *t;
	enum hw_driver driver;
	struct cqpoll_cq *cq;
	uint32_t qpn;
	uint32_t inline_max;
	uint8_t payload[64];
};

static uint32_t next_qpn = 0x100;

static struct hw_lane *
emu_open(struct hw_target *t, const struct hw_lane_conf *c, char *why, size_t len)
{
	struct hw_lane *l = calloc(1, sizeof(*l));
	uint32_t size = c->size != 0 ? c->size : 256;

	if (l == NULL) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	l->t = t;
	l->driver = c->driver;
	l->qpn = next_qpn;
	next_qpn += 2;
	errno = 0;
	if (c->driver == HW_DRV_MLX5) {
		struct cqpoll_mlx5_emu_conf mc = {
			.size = size, .flags = c->mlx5_flags, .channel = c->channel,
			.arm = c->edge_emu ? CQPOLL_ARM_EDGE : CQPOLL_ARM_LEVEL,
		};

		l->cq = cqpoll_mlx5_emu_cq_create(&mc);
		l->inline_max = (c->mlx5_flags & CQPOLL_MLX5_F_CQE128) ? 64 : 32;
	} else {
		struct cqpoll_verbs_conf vc = { .size = size, .channel = c->channel };

		l->cq = cqpoll_verbs_cq_create(t->ctx, &vc);
	}
	if (l->cq == NULL) {
		snprintf(why, len, "%s CQ: %s", c->driver == HW_DRV_MLX5 ?
			 "cqpoll_mlx5_emu_cq_create" : "cqpoll_verbs_cq_create",
			 strerror(errno != 0 ? errno : EIO));
		free(l);
		return NULL;
	}
	return l;
}

static struct cqpoll_cq *
emu_cq(struct hw_lane *l)
{
	return l->cq;
}

static uint32_t
emu_qpn(struct hw_lane *l, enum hw_side side)
{
	return l->qpn + (uint32_t)side;
}

static int
emu_step(struct hw_lane *l, const struct hw_step *s, const struct hw_expect *e, int ne)
{
	int i, r;

	(void)s;
	for (i = 0; i < ne; i++) {
		struct cqpoll_completion c = {
			.status = e[i].status,
			.qp_num = emu_qpn(l, e[i].side),
			.flags = e[i].flags,
			.imm_data = e[i].imm,
			.byte_len = e[i].byte_len,
		};

		/* A failed completion says only which side it is on. */
		if (e[i].status == CQPOLL_STATUS_SUCCESS)
			c.opcode = e[i].opcode;
		else
			c.opcode = e[i].side == HW_SIDE_A ? CQPOLL_OP_SEND : CQPOLL_OP_RECV;
		if (l->driver == HW_DRV_MLX5) {
			c.wr_id = e[i].index;
			if (e[i].side == HW_SIDE_B && e[i].status == CQPOLL_STATUS_SUCCESS &&
			    e[i].opcode == CQPOLL_OP_RECV && e[i].byte_len <= l->inline_max) {
				uint32_t k;

				for (k = 0; k < e[i].byte_len; k++)
					l->payload[k] = hw_payload(e[i].payload_seed, k);
				c.inline_data = l->payload;
				c.flags |= CQPOLL_COMPLETION_F_INLINE;
			}
			r = cqpoll_mlx5_emu_post(l->cq, &c);
		} else {
			c.wr_id = e[i].wr_id;
			r = cqpoll_verbs_emu_cq_post(l->cq, &c);
		}
		if (r != 0)
			return r;
	}
	return 0;
}

static void
emu_settle(struct hw_lane *l)
{
	/* The device's look at its doorbell also ends a held compressed session. */
	if (l->driver == HW_DRV_MLX5) {
		hw_sleep_us(25);
		cqpoll_mlx5_emu_service(l->cq);
	}
}

static const uint8_t *
emu_recv_buf(struct hw_lane *l, uint32_t k)
{
	(void)l;
	(void)k;
	return NULL;
}

static void
emu_close(struct hw_lane *l)
{
	cqpoll_cq_destroy(l->cq);
	free(l);
}

static struct ibv_comp_channel *
emu_channel_open(struct hw_target *t)
{
	return cqpoll_verbs_emu_ibv_create_comp_channel(t->ctx);
}

static int
emu_channel_close(struct hw_target *t, struct ibv_comp_channel *ch)
{
	(void)t;
	return cqpoll_verbs_emu_ibv_destroy_comp_channel(ch);
}

static const struct hw_target_ops emu_ops = {
	.open = emu_open,
	.cq = emu_cq,
	.qpn = emu_qpn,
	.step = emu_step,
	.settle = emu_settle,
	.recv_buf = emu_recv_buf,
	.close = emu_close,
	.channel_open = emu_channel_open,
	.channel_close = emu_channel_close,
};

int
hw_target_emu_open(struct hw_target *t, char *why, size_t len)
{
	memset(t, 0, sizeof(*t));
	t->ctx = cqpoll_verbs_emu_open(NULL, 0);
	if (t->ctx == NULL) {
		snprintf(why, len, "cqpoll_verbs_emu_open: %s", strerror(errno));
		return -1;
	}
	t->ops = &emu_ops;
	t->emulated = true;
	t->has_mlx5 = true;
	snprintf(t->name, sizeof(t->name), "emulated");
	return 0;
}

void
hw_target_emu_close(struct hw_target *t)
{
	if (t->ctx != NULL)
		cqpoll_verbs_emu_close(t->ctx);
	t->ctx = NULL;
}
