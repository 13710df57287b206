/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_MLX5QP_H
#define TPCQ_MLX5QP_H

/*
 * mlx5-emu's traffic through cqpoll's own QPs (dev_mlx5_qp.c): the device
 * carries out each request the generator posts on a QP, and its completion
 * is what the poller reads.
 */

#include <stdint.h>

#include "dev.h"

struct tpcq_mlx5qp;

/* A QP pair on a device of its own, sending on @p dc->cq; 0 or -errno. */
int tpcq_mlx5qp_open(struct tpcq_devctx *dc, struct tpcq_mlx5qp **out);
/* Post request @p seq and let the device carry it out: 0, -ENOSPC or -errno. */
int tpcq_mlx5qp_post(struct tpcq_devctx *dc, struct tpcq_mlx5qp *m, uint64_t seq);
/* Let the device go on with what waited (a receive, room in a CQ). */
void tpcq_mlx5qp_service(struct tpcq_mlx5qp *m);
/* Before the CQ of @p dc goes: the QPs and all but that CQ. */
void tpcq_mlx5qp_close(struct tpcq_mlx5qp *m);

#endif /* TPCQ_MLX5QP_H */
