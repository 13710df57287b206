/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --groups=N: the groups (group j has CQs j, j + N, ...), handed round robin
 * to the pollers, the pollers' launch (poller 0 on the main lcore), their
 * results summed, and the "sched:" line (poller_sched.c runs them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "hist.h"
#include "params.h"
#include "poller_sched.h"

static int
setup_runner(struct sched_ctx *ctx, unsigned int k, struct tpcq_result *res)
{
	struct runner *r = &ctx->runners[k];
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = UINT32_MAX };

	r->ctx = ctx;
	r->id = k;
	r->res = res;
	pthread_mutex_init(&r->lock, NULL);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->mbox_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->epfd < 0 || r->mbox_fd < 0 ||
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->mbox_fd, &ev) != 0)
		return tpcq_sched_fail(res, "epoll_create1/eventfd", -errno);
	return 0;
}

/* Group gi: its CQs gi, gi + ngroups, ..., released to its first poller. */
static int
setup_group(struct sched_ctx *ctx, unsigned int gi, struct tpcq_result *res)
{
	const struct tpcq_params *p = ctx->run->params;
	struct cqpoll_group_conf conf = {
		.mode = CQPOLL_GROUP_MODE_BUSY,
		.wait_timeout_ms = (uint32_t)p->timeout_ms,
		.burst = p->burst,
	};
	struct sched_group *sg = &ctx->groups[gi];
	unsigned int i, k;
	int v;

	sg->run = ctx->run;
	sg->ncqs = (ctx->run->ncqs - gi + ctx->ngroups - 1) / ctx->ngroups;
	sg->cqs = calloc(sg->ncqs, sizeof(*sg->cqs));
	sg->g = cqpoll_group_create(&conf);
	if (sg->cqs == NULL || sg->g == NULL)
		return tpcq_sched_fail(res, "cqpoll_group_create", -ENOMEM);
	for (i = 0, k = gi; i < sg->ncqs; i++, k += ctx->ngroups) {
		sg->cqs[i].sg = sg;
		tpcq_check_init(&sg->cqs[i].check, ctx->run, res, k);
		ctx->all_cqs[k] = ctx->run->dcs[k].cq;
		ctx->all_cks[k] = &sg->cqs[i].check;
		v = cqpoll_group_add(sg->g, ctx->run->dcs[k].cq, tpcq_sched_on_completions,
				     &sg->cqs[i]);
		if (v < 0)
			return tpcq_sched_fail(res, "cqpoll_group_add", v);
	}
	/* As the scheduler starts: round robin. */
	sg->dest = gi % ctx->nrunners;
	v = cqpoll_group_release(sg->g);
	if (v != 0)
		return tpcq_sched_fail(res, "cqpoll_group_release", v);
	tpcq_sched_mail(&ctx->runners[sg->dest], gi);
	return 0;
}

static void
report(const struct sched_ctx *ctx, const struct tpcq_result *const *rs)
{
	unsigned int k;

	printf("sched: placement=%s groups=%u pollers=%u moves=%llu",
	       ctx->run->params->groups_static ? "static" : "cqpoll_sched",
	       ctx->ngroups, ctx->nrunners, (unsigned long long)ctx->moves);
	for (k = 0; k < ctx->nrunners; k++)
		printf(" poller%u_groups=%u poller%u_wakeups=%llu "
		       "poller%u_wakeups_per_s=%.1f poller%u_wakeups_late=%llu", k,
		       ctx->runners[k].held, k,
		       (unsigned long long)ctx->runners[k].wakeups, k,
		       rs[k]->wall_s > 0 ? ctx->runners[k].wakeups / rs[k]->wall_s : 0,
		       k, (unsigned long long)ctx->runners[k].wakeups_late);
	printf("\n");
}

void
tpcq_poller_sched_run(struct tpcq_run *run, struct tpcq_result *res)
{
	const struct tpcq_result *rs[TPCQ_POLLERS_MAX];
	unsigned int n = run->npollers, k, gi, lc = (unsigned int)-1;
	unsigned int launched = 0;
	struct tpcq_result *others = NULL;
	struct cqpoll_group_stats st;
	struct sched_ctx *ctx;
	int v = 0;

	ctx = calloc(1, sizeof(*ctx));
	if (n > 1)
		others = calloc(n - 1, sizeof(*others));
	if (ctx == NULL || (n > 1 && others == NULL)) {
		tpcq_sched_fail(res, "calloc", -ENOMEM);
		goto out;
	}
	ctx->run = run;
	ctx->ngroups = run->params->groups;
	ctx->nrunners = n;
	ctx->all_cqs = calloc(run->ncqs, sizeof(*ctx->all_cqs));
	ctx->all_cks = calloc(run->ncqs, sizeof(*ctx->all_cks));
	if (ctx->all_cqs == NULL || ctx->all_cks == NULL) {
		tpcq_sched_fail(res, "calloc", -ENOMEM);
		goto out;
	}
	for (k = 0; k < n && v == 0; k++) {
		if (k > 0 && (others[k - 1].latency = tpcq_hist_create()) == NULL)
			v = tpcq_sched_fail(res, "calloc", -ENOMEM);
		else
			v = setup_runner(ctx, k, k == 0 ? res : &others[k - 1]);
		rs[k] = k == 0 ? res : &others[k - 1];
	}
	for (gi = 0; gi < ctx->ngroups && v == 0; gi++)
		v = setup_group(ctx, gi, res);
	if (v != 0)
		goto out;
	for (k = 1; k < n; k++) {
		lc = tpcq_poller_next_lcore(run, lc);
		v = rte_eal_remote_launch(tpcq_sched_runner_main, &ctx->runners[k], lc);
		if (v != 0) {
			tpcq_sched_fail(res, "rte_eal_remote_launch", v);
			break;
		}
		launched++;
	}
	if (launched == n - 1) {
		tpcq_sched_runner_main(&ctx->runners[0]);
	} else {
		__atomic_store_n(&ctx->done, true, __ATOMIC_RELEASE);
		tpcq_sched_wake_all(ctx);
	}
	lc = (unsigned int)-1;
	for (k = 1; k <= launched; k++) {
		lc = tpcq_poller_next_lcore(run, lc);
		rte_eal_wait_lcore(lc);
	}
	if (launched == n - 1)
		report(ctx, rs);
	for (k = 1; k <= launched; k++)
		tpcq_poller_result_add(res, &others[k - 1]);
	memset(&res->group, 0, sizeof(res->group));
	res->sleeps_timed = 0;
	res->sleep_cpu_ns = 0;
	for (gi = 0; gi < ctx->ngroups; gi++) {
		uint64_t cpu, timed;

		if (ctx->groups[gi].g == NULL)
			continue;
		if (cqpoll_group_stats_get(ctx->groups[gi].g, &st) == 0)
			tpcq_group_stats_add(&res->group, &st);
		if (cqpoll_group_sleep_cpu_get(ctx->groups[gi].g, &cpu, &timed) == 0) {
			res->sleep_cpu_ns += cpu;
			res->sleeps_timed += timed;
		}
	}
	tpcq_cq_stats_sum(run, &res->stats);
	res->stats.lost_wakeups += res->group.lost_wakeups;
out:
	if (res->error != 0)
		__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
	/* The generator never saw these groups (run->groups stays empty). */
	while (!__atomic_load_n(&run->gen_left, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&run->start, __ATOMIC_ACQUIRE))
		rte_pause();
	for (gi = 0; ctx != NULL && gi < ctx->ngroups; gi++) {
		cqpoll_group_destroy(ctx->groups[gi].g);
		free(ctx->groups[gi].cqs);
	}
	for (k = 0; ctx != NULL && k < n; k++) {
		if (ctx->runners[k].epfd > 0)
			close(ctx->runners[k].epfd);
		if (ctx->runners[k].mbox_fd > 0)
			close(ctx->runners[k].mbox_fd);
	}
	for (k = 1; others != NULL && k < n; k++)
		tpcq_hist_free(others[k - 1].latency);
	if (ctx != NULL) {
		free(ctx->all_cqs);
		free(ctx->all_cks);
	}
	free(ctx);
	free(others);
}
