/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_IBV_GLUE_H
#define CQPOLL_IBV_GLUE_H

/*
 * Every libibverbs and libmlx5 function the drivers over libibverbs (mlx5,
 * verbs, common/ibv) call, through one table (DPDK's mlx5_glue): libibverbs'
 * own by default; a context registered with a table of its own (an emulated
 * device, in libcqpoll_emu) is served by that one, so no library ever has to
 * define a libibverbs symbol. INTERNAL: no header installed, not for
 * applications, no stability promise (doc/guides/abi.md).
 *
 * Not in the table: the data-path inlines of <infiniband/verbs.h>
 * (ibv_poll_cq(), ibv_req_notify_cq(), ibv_start_poll() and the
 * ibv_wc_read_*() family). They are not library functions but calls through
 * the context's own provider pointers, which an emulated context fills as
 * any provider does; a table in front of them would cost the fast path an
 * indirect call and buy nothing.
 *
 * The table is found from the context once, when a CQ or channel is made or
 * attached, and kept with it: no lookup on the poll or event path.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct mlx5dv_obj;
struct mlx5dv_cq_init_attr;

/* Each entry as the libibverbs (or libmlx5) function of that name. */
struct cqpoll_ibv_glue {
	const char *name; /* in logs */
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *ctx);
	/* 0 or an errno value, as libibverbs. */
	int (*destroy_comp_channel)(struct ibv_comp_channel *ch);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *ch, int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *ctx,
					  struct ibv_cq_init_attr_ex *attr);
	/* 0 or an errno value, as libibverbs. */
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*query_device_ex)(struct ibv_context *ctx,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr);
	/* 0, or -1 with errno (EAGAIN: none; the fd is non-blocking). */
	int (*get_cq_event)(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			    void **cq_context);
	void (*ack_cq_events)(struct ibv_cq *cq, unsigned int n);
	/* 0, or -1 with errno (EAGAIN: none). */
	int (*get_async_event)(struct ibv_context *ctx, struct ibv_async_event *ev);
	void (*ack_async_event)(struct ibv_async_event *ev);
	/* QPs whose work the mlx5 driver posts itself (mlx5_qp.c). */
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	/* 0 or an errno value, as libibverbs. */
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	/* 0 or an errno value, as libibverbs. */
	int (*destroy_qp)(struct ibv_qp *qp);
	/* Shared receive queues of the mlx5 driver's QPs (mlx5_srq.c). */
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
	/* 0 or an errno value, as libibverbs, for these three. */
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	int (*destroy_srq)(struct ibv_srq *srq);
	/*
	 * libmlx5 (mlx5dv(3)). A build without the mlx5 driver, or a context
	 * that is no mlx5 device, says "not supported" and never reaches the
	 * other two.
	 */
	bool (*mlx5dv_is_supported)(struct ibv_device *dev);
	int (*mlx5dv_init_obj)(struct mlx5dv_obj *obj, uint64_t type);
	struct ibv_cq_ex *(*mlx5dv_create_cq)(struct ibv_context *ctx,
					      struct ibv_cq_init_attr_ex *attr,
					      struct mlx5dv_cq_init_attr *mlx5_attr);
};

/*
 * Serve @p ctx with @p glue (which must outlive the registration, and fill
 * every entry) instead of libibverbs. 0, -EINVAL, -EEXIST (already
 * registered) or -ENOMEM.
 */
int cqpoll_ibv_glue_register(struct ibv_context *ctx, const struct cqpoll_ibv_glue *glue);
/* Back to libibverbs for @p ctx (before it is freed). */
void cqpoll_ibv_glue_unregister(struct ibv_context *ctx);
/* The table that serves @p ctx (libibverbs' when none was registered). */
const struct cqpoll_ibv_glue *cqpoll_ibv_glue_of(struct ibv_context *ctx);

#endif /* CQPOLL_IBV_GLUE_H */
