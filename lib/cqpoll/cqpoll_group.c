/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Poll groups: creation, membership (with one epoll entry per distinct event
 * fd), mode, cross-thread requests and counters. The loop is in
 * cqpoll_group_run.c.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cqpoll_alloc_private.h"
#include "cqpoll_config.h"
#include "cqpoll_group_private.h"
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
	/* The first health check after one period (cqpoll_group_run.c). */
	g->t_health = cqpoll_now_ns() + (uint64_t)g->wait_timeout_ms * 1000000u;
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
	return g;
fail:
	CQPOLL_LOG_LIB(ERR, "group create: %s", strerror(-r));
	cqpoll_group_destroy(g);
	errno = -r;
	return NULL;
}

static void count_waits(struct cqpoll_group *g, struct cqpoll_group_member *m);

static void
group_free(struct cqpoll_group *g)
{
	unsigned int i;

	for (i = 0; i < g->nfds; i++) {
		free(g->fds[i]->members);
		free(g->fds[i]);
	}
	for (i = 0; i < g->n; i++) {
		/* The CQ outlives the group: it may be destroyed or added again. */
		count_waits(g, g->members[i]);
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

/*
 * Room for @need pointers, doubling from @first: the (maybe moved) array,
 * or NULL on ENOMEM.
 */
static void *
grow_from(void *array, unsigned int *cap, unsigned int need, unsigned int first)
{
	unsigned int ncap;
	void *p;

	if (need <= *cap)
		return array;
	ncap = *cap != 0 ? *cap * 2 : first;
	while (ncap < need)
		ncap *= 2;
	p = realloc(array, (size_t)ncap * sizeof(void *));
	if (p == NULL)
		return NULL;
	*cap = ncap;
	return p;
}

static void *
grow(void *array, unsigned int *cap, unsigned int need)
{
	return grow_from(array, cap, need, 8);
}

/*
 * The entry of @p fd, in O(1): fds are small integers (the kernel hands out
 * the lowest free one), so the index is an array by fd number, a pointer
 * per fd of the process below the highest one of the group. A search of
 * the fd list instead made adding N CQs O(N^2): seconds at 65536.
 */
static struct cqpoll_group_fd *
fd_find(struct cqpoll_group *g, int fd)
{
	return (unsigned int)fd < g->fd_index_cap ? g->fd_index[fd] : NULL;
}

/* Make room in the fd index for @p fd; new slots are NULL. */
static int
fd_index_grow(struct cqpoll_group *g, int fd)
{
	unsigned int old = g->fd_index_cap;
	void *p;

	p = grow_from(g->fd_index, &g->fd_index_cap, (unsigned int)fd + 1, 64);
	if (p == NULL)
		return -ENOMEM;
	g->fd_index = p;
	memset(&g->fd_index[old], 0,
	       (size_t)(g->fd_index_cap - old) * sizeof(g->fd_index[0]));
	return 0;
}

/* Attach a member to the entry of its fd, creating the epoll entry once. */
static int
fd_attach(struct cqpoll_group *g, struct cqpoll_group_member *m, int fd)
{
	struct cqpoll_group_fd *gfd = fd_find(g, fd);
	struct epoll_event ev = { .events = EPOLLIN };
	bool created = false;
	void *p;
	int r;

	if (gfd == NULL) {
		p = grow(g->fds, &g->fds_cap, g->nfds + 1);
		if (p == NULL || fd_index_grow(g, fd) != 0)
			return -ENOMEM;
		g->fds = p;
		gfd = calloc(1, sizeof(*gfd));
		if (gfd == NULL)
			return -ENOMEM;
		gfd->fd = fd;
		gfd->fired = m->cq->fired != NULL;
		ev.data.ptr = gfd;
		if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			r = -errno;
			free(gfd);
			return r;
		}
		gfd->pos = g->nfds;
		g->fds[g->nfds++] = gfd;
		g->fd_index[fd] = gfd;
		created = true;
	}
	/* Most fds are one CQ's own: room for one member first, not eight. */
	p = grow_from(gfd->members, &gfd->cap, gfd->n + 1, 1);
	if (p == NULL) {
		if (created) {
			epoll_ctl(g->epfd, EPOLL_CTL_DEL, fd, NULL);
			g->nfds--;
			g->fd_index[fd] = NULL;
			free(gfd);
		}
		return -ENOMEM;
	}
	gfd->members = p;
	gfd->members[gfd->n++] = m;
	m->gfd = gfd;
	return 0;
}

static void
fd_detach(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	struct cqpoll_group_fd *gfd = m->gfd;
	unsigned int i;

	for (i = 0; i < gfd->n; i++) {
		if (gfd->members[i] == m) {
			gfd->members[i] = gfd->members[--gfd->n];
			break;
		}
	}
	if (gfd->n != 0)
		return;
	epoll_ctl(g->epfd, EPOLL_CTL_DEL, gfd->fd, NULL);
	g->fd_index[gfd->fd] = NULL;
	/* Swap with the last: the fd list has no order to keep. */
	g->fds[gfd->pos] = g->fds[--g->nfds];
	g->fds[gfd->pos]->pos = gfd->pos;
	free(gfd->members);
	free(gfd);
}

/* The group sleeps @p m spent armed and off the active list: its CQ's waits. */
static void
count_waits(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	uint64_t now;

	if (!m->counting_waits)
		return;
	/* A cqpoll_group_stats_reset() since leaves nothing to count. */
	now = __atomic_load_n(&g->stats.sleeps, __ATOMIC_RELAXED);
	if (now > m->sleeps_mark)
		cqpoll_stat_add(&m->cq->counters.waits, now - m->sleeps_mark);
	m->counting_waits = false;
}

void
cqpoll_group_activate(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	if (m->active)
		return;
	count_waits(g, m);
	m->active = true;
	/*
	 * Woken or new: it gets a full cold_us before it may go cold again.
	 * Never on the hot path: activation follows an event or an add.
	 */
	m->t_work = cqpoll_now_ns();
	m->active_pos = g->nactive;
	g->active[g->nactive++] = m;
}

void
cqpoll_group_deactivate(struct cqpoll_group *g, struct cqpoll_group_member *m)
{
	struct cqpoll_group_member *last;

	if (!m->active)
		return;
	/* Swap with the last: O(1), the active list has no order to keep. */
	last = g->active[--g->nactive];
	g->active[m->active_pos] = last;
	last->active_pos = m->active_pos;
	m->active = false;
	/* Only poll-and-arm's 0 takes a healthy member off: it is armed. */
	if (!m->failed) {
		m->counting_waits = true;
		m->sleeps_mark = __atomic_load_n(&g->stats.sleeps, __ATOMIC_RELAXED);
	}
}

static int
member_find(const struct cqpoll_group *g, const struct cqpoll_cq *cq)
{
	unsigned int i;

	for (i = 0; i < g->n; i++)
		if (g->members[i]->cq == cq)
			return (int)i;
	return -1;
}

int
cqpoll_group_add(struct cqpoll_group *g, struct cqpoll_cq *cq,
		 cqpoll_group_cb_t cb, void *arg)
{
	struct cqpoll_group_member *m;
	void *p;
	int fd, r;

	if (g == NULL || cq == NULL || cb == NULL) {
		CQPOLL_LOG_LIB(ERR, "group add: NULL %s", g == NULL ? "group" :
			       cq == NULL ? "cq" : "callback");
		return -EINVAL;
	}
	if (!cqpoll_group_owned(g)) {
		CQPOLL_LOG_LIB(ERR, "group %p add: released, not adopted", (void *)g);
		return -EPERM;
	}
	/* An unarmed CQ joining a prepared sleep could strand its work. */
	if (g->in_callback || g->sleeping) {
		CQPOLL_LOG_LIB(ERR, "group %p add: called from a callback or a prepared sleep",
			       (void *)g);
		return -EBUSY;
	}
	/* In this group or another: two pollers of one CQ lose completions. */
	if (cq->group != NULL) {
		CQPOLL_LOG_LIB(ERR, "group %p add: cq %p is already in %s group",
			       (void *)g, (void *)cq,
			       cq->group == g ? "this" : "another");
		return -EBUSY;
	}
	/* A dead CQ would be reported at once: refuse it instead. */
	if (cqpoll_cq_state_now(cq) != CQPOLL_CQ_STATE_OK) {
		CQPOLL_LOG_LIB(ERR, "group %p add: cq %p has failed (%s)",
			       (void *)g, (void *)cq,
			       cqpoll_cq_state_name(cqpoll_cq_state_now(cq)));
		return cqpoll_cq_state_errno(cqpoll_cq_state_now(cq));
	}
	fd = cqpoll_cq_event_fd(cq);
	if (fd < 0) {
		CQPOLL_LOG_LIB(ERR, "group %p add: cq %p has no event fd: %s",
			       (void *)g, (void *)cq, strerror(-fd));
		return fd;
	}
	p = grow(g->members, &g->cap, g->n + 1);
	if (p == NULL)
		return -ENOMEM;
	g->members = p;
	/* Room on the active list now: activating must not fail later. */
	p = grow(g->active, &g->active_cap, g->n + 1);
	if (p == NULL)
		return -ENOMEM;
	g->active = p;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->cq = cq;
	m->cb = cb;
	m->arg = arg;
	m->oracle = cqpoll_sleep_check_run(cq) != -ENOTSUP;
	r = fd_attach(g, m, fd);
	if (r < 0) {
		free(m);
		return r;
	}
	g->members[g->n++] = m;
	g->noracle += m->oracle;
	cq->group = g;
	cq->group_member = m;
	/* Not armed by the group yet: the next transition must arm it. */
	cqpoll_group_activate(g, m);
	return 0;
}

/* Take members[i] out of every list and epoll; the CQ is free again. */
static void
member_remove(struct cqpoll_group *g, unsigned int i)
{
	struct cqpoll_group_member *m = g->members[i];

	cqpoll_group_deactivate(g, m);
	count_waits(g, m);
	g->noracle -= m->oracle;
	fd_detach(g, m);
	m->cq->group_member = NULL;
	m->cq->group = NULL;
	/* Keep the order of the others: polling order is fairness order. */
	memmove(&g->members[i], &g->members[i + 1],
		(size_t)(g->n - i - 1) * sizeof(g->members[0]));
	g->n--;
	free(m);
}

int
cqpoll_group_remove(struct cqpoll_group *g, struct cqpoll_cq *cq)
{
	struct cqpoll_group_member *m;
	int i;

	if (g == NULL || cq == NULL)
		return -EINVAL;
	if (g->in_callback)
		return -EBUSY;
	if (!cqpoll_group_owned(g))
		return -EPERM;
	i = member_find(g, cq);
	if (i < 0)
		return -ENOENT;
	m = g->members[i];
	/* Reported failed and not yet reaped: it leaves unreported. */
	if (m->failed) {
		struct cqpoll_group_member **p;

		for (p = &g->failed; *p != NULL; p = &(*p)->next_failed) {
			if (*p == m) {
				*p = m->next_failed;
				break;
			}
		}
	}
	member_remove(g, (unsigned int)i);
	return 0;
}

void
cqpoll_group_member_failed(struct cqpoll_group *g, struct cqpoll_group_member *m,
			   int r)
{
	/* Off the active list in any case: the loops rely on it. */
	cqpoll_group_deactivate(g, m);
	if (m->failed)
		return;
	/* A failed CQ is not waited on any more. */
	count_waits(g, m);
	/* The core latched it already; a stray error is latched here. */
	if (cqpoll_cq_state_now(m->cq) == CQPOLL_CQ_STATE_OK)
		cqpoll_cq_latch_failure(m->cq, r);
	m->failed = true;
	m->next_failed = g->failed;
	g->failed = m;
}

bool
cqpoll_group_reap(struct cqpoll_group *g)
{
	struct cqpoll_group_member *m;
	struct cqpoll_cq_failure f;
	struct cqpoll_cq *cq;
	int i;

	while ((m = g->failed) != NULL) {
		g->failed = m->next_failed;
		cq = m->cq;
		i = member_find(g, cq);
		if (i < 0)
			continue;
		member_remove(g, (unsigned int)i);
		cqpoll_stat_add(&g->failed_count, 1);
		cqpoll_cq_state_get(cq, &f);
		/* A cause that is only the errno's text is said once. */
		if (f.cause == NULL || strcmp(f.cause, strerror(-f.error)) == 0)
			CQPOLL_LOG_LIB(WARNING, "group %p: cq %p failed (%s: %s): removed, %u cqs go on",
				       (void *)g, (void *)cq, cqpoll_cq_state_name(f.state),
				       strerror(-f.error), g->n);
		else
			CQPOLL_LOG_LIB(WARNING, "group %p: cq %p failed (%s: %s, %s): removed, %u cqs go on",
				       (void *)g, (void *)cq, cqpoll_cq_state_name(f.state),
				       f.cause, strerror(-f.error), g->n);
		if (g->failure_cb == NULL)
			continue;
		/*
		 * The CQ is the application's again: it may destroy it here,
		 * and the group too (deferred: cqpoll_group_destroy()).
		 */
		g->in_callback = true;
		g->in_failure_cb = true;
		g->failure_cb(g, cq, &f, g->failure_arg);
		g->in_failure_cb = false;
		g->in_callback = false;
		if (g->destroy_req)
			return true;
	}
	return false;
}

int
cqpoll_group_failure_cb_register(struct cqpoll_group *g,
				 cqpoll_group_failure_cb_t cb, void *arg)
{
	if (g == NULL || cb == NULL)
		return -EINVAL;
	if (g->in_callback)
		return -EBUSY;
	if (g->failure_cb != NULL)
		return -EEXIST;
	g->failure_cb = cb;
	g->failure_arg = arg;
	return 0;
}

int
cqpoll_group_failure_cb_unregister(struct cqpoll_group *g,
				   cqpoll_group_failure_cb_t cb, void *arg)
{
	if (g == NULL)
		return -EINVAL;
	if (g->in_callback)
		return -EBUSY;
	if (g->failure_cb == NULL || g->failure_cb != cb || g->failure_arg != arg)
		return -ENOENT;
	g->failure_cb = NULL;
	g->failure_arg = NULL;
	return 0;
}

uint64_t
cqpoll_group_failed_count(const struct cqpoll_group *g)
{
	return g != NULL ? __atomic_load_n(&g->failed_count, __ATOMIC_RELAXED) : 0;
}

int
cqpoll_group_count(const struct cqpoll_group *g)
{
	if (g == NULL)
		return -EINVAL;
	return (int)g->n;
}

int
cqpoll_group_kick(struct cqpoll_group *g)
{
	struct cqpoll_cq *cq;
	uint64_t one = 1;
	int r = 0;

	/*
	 * Store kicked, then load lone_cq; the group stores lone_cq, then
	 * loads kicked: both sequentially consistent, so either the group
	 * sees the kick before its lone sleep, or this sees the sleeper and
	 * wakes it in its CQ's own wait (cqpoll_group_run.c).
	 */
	__atomic_store_n(&g->kicked, 1, __ATOMIC_SEQ_CST);
	/* EAGAIN: the counter is saturated, so a wake-up is pending anyway. */
	if (write(g->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
#if !CQPOLL_MUTANT(NO_LONE_KICK)
	/*
	 * Counted in before the load: the group, awake again, waits for the
	 * count to drop before its CQ may leave or be destroyed.
	 */
	__atomic_fetch_add(&g->lone_users, 1, __ATOMIC_SEQ_CST);
	cq = __atomic_load_n(&g->lone_cq, __ATOMIC_SEQ_CST);
	if (cq != NULL)
		r = cqpoll_cq_wake_sleeper(cq);
	__atomic_fetch_sub(&g->lone_users, 1, __ATOMIC_RELEASE);
#else
	/* Negative control only (test build): a lone sleeper sleeps on. */
	(void)cq;
#endif
	return r;
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
	if (g == NULL || stats == NULL)
		return -EINVAL;
	cqpoll_stats_copy(stats, &g->stats, sizeof(*stats));
	return 0;
}

int
cqpoll_group_stats_reset(struct cqpoll_group *g)
{
	if (g == NULL)
		return -EINVAL;
	cqpoll_stats_zero(&g->stats, sizeof(g->stats));
	__atomic_store_n(&g->sleep_cpu_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g->sleeps_timed, 0, __ATOMIC_RELAXED);
	return 0;
}

int
cqpoll_group_sleep_cpu_get(const struct cqpoll_group *g, uint64_t *cpu_ns,
			   uint64_t *sleeps_timed)
{
	if (g == NULL)
		return -EINVAL;
	if (cpu_ns != NULL)
		*cpu_ns = __atomic_load_n(&g->sleep_cpu_ns, __ATOMIC_RELAXED);
	if (sleeps_timed != NULL)
		*sleeps_timed = __atomic_load_n(&g->sleeps_timed, __ATOMIC_RELAXED);
	return 0;
}
