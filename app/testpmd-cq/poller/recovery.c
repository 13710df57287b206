/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Late or lost: the safety net's recoveries on devices without host
 * timestamps (io_uring, UCX, libfabric, ethdev), told apart by the post
 * times the generator keeps.
 *
 * The library counts a recovery (a timeout, or a polling group's net, that
 * found work no event announced) in timeout_recoveries whenever it cannot
 * tell that the work landed during the sleep: with no host timestamp it
 * cannot, and a generator preempted for a whole timeout on a loaded machine
 * posts just as the timeout runs out. Here the poller's thread sees each
 * recovery through the trace hook, right before the completions it found are
 * checked, so the CQ's next expected sequence number is the oldest found,
 * and the generator recorded when that post began and returned
 * (run->post_ns, run->post_end_ns). Its deadline:
 *   after a sleep   the sleep's start (the sleep hook, before the thread
 *                   blocks) plus half its timeout, the earliest the safety
 *                   net's alarm ends it: a wait returns an event raised
 *                   before its timeout, so work whose post returned before
 *                   then, found by the timeout, lost its event;
 *   while polling   a group's net looks at its cold CQs once per timeout,
 *                   after the events at hand: work older than a timeout
 *                   when found lost its event (the library's own rule for
 *                   completions with a timestamp).
 * A post that returned before its deadline less CQPOLL_RJ_SLACK_NS: lost
 * (recoveries_lost). Returned after, or still under way: late
 * (recoveries_late). The rule and the hook are
 * emu/judge/cqpoll_recovery_judge.h's, which the tests use too; here, the
 * generator's post records and the result's counts. Tests on real queues expect recoveries_lost=0; their
 * naive controls expect lost ones.
 */
#include <time.h>

#include <cqpoll_recovery_judge.h>

#include "poller.h"
#include "run.h"
#include "testpmd_cq.h"

/* The CQs of the poller on this thread. */
struct watch {
	struct cqpoll_rj_watch rj;
	struct tpcq_run *run;
	struct tpcq_result *res;
	struct cqpoll_cq *const *cqs;  /* cqs[i] is checked by *cks[i] */
	struct tpcq_check *const *cks;
	unsigned int n;
};

static __thread struct watch tls_watch;

static int
post_end(void *arg, const struct cqpoll_cq *cq, uint64_t *t_end)
{
	struct watch *w = arg;
	struct tpcq_run *run = w->run;
	const struct tpcq_check *ck;
	uint64_t slot, t_begin;
	unsigned int i;

	if (run == NULL || run->post_ns == NULL)
		return 0;
	for (i = 0; i < w->n && w->cqs[i] != cq; i++)
		;
	if (i == w->n)
		return 0;
	ck = w->cks[i];
	slot = (tpcq_check_expected(ck) * run->traffic_cqs + ck->index) & run->post_ns_mask;
	t_begin = __atomic_load_n(&run->post_ns[slot], __ATOMIC_ACQUIRE);
	*t_end = __atomic_load_n(&run->post_end_ns[slot], __ATOMIC_ACQUIRE);
	/* An end older than its begin is the slot's previous post. */
	if (*t_end < t_begin)
		*t_end = 0;
	return 1;
}

static void
verdict(void *arg, const struct cqpoll_cq *cq, enum cqpoll_rj_verdict v,
	uint64_t early_ns)
{
	struct watch *w = arg;

	(void)cq, (void)early_ns;
	if (v == CQPOLL_RJ_LOST)
		w->res->recoveries_lost++;
	else
		w->res->recoveries_late++;
}

void
tpcq_recovery_watch(struct tpcq_run *run, struct tpcq_result *res,
		    struct cqpoll_cq *const *cqs, struct tpcq_check *const *cks,
		    unsigned int n)
{
	tls_watch = (struct watch){ .run = run, .res = res, .cqs = cqs,
				    .cks = cks, .n = n };
	tls_watch.rj = (struct cqpoll_rj_watch){ .post_end = post_end,
		.verdict = verdict, .arg = &tls_watch };
	cqpoll_rj_watch(&tls_watch.rj);
}

void
tpcq_recovery_unwatch(void)
{
	cqpoll_rj_unwatch();
	tls_watch = (struct watch){ .run = NULL };
}
