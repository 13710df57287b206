/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ethdev driver over DPDK's own virtual ports (ethdev_test.h): a
 * virtio_user Rx queue fed by vhost in the same process.
 *
 * - probe and create: virtio_user arms by enable, edge; completions carry
 *   the mbufs in order;
 * - wake-ups: a packet sent while armed ends the sleep at once;
 * - an aimed race: a packet enqueued exactly between the last empty poll and
 *   the arm (a wrapper CQ sends it from inside that poll) must be returned
 *   by cqpoll_poll_and_arm(), every time; the naive transition (poll, arm,
 *   sleep: cqpoll_cq_arm_naive()) in the same window sleeps until the
 *   timeout every time: the negative control, which shows vhost really
 *   raises nothing for a packet queued before the enable;
 * - a random race: a sender thread at random gaps, a consumer that sleeps
 *   whenever the queue is empty: every packet once, in order, no lost
 *   wake-up found by the safety net (recovery_judge.h: a packet sent as
 *   the timeout ran out is late, not lost);
 * - refusal: PMDs without Rx interrupts (memif, af_packet, null) and a port
 *   configured without them are refused at CQ creation with ENOTSUP and a
 *   reason that names what is missing.
 */

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "cqpoll.h"
#include "cqpoll_driver.h"
#include "cqpoll_emu.h"
#include "cqpoll_ethdev.h"
#include "ethdev_test.h"
#include "recovery_judge.h"

static struct te_pair tp;
static struct rte_mempool *mp;

/* Read one completion's packet, check its sequence number, free it. */
static int
take(const struct cqpoll_completion *c, uint64_t want)
{
	struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)c->wr_id;
	uint64_t seq = te_seq(m);

	TEST_ASSERT(c->status == CQPOLL_STATUS_SUCCESS && c->opcode == CQPOLL_OP_RECV &&
		    (c->flags & CQPOLL_COMPLETION_F_WR_ID) && c->byte_len == TE_PKT_LEN,
		    "bad completion");
	rte_pktmbuf_free(m);
	TEST_ASSERT(seq == want, "packet %" PRIu64 ", expected %" PRIu64, seq, want);
	return TEST_PASS;
}

static int
test_probe_virtio(void)
{
	struct cqpoll_ethdev_probe pr;
	struct cqpoll_completion c[8];
	struct cqpoll_cq_info info;
	enum cqpoll_ethdev_arm arm;
	struct cqpoll_cq *cq;
	uint16_t port, q;
	uint64_t i;
	int n;

	TEST_ASSERT_EQ(cqpoll_ethdev_probe(tp.virtio, 0, &pr), 0);
	printf("  %s\n", pr.reason);
	TEST_ASSERT(pr.arm == CQPOLL_ETHDEV_ARM_ENABLE && pr.fd >= 0, "%s", pr.reason);
	TEST_ASSERT(cqpoll_ethdev_probe(tp.virtio, 1, &pr) == -EINVAL, "queue 1");
	TEST_ASSERT(cqpoll_ethdev_probe(RTE_MAX_ETHPORTS - 1, 0, &pr) == -EINVAL,
		    "no port");
	cq = cqpoll_ethdev_cq_create(tp.virtio, 0, NULL);
	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_cq_info_get(cq, &info), 0);
	TEST_ASSERT(info.arm == CQPOLL_ARM_EDGE && strcmp(info.driver, "ethdev") == 0,
		    "info");
	TEST_ASSERT_EQ(cqpoll_ethdev_cq_queue(cq, &port, &q, &arm), 0);
	TEST_ASSERT(port == tp.virtio && q == 0 && arm == CQPOLL_ETHDEV_ARM_ENABLE,
		    "queue");
	/* A second CQ on the same queue would steal its events. */
	errno = 0;
	TEST_ASSERT(cqpoll_ethdev_cq_create(tp.virtio, 0, NULL) == NULL &&
		    errno == EBUSY, "second CQ: %s", strerror(errno));
	for (i = 0; i < 5; i++)
		TEST_ASSERT_EQ(te_send(tp.vhost, mp, i), 1);
	n = cqpoll_poll_burst(cq, c, 8);
	TEST_ASSERT_EQ(n, 5);
	for (i = 0; i < 5; i++)
		if (take(&c[i], i) != TEST_PASS)
			return TEST_FAIL;
	TEST_ASSERT_EQ(cqpoll_ethdev_cq_queue(NULL, NULL, NULL, NULL), -EINVAL);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	/* Destroy gave the queue back. */
	TEST_ASSERT_EQ(cqpoll_ethdev_probe(tp.virtio, 0, &pr), 0);
	return TEST_PASS;
}

/* A packet sent while armed: the sleep ends by its event. */
static int
wake_once(struct cqpoll_cq *cq, uint64_t seq)
{
	struct cqpoll_completion c;
	int n;

	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, &c, 1), 0);
	TEST_ASSERT_EQ(te_send(tp.vhost, mp, seq), 1);
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 1000), 1);
	n = cqpoll_poll_burst(cq, &c, 1);
	TEST_ASSERT_EQ(n, 1);
	return take(&c, seq);
}

static int
test_wakeups(void)
{
	struct cqpoll_cq_stats st;
	struct cqpoll_cq *cq = cqpoll_ethdev_cq_create(tp.virtio, 0, NULL);
	uint64_t i;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	for (i = 0; i < 50; i++)
		if (wake_once(cq, i) != TEST_PASS)
			return TEST_FAIL;
	cqpoll_cq_stats_get(cq, &st);
	TEST_ASSERT(st.events == 50 && st.wait_timeouts == 0, "events %" PRIu64
		    " timeouts %" PRIu64, st.events, st.wait_timeouts);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return TEST_PASS;
}

/*
 * The aim: a CQ over the ethdev CQ whose poll, when it finds nothing and a
 * shot is loaded, sends one packet before returning "empty". vhost enqueues
 * it at once (the send is synchronous), so it lands exactly in the window
 * between the transition's last empty poll and its arm.
 */
struct aim {
	struct cqpoll_cq *inner;
	const struct cqpoll_driver_ops *ops;
	void *priv;
	int shots;
	uint64_t seq;
};

static int
aim_poll(void *priv, struct cqpoll_completion *c, unsigned int n)
{
	struct aim *a = priv;
	int r = cqpoll_poll_burst(a->inner, c, n);

	if (r == 0 && a->shots > 0) {
		a->shots--;
		if (te_send(tp.vhost, mp, a->seq) != 1)
			return -EIO;
	}
	return r;
}

static int
aim_arm(void *priv)
{
	struct aim *a = priv;

	return a->ops->arm(a->priv);
}

static int
aim_event_fd(void *priv)
{
	struct aim *a = priv;

	return a->ops->event_fd(a->priv);
}

static int
aim_event_get(void *priv)
{
	struct aim *a = priv;

	return a->ops->event_get(a->priv);
}

static void
aim_destroy(void *priv)
{
	(void)priv;
}

static const struct cqpoll_driver_ops aim_ops = {
	.size = CQPOLL_DRIVER_OPS_SIZE,
	.name = "ethdev-aimed",
	.arm = aim_arm,
	.event_fd = aim_event_fd,
	.event_get = aim_event_get,
	.destroy = aim_destroy,
};

static struct cqpoll_cq *
aim_wrap(struct aim *a)
{
	struct cqpoll_cq_params params = { .arm = CQPOLL_ARM_EDGE, .size = TE_RING };

	a->inner = cqpoll_ethdev_cq_create(tp.virtio, 0, NULL);
	if (a->inner == NULL)
		return NULL;
	a->ops = cqpoll_cq_driver(a->inner);
	a->priv = cqpoll_cq_priv(a->inner);
	return cqpoll_cq_alloc(&aim_ops, aim_poll, a, &params);
}

#define AIMED_ROUNDS 200

static int
test_aimed_race(void)
{
	struct cqpoll_completion c;
	struct aim a = { .seq = 0 };
	struct cqpoll_cq *cq = aim_wrap(&a);
	unsigned int i;
	int n;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	for (i = 0; i < AIMED_ROUNDS; i++) {
		/* Disarmed (the last event disabled the queue): shoot. */
		a.shots = 1;
		n = cqpoll_poll_and_arm(cq, &c, 1);
		TEST_ASSERT(n == 1, "round %u: the packet in the window was not "
			    "returned (%d)", i, n);
		if (take(&c, a.seq++) != TEST_PASS)
			return TEST_FAIL;
		/* Then a plain wake-up, whose event disarms for the next round. */
		if (wake_once(cq, a.seq++) != TEST_PASS)
			return TEST_FAIL;
	}
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(a.inner), 0);
	return TEST_PASS;
}

#define NAIVE_ROUNDS 10
#define NAIVE_TIMEOUT_MS 10

/* The negative control: the same window, no poll after the arm. */
static int
test_aimed_naive(void)
{
	struct cqpoll_completion c;
	struct aim a = { .seq = 0 };
	struct cqpoll_cq *cq = aim_wrap(&a);
	unsigned int i, lost = 0;
	int n, r;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	for (i = 0; i < NAIVE_ROUNDS; i++) {
		a.shots = 1;
		TEST_ASSERT_EQ(cqpoll_poll_burst(cq, &c, 1), 0);
		TEST_ASSERT_EQ(cqpoll_cq_arm_naive(cq), 0);
		r = cqpoll_cq_wait(cq, NAIVE_TIMEOUT_MS);
		TEST_ASSERT(r >= 0, "wait: %d", r);
		n = cqpoll_poll_burst(cq, &c, 1);
		TEST_ASSERT_EQ(n, 1);
		lost += r == 0;
		if (take(&c, a.seq++) != TEST_PASS)
			return TEST_FAIL;
		/* Consume an event, which disables the queue for the next round. */
		if (wake_once(cq, a.seq++) != TEST_PASS)
			return TEST_FAIL;
	}
	printf("  naive: %u of %u packets in the window slept until the timeout\n",
	       lost, NAIVE_ROUNDS);
	TEST_ASSERT(lost == NAIVE_ROUNDS, "the control caught %u of %u", lost,
		    NAIVE_ROUNDS);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(a.inner), 0);
	return TEST_PASS;
}

#define RANDOM_PACKETS 3000

struct sender {
	uint64_t sent;
	const uint64_t *consumed;
	int error;
};

static void *
send_random(void *arg)
{
	struct sender *s = arg;
	uint64_t rnd = 0x2545f4914f6cdd1dull;

	while (s->sent < RANDOM_PACKETS) {
		/* Keep the ring from filling: vhost would drop. */
		while (s->sent - __atomic_load_n(s->consumed, __ATOMIC_ACQUIRE) >=
		       TE_RING / 2)
			;
		rj_post_begin(0, s->sent);
		if (te_send(tp.vhost, mp, s->sent) != 1) {
			s->error = 1;
			break;
		}
		rj_post_end(0, s->sent);
		__atomic_store_n(&s->sent, s->sent + 1, __ATOMIC_RELEASE);
		test_spin_ns(test_rnd(&rnd) % 40000);
	}
	return NULL;
}

static int
test_random_race(void)
{
	struct cqpoll_completion c[32];
	struct cqpoll_cq_stats st;
	struct cqpoll_cq *cq = cqpoll_ethdev_cq_create(tp.virtio, 0, NULL);
	uint64_t consumed = 0;
	struct sender s = { .consumed = &consumed };
	pthread_t t;
	int i, n, r;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	rj_init(&cq, 1, &consumed);
	TEST_ASSERT_EQ(pthread_create(&t, NULL, send_random, &s), 0);
	while (consumed < RANDOM_PACKETS) {
		n = cqpoll_poll_and_arm(cq, c, 32);
		TEST_ASSERT(n >= 0, "poll_and_arm: %d", n);
		for (i = 0; i < n; i++)
			if (take(&c[i], consumed + (uint64_t)i) != TEST_PASS)
				return TEST_FAIL;
		__atomic_store_n(&consumed, consumed + (uint64_t)n, __ATOMIC_RELEASE);
		if (n > 0)
			continue;
		if (__atomic_load_n(&s.error, __ATOMIC_RELAXED))
			break;
		r = cqpoll_cq_wait(cq, 100);
		TEST_ASSERT(r >= 0 || r == -EINTR, "wait: %d", r);
	}
	pthread_join(t, NULL);
	rj_fini();
	TEST_ASSERT(s.error == 0, "send failed");
	cqpoll_cq_stats_get(cq, &st);
	printf("  %" PRIu64 " packets, %" PRIu64 " arms, %" PRIu64 " events, %"
	       PRIu64 " spurious, %" PRIu64 " timeouts, %" PRIu64 " recoveries (%"
	       PRIu64 " late, %" PRIu64 " lost)\n", consumed, st.arms, st.events,
	       st.spurious_events, st.wait_timeouts, st.timeout_recoveries,
	       rj_late(0), rj_lost(0));
	/* Late ones (posted as the timeout ran out) are allowed: recovery_judge.h. */
	TEST_ASSERT(rj_lost(0) == 0, "%" PRIu64 " lost wake-ups recovered by the "
		    "timeout (posted up to %" PRIu64 " us before their deadline)",
		    rj_lost(0), rj_worst_ns(0) / 1000);
	TEST_ASSERT(st.arms > 0 && st.events > 0, "never slept");
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return TEST_PASS;
}

/* A port of @p name that must be refused; skipped if it cannot be made. */
static int
refuse(const char *name, const char *args, int intr, const char *want)
{
	struct cqpoll_ethdev_probe pr;
	char why[256];
	uint16_t port;
	int r;

	r = te_vdev(name, args, &port, why, sizeof(why));
	if (r != 0) {
		printf("  %s: not run here: %s\n", name, why);
		return TEST_PASS;
	}
	r = te_port_start(port, mp, intr);
	if (r != 0) {
		printf("  %s: not run here: port start: %s\n", name, strerror(-r));
		te_port_remove(port);
		return TEST_PASS;
	}
	errno = 0;
	TEST_ASSERT(cqpoll_ethdev_cq_create(port, 0, NULL) == NULL && errno == ENOTSUP,
		    "%s: not refused (%s)", name, strerror(errno));
	TEST_ASSERT_EQ(rte_errno, ENOTSUP);
	TEST_ASSERT_EQ(cqpoll_ethdev_probe(port, 0, &pr), -ENOTSUP);
	printf("  %s: refused: %s\n", name, pr.reason);
	TEST_ASSERT(pr.arm == CQPOLL_ETHDEV_ARM_NONE && strstr(pr.reason, want) != NULL,
		    "%s: reason does not say \"%s\": %s", name, want, pr.reason);
	te_port_remove(port);
	return TEST_PASS;
}

static int
test_refused(void)
{
	char args[160];

	snprintf(args, sizeof(args), "role=server,socket=/tmp/cqpoll-memif-%ld.sock,"
		 "socket-abstract=no", (long)getpid());
	if (refuse("net_memif0", args, 1, "net_memif has no Rx interrupt") != TEST_PASS)
		return TEST_FAIL;
	if (refuse("net_af_packet0", "iface=lo", 1,
		   "net_af_packet has no Rx interrupt") != TEST_PASS)
		return TEST_FAIL;
	if (refuse("net_null0", "", 1, "net_null has no Rx interrupt") != TEST_PASS)
		return TEST_FAIL;
	/* A PMD that has them, but the port was configured without. */
	return refuse("net_null1", "", 0, "Rx interrupts not configured");
}

/*
 * The conformance cases (test_conformance.c) on the ethdev CQ: the device
 * is vhost transmitting into the virtio_user queue, whose completions carry
 * the mbufs.
 */
static int
conf_post(uint64_t seq)
{
	return te_send(tp.vhost, mp, seq) == 1 ? 0 : -ENOSPC;
}

static int
test_conf_empty(void)
{
	struct cqpoll_completion c[4];
	struct cqpoll_cq *cq = cqpoll_ethdev_cq_create(tp.virtio, 0, NULL);

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	TEST_ASSERT_EQ(cqpoll_poll_burst(cq, c, 4), 0);
	TEST_ASSERT(!cqpoll_cq_is_armed(cq), "not armed before poll-and-arm");
	TEST_ASSERT_EQ(cqpoll_cq_wait(cq, 10), -EAGAIN);
	TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
	TEST_ASSERT(cqpoll_cq_is_armed(cq), "armed");
	TEST_ASSERT_EQ(cqpoll_cq_event_get(cq), 0);
	/* Repeated poll-and-arm on an armed, empty CQ arms the queue once. */
	{
		struct cqpoll_cq_stats st;
		int i;

		for (i = 0; i < 10; i++)
			TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 4), 0);
		cqpoll_cq_stats_get(cq, &st);
		TEST_ASSERT_EQ(st.arms, 1);
	}
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return TEST_PASS;
}

/* Laps of the ring in bursts of every size, in order; then a full ring. */
static int
test_conf_laps_full(void)
{
	struct cqpoll_completion c[16];
	struct cqpoll_cq *cq = cqpoll_ethdev_cq_create(tp.virtio, 0, NULL);
	uint64_t posted = 0, polled = 0;
	unsigned int burst, i;
	int r;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	for (burst = 1; posted < 4 * TE_RING; burst = burst % 16 + 1) {
		for (i = 0; i < burst; i++)
			TEST_ASSERT_EQ(conf_post(posted++), 0);
		while ((r = cqpoll_poll_burst(cq, c, 7)) > 0)
			for (i = 0; i < (unsigned int)r; i++)
				if (take(&c[i], polled++) != TEST_PASS)
					return TEST_FAIL;
		TEST_ASSERT_EQ(r, 0);
	}
	TEST_ASSERT_EQ(polled, posted);
	/* Full: the device is refused (vhost's enqueue sends nothing), never silent. */
	while (conf_post(posted) == 0)
		TEST_ASSERT(++posted - polled <= TE_RING, "more than the ring took");
	TEST_ASSERT(posted - polled > TE_RING / 2, "the ring took %" PRIu64,
		    posted - polled);
	while ((r = cqpoll_poll_burst(cq, c, 16)) > 0)
		for (i = 0; i < (unsigned int)r; i++)
			if (take(&c[i], polled++) != TEST_PASS)
				return TEST_FAIL;
	TEST_ASSERT_EQ(polled, posted);
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return TEST_PASS;
}

/* Packets before the transition are returned by it, never slept on. */
static int
test_conf_transition_returns_pending(void)
{
	struct cqpoll_completion c[8];
	struct cqpoll_cq *cq = cqpoll_ethdev_cq_create(tp.virtio, 0, NULL);
	uint64_t seq = 0;
	int n, i;

	TEST_ASSERT(cq != NULL, "create: %s", strerror(errno));
	for (n = 1; n <= 4; n++) {
		for (i = 0; i < n; i++)
			TEST_ASSERT_EQ(conf_post(seq + (uint64_t)i), 0);
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), n);
		for (i = 0; i < n; i++)
			if (take(&c[i], seq++) != TEST_PASS)
				return TEST_FAIL;
		TEST_ASSERT_EQ(cqpoll_poll_and_arm(cq, c, 8), 0);
		/* Consume an event, to start the next round disarmed. */
		if (wake_once(cq, seq++) != TEST_PASS)
			return TEST_FAIL;
	}
	TEST_ASSERT_EQ(cqpoll_cq_destroy(cq), 0);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	TEST_CASE(test_conf_empty),
	TEST_CASE(test_conf_laps_full),
	TEST_CASE(test_conf_transition_returns_pending),
	TEST_CASE(test_probe_virtio),
	TEST_CASE(test_wakeups),
	TEST_CASE(test_aimed_race),
	TEST_CASE(test_aimed_naive),
	TEST_CASE(test_random_race),
	TEST_CASE(test_refused),
};

int
main(int argc, char **argv)
{
	char why[256];
	int r;

	(void)argc;
	if (te_eal_init(argv[0]) != 0)
		return TEST_FAIL;
	mp = te_pool();
	if (mp == NULL) {
		fprintf(stderr, "mempool: %s\n", rte_strerror(rte_errno));
		return TEST_FAIL;
	}
	if (te_pair_open(&tp, mp, why, sizeof(why)) != 0) {
		printf("SKIP: no vhost/virtio_user pair here: %s\n", why);
		return TEST_SKIP;
	}
	r = test_run("ethdev", cases, sizeof(cases) / sizeof(cases[0]));
	te_pair_close(&tp);
	rte_eal_cleanup();
	return r;
}
