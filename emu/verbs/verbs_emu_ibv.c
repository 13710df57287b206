/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs' exported calls that need a kernel device, as a provider of
 * emulated contexts: libcqpoll_emu defines them with libibverbs' own symbol
 * versions, so that a program linking libcqpoll_emu before libibverbs reaches
 * these first (from libcqpoll too). Emulated contexts, channels and CQs are
 * served here; everything else goes on to libibverbs unchanged. libcqpoll
 * calls libibverbs and never asks whether a device is emulated.
 */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "verbs_emu_private.h"

/* Resolved once; a missing one is a broken libibverbs: stop loudly. */
static void *
next_sym(const char *name, const char *version)
{
	void *f = dlvsym(RTLD_NEXT, name, version);

	if (f == NULL) {
		fprintf(stderr, "libcqpoll_emu: %s@%s not found in libibverbs\n",
			name, version);
		abort();
	}
	return f;
}

#define NEXT(fn, version) \
	static __typeof__(fn) *next; \
	if (__atomic_load_n(&next, __ATOMIC_ACQUIRE) == NULL) \
		__atomic_store_n(&next, (__typeof__(fn) *)next_sym(#fn, version), \
				 __ATOMIC_RELEASE)

static int
emu_channel(const struct ibv_comp_channel *ch)
{
	return ch != NULL && cqpoll_verbs_emu_is_context(ch->context);
}

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ctx)
{
	NEXT(ibv_create_comp_channel, "IBVERBS_1.0");
	if (cqpoll_verbs_emu_is_context(ctx))
		return cqpoll_verbs_emu_ibv_create_comp_channel(ctx);
	return next(ctx);
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	int r;

	NEXT(ibv_destroy_comp_channel, "IBVERBS_1.0");
	if (!emu_channel(ch))
		return next(ch);
	/* As libibverbs: errno-style return value. */
	r = cqpoll_verbs_emu_ibv_destroy_comp_channel(ch);
	return r < 0 ? -r : 0;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
	      struct ibv_comp_channel *ch, int comp_vector)
{
	NEXT(ibv_create_cq, "IBVERBS_1.1");
	if (cqpoll_verbs_emu_is_context(ctx))
		return cqpoll_verbs_emu_ibv_create_cq(ctx, cqe, cq_context, ch, comp_vector);
	return next(ctx, cqe, cq_context, ch, comp_vector);
}

int
ibv_destroy_cq(struct ibv_cq *cq)
{
	int r;

	NEXT(ibv_destroy_cq, "IBVERBS_1.1");
	if (cq == NULL || !cqpoll_verbs_emu_is_context(cq->context))
		return next(cq);
	r = cqpoll_verbs_emu_ibv_destroy_cq(cq);
	return r < 0 ? -r : 0;
}

int
ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	NEXT(ibv_get_cq_event, "IBVERBS_1.1");
	if (emu_channel(ch))
		return cqpoll_verbs_emu_ibv_get_cq_event(ch, cq, cq_context);
	return next(ch, cq, cq_context);
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
	NEXT(ibv_ack_cq_events, "IBVERBS_1.1");
	if (cq != NULL && cqpoll_verbs_emu_is_context(cq->context))
		cqpoll_verbs_emu_ibv_ack_cq_events(cq, n);
	else
		next(cq, n);
}
