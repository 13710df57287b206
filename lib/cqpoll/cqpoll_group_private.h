/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_GROUP_PRIVATE_H
#define CQPOLL_GROUP_PRIVATE_H

/*
 * The whole poll group, private to the library: shared by the files that
 * create it (cqpoll_group.c) and run it (the rooms listed in
 * cqpoll_group_run_private.h).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cqpoll_driver.h"
#include "cqpoll_clock.h"
#include "cqpoll_private.h"
#include "cqpoll_alarm_private.h"
#include "cqpoll_group.h"

struct cqpoll_group_fd;

/* One CQ of a group. Allocated alone so fd entries can point at it. */
struct cqpoll_group_member {
	struct cqpoll_cq *cq;
	cqpoll_group_cb_t cb;
	void *arg;
	struct cqpoll_group_fd *gfd;
	/* The sleep check can judge this CQ (emulated devices). */
	bool oracle;
	/*
	 * Active: not known to be armed and empty. A member leaves the active
	 * list only when cqpoll_poll_and_arm() returned 0 for it, and comes
	 * back when an event of its CQ is consumed: until then any new entry
	 * raises an event, so the group need not poll it to sleep safely.
	 */
	bool active;
	unsigned int active_pos; /* index in the group's active list */
	/* Busy and adaptive modes: when it last had work, or was woken. */
	uint64_t t_work;
	/*
	 * Armed off the active list since the group's sleeps counter read
	 * sleeps_mark: each group sleep since is a wait on its event fd, added
	 * to its CQ's waits when it wakes, fails or leaves (O(1) per
	 * transition, not O(members) per sleep).
	 */
	bool counting_waits;
	uint64_t sleeps_mark;
	/*
	 * The group's pass (cqpoll_group::pass) whose poll found it empty: its
	 * transition in that pass arms it without polling it again. A wake-up's
	 * poll that left it empty marks the next pass; 0 (never a pass) after
	 * any activation or deactivation, which no poll followed.
	 */
	uint64_t empty_pass;
	/* Its CQ failed: off the active list, skipped, removed at the next reap. */
	bool failed;
	struct cqpoll_group_member *next_failed;
};

/*
 * One distinct event fd, one epoll entry: CQs sharing a completion channel
 * share it, and a wake on it looks at each of them.
 */
struct cqpoll_group_fd {
	int fd;
	/*
	 * Its driver names the CQs that fired (cqpoll_driver_ops::fired): a wake
	 * on it polls those, not each member in turn.
	 */
	bool fired;
	unsigned int pos; /* index in the group's fd list */
	unsigned int n;
	unsigned int cap;
	struct cqpoll_group_member **members;
};

/*
 * A slice of members that the health check or the safety net walks a few
 * per loop iteration (cqpoll_group_net.c), so that no iteration stalls on it.
 */
struct cqpoll_group_sweep {
	uint64_t t_start;   /* when the slice began */
	uint64_t t_mark;    /* the time its checks are judged against */
	unsigned int next;  /* index of the next member to visit */
	unsigned int n;     /* members in the slice */
	unsigned int left;  /* members of it not visited yet; 0: none pending */
};

struct cqpoll_group {
	/* Written by other threads: mode requests, stop, move requests. */
	int mode_req;
	int stop;
	int move_req;
	/*
	 * Let go by its thread (cqpoll_group_release()), not yet adopted:
	 * stored with release by the owner, taken with acquire by the next.
	 */
	int released;
	/*
	 * The thread that adopted the group (pthread_self()), written by it:
	 * every other thread is refused the thread-only calls. 0: never
	 * adopted, run by whichever single thread its creator hands it to.
	 */
	uintptr_t owner;
	/*
	 * The lone-member sleep (cqpoll_group_sleep.c): the member's CQ while the
	 * group sleeps in that CQ's own wait instead of its epoll, else NULL
	 * (written by the group's thread, read by any thread's kick); the
	 * kickers that may be using it (any thread); a kick not yet taken by
	 * the group (stored by any thread before its eventfd write, taken by
	 * the group's thread before it drains the eventfd).
	 */
	struct cqpoll_cq *lone_cq;
	unsigned int lone_users;
	int kicked;
	/* Owned by the group's thread. */
	enum cqpoll_group_mode mode;
	int epfd;
	int wake_fd;
	/*
	 * The safety net's alarm (cqpoll_alarm_private.h), its timerfd in the epoll
	 * set; alarm_rang: the last events taken included its expiry.
	 */
	struct cqpoll_alarm alarm;
	bool alarm_rang;
	uint32_t burst;
	int wait_timeout_ms;
	bool in_callback;
	/* Between cqpoll_group_sleep_prepare() and _finish(), and since when. */
	bool sleeping;
	uint64_t t_sleep;
	/* End of the last iteration: busy time is counted from there. */
	uint64_t t_mark;
	/* The loop's passes (iterations), from 1: see member empty_pass. */
	uint64_t pass;
	/*
	 * The core's debug messages wanted, asked at each transition for the
	 * sleep and wake-up that follow it: one question to the log hook a
	 * cycle, not three.
	 */
	bool log_sleep;
	/*
	 * The clock when the events being taken were seen (after a sleep, or
	 * at a look without one): the woken members' activation time, and the
	 * end of a sleep's iteration, without a clock read of their own.
	 */
	uint64_t t_woke;
	/* Busy and adaptive modes: idle time that makes a CQ cold; 0: never. */
	uint64_t cold_ns;
	/* Last non-blocking look at the events of cold CQs. */
	uint64_t t_check;
	/* Last safety net of a polling group with cold CQs. */
	uint64_t t_net;
	/*
	 * When the next health check is due (cqpoll_group_net.c): every
	 * wait_timeout_ms, whatever the traffic, the armed members of the next
	 * slice are polled and their arms rung, so that a silent death is found
	 * within ceil(n / 256) + 1 periods (two up to 256 members).
	 */
	uint64_t t_health_due;
	/*
	 * When the loop next calls cqpoll_group_health_check(): t_health_due,
	 * or 0 while a slice is walked a few members per iteration.
	 */
	uint64_t t_health;
	/* Inside the failure callback (in_callback is set too). */
	bool in_failure_cb;
	/*
	 * cqpoll_group_destroy() was called from the failure callback: the
	 * group is freed when the library call that ran the callback returns.
	 */
	bool destroy_req;
	struct cqpoll_group_member **members;
	unsigned int n;
	unsigned int cap;
	/* Members with a device oracle, and where the next check starts. */
	unsigned int noracle;
	unsigned int oracle_next;
	/* The safety net's and the health check's slices (cqpoll_group_net.c). */
	struct cqpoll_group_sweep net;
	struct cqpoll_group_sweep health;
	/* Members that may hold completions no event will announce. */
	struct cqpoll_group_member **active;
	unsigned int nactive;
	unsigned int active_cap;
	struct cqpoll_group_fd **fds;
	unsigned int nfds;
	unsigned int fds_cap;
	/* The entry of each fd by fd number (NULL: none): O(1) adds. */
	struct cqpoll_group_fd **fd_index;
	unsigned int fd_index_cap;
	const struct cqpoll_policy_ops *policy;
	void *policy_state;
	/* The policy's sleep-CPU hook (built-in policies only), or NULL. */
	void (*policy_sleep_cpu)(void *state, uint64_t cpu_ns);
	/*
	 * The thread CPU of sampled sleeps (cqpoll_group_sleep_cpu_get()),
	 * read by any thread: their sum and count; sleeps seen by the sampler,
	 * and the CPU clock at the start of the sleep being timed, 0: none.
	 */
	uint64_t sleep_cpu_ns;
	uint64_t sleeps_timed;
	uint64_t sleeps_sampled;
	uint64_t sleep_cpu_t0;
	struct cqpoll_completion *comps;
	/*
	 * stats.empty_polls stays 0: the group counts the polls that found
	 * work (or an error) here, written after stats.polls, and a snapshot
	 * reads it first, so that polls minus it never wraps and two
	 * snapshots' difference is exact (cqpoll_group_stats_get()).
	 */
	struct cqpoll_group_stats stats;
	uint64_t found_polls;
	/* Failed members waiting to be removed and reported. */
	struct cqpoll_group_member *failed;
	cqpoll_group_failure_cb_t failure_cb;
	void *failure_arg;
	uint64_t failed_count; /* read by any thread */
};

/*
 * @p m's CQ failed (@p r, its error): take it off the active list and out of
 * every walk; cqpoll_group_reap() removes and reports it.
 */
void cqpoll_group_member_failed(struct cqpoll_group *g,
				struct cqpoll_group_member *m, int r);
/*
 * Remove the failed members and tell the failure callback of each. Returns
 * true if the callback destroyed the group: the caller must then return at
 * once through cqpoll_group_free_deferred(), touching nothing else of it.
 */
bool cqpoll_group_reap(struct cqpoll_group *g);
/* Free a group whose destroy was deferred (destroy_req); returns -ECANCELED. */
int cqpoll_group_free_deferred(struct cqpoll_group *g);
/* The group no longer serves the shared channel of @p fd. */
void cqpoll_group_channel_unclaim(const struct cqpoll_group *g, int fd);

/*
 * The calling thread may run @p g: it was not released, and it is the
 * thread that adopted it if one did (cqpoll_group_move.c). Relaxed loads:
 * only the owner writes the group, and a thread that calls after its own
 * release, or after another thread's adoption, is told so, not raced with.
 */
static inline bool
cqpoll_group_owned(const struct cqpoll_group *g)
{
	uintptr_t owner = __atomic_load_n(&g->owner, __ATOMIC_RELAXED);

	return !__atomic_load_n(&g->released, __ATOMIC_RELAXED) &&
	       (owner == 0 || owner == (uintptr_t)pthread_self());
}

/*
 * Wake the group from any thread: its eventfd (its epoll, or an external
 * loop's), and the lone member's own wait where the group sleeps in it.
 * 0, or -errno from write(2).
 */
int cqpoll_group_kick(struct cqpoll_group *g);

/* Put a member on the active list (no-op if it is there). */
void cqpoll_group_activate(struct cqpoll_group *g, struct cqpoll_group_member *m);
/* The same, the clock already read (@p now): a wake-up reads it once. */
void cqpoll_group_activate_at(struct cqpoll_group *g, struct cqpoll_group_member *m,
			      uint64_t now);
/* Take a member off the active list (no-op if it is not there). */
void cqpoll_group_deactivate(struct cqpoll_group *g, struct cqpoll_group_member *m);

#endif /* CQPOLL_GROUP_PRIVATE_H */
