/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_UCX_PAIR_H
#define TPCQ_UCX_PAIR_H

/*
 * The UCX pair testpmd-cq's ucx device and tpcq-peer's ucx peers make: two
 * UCP workers, A (the sender's) and B (the receiver's), each in a context of
 * its own so that progressing A never runs B, over one transport, with an
 * endpoint each way. Only with UCX (built when the ucx driver is).
 */

#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

struct tpcq_ucx_pair {
	ucp_context_h ctx_a, ctx_b;
	ucp_worker_h a, b;
	ucp_ep_h ep_ab, ep_ba;
};

/*
 * The contexts (tag matching and wake-ups, UCX_TLS=@p tls, tcp over lo
 * only) and their single-threaded workers. What was made stays in @p up
 * on failure too, for tpcq_ucx_pair_close(). Returns UCS_OK or the status.
 */
ucs_status_t tpcq_ucx_pair_workers(struct tpcq_ucx_pair *up, const char *tls);

/* The endpoints A to B and B to A, from each other's worker address. */
ucs_status_t tpcq_ucx_pair_connect(struct tpcq_ucx_pair *up);

/*
 * One message each way with tag @p tag, both workers progressed: a tcp
 * endpoint still connecting keeps its worker's fd readable, so a run waits
 * only once this is done. B receives into @p buf_b, A into @p buf_a
 * (@p len bytes each); 1 byte is sent.
 */
ucs_status_t tpcq_ucx_pair_hello(struct tpcq_ucx_pair *up, void *buf_a,
				 void *buf_b, size_t len, uint64_t tag);

/*
 * Request @p req (a ucp_*_nbx() result) of @p w done, progressing @p w and
 * @p other (or NULL), and released. Returns its status.
 */
ucs_status_t tpcq_ucx_wait(ucp_worker_h w, ucp_worker_h other,
			   ucs_status_ptr_t req);

/*
 * What tpcq_ucx_pair_workers() and _connect() made, undone: endpoints
 * closed (forced), workers destroyed, contexts cleaned up. Receives still
 * posted on B are the caller's to cancel first.
 */
void tpcq_ucx_pair_close(struct tpcq_ucx_pair *up);

#endif /* TPCQ_UCX_PAIR_H */
