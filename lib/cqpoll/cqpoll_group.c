/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Poll groups: creation and destruction, the policy's set-up, the mode,
 * requests from other threads (stop, wake-up, mode change: the kick) and
 * the counters. Members are in cqpoll_group_members.c, their failure in
 * cqpoll_group_failure.c, the loop in cqpoll_group_loop.c (the list of
 * rooms: cqpoll_group_run_private.h).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cqpoll_alloc_private.h"
#include "cqpoll_config.h"
#include "cqpoll_group_run_private.h"
#include "cqpoll_log_private.h"
#include "cqpoll_mutant.h"
#include "cqpoll_policy_private.h"
#include "cqpoll_private.h"
#include "cqpoll_stats_private.h"

#define GROUP_BURST_DEFAULT 32
#define GROUP_BURST_MAX 1024
#define GROUP_TIMEOUT_MS_MAX 3600000

static const char *const mode_names[] = {
	[CQPOLL_GROUP_MODE_BUSY] = "busy",
	[CQPOLL_GROUP_MODE_INTERRUPT] = "interrupt",
	[CQPOLL_GROUP_MODE_ADAPTIVE] = "adaptive",
};

static bool
mode_valid(int mode)
{
	return mode >= CQPOLL_GROUP_MODE_BUSY && mode <= CQPOLL_GROUP_MODE_ADAPTIVE;
}

const char *
cqpoll_group_mode_name(enum cqpoll_group_mode mode)
{
	return mode_valid((int)mode) ? mode_names[mode] : "unknown";
}

static int
policy_setup(struct cqpoll_group *g, const struct cqpoll_policy_ops *ops,
	     const char *args, int socket_id)
{
	size_t size;
	int r;

	if (ops == NULL)
		ops = cqpoll_policy_adaptive();
	/* Logs, telemetry and cqpoll_group_info_get() name it. */
	if (ops->name == NULL || ops->name[0] == '\0') {
		CQPOLL_LOG_LIB(ERR, "group create: policy %p has no name",
			       (const void *)ops);
		return -EINVAL;
	}
	/* A size that does not cover the first table is no table of ours. */
	if (ops->size != 0 && ops->size < CQPOLL_POLICY_OPS_SIZE_V1) {
		CQPOLL_LOG_LIB(ERR, "group create: policy %s: ops size %zu, at least %zu",
			       ops->name, ops->size, (size_t)CQPOLL_POLICY_OPS_SIZE_V1);
		return -EINVAL;
	}
	if (ops->init == NULL || ops->decide == NULL) {
		CQPOLL_LOG_LIB(ERR, "group create: policy %s lacks init or decide",
			       ops->name);
		return -EINVAL;
	}
	/* 64-byte alignment suits any type; never ask for 0 bytes. */
	size = ops->state_size != 0 ? ops->state_size : 1;
	g->policy_state = cqpoll_mem_alloc(size, socket_id);
	if (g->policy_state == NULL)
		return -ENOMEM;
	r = ops->init(g->policy_state, args);
	if (r < 0) {
		CQPOLL_LOG_LIB(ERR, "group create: policy %s refused parameters '%s'",
			       ops->name, args != NULL ? args : "");
		return r;
	}
	g->policy = ops;
	g->policy_sleep_cpu = cqpoll_policy_sleep_cpu_op(ops);
	return 0;
}

struct cqpoll_group *
cqpoll_group_create(const struct cqpoll_group_conf *conf)
{
	struct cqpoll_group_conf def = { .mode = CQPOLL_GROUP_MODE_ADAPTIVE };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct cqpoll_group *g;
	int r, socket_id;

	if (conf == NULL)
		conf = &def;
	if ((conf->flags & ~CQPOLL_GROUP_F_SOCKET_ID) != 0) {
		CQPOLL_LOG_LIB(ERR, "group create: unknown flags 0x%x",
			       conf->flags & ~CQPOLL_GROUP_F_SOCKET_ID);
		errno = EINVAL;
		return NULL;
	}
	socket_id = (conf->flags & CQPOLL_GROUP_F_SOCKET_ID) ? conf->socket_id :
		CQPOLL_SOCKET_ANY;
	if (cqpoll_socket_check(socket_id, "group create") != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (!mode_valid((int)conf->mode) || conf->burst > GROUP_BURST_MAX ||
	    conf->wait_timeout_ms > GROUP_TIMEOUT_MS_MAX) {
		CQPOLL_LOG_LIB(ERR, "group create: %s",
			       !mode_valid((int)conf->mode) ? "bad mode" :
			       conf->burst > GROUP_BURST_MAX ?
			       "burst out of range 1..1024" :
			       "wait_timeout_ms out of range 1..3600000");
		errno = EINVAL;
		return NULL;
	}
	g = cqpoll_mem_alloc(sizeof(*g), socket_id);
	if (g == NULL) {
		CQPOLL_LOG_LIB(ERR, "group create: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	g->epfd = -1;
	g->wake_fd = -1;
	g->mode = conf->mode;
	g->mode_req = (int)conf->mode;
	g->burst = conf->burst != 0 ? conf->burst : GROUP_BURST_DEFAULT;
	if (conf->cold_us == CQPOLL_GROUP_COLD_NEVER)
		g->cold_ns = 0;
	else
		g->cold_ns = (uint64_t)(conf->cold_us != 0 ? conf->cold_us :
					CQPOLL_GROUP_COLD_US_DEFAULT) * 1000u;
	g->wait_timeout_ms = conf->wait_timeout_ms != 0 ?
		(int)conf->wait_timeout_ms : CQPOLL_WAIT_TIMEOUT_MS_DEFAULT;
	/* The first health check after one period (cqpoll_group_net.c). */
	g->t_health_due = cqpoll_now_ns() + (uint64_t)g->wait_timeout_ms * 1000000u;
	g->t_health = g->t_health_due;
	g->comps = cqpoll_mem_alloc((size_t)g->burst * sizeof(*g->comps), socket_id);
	if (g->comps == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	r = policy_setup(g, conf->policy, conf->policy_args, socket_id);
	if (r < 0)
		goto fail;
	g->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (g->epfd < 0) {
		r = -errno;
		goto fail;
	}
	g->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->wake_fd < 0) {
		r = -errno;
		goto fail;
	}
	/* data.ptr NULL marks the wake-up eventfd; CQ fds carry their entry. */
	if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->wake_fd, &ev) < 0) {
		r = -errno;
		goto fail;
	}
	cqpoll_group_alarm_open(g);
	return g;
fail:
	CQPOLL_LOG_LIB(ERR, "group create: %s", strerror(-r));
	cqpoll_group_destroy(g);
	errno = -r;
	return NULL;
}

static void
group_free(struct cqpoll_group *g)
{
	unsigned int i;

	for (i = 0; i < g->nfds; i++) {
		if (g->fds[i]->fired)
			cqpoll_group_channel_unclaim(g, g->fds[i]->fd);
		free(g->fds[i]->members);
		free(g->fds[i]);
	}
	for (i = 0; i < g->n; i++) {
		/* The CQ outlives the group: it may be destroyed or added again. */
		cqpoll_group_count_waits(g, g->members[i]);
		g->members[i]->cq->group_member = NULL;
		g->members[i]->cq->group = NULL;
		free(g->members[i]);
	}
	free(g->fds);
	free(g->fd_index);
	free(g->members);
	free(g->active);
	cqpoll_mem_free(g->comps);
	cqpoll_mem_free(g->policy_state);
	if (g->wake_fd >= 0)
		close(g->wake_fd);
	cqpoll_alarm_close(&g->alarm);
	if (g->epfd >= 0)
		close(g->epfd);
	cqpoll_mem_free(g);
}

void
cqpoll_group_destroy(struct cqpoll_group *g)
{
	if (g == NULL)
		return;
	/*
	 * From the failure callback: the loop that called it still walks the
	 * group, so it is freed when that library call returns (-ECANCELED
	 * from cqpoll_group_run_once(), 0 from cqpoll_group_run()).
	 */
	if (g->in_failure_cb) {
		if (!g->destroy_req)
			CQPOLL_LOG_LIB(DEBUG, "group %p: destroyed from its failure callback, freed when the run returns",
				       (void *)g);
		g->destroy_req = true;
		return;
	}
	/* From a completion callback: the loop would run on freed memory. */
	if (g->in_callback) {
		CQPOLL_LOG_LIB(ERR, "group %p destroy: refused inside a completion callback (stop the group and destroy it after cqpoll_group_run() returns)",
			       (void *)g);
		return;
	}
	group_free(g);
}

int
cqpoll_group_free_deferred(struct cqpoll_group *g)
{
	group_free(g);
	return -ECANCELED;
}

int
cqpoll_group_count(const struct cqpoll_group *g)
{
	if (g == NULL)
		return -EINVAL;
	return (int)g->n;
}

/*
 * A kick's second half: wake the group where it sleeps in its lone
 * member's own wait (cqpoll_group_sleep.c). 0, or -errno of the wake-up.
 */
#if CQPOLL_MUTANT(NO_LONE_KICK)
/* Negative control only (test build): a lone sleeper sleeps on. */
static int
kick_lone(struct cqpoll_group *g)
{
	(void)g;
	return 0;
}
#else
static int
kick_lone(struct cqpoll_group *g)
{
	struct cqpoll_cq *cq;
	int r = 0;

	/*
	 * Counted in before the load: the group, awake again, waits for the
	 * count to drop before its CQ may leave or be destroyed.
	 */
	__atomic_fetch_add(&g->lone_users, 1, __ATOMIC_SEQ_CST);
	cq = __atomic_load_n(&g->lone_cq, __ATOMIC_SEQ_CST);
	if (cq != NULL)
		r = cqpoll_cq_wake_sleeper(cq);
	__atomic_fetch_sub(&g->lone_users, 1, __ATOMIC_RELEASE);
	return r;
}
#endif

int
cqpoll_group_kick(struct cqpoll_group *g)
{
	uint64_t one = 1;

	/*
	 * Store kicked, then load lone_cq; the group stores lone_cq, then
	 * loads kicked: both sequentially consistent, so either the group
	 * sees the kick before its lone sleep, or this sees the sleeper and
	 * wakes it in its CQ's own wait (cqpoll_group_sleep.c).
	 */
	__atomic_store_n(&g->kicked, 1, __ATOMIC_SEQ_CST);
	/* EAGAIN: the counter is saturated, so a wake-up is pending anyway. */
	if (write(g->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return kick_lone(g);
}

int
cqpoll_group_set_mode(struct cqpoll_group *g, enum cqpoll_group_mode mode)
{
	if (g == NULL || !mode_valid((int)mode)) {
		CQPOLL_LOG_LIB(ERR, "group set mode: %s", g == NULL ? "NULL group" :
			       "bad mode");
		return -EINVAL;
	}
	__atomic_store_n(&g->mode_req, (int)mode, __ATOMIC_RELEASE);
	return cqpoll_group_kick(g);
}

int
cqpoll_group_get_mode(const struct cqpoll_group *g)
{
	if (g == NULL)
		return -EINVAL;
	return __atomic_load_n(&g->mode_req, __ATOMIC_ACQUIRE);
}

int
cqpoll_group_stop(struct cqpoll_group *g)
{
	if (g == NULL)
		return -EINVAL;
	__atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
	return cqpoll_group_kick(g);
}

int
cqpoll_group_wakeup(struct cqpoll_group *g)
{
	if (g == NULL)
		return -EINVAL;
	return cqpoll_group_kick(g);
}

int
cqpoll_group_stats_get(const struct cqpoll_group *g,
		       struct cqpoll_group_stats *stats)
{
	uint64_t found;

	if (g == NULL || stats == NULL)
		return -EINVAL;
	found = __atomic_load_n(&g->found_polls, __ATOMIC_ACQUIRE);
	cqpoll_stats_copy(stats, &g->stats, sizeof(*stats));
	stats->empty_polls = stats->polls - found;
	return 0;
}

int
cqpoll_group_stats_reset(struct cqpoll_group *g)
{
	if (g == NULL)
		return -EINVAL;
	cqpoll_stats_zero(&g->stats, sizeof(g->stats));
	__atomic_store_n(&g->found_polls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g->sleep_cpu_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g->sleeps_timed, 0, __ATOMIC_RELAXED);
	return 0;
}
