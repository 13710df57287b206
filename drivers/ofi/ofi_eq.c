/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric driver: the event queues of a CQ's connected endpoints, where a
 * peer's disconnection shows (FI_SHUTDOWN).
 *
 * What libfabric 1.17 does (prov/tcp/src/tcpx_ep.c, tcpx_progress.c,
 * prov/util/src/util_eq.c, util_wait.c, util_poll.c at v1.17.0):
 * - The tcp provider notices a lost peer in the receive progress of the
 *   endpoint (a recv() that returns 0 or an error, tcpx_progress_rx()),
 *   which with manual progress runs inside fi_cq_read() of its CQ: so in
 *   the consumer's poll, woken by the socket's EOF in the CQ's wait set.
 *   tcpx_ep_disable() then removes the socket from the CQ's wait set,
 *   flushes every queued transfer into the CQ as an FI_ECANCELED error
 *   entry (tcpx_ep_flush_all_queues()), and only then writes FI_SHUTDOWN
 *   to the EQ, as an error entry if the connection ended with an error.
 *   The flushed work is therefore in the CQ before the EQ says why.
 * - ofi_eq_write() signals the EQ's wait object; nothing but fi_trywait()
 *   (util_wait_fd_try(): reset the signal, then fi_poll() the EQ with
 *   FI_PEEK, -FI_EAGAIN if it holds an event) resets it. fi_control()
 *   FI_GETWAIT of an FI_WAIT_FD EQ gives the epoll fd of its wait set.
 *
 * So the arm is fi_trywait() over the CQ and its EQs together, and the
 * event fd an epoll set over the CQ's and the EQs' fds: a sleeper wakes
 * for either, and a stale EQ signal is reset by the next arm.
 */

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <rdma/fi_cm.h>

#include "cqpoll_log_private.h"
#include "ofi_private.h"

static int
eq_fd_of(struct fid_eq *eq, int *fd)
{
	enum fi_wait_obj obj = FI_WAIT_NONE;
	int r;

	r = fi_control(&eq->fid, FI_GETWAITOBJ, &obj);
	if (r != 0 || obj != FI_WAIT_FD)
		return r == 0 || r == -FI_ENOSYS ? -EOPNOTSUPP : r;
	r = fi_control(&eq->fid, FI_GETWAIT, fd);
	return r == -FI_ENOSYS ? -EOPNOTSUPP : r;
}

int
cqpoll_ofi_eq_setup(struct cqpoll_ofi_cq *q, const struct cqpoll_ofi_conf *conf)
{
	struct epoll_event ev = { .events = EPOLLIN };
	uint32_t i;
	int r, fd;

	q->epfd = -1;
	q->fd = q->cq_fd;
	q->wait_fids[0] = &q->cq->fid;
	if (conf == NULL || conf->n_eqs == 0)
		return 0;
	if (conf->n_eqs > CQPOLL_OFI_EQ_MAX || conf->eqs == NULL)
		return -EINVAL;
	for (i = 0; i < conf->n_eqs; i++)
		if (conf->eqs[i] == NULL)
			return -EINVAL;
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->epfd < 0)
		return -errno;
	ev.data.fd = q->cq_fd;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->cq_fd, &ev) != 0)
		goto fail_errno;
	for (i = 0; i < conf->n_eqs; i++) {
		r = eq_fd_of(conf->eqs[i], &fd);
		if (r != 0)
			goto fail;
		ev.data.fd = fd;
		/* Two endpoints may share one EQ: watch it once. */
		if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, fd, &ev) != 0 && errno != EEXIST)
			goto fail_errno;
		q->eqs[i] = conf->eqs[i];
		q->wait_fids[1 + i] = &conf->eqs[i]->fid;
	}
	q->n_eqs = conf->n_eqs;
	q->fd = q->epfd;
	return 0;
fail_errno:
	r = -errno;
fail:
	cqpoll_ofi_eq_teardown(q);
	return r;
}

void
cqpoll_ofi_eq_teardown(struct cqpoll_ofi_cq *q)
{
	if (q->epfd >= 0)
		close(q->epfd);
	q->epfd = -1;
	q->fd = q->cq_fd;
	q->n_eqs = 0;
}

static void
peer_closed(struct cqpoll_ofi_cq *q, const char *cause)
{
	if (q->shut)
		return;
	q->shut = true;
	/*
	 * The provider flushed the endpoint's work into the CQ before it wrote
	 * the event: the core delivers that first and latches the state at
	 * the first poll that finds the CQ drained.
	 */
	cqpoll_cq_fail(q->handle, -ESHUTDOWN, cause);
}

/* Read every EQ dry; FI_SHUTDOWN or an error entry fails the CQ. */
void
cqpoll_ofi_eq_check(struct cqpoll_ofi_cq *q)
{
	struct fi_eq_cm_entry entry;
	struct fi_eq_err_entry err;
	uint32_t i, event;
	ssize_t r;

	q->eq_due = false;
	q->empty_polls = 0;
	for (i = 0; i < q->n_eqs; i++) {
		for (;;) {
			r = fi_eq_read(q->eqs[i], &event, &entry, sizeof(entry), 0);
			if (r == -FI_EAGAIN)
				break;
			if (r == -FI_EAVAIL) {
				/* err_data stays NULL: the util EQ then copies no data. */
				memset(&err, 0, sizeof(err));
				r = fi_eq_readerr(q->eqs[i], &err, 0);
				if (r < 0 && r != -FI_EAGAIN)
					break;
				if (r >= 0) {
					CQPOLL_LOG(ERR, "ofi", "cq %p: EQ %u: connection ended: %s",
						   (void *)q->handle, i, fi_strerror(err.err));
					peer_closed(q, "FI_SHUTDOWN (connection error)");
				}
				continue;
			}
			if (r < 0) {
				CQPOLL_LOG(ERR, "ofi", "cq %p: EQ %u: fi_eq_read: %s",
					   (void *)q->handle, i, fi_strerror((int)-r));
				break;
			}
			if (event == FI_SHUTDOWN)
				peer_closed(q, "FI_SHUTDOWN");
			else
				CQPOLL_LOG(WARNING, "ofi", "cq %p: EQ %u: event %u dropped (not FI_SHUTDOWN)",
					   (void *)q->handle, i, event);
		}
	}
}
