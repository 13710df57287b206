/* SPDX-License-Identifier: BSD-3-Clause */
/* libibverbs' table (ibv_glue.h) and the contexts served by another one. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "ibv_autoconf.h"
#include "ibv_glue.h"

#if CQPOLL_IBV_HAVE_MLX5
#include <infiniband/mlx5dv.h>
#endif

/* The inlines of <infiniband/verbs.h>, as functions the table can hold. */
static struct ibv_cq_ex *
verbs_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	return ibv_create_cq_ex(ctx, attr);
}

static int
verbs_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
		      struct ibv_device_attr_ex *attr)
{
	return ibv_query_device_ex(ctx, input, attr);
}

static bool
verbs_mlx5dv_is_supported(struct ibv_device *dev)
{
#if CQPOLL_IBV_HAVE_MLX5 && CQPOLL_IBV_HAVE_MLX5DV_IS_SUPPORTED
	return mlx5dv_is_supported(dev);
#elif CQPOLL_IBV_HAVE_MLX5
	/* Older rdma-core: mlx5dv_init_obj() is the test. */
	(void)dev;
	return true;
#else
	(void)dev;
	return false;
#endif
}

static int
verbs_mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t type)
{
#if CQPOLL_IBV_HAVE_MLX5
	return mlx5dv_init_obj(obj, type);
#else
	(void)obj;
	(void)type;
	return EOPNOTSUPP;
#endif
}

static struct ibv_cq_ex *
verbs_mlx5dv_create_cq(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr,
		       struct mlx5dv_cq_init_attr *mlx5_attr)
{
#if CQPOLL_IBV_HAVE_MLX5
	return mlx5dv_create_cq(ctx, attr, mlx5_attr);
#else
	(void)ctx;
	(void)attr;
	(void)mlx5_attr;
	errno = EOPNOTSUPP;
	return NULL;
#endif
}

static const struct cqpoll_ibv_glue verbs_glue = {
	.name = "libibverbs",
	.create_comp_channel = ibv_create_comp_channel,
	.destroy_comp_channel = ibv_destroy_comp_channel,
	.create_cq = ibv_create_cq,
	.create_cq_ex = verbs_create_cq_ex,
	.destroy_cq = ibv_destroy_cq,
	.query_device_ex = verbs_query_device_ex,
	.get_cq_event = ibv_get_cq_event,
	.ack_cq_events = ibv_ack_cq_events,
	.get_async_event = ibv_get_async_event,
	.ack_async_event = ibv_ack_async_event,
	.create_qp = ibv_create_qp,
	.modify_qp = ibv_modify_qp,
	.destroy_qp = ibv_destroy_qp,
	.create_srq = ibv_create_srq,
	.modify_srq = ibv_modify_srq,
	.query_srq = ibv_query_srq,
	.destroy_srq = ibv_destroy_srq,
	.mlx5dv_is_supported = verbs_mlx5dv_is_supported,
	.mlx5dv_init_obj = verbs_mlx5dv_init_obj,
	.mlx5dv_create_cq = verbs_mlx5dv_create_cq,
};

struct glue_entry {
	struct ibv_context *ctx;
	const struct cqpoll_ibv_glue *glue;
	struct glue_entry *next;
};

/* Looked up when a CQ or channel is made or attached, never on the poll path. */
static pthread_mutex_t glue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct glue_entry *glues;

static bool
glue_complete(const struct cqpoll_ibv_glue *g)
{
	return g->create_comp_channel != NULL && g->destroy_comp_channel != NULL &&
	       g->create_cq != NULL && g->create_cq_ex != NULL && g->destroy_cq != NULL &&
	       g->query_device_ex != NULL && g->get_cq_event != NULL &&
	       g->ack_cq_events != NULL && g->get_async_event != NULL &&
	       g->ack_async_event != NULL && g->create_qp != NULL &&
	       g->modify_qp != NULL && g->destroy_qp != NULL &&
	       g->mlx5dv_is_supported != NULL &&
	       g->mlx5dv_init_obj != NULL && g->mlx5dv_create_cq != NULL;
}

int
cqpoll_ibv_glue_register(struct ibv_context *ctx, const struct cqpoll_ibv_glue *glue)
{
	struct glue_entry *e;
	int r = 0;

	/* A missing entry would fall through to libibverbs: refuse it here. */
	if (ctx == NULL || glue == NULL || !glue_complete(glue))
		return -EINVAL;
	pthread_mutex_lock(&glue_lock);
	for (e = glues; e != NULL; e = e->next)
		if (e->ctx == ctx)
			r = -EEXIST;
	if (r == 0) {
		e = malloc(sizeof(*e));
		if (e == NULL) {
			r = -ENOMEM;
		} else {
			e->ctx = ctx;
			e->glue = glue;
			e->next = glues;
			glues = e;
		}
	}
	pthread_mutex_unlock(&glue_lock);
	return r;
}

void
cqpoll_ibv_glue_unregister(struct ibv_context *ctx)
{
	struct glue_entry **p, *e;

	pthread_mutex_lock(&glue_lock);
	for (p = &glues; *p != NULL; p = &(*p)->next) {
		if ((*p)->ctx == ctx) {
			e = *p;
			*p = e->next;
			free(e);
			break;
		}
	}
	pthread_mutex_unlock(&glue_lock);
}

const struct cqpoll_ibv_glue *
cqpoll_ibv_glue_of(struct ibv_context *ctx)
{
	const struct cqpoll_ibv_glue *g = &verbs_glue;
	struct glue_entry *e;

	pthread_mutex_lock(&glue_lock);
	for (e = glues; e != NULL; e = e->next)
		if (e->ctx == ctx)
			g = e->glue;
	pthread_mutex_unlock(&glue_lock);
	return g;
}
