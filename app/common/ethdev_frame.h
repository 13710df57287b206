/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_ETHDEV_FRAME_H
#define TPCQ_ETHDEV_FRAME_H

/*
 * The frames testpmd-cq's ethdev device and tpcq-peer's ethdev peers send:
 * broadcast, from 02:00:00:00:00:00, of a local experimental ethertype that
 * nothing else sends, with the sequence number at TPCQ_ETH_SEQ_OFF.
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#define TPCQ_ETH_TYPE 0x88b5
#define TPCQ_ETH_SEQ_OFF 14
/* A frame that is not a completion's: a probe, a wake-up, a foreign one. */
#define TPCQ_ETH_NO_SEQ UINT64_MAX

/* The header into @p frame (@p len >= TPCQ_ETH_SEQ_OFF + 8), the rest zero. */
void tpcq_eth_frame_init(uint8_t *frame, size_t len);

/*
 * An mbuf from @p mp holding @p frame (@p len bytes) with sequence number
 * @p seq; NULL when the pool has none.
 */
struct rte_mbuf *tpcq_eth_frame_mbuf(struct rte_mempool *mp, const uint8_t *frame,
				     uint16_t len, uint64_t seq);

/*
 * The sequence number of received @p m, which is freed: TPCQ_ETH_NO_SEQ if
 * it is shorter than @p len or of another ethertype.
 */
uint64_t tpcq_eth_frame_seq(struct rte_mbuf *m, uint16_t len);

#endif /* TPCQ_ETHDEV_FRAME_H */
