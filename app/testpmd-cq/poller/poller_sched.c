/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --groups=N: N poll groups (group j has CQs j, j + N, ...) on the
 * --pollers lcores, placed by the consolidating scheduler (cqpoll_sched.h)
 * and moved with the group move API. Each poller runs the groups it holds
 * as an lcore runs several: busy mode with cold members, and when none has
 * work a prepared sleep on every one in the poller's own epoll set, with
 * its mailbox (an eventfd) beside them. Poller 0 steps the scheduler every
 * SCHED_INTERVAL_NS on each group's load read from its counters and asks
 * for the moves it decides; the owner releases a group at its next safe
 * point and mails it to its new poller, which adopts it. After the
 * generator is done the pollers stop moving, take their mail and drain the
 * groups they hold. Each poller's groups at the end of the traffic and the
 * wake-ups of its epoll wait are printed (one "sched:" line).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <rte_pause.h>

#include <cqpoll_sched.h>

#include "params.h"
#include "poller_sched.h"

#define SCHED_INTERVAL_NS 10000000ull
#define DRAIN_LIMIT_NS TPCQ_NS_PER_S

int
tpcq_sched_fail(struct tpcq_result *res, const char *call, int err)
{
	if (res->error == 0) {
		res->error = err;
		res->error_call = call;
	}
	return err;
}

void
tpcq_sched_on_completions(struct cqpoll_cq *cq, const struct cqpoll_completion *c,
	       unsigned int n, void *arg)
{
	struct sched_cq *sc = arg;
	struct tpcq_run *run = sc->sg->run;

	uint64_t end;

	(void)cq;
	tpcq_check_burst(run, sc->sg->res, &sc->check, c, n);
	__atomic_fetch_add(&run->consumed, n, __ATOMIC_RELEASE);
	/* --work-ns: the application's handler, spun before the next poll. */
	if (run->params->work_ns != 0) {
		end = tpcq_now_ns(CLOCK_MONOTONIC) + (uint64_t)run->params->work_ns * n;
		while (tpcq_now_ns(CLOCK_MONOTONIC) < end)
			rte_pause();
	}
}

void
tpcq_sched_mail(struct runner *to, unsigned int gi)
{
	uint64_t one = 1;

	pthread_mutex_lock(&to->lock);
	to->mbox[to->nmbox++] = gi;
	pthread_mutex_unlock(&to->lock);
	if (write(to->mbox_fd, &one, sizeof(one)) != sizeof(one))
		tpcq_sched_fail(to->res, "write(mailbox)", -errno);
}

static int
take_mail(struct runner *r)
{
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned int in[TPCQ_POLLERS_MAX], n, i, k, gi;
	struct sched_group *sg;
	uint64_t v;
	int a;

	if (read(r->mbox_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return tpcq_sched_fail(r->res, "read(mailbox)", -errno);
	pthread_mutex_lock(&r->lock);
	n = r->nmbox;
	memcpy(in, r->mbox, n * sizeof(in[0]));
	r->nmbox = 0;
	pthread_mutex_unlock(&r->lock);
	for (i = 0; i < n; i++) {
		gi = in[i];
		sg = &r->ctx->groups[gi];
		a = cqpoll_group_adopt(sg->g);
		if (a < 0)
			return tpcq_sched_fail(r->res, "cqpoll_group_adopt", a);
		sg->res = r->res;
		for (k = 0; k < sg->ncqs; k++)
			tpcq_check_bind(&sg->cqs[k].check, r->res);
		/* Moved asleep: finish the sleep here; the poller polls on. */
		if (a == 1 && (a = cqpoll_group_sleep_finish(sg->g)) < 0)
			return tpcq_sched_fail(r->res, "cqpoll_group_sleep_finish", a);
		r->owned[gi] = true;
		ev.data.u32 = gi;
		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, cqpoll_group_event_fd(sg->g),
			      &ev) != 0)
			return tpcq_sched_fail(r->res, "epoll_ctl(ADD)", -errno);
	}
	return 0;
}

/* Hand over the groups whose move is pending. */
static int
serve_moves(struct runner *r)
{
	struct sched_ctx *ctx = r->ctx;
	struct sched_group *sg;
	unsigned int gi, to;
	int v;

	for (gi = 0; gi < ctx->ngroups; gi++) {
		sg = &ctx->groups[gi];
		if (!r->owned[gi] || cqpoll_group_move_pending(sg->g) != 1)
			continue;
		to = __atomic_load_n(&sg->dest, __ATOMIC_ACQUIRE);
		if (to == r->id)
			continue;
		if (epoll_ctl(r->epfd, EPOLL_CTL_DEL, cqpoll_group_event_fd(sg->g),
			      NULL) != 0)
			return tpcq_sched_fail(r->res, "epoll_ctl(DEL)", -errno);
		v = cqpoll_group_release(sg->g);
		if (v != 0)
			return tpcq_sched_fail(r->res, "cqpoll_group_release", v);
		r->owned[gi] = false;
		__atomic_fetch_add(&ctx->moves, 1, __ATOMIC_RELAXED);
		tpcq_sched_mail(&ctx->runners[to], gi);
	}
	return 0;
}

/* Poller 0: the loads of the last interval in, the moves asked for. */
static int
sched_step(struct runner *r, struct cqpoll_sched *s,
	   struct cqpoll_group_stats *prev, uint64_t interval_ns)
{
	struct sched_ctx *ctx = r->ctx;
	struct cqpoll_sched_move mv[TPCQ_POLLERS_MAX];
	struct cqpoll_group_stats cur;
	unsigned int gi;
	double busy;
	int n, i, v;

	for (gi = 0; gi < ctx->ngroups; gi++) {
		cqpoll_group_stats_get(ctx->groups[gi].g, &cur);
		v = cqpoll_sched_load_from_stats(&prev[gi], &cur, interval_ns, &busy);
		if (v == 0)
			v = cqpoll_sched_load_set(s, gi, busy);
		if (v != 0)
			return tpcq_sched_fail(r->res, "cqpoll_sched_load_set", v);
		prev[gi] = cur;
	}
	n = cqpoll_sched_step(s, mv, TPCQ_POLLERS_MAX);
	if (n < 0)
		return tpcq_sched_fail(r->res, "cqpoll_sched_step", n);
	for (i = 0; i < n; i++) {
		__atomic_store_n(&ctx->groups[mv[i].group].dest, mv[i].to,
				 __ATOMIC_RELEASE);
		v = cqpoll_group_move_request(ctx->groups[mv[i].group].g);
		if (v != 0)
			return tpcq_sched_fail(r->res, "cqpoll_group_move_request", v);
	}
	return 0;
}

/* Every group the poller holds, once; prepared sleeps if none had work. */
static int
iterate(struct runner *r, int timeout_ms)
{
	struct sched_ctx *ctx = r->ctx;
	struct epoll_event evs[TPCQ_POLLERS_MAX + 1];
	unsigned int gi, owned = 0, asleep = 0;
	int v, found = 0;

	for (gi = 0; gi < ctx->ngroups; gi++) {
		if (!r->owned[gi])
			continue;
		owned++;
		v = cqpoll_group_run_once(ctx->groups[gi].g);
		if (v < 0 && v != -EINTR)
			return tpcq_sched_fail(r->res, "cqpoll_group_run_once", v);
		found += v > 0 ? v : 0;
	}
	for (gi = 0; found == 0 && gi < ctx->ngroups; gi++) {
		if (!r->owned[gi])
			continue;
		v = cqpoll_group_sleep_prepare(ctx->groups[gi].g);
		if (v == 0) {
			r->sleeping[gi] = true;
			asleep++;
		} else if (v > 0) {
			found += v;
		} else if (v != -EAGAIN) {
			return tpcq_sched_fail(r->res, "cqpoll_group_sleep_prepare", v);
		}
	}
	if (found == 0 && asleep == owned) {
		v = epoll_wait(r->epfd, evs, TPCQ_POLLERS_MAX + 1, timeout_ms);
		if (v < 0 && errno != EINTR)
			return tpcq_sched_fail(r->res, "epoll_wait", -errno);
		if (v > 0) {
			r->wakeups++;
			r->wakeups_late += tpcq_now_ns(CLOCK_MONOTONIC) >= r->t_half;
		}
	}
	for (gi = 0; gi < ctx->ngroups; gi++) {
		if (!r->owned[gi] || !r->sleeping[gi])
			continue;
		r->sleeping[gi] = false;
		v = cqpoll_group_sleep_finish(ctx->groups[gi].g);
		if (v < 0)
			return tpcq_sched_fail(r->res, "cqpoll_group_sleep_finish", v);
	}
	return 0;
}

/* CQ k of the run receives its share of what was posted. */
static uint64_t
posted_to(uint64_t posted, unsigned int k, unsigned int n)
{
	return posted > k && k < n ? (posted - k + n - 1) / n : 0;
}

static bool
drained(const struct runner *r, uint64_t posted)
{
	const struct sched_ctx *ctx = r->ctx;
	const struct sched_group *sg;
	unsigned int gi, i;

	for (gi = 0; gi < ctx->ngroups; gi++) {
		if (!r->owned[gi])
			continue;
		sg = &ctx->groups[gi];
		for (i = 0; i < sg->ncqs; i++)
			if (sg->cqs[i].check.received <
			    posted_to(posted, sg->cqs[i].check.index,
				      ctx->run->traffic_cqs))
				return false;
	}
	return true;
}

/* What the generator posted to the groups this poller holds, read. */
static int
drain(struct runner *r)
{
	struct sched_ctx *ctx = r->ctx;
	struct sched_group *sg;
	uint64_t posted, limit, want;
	unsigned int gi, i;
	int v, any;

	posted = __atomic_load_n(&ctx->run->posted, __ATOMIC_ACQUIRE);
	limit = tpcq_now_ns(CLOCK_MONOTONIC) + DRAIN_LIMIT_NS +
		ctx->run->params->faults.visibility_delay_ns;
	while (!drained(r, posted) && tpcq_now_ns(CLOCK_MONOTONIC) < limit)
		for (gi = 0; gi < ctx->ngroups; gi++)
			if (r->owned[gi] &&
			    (v = cqpoll_group_run_once(ctx->groups[gi].g)) < 0)
				return tpcq_sched_fail(r->res, "cqpoll_group_run_once", v);
	/* Anything still there was delivered twice or never posted. */
	do {
		any = 0;
		for (gi = 0; gi < ctx->ngroups; gi++) {
			if (!r->owned[gi])
				continue;
			v = cqpoll_group_run_once(ctx->groups[gi].g);
			if (v < 0)
				return tpcq_sched_fail(r->res, "cqpoll_group_run_once", v);
			any += v;
		}
	} while (any > 0);
	for (gi = 0; gi < ctx->ngroups; gi++) {
		if (!r->owned[gi])
			continue;
		sg = &ctx->groups[gi];
		for (i = 0; i < sg->ncqs; i++) {
			want = posted_to(posted, sg->cqs[i].check.index,
					 ctx->run->traffic_cqs);
			if (sg->cqs[i].check.received < want)
				r->res->missing += want - sg->cqs[i].check.received;
		}
	}
	return 0;
}

void
tpcq_sched_wake_all(struct sched_ctx *ctx)
{
	uint64_t one = 1;
	unsigned int k;

	for (k = 0; k < ctx->nrunners; k++)
		if (write(ctx->runners[k].mbox_fd, &one, sizeof(one)) != sizeof(one))
			tpcq_sched_fail(ctx->runners[k].res, "write(mailbox)", -errno);
}

static int
runner_loop(struct runner *r)
{
	struct sched_ctx *ctx = r->ctx;
	struct tpcq_run *run = ctx->run;
	struct cqpoll_sched_conf conf = { .nb_lcores = ctx->nrunners,
					  .nb_groups = ctx->ngroups };
	struct cqpoll_group_stats prev[TPCQ_POLLERS_MAX];
	struct cqpoll_sched *s = NULL;
	uint64_t now, last = 0, next = 0;
	unsigned int gi;
	int timeout;

	/* Poller 0 watches the generator's end, and steps the scheduler. */
	if (r->id == 0 && !run->params->groups_static) {
		s = cqpoll_sched_create(&conf);
		if (s == NULL)
			return tpcq_sched_fail(r->res, "cqpoll_sched_create", -errno);
		for (gi = 0; gi < ctx->ngroups; gi++)
			cqpoll_group_stats_get(ctx->groups[gi].g, &prev[gi]);
	}
	last = tpcq_now_ns(CLOCK_MONOTONIC);
	next = last + SCHED_INTERVAL_NS;
	/* The second half of the traffic: its wake-ups are counted apart. */
	r->t_half = last + (uint64_t)(run->params->duration_s * 0.5e9);
	if (take_mail(r) != 0)
		goto out;
	if (__atomic_add_fetch(&run->ready, 1, __ATOMIC_ACQ_REL) == run->npollers)
		__atomic_store_n(&run->start, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ctx->done, __ATOMIC_ACQUIRE) &&
	       r->res->error == 0) {
		if (take_mail(r) != 0 || serve_moves(r) != 0)
			break;
		timeout = -1;
		if (r->id == 0) {
			if (__atomic_load_n(&run->gen_done, __ATOMIC_ACQUIRE) ||
			    __atomic_load_n(&run->stop, __ATOMIC_RELAXED)) {
				__atomic_store_n(&ctx->done, true, __ATOMIC_RELEASE);
				tpcq_sched_wake_all(ctx);
				break;
			}
			now = tpcq_now_ns(CLOCK_MONOTONIC);
			if (now >= next) {
				if (s != NULL && sched_step(r, s, prev, now - last) != 0)
					break;
				last = now;
				next = now + SCHED_INTERVAL_NS;
			}
			timeout = (int)((next - now) / 1000000) + 1;
		}
		if (iterate(r, timeout) != 0)
			break;
	}
out:
	cqpoll_sched_destroy(s);
	if (r->res->error != 0) {
		/* The others stop too, or they would wait for this one below. */
		__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
		__atomic_store_n(&ctx->done, true, __ATOMIC_RELEASE);
		tpcq_sched_wake_all(ctx);
	}
	/* No release after this: once every poller is here, mail is final. */
	__atomic_add_fetch(&ctx->stopped, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&ctx->stopped, __ATOMIC_ACQUIRE) < ctx->nrunners)
		rte_pause();
	if (take_mail(r) != 0)
		return r->res->error;
	/* Held when the traffic ended, the groups then in transit included. */
	for (gi = 0; gi < ctx->ngroups; gi++)
		r->held += r->owned[gi];
	return drain(r);
}

int
tpcq_sched_runner_main(void *arg)
{
	struct runner *r = arg;
	struct sched_ctx *ctx = r->ctx;
	struct tpcq_clocks c0;
	int v;

	r->res->grouped = true;
	tpcq_clocks_read(&c0, true);
	tpcq_recovery_watch(ctx->run, r->res, ctx->all_cqs, ctx->all_cks,
			    ctx->run->ncqs);
	v = runner_loop(r);
	tpcq_recovery_unwatch();
	if (v < 0)
		__atomic_store_n(&ctx->run->stop, true, __ATOMIC_RELAXED);
	tpcq_poller_clocks(r->res, &c0);
	return v;
}

