/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring: completions the kernel posts on the CQ ring of a real io_uring
 * instance (drivers/uring). The generator lcore submits; the kernel decides
 * when and from which context the CQE appears.
 *
 * pingpong: a receive SQE on one socket of a loopback UDP pair, then a
 * datagram sent from the other with send(2). The receive finds no data when
 * issued, so it waits for readiness; the datagram's arrival queues task work
 * to the submitter (the generator), and the kernel posts the CQE when that
 * thread returns to user space: a producer on the generator's CPU.
 * rate, drain: a NOP per completion, posted inside the generator's
 * io_uring_enter(), many outstanding.
 *
 * Latency is from the post time the generator records (host clock) to the
 * poller's read: CQEs carry no timestamp.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cqpoll_uring.h>

#include "dev.h"
#include "engine.h"
#include "params.h"
#include "testpmd_cq.h"

struct uring_dev {
	struct io_uring *ring;
	bool sockets;             /* pingpong: receives on a UDP pair */
	int tx, rx;               /* the pair: tx sends to rx */
	uint32_t depth;           /* completions unread at most (the CQ size) */
	char rx_buf[TPCQ_BYTE_LEN];
	char tx_buf[TPCQ_BYTE_LEN];
};

static int
udp_pair(struct uring_dev *u)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	u->rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	u->tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->rx < 0 || u->tx < 0 ||
	    bind(u->rx, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(u->rx, (struct sockaddr *)&a, &len) < 0 ||
	    connect(u->tx, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, TPCQ_PROG ": uring: loopback UDP pair: %s\n",
			strerror(errno));
		return -errno;
	}
	return 0;
}

static void
uring_free(struct uring_dev *u)
{
	if (u->rx >= 0)
		close(u->rx);
	if (u->tx >= 0)
		close(u->tx);
	free(u);
}

static int
uring_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	struct cqpoll_uring_conf conf = { .size = p->size };
	struct cqpoll_cq_info info;
	struct uring_dev *u;
	struct cqpoll_cq *cq;
	int r;

	u = calloc(1, sizeof(*u));
	if (u == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return -ENOMEM;
	}
	u->rx = u->tx = -1;
	u->sockets = p->engine == &tpcq_engine_pingpong;
	if (u->sockets) {
		r = udp_pair(u);
		if (r != 0) {
			uring_free(u);
			return r;
		}
	}
	errno = 0;
	cq = cqpoll_uring_cq_create(&conf);
	if (cq == NULL) {
		r = errno != 0 ? errno : EIO;
		fprintf(stderr, TPCQ_PROG ": uring: cannot create an io_uring CQ: %s%s\n",
			strerror(r), r == EPERM || r == ENOSYS ?
			" (io_uring disabled: kernel.io_uring_disabled sysctl, "
			"seccomp, or the kernel)" : "");
		uring_free(u);
		return -r;
	}
	cqpoll_cq_info_get(cq, &info);
	u->ring = cqpoll_uring_cq_ring(cq);
	u->depth = info.size;
	memset(u->tx_buf, 0xa5, sizeof(u->tx_buf));

	dc->cq = cq;
	dc->priv = u;
	dc->wr_id_mask = UINT64_MAX;
	dc->monotonic_ts = false;
	dc->max_outstanding = u->depth;
	/* A CQE says neither the operation nor a queue: both read as 0. */
	dc->expect.opcode = 0;
	dc->expect.qp_num = 0;
	dc->expect.byte_len = TPCQ_BYTE_LEN;
	dc->expect.check_byte_len = u->sockets;
	return 0;
}

static int
uring_post(struct tpcq_devctx *dc, uint64_t seq)
{
	struct uring_dev *u = dc->priv;
	struct io_uring_sqe *sqe;
	uint64_t consumed;
	int r;

	/* Never more unread than the ring holds: no overflow list to grow. */
	consumed = __atomic_load_n(dc->consumed, __ATOMIC_ACQUIRE);
	if (seq - consumed >= u->depth)
		return -ENOSPC;
	sqe = io_uring_get_sqe(u->ring);
	if (sqe == NULL)
		return -ENOSPC;
	if (u->sockets)
		io_uring_prep_recv(sqe, u->rx, u->rx_buf, sizeof(u->rx_buf), 0);
	else
		io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, seq);
	r = io_uring_submit(u->ring);
	if (r < 0) {
		fprintf(stderr, TPCQ_PROG ": uring: io_uring_submit: %s\n",
			strerror(-r));
		return r;
	}
	if (u->sockets && send(u->tx, u->tx_buf, sizeof(u->tx_buf), 0) < 0) {
		r = -errno;
		fprintf(stderr, TPCQ_PROG ": uring: send: %s\n", strerror(errno));
		return r;
	}
	return 0;
}

static void
uring_close(struct tpcq_devctx *dc)
{
	cqpoll_cq_destroy(dc->cq);
	uring_free(dc->priv);
}

const struct tpcq_dev tpcq_dev_uring = {
	.name = "uring",
	.help = "io_uring driver, the running kernel's CQ ring (pingpong: "
		"receives on a loopback UDP pair; rate, drain: NOPs)",
	.arms = 1u << CQPOLL_ARM_EDGE,
	.default_arm = CQPOLL_ARM_EDGE,
	.arm_help = "clearing IORING_CQ_EVENTFD_DISABLED: CQEs posted while it "
		"was set raise no event",
	.faults = 0,
	.open = uring_open,
	.post = uring_post,
	.close = uring_close,
};
