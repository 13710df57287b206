/* SPDX-License-Identifier: BSD-3-Clause */
/* A side of the libfabric pair of testpmd-cq's ofi device and tpcq-peer. */
#include "ofi_side.h"

int
tpcq_ofi_side_open(struct fi_info *info, struct tpcq_ofi_side *s)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	int r;

	r = fi_fabric(info->fabric_attr, &s->fabric, NULL);
	if (r == 0)
		r = fi_domain(s->fabric, info, &s->domain, NULL);
	if (r == 0)
		r = fi_av_open(s->domain, &av_attr, &s->av, NULL);
	if (r == 0)
		r = fi_cq_open(s->domain, &cq_attr, &s->cq, NULL);
	return r;
}

int
tpcq_ofi_side_ep(struct fi_info *info, struct tpcq_ofi_side *s,
		 struct fid_ep **ep, struct fid_cq *rx)
{
	int r;

	r = fi_endpoint(s->domain, info, ep, NULL);
	if (r == 0)
		r = fi_ep_bind(*ep, &s->av->fid, 0);
	if (r == 0)
		r = fi_ep_bind(*ep, &s->cq->fid, FI_TRANSMIT);
	if (r == 0)
		r = fi_ep_bind(*ep, &rx->fid, FI_RECV);
	if (r == 0)
		r = fi_enable(*ep);
	return r;
}

void
tpcq_ofi_side_close(struct tpcq_ofi_side *s)
{
	if (s->cq != NULL)
		fi_close(&s->cq->fid);
	if (s->av != NULL)
		fi_close(&s->av->fid);
	if (s->domain != NULL)
		fi_close(&s->domain->fid);
	if (s->fabric != NULL)
		fi_close(&s->fabric->fid);
	s->cq = NULL;
	s->av = NULL;
	s->domain = NULL;
	s->fabric = NULL;
}
