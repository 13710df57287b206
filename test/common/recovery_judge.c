/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Late or lost: see recovery_judge.h. The rule and the hook are
 * emu/judge/cqpoll_recovery_judge.h's; this keeps the tests' post records
 * and counts.
 */

#include "cqpoll_recovery_judge.h"
#include "cqpoll_test.h"
#include "recovery_judge.h"

/* When each post returned; t_end 0 while the post is under way. */
struct post_rec {
	uint64_t seq;
	uint64_t t_end;
};

static struct post_rec posts[RJ_MAX_CQS][RJ_RING];
static struct cqpoll_cq *const *cqs;
static unsigned int ncqs;
static const uint64_t *next;
static uint64_t late[RJ_MAX_CQS], lost[RJ_MAX_CQS], worst[RJ_MAX_CQS];
static struct cqpoll_rj_watch watch;

void
rj_post_begin(unsigned int i, uint64_t seq)
{
	struct post_rec *pr = &posts[i][seq % RJ_RING];

	__atomic_store_n(&pr->t_end, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pr->seq, seq, __ATOMIC_RELEASE);
}

void
rj_post_end(unsigned int i, uint64_t seq)
{
	__atomic_store_n(&posts[i][seq % RJ_RING].t_end, test_now_ns(), __ATOMIC_RELEASE);
}

static int
cq_index(const struct cqpoll_cq *cq, unsigned int *i)
{
	for (*i = 0; *i < ncqs; (*i)++)
		if (cqs[*i] == cq)
			return 1;
	return 0;
}

/* The record of the consumer's next expected post; another post's: 0. */
static int
post_end(void *arg, const struct cqpoll_cq *cq, uint64_t *t_end)
{
	const struct post_rec *pr;
	uint64_t want, seq;
	unsigned int i;

	(void)arg;
	if (!cq_index(cq, &i))
		return 0;
	want = __atomic_load_n(&next[i], __ATOMIC_ACQUIRE);
	pr = &posts[i][want % RJ_RING];
	/* The sequence number first: a t_end read after it is that post's. */
	seq = __atomic_load_n(&pr->seq, __ATOMIC_ACQUIRE);
	*t_end = __atomic_load_n(&pr->t_end, __ATOMIC_ACQUIRE);
	if (seq != want)
		*t_end = 0;
	return 1;
}

static void
verdict(void *arg, const struct cqpoll_cq *cq, enum cqpoll_rj_verdict v,
	uint64_t early_ns)
{
	unsigned int i;

	(void)arg;
	if (!cq_index(cq, &i))
		return;
	if (v == CQPOLL_RJ_LATE) {
		__atomic_fetch_add(&late[i], 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&lost[i], 1, __ATOMIC_RELAXED);
	if (early_ns > __atomic_load_n(&worst[i], __ATOMIC_RELAXED))
		__atomic_store_n(&worst[i], early_ns, __ATOMIC_RELAXED);
}

void
rj_init(struct cqpoll_cq *const *c, unsigned int n, const uint64_t *nx)
{
	cqs = c;
	ncqs = n < RJ_MAX_CQS ? n : RJ_MAX_CQS;
	next = nx;
	watch = (struct cqpoll_rj_watch){ .post_end = post_end, .verdict = verdict };
	cqpoll_rj_watch_all(&watch);
}

void
rj_fini(void)
{
	cqpoll_rj_unwatch_all();
	ncqs = 0;
}

uint64_t
rj_late(unsigned int i)
{
	return __atomic_load_n(&late[i], __ATOMIC_RELAXED);
}

uint64_t
rj_lost(unsigned int i)
{
	return __atomic_load_n(&lost[i], __ATOMIC_RELAXED);
}

uint64_t
rj_worst_ns(unsigned int i)
{
	return __atomic_load_n(&worst[i], __ATOMIC_RELAXED);
}
