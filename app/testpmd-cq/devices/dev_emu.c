/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices played in software: the generator lcore writes each completion
 * itself, stamped with CLOCK_MONOTONIC by the device, so latency is measured
 * from the moment the completion became visible. The verification kit's
 * devices, built as the emu plugin (plugin.h) that only a program installed
 * with the kit finds: its sw (the sw driver with faults and the oracle),
 * mlx5-emu and verbs-emu, the naive arm and the oracle's question.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cqpoll_emu.h>
#include <cqpoll_sw_emu.h>

#include "dev.h"
#include "engine.h"
#include "params.h"
#include "plugin.h"
#include "testpmd_cq.h"

#ifdef TPCQ_HAVE_MLX5
#include <cqpoll_mlx5.h>
#include <cqpoll_mlx5_emu.h>

#include "mlx5qp.h"
#endif
#ifdef TPCQ_HAVE_VERBS
#include <cqpoll_verbs_emu.h>
#endif

/* The completion every post writes; only wr_id (and the payload) change. */
struct emu {
	struct cqpoll_completion comp;
	uint64_t events;          /* mlx5-emu: events the device had fired */
	uint64_t posts;           /* mlx5-emu: completions posted directly */
	int (*post)(struct cqpoll_cq *cq, const struct cqpoll_completion *comp);
	uint8_t payload[64];      /* with --inline-scatter */
#ifdef TPCQ_HAVE_MLX5
	/* mlx5-emu: the QPs the traffic goes through; NULL: CQEs written directly. */
	struct tpcq_mlx5qp *qp;
#endif
};

static int
emu_open(struct tpcq_devctx *dc, struct cqpoll_cq *cq, const char *name,
	 int (*post)(struct cqpoll_cq *, const struct cqpoll_completion *))
{
	struct emu *e;
	int err;

	if (cq == NULL) {
		err = errno != 0 ? errno : EIO;
		fprintf(stderr, TPCQ_PROG ": cannot create the %s CQ: %s\n", name,
			strerror(err));
		return -err;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		cqpoll_cq_destroy(cq);
		return -ENOMEM;
	}
	e->comp.status = CQPOLL_STATUS_SUCCESS;
	e->comp.opcode = CQPOLL_OP_RECV;
	e->comp.byte_len = TPCQ_BYTE_LEN;
	e->comp.qp_num = TPCQ_QP_NUM;
	e->post = post;

	dc->cq = cq;
	dc->priv = e;
	dc->wr_id_mask = UINT64_MAX;
	dc->monotonic_ts = true;
	dc->expect.opcode = CQPOLL_OP_RECV;
	dc->expect.qp_num = TPCQ_QP_NUM;
	dc->expect.byte_len = TPCQ_BYTE_LEN;
	dc->expect.check_byte_len = true;
	return 0;
}

static int
emu_post(struct tpcq_devctx *dc, uint64_t seq)
{
	struct emu *e = dc->priv;
	unsigned int i;

	e->comp.wr_id = seq;
	for (i = 0; i < dc->expect.inline_len; i++)
		e->payload[i] = tpcq_payload_byte(seq, i);
	return e->post(dc->cq, &e->comp);
}

static void
emu_close(struct tpcq_devctx *dc)
{
	cqpoll_cq_destroy(dc->cq);
	free(dc->priv);
}

static int
sw_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	struct cqpoll_sw_emu_conf conf;

	memset(&conf, 0, sizeof(conf));
	conf.size = p->size;
	conf.arm = p->arm;
	conf.faults = p->faults;
	errno = 0;
	return emu_open(dc, cqpoll_sw_emu_cq_create(&conf), "sw", cqpoll_sw_emu_post);
}

static const struct tpcq_dev tpcq_dev_sw_emu = {
	.name = "sw",
	.help = "software CQ, the reference driver",
	.arms = 1u << CQPOLL_ARM_LEVEL | 1u << CQPOLL_ARM_EDGE |
		1u << CQPOLL_ARM_REPORT_MISSED,
	.default_arm = CQPOLL_ARM_EDGE,
	.arm_help = "the device's arm follows the one asked for",
	.faults = TPCQ_FAULT_ALL,
	.open = sw_open,
	.post = emu_post,
	.close = emu_close,
};

#ifdef TPCQ_HAVE_MLX5
static int
mlx5_emu_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	struct cqpoll_mlx5_emu_conf conf;
	int r;

	memset(&conf, 0, sizeof(conf));
	conf.size = p->size;
	conf.arm = p->arm;
	conf.event_delay_us = p->faults.event_delay_us;
	/* 64 bytes inline need 128-byte CQEs (format 2). */
	if (p->inline_scatter == 64)
		conf.flags |= CQPOLL_MLX5_F_CQE128;
	if (p->cqe_compress)
		conf.flags |= CQPOLL_MLX5_F_CQE_COMPRESS;
	if (p->cqe_compress_enhanced)
		conf.flags |= CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED;
	/*
	 * No device thread: the generator reads the doorbells from its own
	 * loop (tpcq_gen_service()) instead of a thread waking every 20 us
	 * beside the poller.
	 */
	conf.emu_flags = CQPOLL_MLX5_EMU_F_MANUAL;
	/*
	 * No overrun switch: a full CQ then refuses the post (-ENOSPC), which the
	 * generator counts as an overrun and retries, as on the other devices.
	 */
	errno = 0;
	r = emu_open(dc, cqpoll_mlx5_emu_cq_create(&conf), "mlx5-emu",
		     cqpoll_mlx5_emu_post);
	/*
	 * The CQE carries the 16-bit WQE counter, not the whole wr_id, and
	 * its timestamp is on the device clock: latency from the post time.
	 */
	if (r == 0) {
		struct cqpoll_cq_info info;

		dc->wr_id_mask = UINT16_MAX;
		dc->monotonic_ts = false;
		/*
		 * A full CQ refuses the post: no more than its size is ever
		 * unread, which bounds the post times kept (an interactive
		 * run, with no total, needs the bound).
		 */
		if (cqpoll_cq_info_get(dc->cq, &info) == 0)
			dc->max_outstanding = info.size;
	}
	if (r == 0)
		dc->compress = p->cqe_compress;
	/*
	 * The traffic goes through cqpoll's own QPs, the device carrying out
	 * each request; the CQE formats a QP's work does not produce here
	 * (payloads scattered into the CQE, compressed sessions) are written
	 * directly instead.
	 */
	if (r == 0 && p->inline_scatter == 0 && !p->cqe_compress) {
		struct emu *e = dc->priv;

		r = tpcq_mlx5qp_open(dc, &e->qp);
		if (r != 0)
			emu_close(dc);
		return r;
	}
	if (r == 0 && p->inline_scatter != 0) {
		struct emu *e = dc->priv;

		e->comp.flags |= CQPOLL_COMPLETION_F_INLINE;
		e->comp.inline_data = e->payload;
		e->comp.byte_len = p->inline_scatter;
		dc->expect.byte_len = p->inline_scatter;
		dc->expect.inline_len = p->inline_scatter;
	}
	return r;
}

static void
mlx5_emu_close(struct tpcq_devctx *dc)
{
	struct cqpoll_mlx5_emu_stats st;

	tpcq_mlx5qp_close(((struct emu *)dc->priv)->qp);
	/* Say how much the CQ was compressed: a run with none proved nothing. */
	if (dc->compress && cqpoll_mlx5_emu_stats_get(dc->cq, &st) == 0)
		printf("mlx5-emu: %" PRIu64 " CQEs written, %" PRIu64
		       " compressed sessions\n", st.cqes, st.sessions);
	emu_close(dc);
}

/*
 * A post that fired an event woke a sleeping poller, which reads every CQE
 * before it arms again; one that fired none may race with an arm the device
 * has yet to read (tpcq_devctx::watch). So may one the device holds for a
 * compressed session: its CQE is written at a later device look, after the
 * event another post's CQEs fired (a run that ended on one lost it).
 */
static int
mlx5_emu_post(struct tpcq_devctx *dc, uint64_t seq)
{
	struct cqpoll_mlx5_emu_stats st;
	struct emu *e = dc->priv;
	int r;

	r = e->qp != NULL ? tpcq_mlx5qp_post(dc, e->qp, seq) : emu_post(dc, seq);
	if (r == 0 && e->qp == NULL)
		e->posts++;
	if (r == 0 && cqpoll_mlx5_emu_stats_get(dc->cq, &st) == 0) {
		dc->watch = st.events == e->events ||
			    (e->qp == NULL && st.cqes < e->posts);
		e->events = st.events;
	}
	return r;
}

static void
mlx5_emu_service(struct tpcq_devctx *dc)
{
	struct emu *e = dc->priv;

	if (e->qp != NULL)
		tpcq_mlx5qp_service(e->qp);
	cqpoll_mlx5_emu_service(dc->cq);
}

static const struct tpcq_dev tpcq_dev_mlx5_emu = {
	.name = "mlx5-emu",
	.help = "emulated mlx5 device, mlx5 direct driver",
	.arms = 1u << CQPOLL_ARM_LEVEL | 1u << CQPOLL_ARM_EDGE,
	.default_arm = CQPOLL_ARM_LEVEL,
	.arm_help = "level: the hardware's arm; edge: the emulator's lazy arm, "
		"the weaker portable contract",
	.faults = TPCQ_FAULT_EVENT_DELAY,
	.open = mlx5_emu_open,
	.post = mlx5_emu_post,
	.service = mlx5_emu_service,
	.close = mlx5_emu_close,
};
#endif /* TPCQ_HAVE_MLX5 */

#ifdef TPCQ_HAVE_VERBS
static int
verbs_emu_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	const struct cqpoll_sw_faults *f = &p->faults;
	struct cqpoll_verbs_emu_conf conf;

	memset(&conf, 0, sizeof(conf));
	conf.size = p->size;
	conf.faults.visibility_delay_ns = f->visibility_delay_ns;
	conf.faults.visibility_delay_pct = f->visibility_delay_pct;
	conf.faults.arm_delay_ns = f->arm_delay_ns;
	conf.faults.arm_delay_pct = f->arm_delay_pct;
	conf.faults.spurious_event_pct = f->spurious_event_pct;
	conf.faults.duplicate_event_pct = f->duplicate_event_pct;
	conf.faults.seed = f->seed;
	errno = 0;
	return emu_open(dc, cqpoll_verbs_emu_cq_create(&conf), "verbs-emu",
			cqpoll_verbs_emu_cq_post);
}

static const struct tpcq_dev tpcq_dev_verbs_emu = {
	.name = "verbs-emu",
	.help = "verbs driver on a software ibv_context",
	.arms = 1u << CQPOLL_ARM_EDGE,
	.default_arm = CQPOLL_ARM_EDGE,
	.arm_help = "ibv_req_notify_cq() promises an event only for completions "
		"added after the arm",
	.faults = TPCQ_FAULT_ARM_DELAY | TPCQ_FAULT_VISIBILITY_DELAY |
		TPCQ_FAULT_PCT | TPCQ_FAULT_SPURIOUS | TPCQ_FAULT_DUPLICATE |
		TPCQ_FAULT_SEED,
	.open = verbs_emu_open,
	.post = emu_post,
	.close = emu_close,
};
#endif /* TPCQ_HAVE_VERBS */

static const struct tpcq_dev *const emu_devs[] = {
	&tpcq_dev_sw_emu,
#ifdef TPCQ_HAVE_MLX5
	&tpcq_dev_mlx5_emu,
#endif
#ifdef TPCQ_HAVE_VERBS
	&tpcq_dev_verbs_emu,
#endif
};

static const struct tpcq_plugin emu_plugin = {
	.id = TPCQ_PLUGIN_ID,
	.devs = emu_devs,
	.nb_devs = sizeof(emu_devs) / sizeof(emu_devs[0]),
	.arm_naive = cqpoll_cq_arm_naive,
	.stranded = cqpoll_cq_stranded,
};

TPCQ_PLUGIN_EXPORT const struct tpcq_plugin *
tpcq_plugin_info(void)
{
	return &emu_plugin;
}
