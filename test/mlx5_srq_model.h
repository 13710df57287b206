/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_MLX5_SRQ_MODEL_H
#define TEST_MLX5_SRQ_MODEL_H

/*
 * A model of an mlx5 shared receive queue's free list, written from
 * rdma-core v44's provider (providers/mlx5/srq.c and verbs.c), not from
 * cqpoll or its emulator:
 *  - mlx5_create_srq/mlx5_alloc_srq_buf: max_wr + 1 WQEs rounded up to a
 *    power of two (align_queue_size), each linked to the next
 *    (set_srq_buf_ll), head 0, tail the last one; max_wr reported = tail;
 *  - mlx5_post_srq_recv: full when head == tail (ENOMEM); else the WQE at
 *    head takes the wr_id and head follows its next_wqe_index link;
 *  - mlx5_free_srq_wqe (a completion retired): the tail's link is set to the
 *    freed WQE, which becomes the tail.
 * The device takes posted WQEs in their linked order, that is in the order
 * they were posted (it follows the same links the posts followed), and a
 * CQE names the SRQ WQE it took (cq.c: wr_id = srq->wrid[wqe_counter]).
 */

#include <stdint.h>
#include <stdlib.h>

struct srq_model {
	uint32_t nwqes, head, tail;
	uint16_t *next;
};

static inline int
srq_model_init(struct srq_model *m, uint32_t max_wr)
{
	uint32_t i;

	for (m->nwqes = 1; m->nwqes < max_wr + 1; m->nwqes <<= 1)
		;
	m->next = calloc(m->nwqes, sizeof(*m->next));
	if (m->next == NULL)
		return -1;
	for (i = 0; i + 1 < m->nwqes; i++)
		m->next[i] = (uint16_t)(i + 1);
	m->head = 0;
	m->tail = m->nwqes - 1;
	return 0;
}

static inline void
srq_model_fini(struct srq_model *m)
{
	free(m->next);
	m->next = NULL;
}

/* The WQE a post takes, or -1: full. */
static inline int32_t
srq_model_post(struct srq_model *m)
{
	uint32_t idx = m->head;

	if (m->head == m->tail)
		return -1;
	m->head = m->next[idx];
	return (int32_t)idx;
}

static inline void
srq_model_free(struct srq_model *m, uint32_t idx)
{
	m->next[m->tail] = (uint16_t)idx;
	m->tail = idx;
}

#endif /* TEST_MLX5_SRQ_MODEL_H */
