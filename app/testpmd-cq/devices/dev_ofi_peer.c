/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric with the peer in another process (--dev=ofi:PROVIDER
 * --peer=process): one connected message endpoint (FI_EP_MSG) over
 * loopback, whose sending side is a child process. The cqpoll CQ is the
 * receiving endpoint's, opened with the endpoint's event queue
 * (cqpoll_ofi_conf::eqs), so that the peer's disconnection (FI_SHUTDOWN)
 * fails the CQ. The generator posts the receive here and tells the child,
 * over a socket pair, to send message seq; the child sends it and waits for
 * its send completion.
 *
 * --kill-peer-after-ms=N (a test and validation option) kills the child
 * with SIGKILL at the first post N ms after the first one: the run must end
 * with the CQ failed by FI_SHUTDOWN, a non-zero exit status, and no hang.
 * The kill comes before that post's receive, so in the pingpong engine no
 * receive is outstanding and the CQ fails with nothing to flush.
 *
 * The child is forked at open, before this process calls libfabric, and
 * opens its own fabric: it shares no libfabric state with the parent, calls
 * nothing of DPDK and ends with _exit().
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <cqpoll_ofi.h>

#include "dev.h"
#include "params.h"
#include "testpmd_cq.h"

/* Receives outstanding at most. */
#define PEER_DEPTH 256
/* Connection set-up, either side. */
#define PEER_CONNECT_MS 5000
/* How long a post after the kill waits for the poller to see the CQ fail. */
#define PEER_FAIL_WAIT_NS 2000000000ull

struct peer_dev {
	const char *prov;
	uint32_t kill_after_ms;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq_l, *eq;   /* the listener's, the endpoint's */
	struct fid_pep *pep;
	struct fid_ep *ep;
	pid_t child;
	int ctl;                    /* socket pair end: seq numbers to the child */
	uint64_t t_first_post;
	bool killed;
	char buf[TPCQ_BYTE_LEN];
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
peer_fail(const struct peer_dev *o, const char *what, int r)
{
	fprintf(stderr, TPCQ_PROG ": ofi:%s: %s: %s\n", o->prov, what, fi_strerror(-r));
	return r < 0 ? r : -EIO;
}

static struct fi_info *
msg_info(const char *prov, const char *node, const char *service, uint64_t flags)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	if (hints == NULL)
		return NULL;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->mode = 0;          /* the context is our sequence number */
	hints->domain_attr->mr_mode = 0;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->fabric_attr->prov_name = strdup(prov);
	if (fi_getinfo(FI_VERSION(1, 9), node, service, flags, hints, &info) != 0)
		info = NULL;
	fi_freeinfo(hints);
	return info;
}

static int
eq_wait(struct fid_eq *eq, uint32_t want, struct fi_eq_cm_entry *e)
{
	uint32_t event = 0;
	ssize_t r;

	r = fi_eq_sread(eq, &event, e, sizeof(*e), PEER_CONNECT_MS, 0);
	if (r == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(eq, &err, 0);
		return err.err != 0 ? -err.err : -EIO;
	}
	if (r < 0)
		return (int)r;
	return event == want ? 0 : -EPROTO;
}

/* The child: connect to port, then send one message per seq read. */
static int
child_main(const char *prov, uint16_t port, int ctl)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fi_eq_cm_entry cm;
	struct fi_cq_data_entry e;
	struct fi_info *info;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_ep *ep;
	static char buf[TPCQ_BYTE_LEN];
	char service[16];
	uint64_t seq;
	ssize_t r;

	snprintf(service, sizeof(service), "%u", port);
	info = msg_info(prov, "127.0.0.1", service, 0);
	if (info == NULL)
		return 1;
	if (fi_fabric(info->fabric_attr, &fabric, NULL) != 0 ||
	    fi_domain(fabric, info, &domain, NULL) != 0 ||
	    fi_eq_open(fabric, &eq_attr, &eq, NULL) != 0 ||
	    fi_cq_open(domain, &cq_attr, &cq, NULL) != 0 ||
	    fi_endpoint(domain, info, &ep, NULL) != 0 ||
	    fi_ep_bind(ep, &eq->fid, 0) != 0 ||
	    fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) != 0 ||
	    fi_enable(ep) != 0 || fi_connect(ep, info->dest_addr, NULL, 0) != 0 ||
	    eq_wait(eq, FI_CONNECTED, &cm) != 0)
		return 1;
	for (;;) {
		r = read(ctl, &seq, sizeof(seq));
		if (r == 0)
			return 0;         /* the parent closed: the run is over */
		if (r != sizeof(seq)) {
			if (r < 0 && errno == EINTR)
				continue;
			return 1;
		}
		while ((r = fi_send(ep, buf, sizeof(buf), NULL, 0, NULL)) == -FI_EAGAIN)
			fi_cq_read(cq, &e, 0);
		if (r != 0)
			return 1;
		while ((r = fi_cq_read(cq, &e, 1)) == -FI_EAGAIN)
			;
		if (r != 1)
			return 1;
	}
}

static void
peer_free(struct peer_dev *o, struct cqpoll_cq *cq)
{
	int status;

	/* Endpoints before the CQ, the CQ before the EQs it reads. */
	if (o->ep != NULL)
		fi_close(&o->ep->fid);
	if (o->ctl >= 0)
		close(o->ctl);
	if (o->child > 0 && !o->killed)
		waitpid(o->child, &status, 0);
	cqpoll_cq_destroy(cq);
	if (o->pep != NULL)
		fi_close(&o->pep->fid);
	if (o->eq != NULL)
		fi_close(&o->eq->fid);
	if (o->eq_l != NULL)
		fi_close(&o->eq_l->fid);
	if (o->domain != NULL)
		fi_close(&o->domain->fid);
	if (o->fabric != NULL)
		fi_close(&o->fabric->fid);
	if (o->info != NULL)
		fi_freeinfo(o->info);
	free(o);
}

/* Listen on an ephemeral loopback port; the child connects to it. */
static int
peer_listen(struct peer_dev *o, uint16_t *port)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct sockaddr_in sin;
	size_t len = sizeof(sin);
	int r;

	o->info = msg_info(o->prov, "127.0.0.1", "0", FI_SOURCE);
	if (o->info == NULL) {
		fprintf(stderr, TPCQ_PROG ": ofi:%s: no such libfabric provider here "
			"with connected message endpoints (FI_EP_MSG)\n", o->prov);
		return -ENODEV;
	}
	r = fi_fabric(o->info->fabric_attr, &o->fabric, NULL);
	if (r == 0)
		r = fi_domain(o->fabric, o->info, &o->domain, NULL);
	if (r == 0)
		r = fi_eq_open(o->fabric, &eq_attr, &o->eq_l, NULL);
	if (r == 0)
		r = fi_passive_ep(o->fabric, o->info, &o->pep, NULL);
	if (r == 0)
		r = fi_pep_bind(o->pep, &o->eq_l->fid, 0);
	if (r == 0)
		r = fi_listen(o->pep);
	if (r == 0)
		r = fi_getname(&o->pep->fid, &sin, &len);
	if (r != 0)
		return peer_fail(o, "listening for the peer process", r);
	*port = ntohs(sin.sin_port);
	return 0;
}

static int
peer_accept(struct peer_dev *o, struct cqpoll_cq **cqp)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD };
	struct cqpoll_ofi_conf conf = { .size = PEER_DEPTH, .n_eqs = 1 };
	struct fi_eq_cm_entry cm;
	int r;

	r = eq_wait(o->eq_l, FI_CONNREQ, &cm);
	if (r != 0)
		return peer_fail(o, "waiting for the peer process to connect", r);
	r = fi_eq_open(o->fabric, &eq_attr, &o->eq, NULL);
	if (r != 0) {
		fi_freeinfo(cm.info);
		return peer_fail(o, "fi_eq_open", r);
	}
	conf.eqs = &o->eq;
	errno = 0;
	*cqp = cqpoll_ofi_cq_open(o->fabric, o->domain, &conf);
	if (*cqp == NULL) {
		r = errno != 0 ? -errno : -EIO;
		fi_freeinfo(cm.info);
		fprintf(stderr, TPCQ_PROG ": ofi:%s: cqpoll_ofi_cq_open: %s\n",
			o->prov, strerror(-r));
		return r;
	}
	r = fi_endpoint(o->domain, cm.info, &o->ep, NULL);
	fi_freeinfo(cm.info);
	if (r == 0)
		r = fi_ep_bind(o->ep, &o->eq->fid, 0);
	if (r == 0)
		r = fi_ep_bind(o->ep, &cqpoll_ofi_cq_fid(*cqp)->fid, FI_TRANSMIT | FI_RECV);
	if (r == 0)
		r = fi_enable(o->ep);
	if (r == 0)
		r = fi_accept(o->ep, NULL, 0);
	/* Read here, before the CQ's first poll: from then on the driver reads it. */
	if (r == 0)
		r = eq_wait(o->eq, FI_CONNECTED, &cm);
	return r != 0 ? peer_fail(o, "accepting the peer process", r) : 0;
}

int
tpcq_ofi_peer_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	struct cqpoll_cq *cq = NULL;
	struct peer_dev *o;
	uint16_t port = 0;
	int sv[2], r;

	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return -ENOMEM;
	o->prov = p->ibdev;
	o->kill_after_ms = p->kill_peer_after_ms;
	o->ctl = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		r = -errno;
		free(o);
		return r;
	}
	/* The port comes after the fork, over the pair: no libfabric in the child yet. */
	o->child = fork();
	if (o->child < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		free(o);
		return r;
	}
	if (o->child == 0) {
		close(sv[0]);
		if (read(sv[1], &port, sizeof(port)) != sizeof(port))
			_exit(1);
		_exit(child_main(p->ibdev, port, sv[1]));
	}
	close(sv[1]);
	o->ctl = sv[0];
	r = peer_listen(o, &port);
	if (r == 0 && write(o->ctl, &port, sizeof(port)) != sizeof(port))
		r = -EPIPE;
	if (r == 0)
		r = peer_accept(o, &cq);
	if (r != 0) {
		peer_free(o, cq);
		return r;
	}
	dc->cq = cq;
	dc->priv = o;
	dc->wr_id_mask = UINT64_MAX;
	dc->monotonic_ts = false;
	dc->max_outstanding = PEER_DEPTH;
	dc->expect.opcode = CQPOLL_OP_RECV;
	dc->expect.qp_num = 0;
	dc->expect.byte_len = TPCQ_BYTE_LEN;
	dc->expect.check_byte_len = true;
	return 0;
}

/* --kill-peer-after-ms: the peer dies; the poller must hear FI_SHUTDOWN. */
static int
peer_kill(struct tpcq_devctx *dc)
{
	struct peer_dev *o = dc->priv;
	uint64_t deadline;
	int status;

	kill(o->child, SIGKILL);
	waitpid(o->child, &status, 0);
	o->killed = true;
	fprintf(stderr, TPCQ_PROG ": ofi:%s: peer process %d killed after %u ms "
		"(--kill-peer-after-ms)\n", o->prov, (int)o->child, o->kill_after_ms);
	deadline = now_ns() + PEER_FAIL_WAIT_NS;
	while (cqpoll_cq_state_get(dc->cq, NULL) == CQPOLL_CQ_STATE_OK &&
	       now_ns() < deadline)
		usleep(100);
	return -ESHUTDOWN;
}

static int
peer_post(struct tpcq_devctx *dc, uint64_t seq)
{
	struct peer_dev *o = dc->priv;
	uint64_t consumed;
	ssize_t r;

	if (o->killed)
		return -ESHUTDOWN;
	if (o->t_first_post == 0)
		o->t_first_post = now_ns();
	else if (o->kill_after_ms != 0 &&
		 now_ns() - o->t_first_post >= o->kill_after_ms * 1000000ull)
		return peer_kill(dc);
	consumed = __atomic_load_n(dc->consumed, __ATOMIC_ACQUIRE);
	if (seq - consumed >= dc->max_outstanding)
		return -ENOSPC;
	r = fi_recv(o->ep, o->buf, sizeof(o->buf), NULL, 0, (void *)(uintptr_t)seq);
	if (r == -FI_EAGAIN)
		return -ENOSPC;
	if (r != 0)
		return peer_fail(o, "fi_recv", (int)r);
	if (send(o->ctl, &seq, sizeof(seq), MSG_NOSIGNAL) != sizeof(seq)) {
		fprintf(stderr, TPCQ_PROG ": ofi:%s: the peer process is gone\n", o->prov);
		return -ESHUTDOWN;
	}
	return 0;
}

static void
peer_close(struct tpcq_devctx *dc)
{
	struct peer_dev *o = dc->priv;
	struct cqpoll_cq_failure f;

	/* What the run ended with, in words: which CQ, which event. */
	if (cqpoll_cq_state_get(dc->cq, &f) > 0)
		fprintf(stderr, TPCQ_PROG ": ofi:%s: cq %p (the receive CQ of the "
			"connection to peer process %d) failed: %s (%s): %s\n",
			o->prov, (void *)dc->cq, (int)o->child,
			cqpoll_cq_state_name(f.state), f.cause, strerror(-f.error));
	else if (o->killed)
		fprintf(stderr, TPCQ_PROG ": ofi:%s: cq %p: the peer process was "
			"killed, but the CQ did not report its FI_SHUTDOWN\n",
			o->prov, (void *)dc->cq);
	peer_free(o, dc->cq);
}

const struct tpcq_dev tpcq_dev_ofi_peer = {
	.name = "ofi",
	.help = "libfabric, the peer in a child process (--peer=process)",
	.takes_ibdev = true,
	.arms = 1u << CQPOLL_ARM_REPORT_MISSED,
	.default_arm = CQPOLL_ARM_REPORT_MISSED,
	.arm_help = "fi_trywait() says -FI_EAGAIN when completions may be pending",
	.faults = 0,
	.open = tpcq_ofi_peer_open,
	.post = peer_post,
	.close = peer_close,
};
