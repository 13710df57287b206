/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How the drivers' libibverbs calls reach an emulated context: the table of
 * drivers/common/ibv (ibv_glue.h) that every emulated context is registered
 * with when it opens (verbs_emu_async.c). The drivers call the same entries
 * on a real context and get libibverbs; libcqpoll_emu defines no libibverbs
 * symbol and depends on no link order.
 */

#include <errno.h>

#include "ibv_glue.h"
#include "verbs_emu_private.h"

/* libibverbs' destroy calls return an errno value; the kit's return -errno. */
static int
emu_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	int r = cqpoll_verbs_emu_ibv_destroy_comp_channel(ch);

	return r < 0 ? -r : 0;
}

static int
emu_destroy_cq(struct ibv_cq *cq)
{
	int r = cqpoll_verbs_emu_ibv_destroy_cq(cq);

	return r < 0 ? -r : 0;
}

/* The context's own provider entries, as libibverbs' inlines reach them. */
static struct ibv_cq_ex *
emu_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	return ibv_create_cq_ex(ctx, attr);
}

static int
emu_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
		    struct ibv_device_attr_ex *attr)
{
	return ibv_query_device_ex(ctx, input, attr);
}

/*
 * verbs-emu has CQs only: its CQs are filled by the tests, not by work
 * requests, so a QP is refused as a device without QP support would.
 */
static struct ibv_qp *
emu_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	(void)pd;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
emu_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	(void)qp;
	(void)attr;
	(void)attr_mask;
	return EOPNOTSUPP;
}

static int
emu_destroy_qp(struct ibv_qp *qp)
{
	(void)qp;
	return EOPNOTSUPP;
}

static struct ibv_srq *
emu_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void)pd;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
emu_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask)
{
	(void)srq;
	(void)attr;
	(void)attr_mask;
	return EOPNOTSUPP;
}

static int
emu_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	(void)srq;
	(void)attr;
	return EOPNOTSUPP;
}

static int
emu_destroy_srq(struct ibv_srq *srq)
{
	(void)srq;
	return EOPNOTSUPP;
}

/* An emulated verbs context is no mlx5 device, as mlx5dv_is_supported() says. */
static bool
emu_mlx5dv_is_supported(struct ibv_device *dev)
{
	(void)dev;
	return false;
}

static int
emu_mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t type)
{
	(void)obj;
	(void)type;
	return EOPNOTSUPP;
}

static struct ibv_cq_ex *
emu_mlx5dv_create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr,
		     struct mlx5dv_cq_init_attr *mlx5_attr)
{
	(void)ctx;
	(void)attr;
	(void)mlx5_attr;
	errno = EOPNOTSUPP;
	return NULL;
}

const struct cqpoll_ibv_glue cqpoll_verbs_emu_glue = {
	.name = "verbs-emu",
	.create_comp_channel = cqpoll_verbs_emu_ibv_create_comp_channel,
	.destroy_comp_channel = emu_destroy_comp_channel,
	.create_cq = cqpoll_verbs_emu_ibv_create_cq,
	.create_cq_ex = emu_create_cq_ex,
	.destroy_cq = emu_destroy_cq,
	.query_device_ex = emu_query_device_ex,
	.get_cq_event = cqpoll_verbs_emu_ibv_get_cq_event,
	.ack_cq_events = cqpoll_verbs_emu_ibv_ack_cq_events,
	.get_async_event = cqpoll_verbs_emu_get_async_event,
	.ack_async_event = cqpoll_verbs_emu_ack_async_event,
	.create_qp = emu_create_qp,
	.modify_qp = emu_modify_qp,
	.destroy_qp = emu_destroy_qp,
	.create_srq = emu_create_srq,
	.modify_srq = emu_modify_srq,
	.query_srq = emu_query_srq,
	.destroy_srq = emu_destroy_srq,
	.mlx5dv_is_supported = emu_mlx5dv_is_supported,
	.mlx5dv_init_obj = emu_mlx5dv_init_obj,
	.mlx5dv_create_cq = emu_mlx5dv_create_cq,
};
