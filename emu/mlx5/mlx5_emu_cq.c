/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Emulated mlx5 device with one CQ: the memory a provider would allocate,
 * laid out as struct mlx5dv_cq describes it, handed to the same driver code
 * that runs on hardware; and the event side (an fd, as a completion channel).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cqpoll_verbs_emu.h"
#include "mlx5_emu_private.h"
#include "mlx5_prm.h"
#include "verbs_emu_private.h"

#define EMU_CQ_SIZE_DEFAULT 4096
#define EMU_PAGE 4096
#define EMU_DOORBELL_POLL_US_DEFAULT 20

static uint32_t emu_next_cqn = 0x400;

static void
emu_free(struct cqpoll_mlx5_emu_dev *dev)
{
	/* The device thread first: it may raise events on ev_cq. */
	cqpoll_mlx5_emu_dev_stop(dev);
	/* -EBUSY (counted by verbs-emu) would be a hang on hardware: leave it be. */
	if (dev->ev_cq != NULL && cqpoll_verbs_emu_ibv_destroy_cq(dev->ev_cq) != 0)
		dev->ev_cq = NULL;
	if (dev->epfd >= 0)
		close(dev->epfd);
	if (dev->tfd >= 0)
		close(dev->tfd);
	if (dev->efd >= 0)
		close(dev->efd);
	if (dev->errfd >= 0)
		close(dev->errfd);
	free(dev->dv.buf);
	free(dev->dv.dbrec);
	free(dev->dv.cq_uar);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

static int
emu_event_fd(void *priv)
{
	struct cqpoll_mlx5_emu_cq *e = priv;

	if (e->emu->ev_cq != NULL)
		return cqpoll_ibv_channel_fd(&e->q.ev);
	return e->emu->epfd;
}

static int
drain(int fd, uint64_t *count)
{
	uint64_t v;

	if (fd < 0)
		return 0;
	if (read(fd, &v, sizeof(v)) == sizeof(v)) {
		*count += v;
		return 0;
	}
	return errno == EAGAIN ? 0 : -errno;
}

static int
emu_event_get(void *priv)
{
	struct cqpoll_mlx5_cq *q = priv;
	struct cqpoll_mlx5_emu_dev *dev = cqpoll_mlx5_emu_dev_of(priv);
	uint64_t events = 0, errors = 0, delayed = 0;
	uint32_t due = 1;
	int r;

	if (dev->ev_cq != NULL) {
		/* As on hardware: the demux hands us the events that name our CQ. */
		r = drain(dev->errfd, &errors);
		return r < 0 ? r : cqpoll_mlx5_channel_event_get(q);
	}
	r = drain(dev->efd, &events);
	if (r == 0 && dev->tfd >= 0 && __atomic_load_n(&dev->timer_due, __ATOMIC_ACQUIRE)) {
		r = drain(dev->tfd, &delayed);
		/* Taken: an RMW orders a fire folded into it before our next poll. */
		if (delayed != 0)
			__atomic_compare_exchange_n(&dev->timer_due, &due, 0, 0,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		events += delayed;
	}
	/* An async error wakes the consumer but is no completion event. */
	if (r == 0)
		r = drain(dev->errfd, &errors);
	if (r < 0)
		return r;
	if (events > 0x7fffffff)
		events = 0x7fffffff;
	cqpoll_mlx5_events_consumed(q, (unsigned int)events);
	return (int)events;
}

static int
emu_event_ack(void *priv, unsigned int n)
{
	struct cqpoll_mlx5_emu_cq *e = priv;

	if (e->emu->ev_cq != NULL)
		cqpoll_ibv_channel_ack(&e->q.ev, n);
	return 0;
}

/*
 * Driver states of live emulated CQs: the oracle judges any handle over one
 * of them (tests wrap them in handles of their own, as negative controls).
 */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cqpoll_mlx5_emu_cq *live;

static void
live_add(struct cqpoll_mlx5_emu_cq *e)
{
	pthread_mutex_lock(&live_lock);
	e->next = live;
	live = e;
	pthread_mutex_unlock(&live_lock);
}

static void
live_del(struct cqpoll_mlx5_emu_cq *e)
{
	struct cqpoll_mlx5_emu_cq **p;

	pthread_mutex_lock(&live_lock);
	for (p = &live; *p != NULL; p = &(*p)->next) {
		if (*p == e) {
			*p = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
}

static int
live_has(const void *priv)
{
	const struct cqpoll_mlx5_emu_cq *e;
	int r = 0;

	pthread_mutex_lock(&live_lock);
	for (e = live; e != NULL && !r; e = e->next)
		r = (const void *)e == priv;
	pthread_mutex_unlock(&live_lock);
	return r;
}

struct cqpoll_mlx5_emu_dev *
cqpoll_mlx5_emu_dev_of_ibcq(const struct ibv_cq *ibcq)
{
	const struct cqpoll_mlx5_emu_cq *e;
	struct cqpoll_mlx5_emu_dev *dev = NULL;

	pthread_mutex_lock(&live_lock);
	for (e = live; e != NULL && dev == NULL; e = e->next)
		if (e->q.ibcq == ibcq)
			dev = e->emu;
	pthread_mutex_unlock(&live_lock);
	return dev;
}

int
cqpoll_mlx5_emu_stranded(void *priv)
{
	struct cqpoll_mlx5_emu_cq *e = priv;
	int r;

	if (!live_has(priv))
		return -ENOTSUP;
	r = cqpoll_mlx5_emu_dev_stranded(e->emu);

	/*
	 * An event another member read for us is pending just the same. Read
	 * after the device's answer: an event routed in between was queued
	 * when the device looked, so one of the two reads sees it.
	 */
	if (r == 1 && e->emu->ev_cq != NULL && cqpoll_ibv_channel_routed(&e->q.ev) != 0)
		r = 0;
	return r;
}

static void
emu_destroy(void *priv)
{
	struct cqpoll_mlx5_emu_cq *e = priv;

	live_del(e);
	cqpoll_mlx5_emu_dev_stop(e->emu);
	/* Acks what other members read for us: the ibv_cq can go. */
	(void)cqpoll_ibv_channel_leave(&e->q.ev);
	emu_free(e->emu);
	free(e);
}

const struct cqpoll_driver_ops cqpoll_mlx5_emu_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "mlx5-emu",
	.arm = cqpoll_mlx5_arm,
	.event_fd = emu_event_fd,
	.event_get = emu_event_get,
	.event_ack = emu_event_ack,
	.destroy = emu_destroy,
	.get_monitor_addr = cqpoll_mlx5_get_monitor_addr,
};

static int
emu_fds(struct cqpoll_mlx5_emu_dev *dev, struct ibv_comp_channel *ch)
{
	struct epoll_event ev = { .events = EPOLLIN };

	dev->errfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (dev->errfd < 0)
		return -errno;
	if (ch != NULL) {
		/* Events go to the channel; the demux gives the CQ its fd. */
		dev->ev_cq = cqpoll_verbs_emu_ibv_create_cq(ch->context, 1, NULL, ch, 0);
		return dev->ev_cq != NULL ? 0 : -errno;
	}
	dev->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	dev->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (dev->efd < 0 || dev->errfd < 0 || dev->epfd < 0)
		return -errno;
	if (epoll_ctl(dev->epfd, EPOLL_CTL_ADD, dev->efd, &ev) < 0 ||
	    epoll_ctl(dev->epfd, EPOLL_CTL_ADD, dev->errfd, &ev) < 0)
		return -errno;
	if (dev->event_delay_us == 0)
		return 0;
	dev->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (dev->tfd < 0 || epoll_ctl(dev->epfd, EPOLL_CTL_ADD, dev->tfd, &ev) < 0)
		return -errno;
	return 0;
}

/* The provider's part: memory laid out as mlx5_alloc_cq_buf, mlx5_alloc_dbrec (§1.2). */
static int
emu_memory(struct cqpoll_mlx5_emu_dev *dev, uint32_t n, uint32_t cqe_size, uint32_t start)
{
	size_t len = ((size_t)n * cqe_size + EMU_PAGE - 1) / EMU_PAGE * EMU_PAGE;
	uint32_t i;

	dev->dv.buf = aligned_alloc(EMU_PAGE, len);
	dev->dv.dbrec = aligned_alloc(64, 64);
	dev->dv.cq_uar = aligned_alloc(EMU_PAGE, EMU_PAGE);
	if (dev->dv.buf == NULL || dev->dv.dbrec == NULL || dev->dv.cq_uar == NULL)
		return -ENOMEM;
	memset(dev->dv.buf, 0, len);
	memset(dev->dv.dbrec, 0, 64);
	memset(dev->dv.cq_uar, 0, EMU_PAGE);
	/* INVALID opcode, owner 0: empty whatever the lap (§1.2, §3.1). */
	for (i = 0; i < n; i++)
		cqpoll_mlx5_cqe(dev->dv.buf, i, n, cqe_size)->op_own = MLX5_CQE_INVALID << 4;
	/* Enhanced layout: no lap's count, as DPDK's MLX5_CQE_VIC_INIT. */
	for (i = 0; dev->enhanced && i < n; i++)
		cqpoll_mlx5_cqe(dev->dv.buf, i, n, cqe_size)->signature = CQPOLL_MLX5_VIC_INIT;
	dev->dv.dbrec[CQPOLL_MLX5_DBREC_SET_CI] = htobe32(start & CQPOLL_MLX5_CI_MASK);
	dev->dv.cqe_cnt = n;
	dev->dv.cqe_size = cqe_size;
	dev->dv.cqn = __atomic_fetch_add(&emu_next_cqn, 1, __ATOMIC_RELAXED) & CQPOLL_MLX5_CI_MASK;
	if (dev->dv.cqn == 0)
		dev->dv.cqn = 1;
	while ((1u << dev->log2_n) < n)
		dev->log2_n++;
	dev->pi = dev->checked_pi = dev->arm_from = start;
	return 0;
}

struct cqpoll_cq *
cqpoll_mlx5_emu_cq_create(const struct cqpoll_mlx5_emu_conf *conf)
{
	static const struct cqpoll_mlx5_emu_conf defaults = { .arm = CQPOLL_ARM_LEVEL };
	struct cqpoll_cq_params params = { .arm = CQPOLL_ARM_LEVEL };
	struct cqpoll_mlx5_emu_dev *dev;
	struct cqpoll_mlx5_emu_cq *e = NULL;
	struct cqpoll_mlx5_cq *q = NULL;
	struct cqpoll_cq *cq = NULL;
	uint32_t n = 2, want, cqe_size;
	int r;

	if (conf == NULL)
		conf = &defaults;
	want = conf->size != 0 ? conf->size : EMU_CQ_SIZE_DEFAULT;
	cqe_size = (conf->flags & CQPOLL_MLX5_F_CQE128) ? 128 : 64;
	if ((conf->arm != CQPOLL_ARM_LEVEL && conf->arm != CQPOLL_ARM_EDGE) ||
	    want > CQPOLL_MLX5_CQE_CNT_MAX ||
	    (conf->flags & ~(CQPOLL_MLX5_F_SOLICITED_ONLY | CQPOLL_MLX5_F_CQE128 |
			     CQPOLL_MLX5_F_CQE_COMPRESS |
			     CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED)) != 0 ||
	    (conf->flags & (CQPOLL_MLX5_F_CQE_COMPRESS | CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED)) ==
	    CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED) {
		errno = EINVAL;
		return NULL;
	}
	while (n < want)
		n <<= 1;
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&dev->lock, NULL);
	dev->efd = dev->tfd = dev->errfd = dev->epfd = -1;
	dev->lazy = conf->arm == CQPOLL_ARM_EDGE;
	dev->compress = (conf->flags & CQPOLL_MLX5_F_CQE_COMPRESS) != 0;
	dev->enhanced = (conf->flags & CQPOLL_MLX5_F_CQE_COMPRESS_ENHANCED) != 0;
	dev->strict_sn = (conf->emu_flags & CQPOLL_MLX5_EMU_F_STRICT_SN) != 0;
	dev->overrun_error = (conf->emu_flags & CQPOLL_MLX5_EMU_F_OVERRUN_ERROR) != 0;
	dev->event_delay_us = conf->event_delay_us;
	dev->poll_ns = (conf->doorbell_poll_us != 0 ? conf->doorbell_poll_us :
			EMU_DOORBELL_POLL_US_DEFAULT) * 1000u;
	r = emu_memory(dev, n, cqe_size, conf->start_index);
	if (r == 0)
		r = emu_fds(dev, conf->channel);
	if (r == 0) {
		e = calloc(1, sizeof(*e));
		q = e != NULL ? &e->q : NULL;
		r = e == NULL ? -ENOMEM : 0;
	}
	/* The seam: the driver gets the mlx5dv_cq fields, hardware or not. */
	if (r == 0)
		r = cqpoll_mlx5_cq_setup(q, &dev->dv, conf->start_index, 0, conf->flags);
	/* QPs name their CQs by it (cqpoll_mlx5_qp_create()). */
	if (r == 0 && dev->ev_cq == NULL)
		q->ibcq = &dev->id_cq;
	if (r == 0 && dev->ev_cq != NULL) {
		q->ibcq = dev->ev_cq;
		r = cqpoll_ibv_channel_join(&q->ev, dev->ev_cq, conf->channel,
					    false, dev->errfd);
	}
	if (r == 0) {
		e->emu = dev;
		dev->drv_err = &q->dev_err;
		if (!(conf->emu_flags & CQPOLL_MLX5_EMU_F_MANUAL))
			r = cqpoll_mlx5_emu_dev_start(dev);
	}
	if (r == 0) {
		params.arm = conf->arm == CQPOLL_ARM_EDGE ? CQPOLL_ARM_EDGE :
			cqpoll_mlx5_arm_semantics(conf->flags);
		params.size = n;
		params.event_ack_batch = conf->event_ack_batch;
		cq = cqpoll_cq_alloc(&cqpoll_mlx5_emu_ops, cqpoll_mlx5_poll_of(q),
				     q, &params);
		if (cq == NULL)
			r = -errno;
	}
	if (r == 0 && dev->ev_cq != NULL)
		cqpoll_ibv_channel_bind(&q->ev, cq);
	if (r == 0)
		live_add(e);
	if (r < 0) {
		cqpoll_mlx5_emu_dev_stop(dev);
		if (q != NULL)
			(void)cqpoll_ibv_channel_leave(&q->ev);
		emu_free(dev);
		free(e);
		errno = -r;
		return NULL;
	}
	return cq;
}

static struct cqpoll_mlx5_emu_dev *
emu_of(struct cqpoll_cq *cq)
{
	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_mlx5_emu_ops)
		return NULL;
	return cqpoll_mlx5_emu_dev_of(cqpoll_cq_priv(cq));
}

int
cqpoll_mlx5_emu_service(struct cqpoll_cq *cq)
{
	struct cqpoll_mlx5_emu_dev *dev = emu_of(cq);
	int r;

	if (dev == NULL)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	r = cqpoll_mlx5_emu_dev_check(dev);
	pthread_mutex_unlock(&dev->lock);
	return r;
}

int
cqpoll_mlx5_emu_stats_get(struct cqpoll_cq *cq, struct cqpoll_mlx5_emu_stats *stats)
{
	struct cqpoll_mlx5_emu_dev *dev = emu_of(cq);

	if (dev == NULL || stats == NULL)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	*stats = dev->stats;
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

int
cqpoll_mlx5_emu_dv(struct cqpoll_cq *cq, struct mlx5dv_cq *dv)
{
	struct cqpoll_mlx5_emu_dev *dev = emu_of(cq);

	if (dev == NULL || dv == NULL)
		return -EINVAL;
	*dv = dev->dv;
	return 0;
}
