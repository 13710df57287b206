/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_PEER_H
#define TPCQ_PEER_H

/*
 * tpcq-peer: what users run today, measured the way testpmd-cq measures
 * cqpoll. A sender thread posts on one transport (the same loopback pairs
 * as testpmd-cq's devices), a receiver thread waits for each message with
 * the stack's own wait (busy progress, ucp_worker_wait(), fi_cq_read() spin,
 * fi_cq_sread(), io_uring_wait_cqe(), busy peek, DEFER_TASKRUN with
 * io_uring_get_events(), rte_eth_rx_burst() busy, DPDK's l3fwd-power
 * loop and its blocking wait), and no cqpoll code runs. Latency is one way, from
 * the post time the sender records to the receiver's read; CPU is the
 * receiver's (testpmd-cq's cpu_pct: the poller's). The receiver's work on
 * each message is testpmd-cq's poller's, by the same function (harness.h):
 * one clock read per burst read at once, then for each message the latency
 * stamp, the order check and the count; with --harness=count the count only.
 */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "harness.h"
#include "hist.h"

#define PEER_PROG "tpcq-peer"
#define PEER_WINDOW 256u       /* messages outstanding at most */
#define PEER_POST_SLOTS 4096u  /* post times kept, by sequence number */
#define PEER_MSG 64            /* bytes per message, as TPCQ_BYTE_LEN */

struct peer_run {
	const char *peer;         /* e.g. "ucx-wait" */
	const char *dev;          /* e.g. "ucx:tcp" */
	const char *arg;          /* after ':' in dev */
	const char *wait;         /* after '-' in peer */
	bool pingpong;
	double rate;
	double duration;
	int cpu_rx, cpu_tx;
	uint64_t post_ns[PEER_POST_SLOTS];
	uint64_t consumed;        /* receiver to sender, once per burst */
	/* The receiver's own: the harness's stream and its tallies. */
	struct tpcq_harness h;
	uint64_t received, order_errors;
	uint64_t posted;          /* sender's final count, with sender_done */
	int sender_done;
	int stop;                 /* receiver: everything is in, or give up */
	struct tpcq_hist *lat;
	uint64_t rx_cpu_ns, rx_wall_ns;
	int error;
	/*
	 * Set by a peer that sleeps on an interrupt (ethdev-l3fwd-power,
	 * ethdev-wait), in
	 * testpmd-cq's terms: sleeps (waits), those that ended by their
	 * timeout, those that then found packets (recoveries), and of these
	 * the ones holding a packet posted over 1 ms before the timeout ended
	 * (lost: the sleep began with it queued and no event coming).
	 */
	bool counts_sleeps;
	uint64_t sleeps, wait_timeouts, recoveries, recoveries_lost;
};

struct peer_transport {
	const char *name;                 /* "ucx", "ofi", "uring" */
	const char *const *waits;         /* NULL-terminated */
	/*
	 * Threads left on the CPUs open() gave the process (the EAL's lcores
	 * for a DPDK port, as testpmd-cq runs them), not pinned by --cpus.
	 */
	bool unpinned;
	int (*open)(struct peer_run *r, void **priv);
	/* Sender thread: message @p seq; 0, or < 0 (fatal). */
	int (*send)(void *priv, uint64_t seq);
	/* Sender thread, once it stopped: make a blocked receiver return. */
	void (*kick)(void *priv);
	/* Receiver thread: until r->stop; peer_got() for each message. */
	int (*receive)(void *priv, struct peer_run *r);
	void (*close)(void *priv);
};

static inline uint64_t
peer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The receiver starts reading a burst of messages: their time stamp. */
static inline uint64_t
peer_burst(const struct peer_run *r)
{
	return tpcq_harness_now(&r->h);
}

/* The receiver read message @p seq, of the burst stamped @p now. */
static inline void
peer_got(struct peer_run *r, uint64_t now, uint64_t seq)
{
	if (tpcq_harness_counting(&r->h))
		tpcq_harness_count(&r->h, 1);
	else
		tpcq_harness_got(&r->h, seq, now, &r->post_ns[seq % PEER_POST_SLOTS]);
}

/*
 * The receiver read a burst: the sender learns it (as testpmd-cq's poller
 * publishes its count after each burst).
 */
static inline void
peer_burst_done(struct peer_run *r)
{
	__atomic_store_n(&r->consumed, r->received, __ATOMIC_RELEASE);
}

/* The receiver may stop: the sender is done and everything arrived. */
static inline bool
peer_stopping(struct peer_run *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

extern const struct peer_transport peer_ucx, peer_ofi, peer_uring, peer_ethdev;

#endif /* TPCQ_PEER_H */
