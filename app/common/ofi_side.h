/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_OFI_SIDE_H
#define TPCQ_OFI_SIDE_H

/*
 * One side of the libfabric pair testpmd-cq's ofi device and tpcq-peer's
 * ofi peers make: a fabric, a domain, an address vector and a CQ of its
 * own for each endpoint, so that reading one side's CQ never progresses
 * the other's. Only with libfabric (built when the ofi driver is).
 */

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

struct tpcq_ofi_side {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;              /* FI_AV_TABLE */
	struct fid_cq *cq;              /* FI_CQ_FORMAT_DATA: its sends (A: all) */
};

/*
 * Open @p s from @p info. What was opened stays in @p s on failure too,
 * for tpcq_ofi_side_close(). Returns 0 or a negative libfabric error.
 */
int tpcq_ofi_side_open(struct fi_info *info, struct tpcq_ofi_side *s);

/*
 * An enabled endpoint in @p s's domain, bound to its address vector, its
 * CQ for sends and @p rx for receives. Returns 0 or a negative error.
 */
int tpcq_ofi_side_ep(struct fi_info *info, struct tpcq_ofi_side *s,
		     struct fid_ep **ep, struct fid_cq *rx);

/* Close what @p s holds, CQ first (its endpoints are closed already). */
void tpcq_ofi_side_close(struct tpcq_ofi_side *s);

#endif /* TPCQ_OFI_SIDE_H */
