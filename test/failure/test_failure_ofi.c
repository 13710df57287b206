/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * failure-shutdown-ofi: a libfabric peer killed under a poll group
 * (doc/guides/contract.md, section 11; doc/guides/ofi-driver.md). Eight
 * connected tcp endpoints (FI_EP_MSG over loopback), each receiving on a
 * cqpoll CQ of its own that watches its endpoint's event queue
 * (cqpoll_ofi_conf::eqs), all in one group. Seven are fed by a thread of
 * this process; the victim's sender is a child process (this program run
 * with --child), killed with SIGKILL mid-traffic: while the others' traffic
 * flows (window "device") or after a pause long enough for the group to
 * fall asleep (window "asleep"), in busy, interrupt and adaptive mode.
 *
 * The provider (tcp, libfabric 1.17) sees the socket's end in the victim
 * CQ's progress, flushes the receives still posted (FI_ECANCELED) into the
 * CQ and writes FI_SHUTDOWN to the endpoint's EQ. Then: the other seven
 * deliver every completion exactly once and in order; the victim delivers
 * its VICTIM_OK messages, then its NFLUSH posted receives as
 * CQPOLL_STATUS_WR_FLUSH_ERR, once each and in order, and nothing after;
 * the group's failure callback is called once, at once (within 100 ms of
 * the kill; the group's net is 1 s), with CQPOLL_CQ_STATE_PEER_CLOSED,
 * -ESHUTDOWN and the cause "FI_SHUTDOWN"; the failed CQ's poll, arm and
 * wait return -ESHUTDOWN without blocking, and destroying it returns.
 *
 * usage: test_failure_ofi [--window=device|asleep] [--mode=busy|interrupt|adaptive]
 *                         [--no-eq --expect-fail]
 *        test_failure_ofi --child=PORT   (the victim's sender)
 *
 * --no-eq is the negative control: the victim's CQ is opened without its
 * EQ, as a driver that never reads EQs would be. Its flushed receives still
 * come (the provider writes them), every completion is delivered, and the
 * failure is never reported: the checks must fail (--expect-fail).
 */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "cqpoll.h"
#include "cqpoll_group.h"
#include "cqpoll_ofi.h"
#include "cqpoll_test.h"
#include "failure_harness.h"

#define NCQ FH_NCQ
#define VICTIM 3
#define PER_CQ 600
#define VICTIM_OK (PER_CQ / 2)
#define NFLUSH 16
#define MSG_LEN 64
#define CONNECT_NS 5000000000ull
/* How long the traffic pauses before the kill in the asleep window. */
#define ASLEEP_PAUSE_NS 30000000ull
/* A report the device makes (the socket's end wakes the group): at once. */
#define REPORT_BOUND_NS 100000000ull
#define TIMEOUT_MS 1000
#define LATE_TRIES 3

enum window { WIN_DEVICE = 0, WIN_ASLEEP, WIN_COUNT };
static const char *const window_names[] = { "device", "asleep" };

static char self_exe[4096];
static bool no_eq;
/* --expect-fail: a negative control. */
static bool expect_fail;

struct round {
	struct fh_round fr;       /* first: the harness's callbacks get it */
	enum window win;
	enum cqpoll_group_mode mode;
	/* Receiving side: one fabric and domain, a listener. */
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq_l;
	struct fid_pep *pep;
	uint16_t port;
	struct fid_eq *eq[NCQ];
	struct fid_ep *ep[NCQ];
	char rbuf[NCQ][MSG_LEN];
	/* Sending side of the seven: a fabric and domain of their own. */
	struct fi_info *cinfo;
	struct fid_fabric *cfabric;
	struct fid_domain *cdomain;
	struct fid_eq *ceq;
	struct fid_cq *ccq;
	struct fid_ep *cep[NCQ];
	char sbuf[MSG_LEN];
	/* The victim's sender. */
	pid_t child;
	int to_child, from_child;
	int killed;
};

static struct fi_info *
msg_info(const char *node, const char *service, uint64_t flags)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	if (hints == NULL)
		return NULL;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->mode = 0;
	hints->domain_attr->mr_mode = 0;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->addr_format = FI_SOCKADDR_IN;
	/* Every receive posted up front (tcp's default is 256). */
	hints->rx_attr->size = 2 * PER_CQ;
	hints->fabric_attr->prov_name = strdup("tcp");
	if (fi_getinfo(FI_VERSION(1, 9), node, service, flags, hints, &info) != 0)
		info = NULL;
	fi_freeinfo(hints);
	return info;
}

/* One event off @p eq without blocking: 1 and its type, 0 none, < 0 error. */
static int
eq_try(struct fid_eq *eq, uint32_t *event, struct fi_eq_cm_entry *e)
{
	ssize_t r = fi_eq_read(eq, event, e, sizeof(*e), 0);

	if (r == -FI_EAGAIN)
		return 0;
	if (r == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(eq, &err, 0);
		return err.err != 0 ? -err.err : -EIO;
	}
	return r < 0 ? (int)r : 1;
}

/* ------------------------------------------------------------------ child */

static int
child_main(uint16_t port)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fi_cq_data_entry e[16];
	struct fi_eq_cm_entry cm;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fi_info *info;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_ep *ep;
	static char buf[MSG_LEN];
	char service[16], c = 0;
	uint32_t count, sent = 0, done = 0, event = 0;
	ssize_t r;

	snprintf(service, sizeof(service), "%u", port);
	info = msg_info("127.0.0.1", service, 0);
	if (info == NULL || fi_fabric(info->fabric_attr, &fabric, NULL) != 0 ||
	    fi_domain(fabric, info, &domain, NULL) != 0 ||
	    fi_eq_open(fabric, &eq_attr, &eq, NULL) != 0 ||
	    fi_cq_open(domain, &cq_attr, &cq, NULL) != 0 ||
	    fi_endpoint(domain, info, &ep, NULL) != 0 ||
	    fi_ep_bind(ep, &eq->fid, 0) != 0 ||
	    fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) != 0 || fi_enable(ep) != 0)
		return 1;
	/* Told when: its connection request must be the victim's. */
	if (read(0, &c, 1) != 1 || fi_connect(ep, info->dest_addr, NULL, 0) != 0)
		return 1;
	r = fi_eq_sread(eq, &event, &cm, sizeof(cm), 5000, 0);
	if (r < 0 || event != FI_CONNECTED)
		return 1;
	c = 'C';
	if (write(1, &c, 1) != 1 || read(0, &count, sizeof(count)) != sizeof(count))
		return 1;
	while (done < count) {
		if (sent < count) {
			r = fi_send(ep, buf, sizeof(buf), NULL, 0, NULL);
			if (r == 0)
				sent++;
			else if (r != -FI_EAGAIN)
				return 1;
		}
		r = fi_cq_read(cq, e, 16);
		if (r > 0)
			done += (uint32_t)r;
		else if (r != -FI_EAGAIN)
			return 1;
	}
	c = 'D';
	if (write(1, &c, 1) != 1)
		return 1;
	/* Alive until killed (or the parent goes). */
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

/* ----------------------------------------------------------------- parent */

static int
spawn_child(struct round *rd)
{
	int in[2], out[2];
	char arg[32];

	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return -errno;
	snprintf(arg, sizeof(arg), "--child=%u", rd->port);
	rd->child = fork();
	if (rd->child < 0)
		return -errno;
	if (rd->child == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(self_exe, self_exe, arg, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	rd->to_child = in[1];
	rd->from_child = out[0];
	return 0;
}

static int
listen_setup(struct round *rd, char *why, size_t len)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct sockaddr_in sin;
	size_t slen = sizeof(sin);
	char service[16];
	int r;

	rd->info = msg_info("127.0.0.1", "0", FI_SOURCE);
	if (rd->info == NULL) {
		snprintf(why, len, "no tcp provider with FI_EP_MSG here");
		return -ENODEV;
	}
	r = fi_fabric(rd->info->fabric_attr, &rd->fabric, NULL);
	if (r == 0)
		r = fi_domain(rd->fabric, rd->info, &rd->domain, NULL);
	if (r == 0)
		r = fi_eq_open(rd->fabric, &eq_attr, &rd->eq_l, NULL);
	if (r == 0)
		r = fi_passive_ep(rd->fabric, rd->info, &rd->pep, NULL);
	if (r == 0)
		r = fi_pep_bind(rd->pep, &rd->eq_l->fid, 0);
	if (r == 0)
		r = fi_listen(rd->pep);
	if (r == 0)
		r = fi_getname(&rd->pep->fid, &sin, &slen);
	if (r != 0) {
		snprintf(why, len, "listening: %s", fi_strerror(-r));
		return r;
	}
	rd->port = ntohs(sin.sin_port);
	snprintf(service, sizeof(service), "%u", rd->port);
	rd->cinfo = msg_info("127.0.0.1", service, 0);
	if (rd->cinfo == NULL)
		return -ENODEV;
	r = fi_fabric(rd->cinfo->fabric_attr, &rd->cfabric, NULL);
	if (r == 0)
		r = fi_domain(rd->cfabric, rd->cinfo, &rd->cdomain, NULL);
	if (r == 0)
		r = fi_eq_open(rd->cfabric, &eq_attr, &rd->ceq, NULL);
	if (r == 0) {
		struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA, .size = 8192 };

		r = fi_cq_open(rd->cdomain, &cq_attr, &rd->ccq, NULL);
	}
	if (r != 0)
		snprintf(why, len, "the senders' side: %s", fi_strerror(-r));
	return r;
}

/* Connection q: the request from its sender, accepted on a CQ of its own. */
static int
connect_one(struct round *rd, unsigned int q, char *why, size_t len)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD };
	struct cqpoll_ofi_conf conf = { .size = 4096, .n_eqs = 1 };
	struct cqpoll_cq_info info;
	struct fi_eq_cm_entry cm;
	bool up = false, cup = q == VICTIM;
	uint64_t deadline = test_now_ns() + CONNECT_NS;
	uint32_t event = 0, i, nrecv;
	char c = 'G';
	int r;

	if (q == VICTIM) {
		if (write(rd->to_child, &c, 1) != 1)
			return -EPIPE;
	} else {
		r = fi_endpoint(rd->cdomain, rd->cinfo, &rd->cep[q], NULL);
		if (r == 0)
			r = fi_ep_bind(rd->cep[q], &rd->ceq->fid, 0);
		if (r == 0)
			r = fi_ep_bind(rd->cep[q], &rd->ccq->fid, FI_TRANSMIT | FI_RECV);
		if (r == 0)
			r = fi_enable(rd->cep[q]);
		if (r == 0)
			r = fi_connect(rd->cep[q], rd->cinfo->dest_addr, NULL, 0);
		if (r != 0) {
			snprintf(why, len, "sender %u: %s", q, fi_strerror(-r));
			return r;
		}
	}
	/* The senders' connection manager runs in reads of their EQ. */
	while ((r = eq_try(rd->eq_l, &event, &cm)) == 0 && test_now_ns() < deadline)
		if (q != VICTIM)
			eq_try(rd->ceq, &event, &(struct fi_eq_cm_entry){ 0 });
	if (r != 1 || event != FI_CONNREQ) {
		snprintf(why, len, "connection %u: no FI_CONNREQ (%d)", q, r);
		return r < 0 ? r : -ETIMEDOUT;
	}
	r = fi_eq_open(rd->fabric, &eq_attr, &rd->eq[q], NULL);
	if (r == 0) {
		conf.eqs = &rd->eq[q];
		if (no_eq && q == VICTIM)
			conf.n_eqs = 0;
		errno = 0;
		rd->fr.cq[q] = cqpoll_ofi_cq_open(rd->fabric, rd->domain, &conf);
		if (rd->fr.cq[q] == NULL)
			r = -(errno != 0 ? errno : EIO);
	}
	if (r == 0)
		r = fi_endpoint(rd->domain, cm.info, &rd->ep[q], NULL);
	fi_freeinfo(cm.info);
	if (r == 0)
		r = fi_ep_bind(rd->ep[q], &rd->eq[q]->fid, 0);
	if (r == 0)
		r = fi_ep_bind(rd->ep[q], &cqpoll_ofi_cq_fid(rd->fr.cq[q])->fid,
			       FI_TRANSMIT | FI_RECV);
	if (r == 0)
		r = fi_enable(rd->ep[q]);
	if (r == 0)
		r = fi_accept(rd->ep[q], NULL, 0);
	if (r != 0) {
		snprintf(why, len, "accepting %u: %s", q, r < 0 ? fi_strerror(-r) : "?");
		return r;
	}
	/* Both sides' FI_CONNECTED, read before the CQ's first poll. */
	while (!(up && cup) && test_now_ns() < deadline) {
		if (!up && eq_try(rd->eq[q], &event, &cm) == 1)
			up = event == FI_CONNECTED;
		if (!cup && eq_try(rd->ceq, &event, &cm) == 1)
			cup = event == FI_CONNECTED;
	}
	if (q == VICTIM && up && (read(rd->from_child, &c, 1) != 1 || c != 'C'))
		up = false;
	if (!(up && cup)) {
		snprintf(why, len, "connection %u: not established", q);
		return -ETIMEDOUT;
	}
	nrecv = q == VICTIM ? VICTIM_OK + NFLUSH : PER_CQ;
	for (i = 0; i < nrecv; i++) {
		r = (int)fi_recv(rd->ep[q], rd->rbuf[q], MSG_LEN, NULL, 0,
				 (void *)(uintptr_t)i);
		if (r != 0) {
			snprintf(why, len, "fi_recv %u on %u: %s", i, q, fi_strerror(-r));
			return r;
		}
	}
	if (cqpoll_cq_info_get(rd->fr.cq[q], &info) != 0 || info.state != CQPOLL_CQ_STATE_OK)
		return -EIO;
	return 0;
}

/* What an application does when told: look, close the endpoint, destroy. */
static void
check_failed(struct fh_round *fr, struct cqpoll_cq *cq, const struct cqpoll_cq_failure *f)
{
	struct round *rd = (struct round *)fr;
	int r;

	if (cq != fr->cq[VICTIM])
		FH_REPORT_FAIL(fr, "the callback named cq %p, not the victim", (void *)cq);
	if (f->state != CQPOLL_CQ_STATE_PEER_CLOSED || f->error != -ESHUTDOWN ||
	    f->cause == NULL || strncmp(f->cause, "FI_SHUTDOWN", 11) != 0)
		FH_REPORT_FAIL(fr, "reported state %s error %d cause %s, want peer-closed %d FI_SHUTDOWN",
			       cqpoll_cq_state_name(f->state), f->error,
			       f->cause != NULL ? f->cause : "NULL", -ESHUTDOWN);
	if (fh_check_calls(fr, cq, -ESHUTDOWN, true) != 0)
		return;
	/* libfabric closes a CQ only once no endpoint is bound to it. */
	fi_close(&rd->ep[VICTIM]->fid);
	rd->ep[VICTIM] = NULL;
	if ((r = cqpoll_cq_destroy(cq)) != 0)
		FH_REPORT_FAIL(fr, "destroy of the failed cq returned %d", r);
	fr->cq[VICTIM] = NULL;
	fr->report_ok = 1;
}

static void
tx_reap(struct round *rd)
{
	struct fi_cq_data_entry e[64];

	while (fi_cq_read(rd->ccq, e, 64) > 0)
		;
}

static void
tx_reap_fr(struct fh_round *fr)
{
	tx_reap((struct round *)fr);
}

static void
kill_victim(struct round *rd)
{
	int status;

	__atomic_store_n(&rd->fr.t_fail, test_now_ns(), __ATOMIC_RELEASE);
	kill(rd->child, SIGKILL);
	waitpid(rd->child, &status, 0);
	rd->killed = 1;
}

static void *
producer(void *arg)
{
	struct round *rd = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)rd->win << 8 | rd->mode);
	uint32_t count = VICTIM_OK;
	unsigned int q, s;
	char c = 0;
	ssize_t r;

	/* The victim's messages go first, while the others' flow. */
	if (write(rd->to_child, &count, sizeof(count)) != sizeof(count))
		fprintf(stderr, "telling the child: %s\n", strerror(errno));
	for (s = 0; s < PER_CQ; s++) {
		for (q = 0; q < NCQ; q++) {
			if (q == VICTIM)
				continue;
			while ((r = fi_send(rd->cep[q], rd->sbuf, MSG_LEN, NULL, 0, NULL)) ==
			       -FI_EAGAIN)
				tx_reap(rd);
			if (r != 0)
				fprintf(stderr, "send to %u: %s\n", q, fi_strerror((int)-r));
		}
		tx_reap(rd);
		if (s + 1 == PER_CQ / 2) {
			/* Everything the victim sent is on its way before it dies. */
			if (read(rd->from_child, &c, 1) != 1 || c != 'D')
				fprintf(stderr, "the child did not finish its sends\n");
			if (rd->win == WIN_ASLEEP)
				test_spin_ns(ASLEEP_PAUSE_NS);
			kill_victim(rd);
		}
		if (s % 8 == 7)
			fh_gap(&rng);
	}
	fh_drain(&rd->fr, 4000000000ull,
		 fh_report_wait((2ull * TIMEOUT_MS + 500) * 1000000ull, expect_fail), tx_reap_fr);
	return NULL;
}

static void
teardown(struct round *rd)
{
	unsigned int q;
	int status;

	if (rd->child > 0 && !rd->killed) {
		kill(rd->child, SIGKILL);
		waitpid(rd->child, &status, 0);
	}
	if (rd->to_child > 0)
		close(rd->to_child);
	if (rd->from_child > 0)
		close(rd->from_child);
	for (q = 0; q < NCQ; q++) {
		if (rd->cep[q] != NULL)
			fi_close(&rd->cep[q]->fid);
		if (rd->ep[q] != NULL)
			fi_close(&rd->ep[q]->fid);
		if (rd->fr.cq[q] != NULL && cqpoll_cq_destroy(rd->fr.cq[q]) != 0)
			fprintf(stderr, "destroy cq %u failed\n", q);
		if (rd->eq[q] != NULL)
			fi_close(&rd->eq[q]->fid);
	}
	if (rd->ccq != NULL)
		fi_close(&rd->ccq->fid);
	if (rd->ceq != NULL)
		fi_close(&rd->ceq->fid);
	if (rd->cdomain != NULL)
		fi_close(&rd->cdomain->fid);
	if (rd->cfabric != NULL)
		fi_close(&rd->cfabric->fid);
	if (rd->cinfo != NULL)
		fi_freeinfo(rd->cinfo);
	if (rd->pep != NULL)
		fi_close(&rd->pep->fid);
	if (rd->eq_l != NULL)
		fi_close(&rd->eq_l->fid);
	if (rd->domain != NULL)
		fi_close(&rd->domain->fid);
	if (rd->fabric != NULL)
		fi_close(&rd->fabric->fid);
	if (rd->info != NULL)
		fi_freeinfo(rd->info);
	free(rd);
}

static int
run_round(unsigned int win, enum cqpoll_group_mode mode)
{
	struct cqpoll_group_conf conf = { .mode = mode, .cold_us = 100,
					  .wait_timeout_ms = TIMEOUT_MS };
	struct round *rd = calloc(1, sizeof(*rd));
	char why[256] = "";
	unsigned int q;
	int r;

	TEST_ASSERT(rd != NULL, "calloc");
	rd->win = (enum window)win;
	rd->mode = mode;
	fh_init(&rd->fr, VICTIM, VICTIM_OK, VICTIM_OK + NFLUSH, PER_CQ, check_failed);
	r = listen_setup(rd, why, sizeof(why));
	if (r == -ENODEV) {
		printf("failure-shutdown-ofi: skipped: %s\n", why);
		teardown(rd);
		return TEST_SKIP;
	}
	if (r == 0)
		r = spawn_child(rd);
	for (q = 0; q < NCQ && r == 0; q++)
		r = connect_one(rd, q, why, sizeof(why));
	if (r != 0) {
		fprintf(stderr, "set-up: %s (%d)\n", why, r);
		teardown(rd);
		return TEST_FAIL;
	}
	if (fh_group_setup(&rd->fr, &conf) != TEST_PASS ||
	    fh_run(&rd->fr, producer, rd) != TEST_PASS)
		return TEST_FAIL;
	printf("  %-7s %-10s: run %d, report after %llu us, count %llu\n",
	       window_names[win], cqpoll_group_mode_name(mode), rd->fr.run_ret,
	       (unsigned long long)(fh_latency(&rd->fr) / 1000),
	       (unsigned long long)cqpoll_group_failed_count(rd->fr.g));
	r = fh_judge(&rd->fr, REPORT_BOUND_NS);
	cqpoll_group_destroy(rd->fr.g);
	teardown(rd);
	return r;
}

int
main(int argc, char **argv)
{
	unsigned int failed = 0, rounds = 0;
	int a, only_w = -1, only_m = -1;
	ssize_t n;

	for (a = 1; a < argc; a++) {
		if (strncmp(argv[a], "--child=", 8) == 0)
			return child_main((uint16_t)atoi(argv[a] + 8));
		if (strcmp(argv[a], "--no-eq") == 0) {
			no_eq = true;
		} else if (strcmp(argv[a], "--expect-fail") == 0) {
			expect_fail = true;
		} else if (!fh_parse_choice(argv[a], "--window=", window_names, WIN_COUNT, &only_w) &&
			   !fh_parse_mode(argv[a], &only_m)) {
			fprintf(stderr, "usage: %s [--window=device|asleep] "
				"[--mode=busy|interrupt|adaptive] [--no-eq] [--expect-fail]\n",
				argv[0]);
			return 2;
		}
	}
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	TEST_ASSERT(n > 0, "readlink /proc/self/exe");
	self_exe[n] = '\0';
	signal(SIGPIPE, SIG_IGN);
	if (fh_sweep(run_round, WIN_COUNT, only_w, only_m, LATE_TRIES, &rounds,
		     &failed) == TEST_SKIP)
		return TEST_SKIP;
	return fh_exit("failure-shutdown-ofi", rounds, failed, -1, expect_fail);
}
