/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated software device: libcqpoll's sw CQ with the kit's fault
 * table (struct cqpoll_sw_dev_ops) set on it: delays inside the arm and
 * before an entry turns visible, late events through a timerfd, duplicate and
 * spurious events, arm hooks, injected failures, and the ground-truth oracle.
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sw_emu.h"

#define SW_EMU_SEED_DEFAULT 0x9e3779b97f4a7c15ull

static int
faults_valid(const struct cqpoll_sw_faults *f)
{
	return f->visibility_delay_pct <= 100 && f->spurious_event_pct <= 100 &&
	       f->duplicate_event_pct <= 100 && f->arm_delay_pct <= 100;
}

static int
emu_init(struct cqpoll_sw_emu_state *e, struct cqpoll_sw_cq *q,
	 const struct cqpoll_sw_faults *f)
{
	struct epoll_event ev = { .events = EPOLLIN };

	e->q = q;
	e->tfd = e->epfd = -1;
	e->faults = *f;
	e->device_rng = f->seed != 0 ? f->seed : SW_EMU_SEED_DEFAULT;
	e->consumer_rng = e->device_rng ^ 0x5bd1e9955bd1e995ull;
	if (e->faults.event_delay_us == 0)
		return 0;
	e->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (e->tfd < 0)
		return -errno;
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e->epfd < 0)
		return -errno;
	if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, q->efd, &ev) < 0 ||
	    epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->tfd, &ev) < 0)
		return -errno;
	return 0;
}

static void
emu_fini(void *f)
{
	struct cqpoll_sw_emu_state *e = f;

	if (e->epfd >= 0)
		close(e->epfd);
	if (e->tfd >= 0)
		close(e->tfd);
	free(e);
}

static void
arm_delay(struct cqpoll_sw_emu_state *e)
{
	if (cqpoll_emu_chance(&e->consumer_rng, e->faults.arm_delay_pct))
		cqpoll_emu_spin_ns(cqpoll_emu_rand(&e->consumer_rng) %
				  (e->faults.arm_delay_ns + 1ull));
}

static void
run_hook(struct cqpoll_sw_emu_state *e, enum cqpoll_sw_hook_point p)
{
	if (e->hook[p] != NULL)
		e->hook[p](e->hook_arg[p]);
}

static void
emu_arm_begin(void *f)
{
	run_hook(f, CQPOLL_SW_HOOK_BEFORE_ARM);
	arm_delay(f);
}

static void
emu_arm_end(void *f)
{
	arm_delay(f);
	run_hook(f, CQPOLL_SW_HOOK_AFTER_ARM);
}

static int
emu_keeps_armed(void *f)
{
	const struct cqpoll_sw_emu_state *e = f;

	return e->faults.report_missed_keeps_armed != 0;
}

static void
emu_post_begin(void *f)
{
	struct cqpoll_sw_emu_state *e = f;

	if (cqpoll_emu_chance(&e->device_rng, e->faults.visibility_delay_pct))
		cqpoll_emu_spin_ns(cqpoll_emu_rand(&e->device_rng) %
				  (e->faults.visibility_delay_ns + 1ull));
}

static void
emu_post_visible(void *f)
{
	run_hook(f, CQPOLL_SW_HOOK_BEFORE_PUBLISH);
}

static int
emu_post_end(void *f, int claimed, int r, uint32_t pi)
{
	struct cqpoll_sw_emu_state *e = f;

	if (!claimed && cqpoll_emu_chance(&e->device_rng, e->faults.spurious_event_pct))
		r = cqpoll_sw_deliver(e->q, 1);
	/* After the raise: the oracle never sees an entry whose raise is pending. */
	__atomic_store_n(&e->posted, pi, __ATOMIC_RELEASE);
	return r;
}

static uint64_t
emu_raise_count(void *f, int consumer)
{
	struct cqpoll_sw_emu_state *e = f;
	/* Raised on the device thread (post) or the consumer's (level arm). */
	uint64_t *rng = consumer ? &e->consumer_rng : &e->device_rng;

	return cqpoll_emu_chance(rng, e->faults.duplicate_event_pct) ? 2 : 1;
}

static int
emu_deliver(void *f, uint64_t n)
{
	struct cqpoll_sw_emu_state *e = f;
	struct itimerspec its = { 0 };

	(void)n;
	if (e->tfd < 0)
		return 1;
	/*
	 * A delayed event already due covers this one too: the consumer polls
	 * after taking it. The flag, not timerfd_gettime(), says "due": the
	 * kernel reports an expired timer as disarmed before its fd turns
	 * readable.
	 */
	if (__atomic_exchange_n(&e->timer_due, 1, __ATOMIC_ACQ_REL) != 0)
		return 0;
	its.it_value.tv_sec = e->faults.event_delay_us / 1000000;
	its.it_value.tv_nsec = (long)(e->faults.event_delay_us % 1000000) * 1000;
	if (timerfd_settime(e->tfd, 0, &its, NULL) < 0)
		return -errno;
	return 0;
}

static int
emu_event_fd(void *f)
{
	const struct cqpoll_sw_emu_state *e = f;

	return e->epfd;
}

static int
emu_event_get(void *f, uint64_t *n)
{
	struct cqpoll_sw_emu_state *e = f;
	uint64_t v;
	uint32_t due = 1;

	if (e->tfd < 0 || !__atomic_load_n(&e->timer_due, __ATOMIC_ACQUIRE))
		return 0;
	if (read(e->tfd, &v, sizeof(v)) != sizeof(v))
		return errno == EAGAIN ? 0 : -errno;
	/*
	 * Taken: no longer due. An RMW, so that a raise that found it due (and
	 * folded into it) is ordered before our next poll.
	 */
	__atomic_compare_exchange_n(&e->timer_due, &due, 0, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	*n += v;
	return 0;
}

static int
emu_error(void *f)
{
	struct cqpoll_sw_emu_state *e = f;

	run_hook(e, CQPOLL_SW_HOOK_ERROR_LOOK);

	/* Acquire: the flushed entries posted before it are visible too. */
	return __atomic_load_n(&e->error, __ATOMIC_ACQUIRE);
}

static const struct cqpoll_sw_dev_ops emu_ops = {
	.fini = emu_fini,
	.arm_begin = emu_arm_begin,
	.arm_end = emu_arm_end,
	.keeps_armed = emu_keeps_armed,
	.post_begin = emu_post_begin,
	.post_visible = emu_post_visible,
	.post_end = emu_post_end,
	.raise_count = emu_raise_count,
	.deliver = emu_deliver,
	.event_fd = emu_event_fd,
	.event_get = emu_event_get,
	.error = emu_error,
};

struct cqpoll_sw_emu_state *
sw_emu_of(const struct cqpoll_cq *cq)
{
	struct cqpoll_sw_cq *q = cqpoll_sw_cq_of(cq);

	return q != NULL && q->dev == &emu_ops ? q->dev_arg : NULL;
}

struct cqpoll_cq *
cqpoll_sw_emu_cq_create(const struct cqpoll_sw_emu_conf *conf)
{
	static const struct cqpoll_sw_emu_conf defaults = { .arm = CQPOLL_ARM_EDGE };
	struct cqpoll_sw_conf c = { 0 };
	struct cqpoll_sw_emu_state *e;
	struct cqpoll_cq *cq;
	int r;

	if (conf == NULL)
		conf = &defaults;
	if (!faults_valid(&conf->faults)) {
		errno = EINVAL;
		return NULL;
	}
	c.size = conf->size;
	c.arm = conf->arm;
	c.event_ack_batch = conf->event_ack_batch;
	c.flags = conf->flags;
	c.socket_id = conf->socket_id;
	cq = cqpoll_sw_cq_create(&c);
	if (cq == NULL)
		return NULL;
	e = calloc(1, sizeof(*e));
	r = e == NULL ? -ENOMEM : emu_init(e, cqpoll_sw_cq_of(cq), &conf->faults);
	if (r == 0)
		r = cqpoll_sw_set_dev_ops(cq, &emu_ops, e);
	if (r < 0) {
		if (e != NULL)
			emu_fini(e);
		cqpoll_cq_destroy(cq);
		errno = -r;
		return NULL;
	}
	return cq;
}

int
cqpoll_sw_emu_post(struct cqpoll_cq *cq, const struct cqpoll_completion *comp)
{
	if (sw_emu_of(cq) == NULL)
		return -EINVAL;
	return cqpoll_sw_post(cq, comp);
}

static int
event_pending(const struct cqpoll_sw_emu_state *e)
{
	struct pollfd pfd = { .fd = e->q->efd, .events = POLLIN };

	/* Only this (the consumer) thread takes events: both stay true until it does. */
	if (e->tfd >= 0 && __atomic_load_n(&e->timer_due, __ATOMIC_ACQUIRE))
		return 1;
	return poll(&pfd, 1, 0) > 0;
}

int
sw_emu_stranded(const struct cqpoll_cq *cq)
{
	struct cqpoll_sw_emu_state *e = sw_emu_of(cq);
	uint32_t posted, covered, frontier;
	struct cqpoll_sw_cq *q;

	if (e == NULL)
		return -EINVAL;
	q = e->q;
	/*
	 * posted is stored after the claim's cover: read in the opposite order.
	 * A cover whose raise is still on its way counts as an event: it was
	 * committed when the arm was taken.
	 */
	posted = __atomic_load_n(&e->posted, __ATOMIC_ACQUIRE);
	covered = (uint32_t)__atomic_load_n(&q->arm_cover, __ATOMIC_ACQUIRE);
	frontier = (int32_t)(covered - q->ci) > 0 ? covered : q->ci;
	if ((int32_t)(posted - frontier) <= 0)
		return 0;
	/* A pending event wakes the consumer, which then polls everything. */
	return event_pending(e) ? 0 : 1;
}

int
cqpoll_sw_emu_set_hook(struct cqpoll_cq *cq, enum cqpoll_sw_hook_point point,
		       void (*fn)(void *arg), void *arg)
{
	struct cqpoll_sw_emu_state *e = sw_emu_of(cq);

	if (e == NULL || (unsigned int)point >= CQPOLL_SW_HOOK_COUNT)
		return -EINVAL;
	e->hook[point] = fn;
	e->hook_arg[point] = arg;
	return 0;
}

static const char *
fail_cause(int error)
{
	switch (error) {
	case -EOVERFLOW:
		return "sw-emu: CQ overrun injected";
	case -ENODEV:
		return "sw-emu: device fatal injected";
	case -ENETDOWN:
		return "sw-emu: port error injected, work flushed";
	case -ESHUTDOWN:
		return "sw-emu: peer shutdown injected";
	default:
		return "sw-emu: failure injected";
	}
}

int
cqpoll_sw_emu_fail(struct cqpoll_cq *cq, int error, const uint64_t *flush,
		   unsigned int n_flush, uint32_t flags)
{
	struct cqpoll_completion c = { .status = CQPOLL_STATUS_WR_FLUSH_ERR };
	struct cqpoll_sw_emu_state *e = sw_emu_of(cq);
	const uint64_t one = 1;
	unsigned int i;
	int r;

	if (e == NULL || error >= 0 || (n_flush != 0 && flush == NULL) ||
	    (flags & ~CQPOLL_SW_EMU_FAIL_F_SILENT) != 0)
		return -EINVAL;
	if (emu_error(e) != 0)
		return -EALREADY;
	/* Outstanding work first, as a QP in error flushes it, in order. */
	for (i = 0; i < n_flush; i++) {
		c.wr_id = flush[i];
		r = cqpoll_sw_post(cq, &c);
		if (r < 0)
			return r;
	}
	__atomic_store_n(&e->error, error, __ATOMIC_RELEASE);
	if (flags & CQPOLL_SW_EMU_FAIL_F_SILENT)
		return 0;
	/*
	 * The device's async report: the core learns the state at once, and
	 * whoever sleeps on the CQ wakes up (its event fd, as a kernel CQ's
	 * event handler would run).
	 */
	cqpoll_cq_fail(cq, error, fail_cause(error));
	if (write(e->q->efd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 0;
}
