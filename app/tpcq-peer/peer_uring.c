/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring peers: the loopback UDP pair of testpmd-cq's uring device; the
 * sender send(2)s a datagram carrying its sequence number, the receiver
 * keeps receive SQEs on the other socket and reads their CQEs with
 * liburing's own calls:
 *   wait   io_uring_wait_cqe()
 *   peek   io_uring_peek_cqe() in a loop (the CQE of a socket receive is
 *          posted by task work, which a busy peek never runs: it waits for
 *          the kernel to interrupt the thread)
 *   defer  a ring set up with IORING_SETUP_SINGLE_ISSUER |
 *          IORING_SETUP_DEFER_TASKRUN, io_uring_get_events() and a peek in
 *          a loop
 * The ring belongs to the receiver, which submits its receives (with
 * DEFER_TASKRUN only the submitter may run the ring's task work). In
 * testpmd-cq's uring device the generator submits them instead.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <liburing.h>

#include "peer.h"

#define URING_RECVS 16
#define STOP UINT64_MAX

struct uring_peer {
	int tx, rx;
	char bufs[URING_RECVS][PEER_MSG];
};

static const char *const waits[] = { "wait", "peek", "defer", NULL };

static int
uring_open(struct peer_run *r, void **priv)
{
	struct uring_peer *u = calloc(1, sizeof(*u));
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	(void)r;
	if (u == NULL)
		return -ENOMEM;
	u->tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	u->rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->tx < 0 || u->rx < 0 || bind(u->rx, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(u->rx, (struct sockaddr *)&a, &len) != 0 ||
	    connect(u->tx, (struct sockaddr *)&a, sizeof(a)) != 0) {
		fprintf(stderr, PEER_PROG ": uring: UDP pair: %s\n", strerror(errno));
		return -EIO;
	}
	*priv = u;
	return 0;
}

static int
uring_send(void *priv, uint64_t seq)
{
	struct uring_peer *u = priv;
	char msg[PEER_MSG] = { 0 };

	memcpy(msg, &seq, sizeof(seq));
	return send(u->tx, msg, sizeof(msg), 0) == (ssize_t)sizeof(msg) ? 0 : -errno;
}

static void
uring_kick(void *priv)
{
	uring_send(priv, STOP);
}

static void
post_recv(struct io_uring *ring, struct uring_peer *u, unsigned int slot)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_recv(sqe, u->rx, u->bufs[slot], PEER_MSG, 0);
	io_uring_sqe_set_data64(sqe, slot);
}

static int
uring_receive(void *priv, struct peer_run *r)
{
	struct uring_peer *u = priv;
	struct io_uring_params p = { .flags = 0 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	bool peek = strcmp(r->wait, "peek") == 0, defer = strcmp(r->wait, "defer") == 0;
	unsigned int i, slot;
	uint64_t seq;
	int rc;

	if (defer)
		p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	rc = io_uring_queue_init_params(64, &ring, &p);
	if (rc < 0) {
		fprintf(stderr, PEER_PROG ": uring: io_uring_queue_init: %s\n", strerror(-rc));
		return rc;
	}
	for (i = 0; i < URING_RECVS; i++)
		post_recv(&ring, u, i);
	io_uring_submit(&ring);
	while (!peer_stopping(r)) {
		if (defer)
			io_uring_get_events(&ring);
		if (peek || defer)
			rc = io_uring_peek_cqe(&ring, &cqe);
		else
			rc = io_uring_wait_cqe(&ring, &cqe);
		if (rc == -EAGAIN || rc == -EINTR)
			continue;
		if (rc < 0)
			break;
		do {
			slot = (unsigned int)io_uring_cqe_get_data64(cqe);
			if (cqe->res == PEER_MSG && slot < URING_RECVS) {
				memcpy(&seq, u->bufs[slot], sizeof(seq));
				if (seq != STOP)
					peer_got(r, seq);
			}
			io_uring_cqe_seen(&ring, cqe);
			if (slot < URING_RECVS)
				post_recv(&ring, u, slot);
		} while (io_uring_peek_cqe(&ring, &cqe) == 0);
		io_uring_submit(&ring);
	}
	io_uring_queue_exit(&ring);
	return rc < 0 && rc != -EAGAIN && rc != -EINTR ? rc : 0;
}

static void
uring_close(void *priv)
{
	struct uring_peer *u = priv;

	close(u->tx);
	close(u->rx);
	free(u);
}

const struct peer_transport peer_uring = {
	.name = "uring",
	.waits = waits,
	.open = uring_open,
	.send = uring_send,
	.kick = uring_kick,
	.receive = uring_receive,
	.close = uring_close,
};
