/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UCX: two UCP workers over one transport (drivers/ucx). --dev=ucx:tcp (over
 * lo), ucx:posix or ucx:sysv (shared memory). Each worker has its own
 * context, so that the generator's progress (worker A's) never runs the
 * poller's worker B, the cqpoll CQ's. The generator sends a tagged message
 * from A, tag = the sequence number, and progresses A until the send
 * completed; B holds a receive posted for each tag the generator may send
 * (a window of the CQ's size), posted again by the poller as it reads
 * each completion (tpcq_dev::consumed), as a UCX server posts its receives.
 * The first exchange, both ways, is made at open: a tcp endpoint still
 * connecting keeps the worker's fd readable.
 *
 * Latency is from the post time the generator records (host clock) to the
 * poller's read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include <cqpoll_ucx.h>

#include "dev.h"
#include "params.h"
#include "plugin.h"
#include "testpmd_cq.h"
#include "ucx_pair.h"

/* Receives posted ahead at most: the CQ's size bounds them. */
#define UCX_DEPTH 256u
/* The first exchange's tag; sequence numbers stay below it. */
#define UCX_HELLO (1ull << 62)

struct ucx_dev {
	const char *tls;
	struct tpcq_ucx_pair up;  /* A the generator's, B the CQ's */
	uint32_t depth;           /* receives posted ahead */
	char buf_a[TPCQ_BYTE_LEN];
	char (*buf_b)[TPCQ_BYTE_LEN]; /* depth receive buffers */
};

static int
ucx_fail(const struct ucx_dev *u, const char *what, ucs_status_t s)
{
	fprintf(stderr, TPCQ_PROG ": ucx:%s: %s: %s\n", u->tls, what,
		ucs_status_string(s));
	return -EIO;
}

/* One message each way, outside the CQ, both workers progressed. */
static int
ucx_hello(struct ucx_dev *u)
{
	ucs_status_t s;

	s = tpcq_ucx_pair_hello(&u->up, u->buf_a, u->buf_b[0], TPCQ_BYTE_LEN,
				UCX_HELLO);
	return s != UCS_OK ? ucx_fail(u, "first exchange", s) : 0;
}

static void
ucx_free(struct ucx_dev *u, struct cqpoll_cq *cq)
{
	/* The CQ first: it cancels B's receives on a live worker. */
	cqpoll_cq_destroy(cq);
	tpcq_ucx_pair_close(&u->up);
	free(u->buf_b);
	free(u);
}

static int
ucx_recv(struct tpcq_devctx *dc, uint64_t seq)
{
	struct ucx_dev *u = dc->priv;
	int r;

	r = cqpoll_ucx_tag_recv(dc->cq, u->buf_b[seq % u->depth], TPCQ_BYTE_LEN,
				seq, UINT64_MAX, seq);
	if (r != 0)
		fprintf(stderr, TPCQ_PROG ": ucx:%s: posting the receive of %llu: %s\n",
			u->tls, (unsigned long long)seq, strerror(-r));
	return r;
}

static int
ucx_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	struct ucx_dev *u;
	struct cqpoll_ucx_conf conf;
	struct cqpoll_cq *cq = NULL;
	ucs_status_t s;
	uint64_t i;
	int r;

	if (p->ibdev == NULL || (strcmp(p->ibdev, "tcp") != 0 &&
	    strcmp(p->ibdev, "posix") != 0 && strcmp(p->ibdev, "sysv") != 0)) {
		fprintf(stderr, TPCQ_PROG ": --dev=ucx:%s: the transport is one of tcp, "
			"posix, sysv (self and cma have no wake-up events)\n",
			p->ibdev != NULL ? p->ibdev : "");
		return -EINVAL;
	}
	u = calloc(1, sizeof(*u));
	if (u == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return -ENOMEM;
	}
	u->tls = p->ibdev;
	u->depth = p->size != 0 && p->size < UCX_DEPTH ? p->size : UCX_DEPTH;
	u->buf_b = calloc(u->depth, sizeof(*u->buf_b));
	if (u->buf_b == NULL) {
		free(u);
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return -ENOMEM;
	}
	s = tpcq_ucx_pair_workers(&u->up, u->tls);
	if (s != UCS_OK) {
		r = ucx_fail(u, "ucp_init / ucp_worker_create", s);
		goto err;
	}
	s = tpcq_ucx_pair_connect(&u->up);
	if (s != UCS_OK) {
		r = ucx_fail(u, "ucp_ep_create (is the transport available here? "
			     "ucx_info -d)", s);
		goto err;
	}
	r = ucx_hello(u);
	if (r != 0)
		goto err;
	memset(&conf, 0, sizeof(conf));
	conf.size = u->depth;
	errno = 0;
	cq = cqpoll_ucx_cq_create(u->up.b, &conf);
	if (cq == NULL) {
		r = errno != 0 ? -errno : -EIO;
		fprintf(stderr, TPCQ_PROG ": ucx:%s: cqpoll_ucx_cq_create: %s\n",
			u->tls, strerror(-r));
		goto err;
	}
	dc->cq = cq;
	dc->priv = u;
	for (i = 0; i < u->depth; i++) {
		r = ucx_recv(dc, i);
		if (r != 0)
			goto err;
	}
	dc->wr_id_mask = UINT64_MAX;
	dc->monotonic_ts = false;
	dc->max_outstanding = u->depth;
	dc->expect.opcode = CQPOLL_OP_RECV;
	dc->expect.qp_num = 0;
	dc->expect.byte_len = TPCQ_BYTE_LEN;
	dc->expect.check_byte_len = true;
	return 0;
err:
	dc->cq = NULL;
	dc->priv = NULL;
	ucx_free(u, cq);
	return r < 0 ? r : -EIO;
}

static int
ucx_post(struct tpcq_devctx *dc, uint64_t seq)
{
	struct ucx_dev *u = dc->priv;
	ucp_request_param_t p = { .op_attr_mask = 0 };
	uint64_t consumed;
	ucs_status_t s;

	consumed = __atomic_load_n(dc->consumed, __ATOMIC_ACQUIRE);
	if (seq - consumed >= dc->max_outstanding)
		return -ENOSPC;
	s = tpcq_ucx_wait(u->up.a, NULL, ucp_tag_send_nbx(u->up.ep_ab, u->buf_a,
							  TPCQ_BYTE_LEN, seq, &p));
	return s != UCS_OK ? ucx_fail(u, "ucp_tag_send_nbx", s) : 0;
}

/* The poller read these: receives for the tags a window further on. */
static void
ucx_consumed(struct tpcq_devctx *dc, const struct cqpoll_completion *c,
	     unsigned int n)
{
	struct ucx_dev *u = dc->priv;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (c[i].status == CQPOLL_STATUS_SUCCESS)
			ucx_recv(dc, c[i].wr_id + u->depth);
}

/*
 * The naive transition's window: the receiver's worker progressed, as the
 * application's own progress or post would, between the last empty poll
 * and the arm. What it pushes into the CQ's ring no event announces: the
 * naive arm, which never polls after, sleeps past it. (The driver's arm
 * progresses only when the poll before it did not end idle, so the naive
 * control cannot count on the arm to take the socket's readiness.)
 */
static void
ucx_naive_window(struct tpcq_devctx *dc)
{
	struct ucx_dev *u = dc->priv;

	ucp_worker_progress(u->up.b);
}

static void
ucx_close(struct tpcq_devctx *dc)
{
	ucx_free(dc->priv, dc->cq);
}

static const struct tpcq_dev tpcq_dev_ucx = {
	.name = "ucx",
	.help = "UCX driver, two UCP workers over one transport: ucx:tcp (lo), "
		"ucx:posix, ucx:sysv",
	.takes_ibdev = true,
	.arms = 1u << CQPOLL_ARM_REPORT_MISSED,
	.default_arm = CQPOLL_ARM_REPORT_MISSED,
	.arm_help = "ucp_worker_arm() says UCS_ERR_BUSY when events are pending",
	.faults = 0,
	.open = ucx_open,
	.post = ucx_post,
	.consumed = ucx_consumed,
	.naive_window = ucx_naive_window,
	.close = ucx_close,
};

static const struct tpcq_dev *const ucx_devs[] = { &tpcq_dev_ucx };

static const struct tpcq_plugin ucx_plugin = {
	.id = TPCQ_PLUGIN_ID,
	.devs = ucx_devs,
	.nb_devs = 1,
};

TPCQ_PLUGIN_EXPORT const struct tpcq_plugin *
tpcq_plugin_info(void)
{
	return &ucx_plugin;
}
