/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Built-in sleep policies by name, and the parameter parsing they share.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cqpoll_policy_private.h"

const struct cqpoll_policy_ops *
cqpoll_policy_find(const char *spec, const char **args)
{
	const struct cqpoll_policy_ops *all[] = {
		cqpoll_policy_spin(), cqpoll_policy_adaptive(),
		cqpoll_policy_hybrid(), cqpoll_policy_latency_target(),
		cqpoll_policy_target_p99(),
	};
	const char *colon;
	size_t len, i;

	if (spec == NULL || args == NULL)
		return NULL;
	colon = strchr(spec, ':');
	len = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strlen(all[i]->name) == len &&
		    strncmp(all[i]->name, spec, len) == 0) {
			*args = colon != NULL ? colon + 1 : NULL;
			return all[i];
		}
	}
	return NULL;
}

cqpoll_policy_sleep_cpu_t
cqpoll_policy_sleep_cpu_op(const struct cqpoll_policy_ops *ops)
{
	return CQPOLL_POLICY_OP(ops, sleep_cpu);
}

int
cqpoll_policy_sleep_cpu(const struct cqpoll_policy_ops *ops, void *state,
			uint64_t cpu_ns)
{
	cqpoll_policy_sleep_cpu_t fn;

	if (ops == NULL || state == NULL)
		return -EINVAL;
	fn = cqpoll_policy_sleep_cpu_op(ops);
	if (fn == NULL)
		return -ENOTSUP;
	fn(state, cpu_ns);
	return 0;
}

int
cqpoll_policy_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *v)
{
	char buf[32];
	char *end;
	unsigned long long x;

	/* strtoull accepts signs and spaces; a policy parameter is digits only. */
	if (len == 0 || len >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	x = strtoull(buf, &end, 10);
	if (errno != 0 || *end != '\0' || x > max)
		return -EINVAL;
	*v = x;
	return 0;
}

int
cqpoll_policy_parse_kv(const char *args, cqpoll_policy_kv_t set, void *ctx)
{
	const char *p = args, *comma, *eq;
	size_t len;

	while (p != NULL && *p != '\0') {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		eq = memchr(p, '=', len);
		if (eq == NULL ||
		    set(ctx, p, (size_t)(eq - p), eq + 1,
			len - (size_t)(eq - p) - 1) < 0)
			return -EINVAL;
		p = comma != NULL ? comma + 1 : NULL;
	}
	return 0;
}

int
cqpoll_policy_key_is(const char *key, size_t klen, const char *name)
{
	return strlen(name) == klen && strncmp(key, name, klen) == 0;
}
