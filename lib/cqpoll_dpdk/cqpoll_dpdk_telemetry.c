/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll counters through DPDK telemetry: a mutex-protected registry of
 * named groups and CQs, and four commands that read it. The counters'
 * readers are safe from any thread; the mutex keeps each object alive (still
 * registered) while the telemetry thread reads it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "cqpoll_dpdk.h"

enum entry_kind { ENTRY_GROUP, ENTRY_CQ };

struct entry {
	struct entry *next;
	enum entry_kind kind;
	void *obj;
	char name[CQPOLL_DPDK_NAME_MAX];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *reg_head; /* under reg_lock */
static bool cmds_registered;   /* under reg_lock */

static struct entry *
find(enum entry_kind kind, const char *name)
{
	struct entry *e;

	for (e = reg_head; e != NULL; e = e->next)
		if (e->kind == kind && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static int
list_names(enum entry_kind kind, struct rte_tel_data *d)
{
	struct entry *e;

	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&reg_lock);
	for (e = reg_head; e != NULL; e = e->next)
		if (e->kind == kind)
			rte_tel_data_add_array_string(d, e->name);
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

static int
cmd_groups(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	return list_names(ENTRY_GROUP, d);
}

static int
cmd_cqs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	return list_names(ENTRY_CQ, d);
}

#define ADD_U64(d, s, field) rte_tel_data_add_dict_u64(d, #field, (s).field)

static int
cmd_group_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct cqpoll_group_stats s;
	struct rte_tel_data *hist;
	struct entry *e;
	unsigned int i;
	int r;

	(void)cmd;
	if (params == NULL || params[0] == '\0')
		return -EINVAL;
	pthread_mutex_lock(&reg_lock);
	e = find(ENTRY_GROUP, params);
	r = e != NULL ? cqpoll_group_stats_get(e->obj, &s) : -ENOENT;
	pthread_mutex_unlock(&reg_lock);
	if (r != 0)
		return r;

	rte_tel_data_start_dict(d);
	ADD_U64(d, s, iterations);
	ADD_U64(d, s, polls);
	ADD_U64(d, s, empty_polls);
	ADD_U64(d, s, completions);
	ADD_U64(d, s, transitions);
	ADD_U64(d, s, sleeps);
	ADD_U64(d, s, wakeups_event);
	ADD_U64(d, s, wakeups_timeout);
	ADD_U64(d, s, wakeups_xthread);
	ADD_U64(d, s, lost_wakeups);
	ADD_U64(d, s, timeout_recoveries);
	ADD_U64(d, s, busy_ns);
	ADD_U64(d, s, asleep_ns);
	ADD_U64(d, s, mode_changes);
	hist = rte_tel_data_alloc();
	if (hist != NULL) {
		rte_tel_data_start_array(hist, RTE_TEL_U64_VAL);
		for (i = 0; i < CQPOLL_GROUP_WAKE_HIST_BUCKETS; i++)
			rte_tel_data_add_array_u64(hist, s.wake_latency_hist[i]);
		/* keep = 0: the dict takes the container and frees it. */
		if (rte_tel_data_add_dict_container(d, "wake_latency_hist",
						    hist, 0) != 0)
			rte_tel_data_free(hist);
	}
	return 0;
}

static int
cmd_cq_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct cqpoll_cq_stats s;
	struct entry *e;
	int r;

	(void)cmd;
	if (params == NULL || params[0] == '\0')
		return -EINVAL;
	pthread_mutex_lock(&reg_lock);
	e = find(ENTRY_CQ, params);
	r = e != NULL ? cqpoll_cq_stats_get(e->obj, &s) : -ENOENT;
	pthread_mutex_unlock(&reg_lock);
	if (r != 0)
		return r;

	rte_tel_data_start_dict(d);
	ADD_U64(d, s, polls);
	ADD_U64(d, s, empty_polls);
	ADD_U64(d, s, completions);
	ADD_U64(d, s, arms);
	ADD_U64(d, s, missed_reports);
	ADD_U64(d, s, events);
	ADD_U64(d, s, spurious_events);
	ADD_U64(d, s, event_acks);
	ADD_U64(d, s, waits);
	ADD_U64(d, s, wait_timeouts);
	ADD_U64(d, s, lost_wakeups);
	ADD_U64(d, s, timeout_recoveries);
	return 0;
}

/* Under reg_lock. Retried by the next registration if it failed. */
static int
register_cmds(void)
{
	int r;

	if (cmds_registered)
		return 0;
	r = rte_telemetry_register_cmd("/cqpoll/groups", cmd_groups,
		"Returns the names of the registered cqpoll poll groups. No parameters");
	if (r == 0)
		r = rte_telemetry_register_cmd("/cqpoll/group_stats", cmd_group_stats,
			"Returns the counters of a cqpoll poll group. Parameters: group name");
	if (r == 0)
		r = rte_telemetry_register_cmd("/cqpoll/cqs", cmd_cqs,
			"Returns the names of the registered cqpoll CQs. No parameters");
	if (r == 0)
		r = rte_telemetry_register_cmd("/cqpoll/cq_stats", cmd_cq_stats,
			"Returns the counters of a cqpoll CQ. Parameters: CQ name");
	if (r == 0)
		cmds_registered = true;
	return r;
}

static bool
valid_name(const char *name)
{
	size_t len;

	if (name == NULL)
		return false;
	len = strlen(name);
	return len > 0 && len < CQPOLL_DPDK_NAME_MAX &&
	       strchr(name, ',') == NULL;
}

static int
reg_add(enum entry_kind kind, const char *name, void *obj)
{
	struct entry *e;
	int r;

	if (obj == NULL || !valid_name(name))
		return -EINVAL;
	pthread_mutex_lock(&reg_lock);
	r = register_cmds();
	if (r == 0 && find(kind, name) != NULL)
		r = -EEXIST;
	if (r == 0) {
		e = calloc(1, sizeof(*e));
		if (e == NULL) {
			r = -ENOMEM;
		} else {
			e->kind = kind;
			e->obj = obj;
			strcpy(e->name, name);
			e->next = reg_head;
			reg_head = e;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return r;
}

static int
reg_remove(enum entry_kind kind, const char *name)
{
	struct entry **pp, *e;

	if (name == NULL)
		return -EINVAL;
	pthread_mutex_lock(&reg_lock);
	for (pp = &reg_head; (e = *pp) != NULL; pp = &e->next)
		if (e->kind == kind && strcmp(e->name, name) == 0)
			break;
	if (e != NULL)
		*pp = e->next;
	pthread_mutex_unlock(&reg_lock);
	free(e);
	return e != NULL ? 0 : -ENOENT;
}

int
cqpoll_dpdk_telemetry_register_group(const char *name, struct cqpoll_group *g)
{
	return reg_add(ENTRY_GROUP, name, g);
}

int
cqpoll_dpdk_telemetry_unregister_group(const char *name)
{
	return reg_remove(ENTRY_GROUP, name);
}

int
cqpoll_dpdk_telemetry_register_cq(const char *name, struct cqpoll_cq *cq)
{
	return reg_add(ENTRY_CQ, name, cq);
}

int
cqpoll_dpdk_telemetry_unregister_cq(const char *name)
{
	return reg_remove(ENTRY_CQ, name);
}
