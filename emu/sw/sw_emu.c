/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault points of the emulated software device: delays inside the arm and
 * before an entry turns visible, late events through a timerfd, duplicate and
 * spurious events, arm hooks, and the ground-truth oracle.
 */

#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sw_private.h"

#define SW_EMU_SEED_DEFAULT 0x9e3779b97f4a7c15ull

static int
faults_valid(const struct cqpoll_sw_faults *f)
{
	return f->visibility_delay_pct <= 100 && f->spurious_event_pct <= 100 &&
	       f->duplicate_event_pct <= 100 && f->arm_delay_pct <= 100;
}

int
sw_emu_init(struct cqpoll_sw_cq *q, const struct cqpoll_sw_emu_conf *c)
{
	struct cqpoll_sw_emu_state *e = &q->emu;
	struct epoll_event ev = { .events = EPOLLIN };

	e->tfd = e->epfd = -1;
	if (!faults_valid(&c->faults))
		return -EINVAL;
	e->faults = c->faults;
	e->device_rng = c->faults.seed != 0 ? c->faults.seed : SW_EMU_SEED_DEFAULT;
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

void
sw_emu_fini(struct cqpoll_sw_cq *q)
{
	if (q->emu.epfd >= 0)
		close(q->emu.epfd);
	if (q->emu.tfd >= 0)
		close(q->emu.tfd);
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

void
sw_emu_arm_begin(struct cqpoll_sw_cq *q)
{
	run_hook(&q->emu, CQPOLL_SW_HOOK_BEFORE_ARM);
	arm_delay(&q->emu);
}

void
sw_emu_arm_end(struct cqpoll_sw_cq *q)
{
	arm_delay(&q->emu);
	run_hook(&q->emu, CQPOLL_SW_HOOK_AFTER_ARM);
}

int
sw_emu_keeps_armed(struct cqpoll_sw_cq *q)
{
	return q->emu.faults.report_missed_keeps_armed != 0;
}

void
sw_emu_post_begin(struct cqpoll_sw_cq *q)
{
	struct cqpoll_sw_emu_state *e = &q->emu;

	if (cqpoll_emu_chance(&e->device_rng, e->faults.visibility_delay_pct))
		cqpoll_emu_spin_ns(cqpoll_emu_rand(&e->device_rng) %
				  (e->faults.visibility_delay_ns + 1ull));
}

void
sw_emu_post_visible(struct cqpoll_sw_cq *q)
{
	run_hook(&q->emu, CQPOLL_SW_HOOK_BEFORE_PUBLISH);
}

int
sw_emu_post_end(struct cqpoll_sw_cq *q, int claimed, int r, uint32_t pi)
{
	struct cqpoll_sw_emu_state *e = &q->emu;

	if (!claimed && cqpoll_emu_chance(&e->device_rng, e->faults.spurious_event_pct))
		r = cqpoll_sw_deliver(q, 1);
	/* After the raise: the oracle never sees an entry whose raise is pending. */
	__atomic_store_n(&e->posted, pi, __ATOMIC_RELEASE);
	return r;
}

uint64_t
sw_emu_raise_count(struct cqpoll_sw_cq *q, int consumer)
{
	/* Raised on the device thread (post) or the consumer's (level arm). */
	uint64_t *rng = consumer ? &q->emu.consumer_rng : &q->emu.device_rng;

	return cqpoll_emu_chance(rng, q->emu.faults.duplicate_event_pct) ? 2 : 1;
}

int
sw_emu_deliver(struct cqpoll_sw_cq *q, uint64_t n)
{
	struct cqpoll_sw_emu_state *e = &q->emu;
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

int
sw_emu_event_fd(struct cqpoll_sw_cq *q)
{
	return q->emu.epfd;
}

int
sw_emu_event_get(struct cqpoll_sw_cq *q, uint64_t *n)
{
	struct cqpoll_sw_emu_state *e = &q->emu;
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
event_pending(struct cqpoll_sw_cq *q)
{
	struct pollfd pfd = { .fd = q->efd, .events = POLLIN };

	/* Only this (the consumer) thread takes events: both stay true until it does. */
	if (q->emu.tfd >= 0 && __atomic_load_n(&q->emu.timer_due, __ATOMIC_ACQUIRE))
		return 1;
	return poll(&pfd, 1, 0) > 0;
}

int
sw_emu_stranded(struct cqpoll_sw_cq *q)
{
	uint32_t posted, covered, frontier;

	/*
	 * posted is stored after the claim's cover: read in the opposite order.
	 * A cover whose raise is still on its way counts as an event: it was
	 * committed when the arm was taken.
	 */
	posted = __atomic_load_n(&q->emu.posted, __ATOMIC_ACQUIRE);
	covered = (uint32_t)__atomic_load_n(&q->arm_cover, __ATOMIC_ACQUIRE);
	frontier = (int32_t)(covered - q->ci) > 0 ? covered : q->ci;
	if ((int32_t)(posted - frontier) <= 0)
		return 0;
	/* A pending event wakes the consumer, which then polls everything. */
	return event_pending(q) ? 0 : 1;
}

int
cqpoll_sw_emu_set_hook(struct cqpoll_cq *cq, enum cqpoll_sw_hook_point point,
		       void (*fn)(void *arg), void *arg)
{
	struct cqpoll_sw_cq *q;

	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_sw_ops ||
	    (unsigned int)point >= CQPOLL_SW_HOOK_COUNT)
		return -EINVAL;
	q = cqpoll_cq_priv(cq);
	q->emu.hook[point] = fn;
	q->emu.hook_arg[point] = arg;
	return 0;
}

int
sw_emu_error(struct cqpoll_sw_cq *q)
{
	/* Acquire: the flushed entries posted before it are visible too. */
	return __atomic_load_n(&q->emu.error, __ATOMIC_ACQUIRE);
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
	struct cqpoll_sw_cq *q;
	const uint64_t one = 1;
	unsigned int i;
	int r;

	if (cq == NULL || cqpoll_cq_driver(cq) != &cqpoll_sw_ops || error >= 0 ||
	    (n_flush != 0 && flush == NULL) ||
	    (flags & ~CQPOLL_SW_EMU_FAIL_F_SILENT) != 0)
		return -EINVAL;
	q = cqpoll_cq_priv(cq);
	if (sw_emu_error(q) != 0)
		return -EALREADY;
	/* Outstanding work first, as a QP in error flushes it, in order. */
	for (i = 0; i < n_flush; i++) {
		c.wr_id = flush[i];
		r = cqpoll_sw_post(cq, &c);
		if (r < 0)
			return r;
	}
	__atomic_store_n(&q->emu.error, error, __ATOMIC_RELEASE);
	if (flags & CQPOLL_SW_EMU_FAIL_F_SILENT)
		return 0;
	/*
	 * The device's async report: the core learns the state at once, and
	 * whoever sleeps on the CQ wakes up (its event fd, as a kernel CQ's
	 * event handler would run).
	 */
	cqpoll_cq_fail(cq, error, fail_cause(error));
	if (write(q->efd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 0;
}
