/* SPDX-License-Identifier: BSD-3-Clause */
/* The frames of testpmd-cq's ethdev device and tpcq-peer's ethdev peers. */
#include <string.h>

#include <rte_byteorder.h>

#include "ethdev_frame.h"

void
tpcq_eth_frame_init(uint8_t *frame, size_t len)
{
	uint16_t type = rte_cpu_to_be_16(TPCQ_ETH_TYPE);

	memset(frame, 0, len);
	memset(frame, 0xff, 6);
	frame[6] = 0x02;
	memcpy(frame + 12, &type, 2);
}

struct rte_mbuf *
tpcq_eth_frame_mbuf(struct rte_mempool *mp, const uint8_t *frame, uint16_t len,
		    uint64_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *d;

	if (m == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(d, frame, len);
	memcpy(d + TPCQ_ETH_SEQ_OFF, &seq, sizeof(seq));
	return m;
}

uint64_t
tpcq_eth_frame_seq(struct rte_mbuf *m, uint16_t len)
{
	uint64_t seq = TPCQ_ETH_NO_SEQ;
	uint16_t type;

	if (m->data_len >= len) {
		memcpy(&type, rte_pktmbuf_mtod_offset(m, const uint8_t *, 12), 2);
		if (type == rte_cpu_to_be_16(TPCQ_ETH_TYPE))
			memcpy(&seq, rte_pktmbuf_mtod_offset(m, const uint8_t *,
							     TPCQ_ETH_SEQ_OFF),
			       sizeof(seq));
	}
	rte_pktmbuf_free(m);
	return seq;
}
