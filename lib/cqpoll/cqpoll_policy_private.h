/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_POLICY_PRIVATE_H
#define CQPOLL_POLICY_PRIVATE_H

/* What the built-in policies share. */

#include <stddef.h>
#include <stdint.h>

#include "cqpoll_group.h"

/* Parse @len decimal digits at @s into @v, at most @max: 0 or -EINVAL. */
int cqpoll_policy_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *v);

/* Receives one "key=value" of a parameter list: 0 or -EINVAL. */
typedef int (*cqpoll_policy_kv_t)(void *ctx, const char *key, size_t klen,
				  const char *val, size_t vlen);

/*
 * Split "k=v,k=v,..." (NULL or "" is an empty list) and hand each pair to
 * @set: 0, or -EINVAL for an item without '=' or one @set rejects.
 */
int cqpoll_policy_parse_kv(const char *args, cqpoll_policy_kv_t set, void *ctx);

/* Does the @klen bytes at @key spell @name? */
int cqpoll_policy_key_is(const char *key, size_t klen, const char *name);

/* Exponentially weighted moving average with weight 2^-shift. */
static inline uint64_t
cqpoll_policy_ewma(uint64_t avg, uint64_t sample, unsigned int shift)
{
	if (sample >= avg)
		return avg + ((sample - avg) >> shift);
	return avg - ((avg - sample) >> shift);
}

/*
 * How the hybrid policy sleeps on a timer without arming any CQ: @fn sleeps
 * about @ns and returns the time it really took, so the policy learns the
 * timer's overshoot. It is the first member of the hybrid policy's state, so
 * that a unit test can replace @fn after init and drive the policy on a
 * synthetic clock; @count and @total_ns count the naps and their time.
 */
struct cqpoll_policy_nap {
	uint64_t (*fn)(void *arg, uint64_t ns);
	void *arg;
	uint64_t count;
	uint64_t total_ns;
};

/* The measured thread CPU of one sleep (the sleep_cpu op). */
typedef void (*cqpoll_policy_sleep_cpu_t)(void *state, uint64_t cpu_ns);

/*
 * @p m of @p ops if the table's size covers it, else NULL: a table built
 * before a member existed has no room for it.
 */
#define CQPOLL_POLICY_OP(ops, m) \
	((ops)->size >= offsetof(struct cqpoll_policy_ops, m) + sizeof((ops)->m) ? \
	 (ops)->m : NULL)

/* The size of a table of the first version, up to wake_cost. */
#define CQPOLL_POLICY_OPS_SIZE_V1 \
	(offsetof(struct cqpoll_policy_ops, wake_cost) + \
	 sizeof(((struct cqpoll_policy_ops *)0)->wake_cost))

/* The sleep-CPU op of @ops, or NULL when it takes none. */
cqpoll_policy_sleep_cpu_t cqpoll_policy_sleep_cpu_op(const struct cqpoll_policy_ops *ops);
void cqpoll_policy_adaptive_sleep_cpu(void *state, uint64_t cpu_ns);
void cqpoll_policy_hybrid_sleep_cpu(void *state, uint64_t cpu_ns);

/* The ops of "target-p99:US", the short spec of latency-target. */
const struct cqpoll_policy_ops *cqpoll_policy_target_p99(void);

#endif /* CQPOLL_POLICY_PRIVATE_H */
