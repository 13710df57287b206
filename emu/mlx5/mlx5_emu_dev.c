/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated device's CQ context: reading arm doorbells from the UAR page,
 * deciding when an arm fires (contract §5.3, §10), delivering events, and the
 * ground-truth oracle.
 *
 * How the device sees a doorbell without a hook in the driver. The driver
 * stores 8 bytes at UAR + 0x20, exactly as on hardware. The device takes the
 * word with an atomic exchange against 0 (a real doorbell is never 0: the
 * CQN is not), so it sees every doorbell once, and it looks at two moments:
 *  - after writing each CQE, in cqpoll_mlx5_emu_post();
 *  - periodically, from the device thread (every doorbell_poll_us), so that an
 *    arm that must fire at once does even when no CQE follows.
 *
 * Why no wake-up is lost in the gap between the store and the device seeing
 * it. Level (hardware) arms carry the consumer index: whenever the device
 * reads the arm, it compares that index with its producer index, so any CQE
 * written before or after the store, at or past the index, fires it; the
 * delay only delays the event. Until the device reads the doorbell, the
 * oracle reads it too (without consuming it) and counts its effect as due.
 *
 * Lazy (edge) arms fire only for CQEs written after the arm, and "after" is
 * decided by a Dekker pair. The producer stores op_own, fences, then
 * exchanges the doorbell; the driver stores the doorbell, fences (mfence in
 * cqpoll_mlx5_arm), then the core re-polls (loads op_own). One of the two
 * sees the other: if the producer's check after CQE p found no doorbell, the
 * driver's re-poll sees p, so p need not fire; CQEs written after the last
 * check that found nothing may postdate the store, so an arm covers them
 * (arm_from = checked_pi). The device is conservative (a spurious event at
 * worst), never optimistic.
 */

#include <errno.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "cqpoll_emu.h"
#include "mlx5_emu_private.h"
#include "mlx5_prm.h"
#include "verbs_emu_private.h"

static uint64_t *
uar_doorbell(struct cqpoll_mlx5_emu_dev *dev)
{
	return (uint64_t *)(void *)((uint8_t *)dev->dv.cq_uar + MLX5_CQ_DOORBELL);
}

/*
 * Would an arm (state, ci, from) fire with the CQEs written so far?
 * Entries at or past ci count within one ring's distance: the window
 * [ci, ci + N] of §5.3 ([INFERRED]; §12 leaves the comparison open). A ci
 * far behind (a stale ci after more than N direct polls) or ahead fires for
 * nothing: the loss UCX #11728 reports.
 */
static int
would_fire(const struct cqpoll_mlx5_emu_dev *dev, enum cqpoll_mlx5_emu_state state,
	   uint32_t ci, uint32_t from)
{
	uint32_t past = (dev->pi - ci) & CQPOLL_MLX5_CI_MASK, lazy_past;

	if (state == EMU_DISARMED || past == 0 || past > dev->dv.cqe_cnt)
		return 0;
	if (dev->lazy) {
		lazy_past = dev->pi - from;
		if (lazy_past < past)
			past = lazy_past;
		if (past == 0)
			return 0;
	}
	/*
	 * Solicited-only: a solicited or error CQE in range. Whether one
	 * written before the arm fires it is [UNCONFIRMED] (§5.3, §12): the
	 * device assumes not, the weaker choice, which the driver's edge
	 * treatment of such arms must cover.
	 */
	if (state == EMU_ARMED_SOL) {
		lazy_past = dev->pi - from;
		if (lazy_past < past)
			past = lazy_past;
		return dev->have_sol && dev->pi - dev->last_sol <= past;
	}
	return 1;
}

/* Queue one event on the shared channel: the channel fd turns readable. */
static void
channel_raise(struct cqpoll_mlx5_emu_dev *dev)
{
	cqpoll_verbs_emu_deliver(emu_cq(dev->ev_cq), 1);
}

static int
deliver(struct cqpoll_mlx5_emu_dev *dev)
{
	struct itimerspec its = { 0 };
	uint64_t one = 1;

	if (dev->ev_cq != NULL) {
		/* A delay on a channel: the device's check queues it when due. */
		if (dev->event_delay_us == 0) {
			channel_raise(dev);
		} else {
			if (__atomic_exchange_n(&dev->timer_due, 1, __ATOMIC_ACQ_REL) != 0)
				return 0;
			dev->due_ns = cqpoll_now_ns() + (uint64_t)dev->event_delay_us * 1000u;
		}
	} else if (dev->tfd >= 0) {
		/*
		 * One due already: the consumer polls after taking it, so one
		 * event covers both. The flag, not timerfd_gettime(), says "due":
		 * the kernel reports an expired timer as disarmed before its fd
		 * turns readable.
		 */
		if (__atomic_exchange_n(&dev->timer_due, 1, __ATOMIC_ACQ_REL) != 0)
			return 0;
		its.it_value.tv_sec = dev->event_delay_us / 1000000;
		its.it_value.tv_nsec = (long)(dev->event_delay_us % 1000000) * 1000;
		if (timerfd_settime(dev->tfd, 0, &its, NULL) < 0)
			return -errno;
	} else if (write(dev->efd, &one, sizeof(one)) != sizeof(one)) {
		return -errno;
	}
	dev->fired++;
	dev->stats.events++;
	return 0;
}

void
cqpoll_mlx5_emu_dev_evaluate(struct cqpoll_mlx5_emu_dev *dev)
{
	if (!would_fire(dev, dev->state, dev->arm_ci, dev->arm_from))
		return;
	/* One-shot: armed -> fired (§5.3 point 1). */
	dev->state = EMU_DISARMED;
	deliver(dev);
}

/*
 * Decode a doorbell as the device would act on it: the state it would set,
 * or EMU_DISARMED for one it ignores. Counting is left to the caller.
 */
static enum cqpoll_mlx5_emu_state
decode_arm(const struct cqpoll_mlx5_emu_dev *dev, uint64_t word,
	   struct cqpoll_mlx5_doorbell *d, int *bad, int *stale)
{
	*d = cqpoll_mlx5_doorbell_decode(word);
	*bad = d->cqn != dev->dv.cqn || d->cmd > 1 || d->reserved_bits != 0;
	*stale = !*bad && d->sn != (dev->fired & 3);
	if (*bad || (*stale && dev->strict_sn))
		return EMU_DISARMED;
	return d->cmd != 0 ? EMU_ARMED_SOL : EMU_ARMED;
}

int
cqpoll_mlx5_emu_dev_check(struct cqpoll_mlx5_emu_dev *dev)
{
	struct cqpoll_mlx5_doorbell d;
	enum cqpoll_mlx5_emu_state st;
	uint32_t rec;
	uint64_t word;
	int bad, stale;

	/* A CQ in error raises nothing more: no doorbell is even read. */
	if (dev->broken)
		return 0;
	if (dev->ev_cq != NULL && __atomic_load_n(&dev->timer_due, __ATOMIC_ACQUIRE) &&
	    cqpoll_now_ns() >= dev->due_ns) {
		/* Queued before "due" clears: the oracle sees one or the other. */
		channel_raise(dev);
		__atomic_store_n(&dev->timer_due, 0, __ATOMIC_RELEASE);
	}
	/* Held compressed completions are written once their window closed. */
	if (dev->nzip != 0 && cqpoll_now_ns() - dev->zip_since >= CQPOLL_MLX5_EMU_ZIP_WINDOW_NS)
		cqpoll_mlx5_emu_zip_flush(dev);
	/* Our last CQE's op_own store before the doorbell load: see above. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	word = __atomic_exchange_n(uar_doorbell(dev), 0, __ATOMIC_SEQ_CST);
	if (word == 0) {
		dev->checked_pi = dev->pi;
		return 0;
	}
	dev->stats.doorbells++;
	st = decode_arm(dev, word, &d, &bad, &stale);
	if (bad) {
		dev->stats.bad_doorbells++;
	} else {
		rec = be32toh(__atomic_load_n(&dev->dv.dbrec[CQPOLL_MLX5_DBREC_ARM], __ATOMIC_RELAXED));
		if (rec != cqpoll_mlx5_arm_word(d.sn, d.cmd << 24, d.ci))
			dev->stats.dbrec_mismatches++;
		if (stale)
			dev->stats.stale_sn_arms++;
	}
	if (st != EMU_DISARMED) {
		/* Re-arming replaces index and command (§5.3). */
		dev->stats.arms++;
		dev->state = st;
		dev->arm_ci = d.ci;
		dev->arm_from = dev->checked_pi;
		cqpoll_mlx5_emu_dev_evaluate(dev);
	}
	dev->checked_pi = dev->pi;
	return 1;
}

static int
event_pending(struct cqpoll_mlx5_emu_dev *dev)
{
	struct pollfd pfd = { .fd = dev->epfd, .events = POLLIN };

	/* Only the consumer takes events: both stay true until it does. */
	if ((dev->tfd >= 0 || dev->ev_cq != NULL) &&
	    __atomic_load_n(&dev->timer_due, __ATOMIC_ACQUIRE))
		return 1;
	/* On a channel the driver's demux may hold it: see emu_stranded(). */
	if (dev->ev_cq != NULL)
		return cqpoll_verbs_emu_queued(dev->ev_cq) != 0;
	return poll(&pfd, 1, 0) > 0;
}

/*
 * The oracle, on the consumer thread: 1 if a CQE exists at or past the
 * consumer index the driver published (dbrec[0], written after every burst
 * that consumed), and no event is pending, on its way, or due from an arm
 * the device has not read yet.
 */
int
cqpoll_mlx5_emu_dev_stranded(struct cqpoll_mlx5_emu_dev *dev)
{
	struct cqpoll_mlx5_doorbell d;
	enum cqpoll_mlx5_emu_state st;
	uint32_t ci;
	uint64_t word;
	int r = 1, bad, stale;

	pthread_mutex_lock(&dev->lock);
	ci = be32toh(__atomic_load_n(&dev->dv.dbrec[CQPOLL_MLX5_DBREC_SET_CI], __ATOMIC_ACQUIRE)) &
	     CQPOLL_MLX5_CI_MASK;
	if (((dev->pi - ci) & CQPOLL_MLX5_CI_MASK) == 0 || dev->broken ||
	    event_pending(dev)) {
		r = 0;
	} else {
		/* A doorbell in flight: judge it as the device will. */
		word = __atomic_load_n(uar_doorbell(dev), __ATOMIC_SEQ_CST);
		if (word != 0) {
			st = decode_arm(dev, word, &d, &bad, &stale);
			if (would_fire(dev, st, d.ci, dev->checked_pi))
				r = 0;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return r;
}

int
cqpoll_mlx5_emu_dev_raise_error(struct cqpoll_mlx5_emu_dev *dev, int32_t err)
{
	uint64_t one = 1;

	dev->broken = 1;
	dev->broken_err = err;
	/* As an async CQ error: the driver learns it, a sleeper wakes up. */
	__atomic_store_n(dev->drv_err, err, __ATOMIC_RELEASE);
	if (write(dev->errfd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 0;
}

static void *
device_thread(void *arg)
{
	struct cqpoll_mlx5_emu_dev *dev = arg;
	struct timespec ts = {
		.tv_sec = dev->poll_ns / 1000000000u,
		.tv_nsec = (long)(dev->poll_ns % 1000000000u),
	};

	/* The default 50 us slack would dwarf the period. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!__atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&dev->lock);
		cqpoll_mlx5_emu_dev_check(dev);
		pthread_mutex_unlock(&dev->lock);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int
cqpoll_mlx5_emu_dev_start(struct cqpoll_mlx5_emu_dev *dev)
{
	int r = pthread_create(&dev->thread, NULL, device_thread, dev);

	if (r != 0)
		return -r;
	dev->thread_started = 1;
	return 0;
}

void
cqpoll_mlx5_emu_dev_stop(struct cqpoll_mlx5_emu_dev *dev)
{
	if (!dev->thread_started)
		return;
	__atomic_store_n(&dev->stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev->thread, NULL);
	dev->thread_started = 0;
}
