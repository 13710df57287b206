/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_LOOPBACK_H
#define TPCQ_LOOPBACK_H

/*
 * The real devices' loopback RC QP pair (loopback.c, its verbs in
 * loopback_qp.c): private to the two files.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct cqpoll_mlx5_qp;

#define BUF_SIZE 4096
#define REMOTE_OFFSET (BUF_SIZE / 2)
/* Receives posted again per call: one ibv_post_recv() per batch. */
#define RECV_BATCH 32
/* RC parameters: retry forever on RNR, give up on transport errors late. */
#define QP_TIMEOUT 14
#define QP_RETRY_CNT 7
#define QP_RNR_RETRY 7
#define QP_MIN_RNR_TIMER 12

struct loopback {
	const char *ibdev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	void *buf;
	struct ibv_mr *mr;
	struct ibv_cq *aux_cq;    /* B's receives; the QPs' unused halves */
	struct ibv_qp *qp_a;      /* sender, on the cqpoll CQ */
	/* mlx5: qp_a is cqpoll's own QP, posted with cqpoll_mlx5_qp_post_send(). */
	struct cqpoll_mlx5_qp *cqp_a;
	struct ibv_qp *qp_b;      /* receiver */
	uint8_t port;
	uint32_t depth;           /* sends unread at most, receives posted ahead */
	uint64_t recvs;           /* receives posted on B since the start */
	struct ibv_recv_wr recv_wr[RECV_BATCH];
};

/* The errno of a verbs call that returns it, -1 with errno, or nothing useful. */
int tpcq_lb_verbs_err(int r);
/* Says which call failed on lb's device; returns -err. */
int tpcq_lb_fail(const struct loopback *lb, const char *what, int err);
int tpcq_lb_open_named(struct loopback *lb);
int tpcq_lb_find_port(struct loopback *lb, struct ibv_port_attr *pa);
int tpcq_lb_address(struct loopback *lb, const struct ibv_port_attr *pa,
		    struct ibv_ah_attr *ah);
struct ibv_qp *tpcq_lb_create_qp(struct loopback *lb, struct ibv_cq *send_cq,
				  uint32_t max_send, uint32_t max_recv);
/*
 * From creation through INIT and RTR to RTS, with the peer as destination; @p cqp: the
 * cqpoll QP of @p qp, whose state changes through cqpoll_mlx5_qp_modify().
 */
int tpcq_lb_connect_qp(struct loopback *lb, struct ibv_qp *qp, struct cqpoll_mlx5_qp *cqp,
		       uint32_t dest_qpn, const struct ibv_ah_attr *ah, enum ibv_mtu mtu);
int tpcq_lb_post_recvs(struct loopback *lb, unsigned int n);

#endif /* TPCQ_LOOPBACK_H */
