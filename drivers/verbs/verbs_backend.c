/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The seam: what needs a kernel device. Real devices get libibverbs; emulated
 * contexts are recognised by their device and get verbs-emu.
 */

#include "cqpoll_verbs_emu.h"
#include "verbs_private.h"

const struct cqpoll_verbs_backend cqpoll_verbs_backend_ibv = {
	.name = "ibv",
	.create_channel = ibv_create_comp_channel,
	.destroy_channel = ibv_destroy_comp_channel,
	.create_cq = ibv_create_cq,
	.destroy_cq = ibv_destroy_cq,
	.events = &cqpoll_ibv_events_verbs,
	.stranded = NULL,
};

const struct cqpoll_verbs_backend *
cqpoll_verbs_backend_of(const struct ibv_context *ctx)
{
	return cqpoll_verbs_emu_is_context(ctx) ? &cqpoll_verbs_backend_emu :
						  &cqpoll_verbs_backend_ibv;
}
