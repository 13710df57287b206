/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io_uring peers, on the completions testpmd-cq's uring device produces, so
 * that a peer point and a cqpoll point differ only in how the CQ is waited
 * on:
 *   pingpong  a receive SQE on one socket of a loopback UDP pair, then a
 *             datagram sent from the other with send(2);
 *   rate      a NOP per message.
 * As in testpmd-cq, the sender thread owns the submission side and submits
 * each SQE itself: the datagram's arrival queues task work to the submitter,
 * which runs it on its way back from send(2), and a NOP completes inside its
 * io_uring_enter(). The receiver reads the CQ with liburing's own calls:
 *   wait   io_uring_wait_cqe()
 *   peek   io_uring_peek_cqe() in a loop
 *   defer  a ring set up with IORING_SETUP_SINGLE_ISSUER |
 *          IORING_SETUP_DEFER_TASKRUN, io_uring_get_events() and a peek in
 *          a loop. Only the submitter may run such a ring's task work, so
 *          here the receiver owns the ring and keeps receives posted on the
 *          UDP pair at every load (NOPs would need a second submitter): a
 *          different producer from the other points, said so on the page.
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
/* Room for the window's datagrams in the receiving socket (defer). */
#define URING_RCVBUF (4u << 20)

struct uring_peer {
	bool defer;               /* the receiver owns the ring */
	bool sockets;             /* receives on the UDP pair */
	struct io_uring ring;     /* wait, peek: created at open */
	bool ring_up;
	int tx, rx;
	char bufs[URING_RECVS][PEER_MSG];
};

static const char *const waits[] = { "wait", "peek", "defer", NULL };

static int
udp_pair(struct uring_peer *u)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int sz = URING_RCVBUF;

	u->tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	u->rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->tx < 0 || u->rx < 0 || bind(u->rx, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(u->rx, (struct sockaddr *)&a, &len) != 0 ||
	    connect(u->tx, (struct sockaddr *)&a, sizeof(a)) != 0) {
		fprintf(stderr, PEER_PROG ": uring: UDP pair: %s\n", strerror(errno));
		return -EIO;
	}
	/*
	 * A receiver that falls behind must not lose datagrams: the kernel
	 * drops what exceeds SO_RCVBUF (net.core.rmem_max caps it; root may
	 * force more).
	 */
	if (u->defer && setsockopt(u->rx, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
		setsockopt(u->rx, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	return 0;
}

static int
uring_open(struct peer_run *r, void **priv)
{
	struct uring_peer *u = calloc(1, sizeof(*u));
	int rc;

	if (u == NULL)
		return -ENOMEM;
	u->tx = u->rx = -1;
	u->defer = strcmp(r->wait, "defer") == 0;
	u->sockets = u->defer || r->pingpong;
	if (u->sockets) {
		rc = udp_pair(u);
		if (rc != 0)
			goto fail;
	}
	if (!u->defer) {
		/* CQ twice the SQ: the window's completions always fit. */
		rc = io_uring_queue_init(PEER_WINDOW, &u->ring, 0);
		if (rc < 0) {
			fprintf(stderr, PEER_PROG ": uring: io_uring_queue_init: %s\n",
				strerror(-rc));
			goto fail;
		}
		u->ring_up = true;
	}
	*priv = u;
	return 0;
fail:
	if (u->tx >= 0)
		close(u->tx);
	if (u->rx >= 0)
		close(u->rx);
	free(u);
	return rc;
}

static int
send_datagram(struct uring_peer *u, uint64_t seq)
{
	char msg[PEER_MSG] = { 0 };

	memcpy(msg, &seq, sizeof(seq));
	return send(u->tx, msg, sizeof(msg), 0) == (ssize_t)sizeof(msg) ? 0 : -errno;
}

/* Sender thread, wait and peek: the SQE whose CQE carries @p seq. */
static int
submit(struct uring_peer *u, uint64_t seq)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	int rc;

	if (sqe == NULL)
		return -ENOSPC;
	if (u->sockets && seq != STOP)
		io_uring_prep_recv(sqe, u->rx, u->bufs[seq % URING_RECVS], PEER_MSG, 0);
	else
		io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, seq);
	rc = io_uring_submit(&u->ring);
	return rc == 1 ? 0 : rc < 0 ? rc : -EIO;
}

static int
uring_send(void *priv, uint64_t seq)
{
	struct uring_peer *u = priv;
	int rc;

	if (u->defer)
		return send_datagram(u, seq);
	rc = submit(u, seq);
	if (rc == 0 && u->sockets)
		rc = send_datagram(u, seq);
	return rc;
}

static void
uring_kick(void *priv)
{
	struct uring_peer *u = priv;

	/* A NOP (or a datagram for the defer ring) ends a blocked wait. */
	if (u->defer)
		send_datagram(u, STOP);
	else
		submit(u, STOP);
}

static void
post_recv(struct io_uring *ring, struct uring_peer *u, unsigned int slot)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_recv(sqe, u->rx, u->bufs[slot], PEER_MSG, 0);
	io_uring_sqe_set_data64(sqe, slot);
}

/* wait, peek: each CQE carries the sequence number the sender gave it. */
static int
receive_shared(struct uring_peer *u, struct peer_run *r)
{
	bool peek = strcmp(r->wait, "peek") == 0;
	struct io_uring_cqe *cqe;
	uint64_t seq, now;
	int rc = 0;

	while (!peer_stopping(r)) {
		rc = peek ? io_uring_peek_cqe(&u->ring, &cqe) :
			io_uring_wait_cqe(&u->ring, &cqe);
		if (rc == -EAGAIN || rc == -EINTR)
			continue;
		if (rc < 0)
			break;
		now = peer_burst(r);
		do {
			seq = io_uring_cqe_get_data64(cqe);
			if (seq != STOP && cqe->res == (u->sockets ? PEER_MSG : 0))
				peer_got(r, now, seq);
			io_uring_cqe_seen(&u->ring, cqe);
		} while (io_uring_peek_cqe(&u->ring, &cqe) == 0);
		peer_burst_done(r);
	}
	return rc < 0 && rc != -EAGAIN && rc != -EINTR ? rc : 0;
}

/* defer: the receiver's own ring, its receives re-posted as they complete. */
static int
receive_defer(struct uring_peer *u, struct peer_run *r)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	};
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	unsigned int i, slot;
	uint64_t seq, now;
	int rc;

	rc = io_uring_queue_init_params(64, &ring, &p);
	if (rc < 0) {
		fprintf(stderr, PEER_PROG ": uring: io_uring_queue_init: %s\n", strerror(-rc));
		return rc;
	}
	for (i = 0; i < URING_RECVS; i++)
		post_recv(&ring, u, i);
	io_uring_submit(&ring);
	while (!peer_stopping(r)) {
		io_uring_get_events(&ring);
		rc = io_uring_peek_cqe(&ring, &cqe);
		if (rc == -EAGAIN || rc == -EINTR)
			continue;
		if (rc < 0)
			break;
		now = peer_burst(r);
		do {
			slot = (unsigned int)io_uring_cqe_get_data64(cqe);
			if (cqe->res == PEER_MSG && slot < URING_RECVS) {
				memcpy(&seq, u->bufs[slot], sizeof(seq));
				if (seq != STOP)
					peer_got(r, now, seq);
			}
			io_uring_cqe_seen(&ring, cqe);
			if (slot < URING_RECVS)
				post_recv(&ring, u, slot);
		} while (io_uring_peek_cqe(&ring, &cqe) == 0);
		peer_burst_done(r);
		io_uring_submit(&ring);
	}
	io_uring_queue_exit(&ring);
	return rc < 0 && rc != -EAGAIN && rc != -EINTR ? rc : 0;
}

static int
uring_receive(void *priv, struct peer_run *r)
{
	struct uring_peer *u = priv;

	return u->defer ? receive_defer(u, r) : receive_shared(u, r);
}

static void
uring_close(void *priv)
{
	struct uring_peer *u = priv;

	if (u->ring_up)
		io_uring_queue_exit(&u->ring);
	if (u->tx >= 0)
		close(u->tx);
	if (u->rx >= 0)
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
