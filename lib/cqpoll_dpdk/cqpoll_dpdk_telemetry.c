/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll through DPDK telemetry, by DPDK's conventions: commands registered
 * at start-up (a constructor, so "/" lists them as soon as the EAL runs),
 * /cqpoll/<kind>/list giving numeric ids in ascending order, and
 * /cqpoll/<kind>/info,<id> and /cqpoll/<kind>/stats,<id> for each. Kinds:
 * group, cq (registered by the application under a name) and handoff
 * (registered by cqpoll_dpdk_handoff_create() itself).
 *
 * A mutex-protected registry holds the objects; the mutex keeps each one
 * alive (still registered) while the telemetry thread reads it.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "cqpoll_dpdk.h"
#include "cqpoll_dpdk_private.h"

enum kind { KIND_GROUP, KIND_CQ, KIND_HANDOFF, KIND_COUNT };

static const char *const kind_names[KIND_COUNT] = {
	[KIND_GROUP] = "group",
	[KIND_CQ] = "cq",
	[KIND_HANDOFF] = "handoff",
};

struct entry {
	struct entry *next;
	void *obj;
	unsigned int id;
	unsigned int lcore; /* the registering thread's; LCORE_ID_ANY if none */
	char name[CQPOLL_DPDK_NAME_MAX];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under reg_lock: per kind, in ascending id order; ids are never reused. */
static struct {
	struct entry *head;
	struct entry **tail;
	unsigned int next_id;
} reg[KIND_COUNT];

static struct entry *
find_name(enum kind k, const char *name)
{
	struct entry *e;

	for (e = reg[k].head; e != NULL; e = e->next)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

/* "<id>": decimal digits only, as ethdev's commands take port ids. */
static int
parse_id(const char *params, unsigned int *id)
{
	unsigned long v;
	char *end;

	if (params == NULL || params[0] < '0' || params[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(params, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT_MAX)
		return -EINVAL;
	*id = (unsigned int)v;
	return 0;
}

/* Under reg_lock. */
static struct entry *
find_id(enum kind k, unsigned int id)
{
	struct entry *e;

	for (e = reg[k].head; e != NULL; e = e->next)
		if (e->id == id)
			return e;
	return NULL;
}

static int
cmd_list(enum kind k, struct rte_tel_data *d)
{
	struct entry *e;

	rte_tel_data_start_array(d, TEL_UINT_VAL);
	pthread_mutex_lock(&reg_lock);
	for (e = reg[k].head; e != NULL; e = e->next)
		TEL_ARRAY_UINT(d, e->id);
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

typedef int (*describe_t)(const struct entry *e, struct rte_tel_data *d);

/* Look the id up and describe the object under the lock. */
static int
cmd_one(enum kind k, const char *params, struct rte_tel_data *d, describe_t fn)
{
	struct entry *e;
	unsigned int id;
	int r;

	r = parse_id(params, &id);
	if (r < 0)
		return r;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&reg_lock);
	e = find_id(k, id);
	r = e != NULL ? fn(e, d) : -ENOENT;
	pthread_mutex_unlock(&reg_lock);
	return r;
}

static void
add_common(const struct entry *e, struct rte_tel_data *d)
{
	TEL_DICT_UINT(d, "id", e->id);
	rte_tel_data_add_dict_string(d, "name", e->name);
}

#define ADD_UINT(d, s, field) TEL_DICT_UINT(d, #field, (s).field)

static int
group_info(const struct entry *e, struct rte_tel_data *d)
{
	struct cqpoll_group_info gi;
	int r;

	r = cqpoll_group_info_get(e->obj, &gi);
	if (r < 0)
		return r;
	add_common(e, d);
	rte_tel_data_add_dict_string(d, "mode", cqpoll_group_mode_name(gi.mode));
	rte_tel_data_add_dict_string(d, "policy", gi.policy);
	rte_tel_data_add_dict_int(d, "lcore",
		e->lcore == LCORE_ID_ANY ? -1 : (int)e->lcore);
	ADD_UINT(d, gi, burst);
	ADD_UINT(d, gi, wait_timeout_ms);
	return 0;
}

static int
group_stats(const struct entry *e, struct rte_tel_data *d)
{
	struct cqpoll_group_stats s;
	struct rte_tel_data *hist;
	unsigned int i;
	int r;

	r = cqpoll_group_stats_get(e->obj, &s);
	if (r < 0)
		return r;
	ADD_UINT(d, s, iterations);
	ADD_UINT(d, s, polls);
	ADD_UINT(d, s, empty_polls);
	ADD_UINT(d, s, completions);
	ADD_UINT(d, s, transitions);
	ADD_UINT(d, s, sleeps);
	ADD_UINT(d, s, wakeups_event);
	ADD_UINT(d, s, wakeups_timeout);
	ADD_UINT(d, s, wakeups_xthread);
	ADD_UINT(d, s, lost_wakeups);
	ADD_UINT(d, s, timeout_recoveries);
	ADD_UINT(d, s, busy_ns);
	ADD_UINT(d, s, asleep_ns);
	ADD_UINT(d, s, mode_changes);
	ADD_UINT(d, s, cold_arms);
	ADD_UINT(d, s, event_checks);
	hist = rte_tel_data_alloc();
	if (hist != NULL) {
		rte_tel_data_start_array(hist, TEL_UINT_VAL);
		for (i = 0; i < CQPOLL_GROUP_WAKE_HIST_BUCKETS; i++)
			TEL_ARRAY_UINT(hist, s.wake_latency_hist[i]);
		/* keep = 0: the dict takes the container and frees it. */
		if (rte_tel_data_add_dict_container(d, "wake_latency_hist",
						    hist, 0) != 0)
			rte_tel_data_free(hist);
	}
	return 0;
}

static int
cq_info(const struct entry *e, struct rte_tel_data *d)
{
	struct cqpoll_cq_info ci;
	int r;

	r = cqpoll_cq_info_get(e->obj, &ci);
	if (r < 0)
		return r;
	add_common(e, d);
	rte_tel_data_add_dict_string(d, "driver", ci.driver);
	rte_tel_data_add_dict_string(d, "arm", cqpoll_arm_semantics_name(ci.arm));
	ADD_UINT(d, ci, size);
	ADD_UINT(d, ci, event_ack_batch);
	rte_tel_data_add_dict_int(d, "lcore",
		e->lcore == LCORE_ID_ANY ? -1 : (int)e->lcore);
	return 0;
}

static int
cq_stats(const struct entry *e, struct rte_tel_data *d)
{
	struct cqpoll_cq_stats s;
	int r;

	r = cqpoll_cq_stats_get(e->obj, &s);
	if (r < 0)
		return r;
	ADD_UINT(d, s, polls);
	ADD_UINT(d, s, empty_polls);
	ADD_UINT(d, s, completions);
	ADD_UINT(d, s, arms);
	ADD_UINT(d, s, missed_reports);
	ADD_UINT(d, s, events);
	ADD_UINT(d, s, spurious_events);
	ADD_UINT(d, s, event_acks);
	ADD_UINT(d, s, waits);
	ADD_UINT(d, s, wait_timeouts);
	ADD_UINT(d, s, lost_wakeups);
	ADD_UINT(d, s, timeout_recoveries);
	return 0;
}

static int
handoff_info(const struct entry *e, struct rte_tel_data *d)
{
	add_common(e, d);
	cqpoll_dpdk_handoff_tel_info(e->obj, d);
	return 0;
}

static int
handoff_stats(const struct entry *e, struct rte_tel_data *d)
{
	cqpoll_dpdk_handoff_tel_stats(e->obj, d);
	return 0;
}

static const describe_t info_fn[KIND_COUNT] = {
	[KIND_GROUP] = group_info,
	[KIND_CQ] = cq_info,
	[KIND_HANDOFF] = handoff_info,
};
static const describe_t stats_fn[KIND_COUNT] = {
	[KIND_GROUP] = group_stats,
	[KIND_CQ] = cq_stats,
	[KIND_HANDOFF] = handoff_stats,
};

/* "/cqpoll/<kind>/<what>" -> the kind; the command is one we registered. */
static enum kind
kind_of(const char *cmd)
{
	const char *s = cmd + strlen("/cqpoll/");
	unsigned int k;

	for (k = 0; k < KIND_COUNT - 1; k++)
		if (strncmp(s, kind_names[k], strlen(kind_names[k])) == 0 &&
		    s[strlen(kind_names[k])] == '/')
			break;
	return (enum kind)k;
}

static int
cmd_list_any(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)params;
	return cmd_list(kind_of(cmd), d);
}

static int
cmd_info_any(const char *cmd, const char *params, struct rte_tel_data *d)
{
	enum kind k = kind_of(cmd);

	return cmd_one(k, params, d, info_fn[k]);
}

static int
cmd_stats_any(const char *cmd, const char *params, struct rte_tel_data *d)
{
	enum kind k = kind_of(cmd);

	return cmd_one(k, params, d, stats_fn[k]);
}

RTE_INIT(cqpoll_dpdk_telemetry_init)
{
	static const struct {
		const char *list, *info, *stats;
	} cmds[KIND_COUNT] = {
		[KIND_GROUP] = { "/cqpoll/group/list", "/cqpoll/group/info",
				 "/cqpoll/group/stats" },
		[KIND_CQ] = { "/cqpoll/cq/list", "/cqpoll/cq/info",
			      "/cqpoll/cq/stats" },
		[KIND_HANDOFF] = { "/cqpoll/handoff/list", "/cqpoll/handoff/info",
				   "/cqpoll/handoff/stats" },
	};
	unsigned int k;

	for (k = 0; k < KIND_COUNT; k++) {
		reg[k].tail = &reg[k].head;
		rte_telemetry_register_cmd(cmds[k].list, cmd_list_any,
			"Returns the ids of the registered cqpoll objects of this kind, ascending. No parameters");
		rte_telemetry_register_cmd(cmds[k].info, cmd_info_any,
			"Returns the name and configuration of a cqpoll object. Parameters: int id");
		rte_telemetry_register_cmd(cmds[k].stats, cmd_stats_any,
			"Returns the counters of a cqpoll object. Parameters: int id");
	}
}

static bool
valid_name(const char *name)
{
	size_t len;

	if (name == NULL)
		return false;
	len = strlen(name);
	return len > 0 && len < CQPOLL_DPDK_NAME_MAX;
}

static int
reg_add(enum kind k, const char *name, void *obj)
{
	struct entry *e;
	int r = 0;

	if (obj == NULL || !valid_name(name)) {
		CQPOLL_DPDK_LOG(ERR, "telemetry: cannot register a %s: %s",
			kind_names[k], obj == NULL ? "NULL object" :
			"name NULL, empty or longer than 63 characters");
		return cqpoll_dpdk_err(EINVAL);
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		CQPOLL_DPDK_LOG(ERR, "telemetry: %s %s: out of memory",
				kind_names[k], name);
		return cqpoll_dpdk_err(ENOMEM);
	}
	e->obj = obj;
	e->lcore = rte_lcore_id();
	strcpy(e->name, name);
	pthread_mutex_lock(&reg_lock);
	if (find_name(k, name) != NULL) {
		r = -EEXIST;
	} else {
		e->id = reg[k].next_id++;
		*reg[k].tail = e;
		reg[k].tail = &e->next;
	}
	pthread_mutex_unlock(&reg_lock);
	if (r < 0) {
		free(e);
		CQPOLL_DPDK_LOG(ERR, "telemetry: a %s named %s is already registered",
				kind_names[k], name);
		return cqpoll_dpdk_err(-r);
	}
	CQPOLL_DPDK_LOG(DEBUG, "telemetry: %s %s is id %u", kind_names[k],
			name, e->id);
	return 0;
}

/* Under reg_lock: unlink the first entry @match accepts. */
static struct entry *
reg_unlink(enum kind k, bool (*match)(const struct entry *, const void *),
	   const void *key)
{
	struct entry **pp, *e;

	for (pp = &reg[k].head; (e = *pp) != NULL; pp = &e->next)
		if (match(e, key))
			break;
	if (e == NULL)
		return NULL;
	*pp = e->next;
	if (reg[k].tail == &e->next)
		reg[k].tail = pp;
	return e;
}

static bool
match_name(const struct entry *e, const void *key)
{
	return strcmp(e->name, key) == 0;
}

static bool
match_obj(const struct entry *e, const void *key)
{
	return e->obj == key;
}

static int
reg_remove_name(enum kind k, const char *name)
{
	struct entry *e;

	if (name == NULL) {
		CQPOLL_DPDK_LOG(ERR, "telemetry: cannot unregister a %s: NULL name",
				kind_names[k]);
		return cqpoll_dpdk_err(EINVAL);
	}
	pthread_mutex_lock(&reg_lock);
	e = reg_unlink(k, match_name, name);
	pthread_mutex_unlock(&reg_lock);
	if (e == NULL) {
		CQPOLL_DPDK_LOG(ERR, "telemetry: no %s named %s is registered",
				kind_names[k], name);
		return cqpoll_dpdk_err(ENOENT);
	}
	free(e);
	return 0;
}

int
cqpoll_dpdk_telemetry_register_group(const char *name, struct cqpoll_group *g)
{
	return reg_add(KIND_GROUP, name, g);
}

int
cqpoll_dpdk_telemetry_unregister_group(const char *name)
{
	return reg_remove_name(KIND_GROUP, name);
}

int
cqpoll_dpdk_telemetry_register_cq(const char *name, struct cqpoll_cq *cq)
{
	return reg_add(KIND_CQ, name, cq);
}

int
cqpoll_dpdk_telemetry_unregister_cq(const char *name)
{
	return reg_remove_name(KIND_CQ, name);
}

int
cqpoll_dpdk_telemetry_add_handoff(const char *name, struct cqpoll_dpdk_handoff *h)
{
	return reg_add(KIND_HANDOFF, name, h);
}

void
cqpoll_dpdk_telemetry_remove_handoff(struct cqpoll_dpdk_handoff *h)
{
	struct entry *e;

	pthread_mutex_lock(&reg_lock);
	e = reg_unlink(KIND_HANDOFF, match_obj, h);
	pthread_mutex_unlock(&reg_lock);
	free(e);
}
