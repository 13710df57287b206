/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs driver's probe for an existing ibv_cq (drivers/common/ibv,
 * ibv_probe.h): it takes any CQ libibverbs made, giving the caller's wr_id,
 * and is asked last.
 */

#include "ibv_probe.h"
#include "verbs_private.h"

static struct cqpoll_cq *
verbs_ibv_attach(struct ibv_cq *cq, struct ibv_comp_channel *ch,
		 const struct cqpoll_ibv_conf *conf)
{
	struct cqpoll_verbs_conf vconf = { 0 };

	vconf.event_ack_batch = conf->event_ack_batch;
	if (conf->flags & CQPOLL_IBV_F_SOLICITED_ONLY)
		vconf.flags |= CQPOLL_VERBS_F_SOLICITED_ONLY;
	if (conf->flags & CQPOLL_IBV_F_CQ_EX) {
		/* The ibv_cq is the head of the ibv_cq_ex it was made as. */
		vconf.wc_flags = conf->wc_flags;
		return cqpoll_verbs_cq_attach_ex((struct ibv_cq_ex *)(void *)cq, ch, &vconf);
	}
	return cqpoll_verbs_cq_attach(cq, ch, &vconf);
}

const struct cqpoll_ibv_probe cqpoll_verbs_ibv_probe = {
	.name = "verbs",
	.priority = 100,
	.attach = verbs_ibv_attach,
};
