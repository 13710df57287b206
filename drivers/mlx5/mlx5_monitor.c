/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlx5's monitor address, as DPDK's mlx5 PMD gives ethdev's get_monitor_addr:
 * the op_own byte of the next CQE (contract §2.1, §3.1), whose owner bit the
 * device writes with the phase of its lap. A slot still holding the INVALID
 * mark of a fresh buffer already has the owner value of the first lap, so
 * there the wait is for the byte to change, which the device's write of a
 * real opcode does.
 */

#include <errno.h>

#include <infiniband/mlx5dv.h>

#include "cqpoll_monitor.h"
#include "mlx5_prm.h"
#include "mlx5_private.h"

int
cqpoll_mlx5_get_monitor_addr(void *priv, struct cqpoll_monitor_cond *cond)
{
	struct cqpoll_mlx5_cq *q = priv;
	const struct mlx5_cqe64 *cqe;
	uint8_t own, sw_owner;

	/*
	 * Inside a compressed session the next completions come from its copy,
	 * and a device error must be reported: either way, poll now.
	 */
	if (q->slow.zip.next != q->slow.zip.cnt ||
	    __atomic_load_n(&q->dev_err, __ATOMIC_RELAXED) != 0)
		return -EAGAIN;
	cqe = cqpoll_mlx5_cqe(q->buf, q->ci, q->cqe_cnt, q->cqe_size);
	/*
	 * Enhanced compression layout: validity is the iteration-count byte
	 * (DPDK mlx5_get_monitor_addr: that byte, the lap's count, mask 0xff).
	 */
	if (q->slow.layout == CQPOLL_MLX5_COMP_ENHANCED) {
		uint8_t want = cqpoll_mlx5_vic(q->ci, q->cqe_cnt);

		if (__atomic_load_n(&cqe->signature, __ATOMIC_ACQUIRE) == want)
			return -EAGAIN;
		cond->addr = &cqe->signature;
		cond->size = sizeof(cqe->signature);
		cond->mask = 0xff;
		cond->val = want;
		cond->match = CQPOLL_MONITOR_EQUAL;
		return 0;
	}
	sw_owner = cqpoll_mlx5_sw_owner(q->ci, q->cqe_cnt);
	own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);
	cond->addr = &cqe->op_own;
	cond->size = sizeof(cqe->op_own);
	if ((own >> 4) == MLX5_CQE_INVALID) {
		cond->mask = 0xff;
		cond->val = own;
		cond->match = CQPOLL_MONITOR_NOT_EQUAL;
		return 0;
	}
	if ((own & MLX5_CQE_OWNER_MASK) == sw_owner)
		return -EAGAIN;
	cond->mask = MLX5_CQE_OWNER_MASK;
	cond->val = sw_owner;
	cond->match = CQPOLL_MONITOR_EQUAL;
	return 0;
}
