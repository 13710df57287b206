/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sw driver alone (drivers/sw), for a program installed without the
 * verification kit: the generator lcore writes each completion itself, the
 * driver stamps it with CLOCK_MONOTONIC. Where the kit is installed, its
 * emulated software device runs as sw instead (dev_emu.c), with the faults
 * and the oracle this one lacks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "params.h"
#include "testpmd_cq.h"

struct sw {
	struct cqpoll_completion comp; /* only wr_id changes */
};

static int
sw_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	struct cqpoll_sw_conf conf;
	struct sw *s;
	int err;

	memset(&conf, 0, sizeof(conf));
	conf.size = p->size;
	conf.arm = p->arm;
	errno = 0;
	dc->cq = cqpoll_sw_cq_create(&conf);
	if (dc->cq == NULL) {
		err = errno != 0 ? errno : EIO;
		fprintf(stderr, TPCQ_PROG ": cannot create the sw CQ: %s\n",
			strerror(err));
		return -err;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		cqpoll_cq_destroy(dc->cq);
		dc->cq = NULL;
		return -ENOMEM;
	}
	s->comp.status = CQPOLL_STATUS_SUCCESS;
	s->comp.opcode = CQPOLL_OP_RECV;
	s->comp.byte_len = TPCQ_BYTE_LEN;
	s->comp.qp_num = TPCQ_QP_NUM;
	dc->priv = s;
	dc->wr_id_mask = UINT64_MAX;
	dc->monotonic_ts = true;
	dc->expect.opcode = CQPOLL_OP_RECV;
	dc->expect.qp_num = TPCQ_QP_NUM;
	dc->expect.byte_len = TPCQ_BYTE_LEN;
	dc->expect.check_byte_len = true;
	return 0;
}

static int
sw_post(struct tpcq_devctx *dc, uint64_t seq)
{
	struct sw *s = dc->priv;

	s->comp.wr_id = seq;
	return cqpoll_sw_post(dc->cq, &s->comp);
}

static void
sw_close(struct tpcq_devctx *dc)
{
	cqpoll_cq_destroy(dc->cq);
	free(dc->priv);
}

const struct tpcq_dev tpcq_dev_sw = {
	.name = "sw",
	.help = "software CQ, the sw driver alone (no kit: no faults)",
	.arms = 1u << CQPOLL_ARM_LEVEL | 1u << CQPOLL_ARM_EDGE |
		1u << CQPOLL_ARM_REPORT_MISSED,
	.default_arm = CQPOLL_ARM_EDGE,
	.arm_help = "the device's arm follows the one asked for",
	.faults = 0,
	.open = sw_open,
	.post = sw_post,
	.close = sw_close,
};
