/* SPDX-License-Identifier: BSD-3-Clause */
/* ethdev consumer: rte_eth_rx_burst(), each mbuf one completion. */

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "ethdev_private.h"

/* mbuf pointers read per rte_eth_rx_burst() call: on the stack. */
#define ETHDEV_CHUNK 64u

int
cqpoll_ethdev_poll(void *priv, struct cqpoll_completion *comps, unsigned int n)
{
	struct cqpoll_ethdev_cq *q = priv;
	struct rte_mbuf *m[ETHDEV_CHUNK];
	unsigned int got = 0, i;
	uint16_t want, k;

	while (got < n) {
		want = (uint16_t)RTE_MIN(n - got, ETHDEV_CHUNK);
		k = rte_eth_rx_burst(q->port, q->queue, m, want);
		for (i = 0; i < k; i++) {
			struct cqpoll_completion *c = &comps[got + i];

			c->wr_id = (uint64_t)(uintptr_t)m[i];
			c->timestamp = 0;
			c->inline_data = NULL;
			c->byte_len = m[i]->pkt_len;
			c->qp_num = q->queue;
			c->imm_data = 0;
			c->vendor_err = 0;
			c->status = CQPOLL_STATUS_SUCCESS;
			c->opcode = CQPOLL_OP_RECV;
			c->flags = CQPOLL_COMPLETION_F_WR_ID;
			c->wqe_counter = 0;
			c->reserved = 0;
		}
		got += k;
		/* A short burst: the queue is empty (or the PMD says so). */
		if (k < want)
			break;
	}
	return (int)got;
}
