/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric driver: opening the CQ, the arm (fi_trywait), events, and the
 * ops table.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ofi_private.h"

/*
 * fi_trywait() is the arm: 0 when the wait object will be signalled for
 * anything new, -FI_EAGAIN when completions may already be there (report
 * missed: the core polls and tries again). It also resets the wait object,
 * so events need no consuming beyond it. With EQs, one call covers the CQ
 * and the EQs (an EQ holding an event is -FI_EAGAIN too, and is read by
 * the poll that follows).
 */
static int
ofi_arm(void *priv)
{
	struct cqpoll_ofi_cq *q = priv;
	int r;

	if (q->shut)
		return -ESHUTDOWN;
	if (q->n_eqs != 0) {
		/* The last look before a sleep: an FI_SHUTDOWN already there. */
		cqpoll_ofi_eq_check(q);
		if (q->shut)
			return 1;
	}
	r = fi_trywait(q->fabric, q->wait_fids, 1 + (int)q->n_eqs);
	if (r == 0)
		return 0;
	if (r == -FI_EAGAIN) {
		q->eq_due = q->n_eqs != 0;
		return 1;
	}
	return r;
}

static int
ofi_event_fd(void *priv)
{
	struct cqpoll_ofi_cq *q = priv;

	return q->fd;
}

/*
 * The wait object stays readable until the provider resets it in the next
 * fi_trywait(), or (tcp) until progress reads the socket: an event is
 * pending while it is readable.
 */
static int
ofi_event_get(void *priv)
{
	struct cqpoll_ofi_cq *q = priv;
	struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
	int r;

	r = poll(&pfd, 1, 0);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r == 0)
		return 0;
	/* Woken: for a completion, or for an EQ's event (peer gone). */
	q->eq_due = q->n_eqs != 0;
	return 1;
}

/*
 * cqpoll_cq_wait()'s sleep: poll(2) on the wait object, and nothing after
 * it. Readable is the event: event_get would only poll the fd once more to
 * learn what this poll just said. The timeout is the alarm's
 * (cqpoll_alarm_private.h), polled beside the wait object, so that the
 * sleep arms no timer of its own, as fi_cq_sread() with no timeout arms
 * none.
 */
static int
ofi_wait(void *priv, int timeout_ms)
{
	struct cqpoll_ofi_cq *q = priv;
	int r;

	r = cqpoll_alarm_poll(&q->alarm, q->fd, timeout_ms, cqpoll_now_ns());
	if (r <= 0)
		return r;
	/* Woken: for a completion, or for an EQ's event (peer gone). */
	q->eq_due = q->n_eqs != 0;
	return 1;
}

/*
 * The cross-thread wake-up: fi_cq_signal(). On the utility CQ that tcp and
 * ofi_rxm build on (libfabric 1.17, prov/util/src/util_cq.c
 * ofi_cq_signal()), it signals the CQ's wait set, whose epoll fd is what
 * FI_GETWAIT gave (q->cq_fd): a byte written to a socket pair in that set
 * under the signal's lock, once however many calls come
 * (include/ofi_signal.h fd_signal_set()). The fd stays readable until
 * the next fi_trywait() resets the signal (util_wait.c util_wait_fd_try()),
 * or, on tcp's own CQ, a progress pass finds it (tcpx_progress()): both run
 * on the consumer, awake, so a wake-up ends the wait it finds, or the next
 * one, and the arm after it sleeps again. With EQs the epoll set over
 * cq_fd is readable too.
 */
static int
ofi_wake(void *priv)
{
	struct cqpoll_ofi_cq *q = priv;
	int r;

	if (!q->can_signal)
		return 0;
	r = fi_cq_signal(q->cq);
	return r == 0 ? 0 : r < 0 ? r : -EIO;
}

static void
ofi_destroy(void *priv)
{
	struct cqpoll_ofi_cq *q = priv;

	cqpoll_ofi_eq_teardown(q);
	fi_close(&q->cq->fid);
	cqpoll_alarm_close(&q->alarm);
	free(q);
}

const struct cqpoll_driver_ops cqpoll_ofi_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "ofi",
	.arm = ofi_arm,
	.event_fd = ofi_event_fd,
	.event_get = ofi_event_get,
	.destroy = ofi_destroy,
	.wake = ofi_wake,
	.wait = ofi_wait,
};

/*
 * Whether the provider's CQ has fi_cq_signal() (shm and efa answer
 * -FI_ENOSYS in libfabric 1.17): signalled once on the new CQ, whose
 * fi_trywait() then resets the signal before anything waits on it.
 */
static int
ofi_probe_signal(struct cqpoll_ofi_cq *q)
{
	struct fid *fid = &q->cq->fid;
	int r;

	r = fi_cq_signal(q->cq);
	if (r != 0)
		return r;
	q->can_signal = true;
	r = fi_trywait(q->fabric, &fid, 1);
	return r == -FI_EAGAIN ? 0 : r;
}

struct cqpoll_cq *
cqpoll_ofi_cq_open(struct fid_fabric *fabric, struct fid_domain *domain,
		   const struct cqpoll_ofi_conf *conf)
{
	struct fi_cq_attr attr;
	/* Zeroed: fields this driver does not set (flags, socket_id) are off. */
	struct cqpoll_cq_params params = { .size = 0 };
	struct cqpoll_ofi_cq *q;
	struct cqpoll_cq *cq;
	int r;

	if (fabric == NULL || domain == NULL) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = conf != NULL && conf->size != 0 ? conf->size :
		CQPOLL_OFI_CQ_SIZE_DEFAULT;
	attr.format = FI_CQ_FORMAT_DATA;
	attr.wait_obj = FI_WAIT_FD;
	r = fi_cq_open(domain, &attr, &q->cq, NULL);
	if (r != 0) {
		free(q);
		errno = r == -FI_ENOSYS || r == -FI_EOPNOTSUPP ? EOPNOTSUPP : -r;
		return NULL;
	}
	q->fabric = fabric;
	r = fi_control(&q->cq->fid, FI_GETWAIT, &q->cq_fd);
	if (r == 0)
		r = cqpoll_ofi_eq_setup(q, conf);
	if (r != 0) {
		fi_close(&q->cq->fid);
		free(q);
		errno = r == -FI_ENOSYS ? EOPNOTSUPP : -r;
		return NULL;
	}
	/* Fields added later (NUMA socket, flags) stay 0: their defaults. */
	memset(&params, 0, sizeof(params));
	if (ofi_probe_signal(q) != 0)
		/* No wake-up for a sleep in the wait: the epoll's event fd it is. */
		params.flags |= CQPOLL_CQ_PARAMS_F_NO_WAIT;
	params.arm = CQPOLL_ARM_REPORT_MISSED;
	params.size = (uint32_t)attr.size;
	params.event_ack_batch = conf != NULL ? conf->event_ack_batch : 0;
	cq = cqpoll_cq_alloc(&cqpoll_ofi_ops, cqpoll_ofi_poll, q, &params);
	if (cq == NULL) {
		r = errno;
		cqpoll_ofi_eq_teardown(q);
		fi_close(&q->cq->fid);
		free(q);
		errno = r;
		return NULL;
	}
	q->handle = cq;
	return cq;
}

struct fid_cq *
cqpoll_ofi_cq_fid(struct cqpoll_cq *cq)
{
	struct cqpoll_ofi_cq *q = cqpoll_cq_priv_of(cq, &cqpoll_ofi_ops);

	return q != NULL ? q->cq : NULL;
}

const char *
cqpoll_ofi_cq_strerror(struct cqpoll_cq *cq)
{
	struct cqpoll_ofi_cq *q = cqpoll_cq_priv_of(cq, &cqpoll_ofi_ops);

	return q != NULL ? q->errmsg : NULL;
}
