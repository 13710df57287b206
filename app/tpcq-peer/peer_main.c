/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tpcq-peer: a peer's own wait on the transports of testpmd-cq's real
 * devices, for the results page's "against peers" section.
 *
 * usage: tpcq-peer --peer=TRANSPORT-WAIT --dev=DEV [--engine=pingpong|rate]
 *        [--rate=N] [--duration=S] [--cpus=RX,TX] [--harness=full|count]
 *        [--json=FILE]
 *
 *   ucx-busy, ucx-wait      --dev=ucx:tcp|ucx:posix|ucx:sysv
 *   ofi-spin, ofi-sread     --dev=ofi:tcp
 *   uring-wait, uring-peek, uring-defer   --dev=uring
 *   ethdev-busy, ethdev-l3fwd-power, ethdev-wait   --dev=ethdev:virtio_user
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "peer.h"

static const struct peer_transport *const transports[] = {
#ifdef TPCQ_PEER_UCX
	&peer_ucx,
#endif
#ifdef TPCQ_PEER_OFI
	&peer_ofi,
#endif
#ifdef TPCQ_PEER_URING
	&peer_uring,
#endif
#ifdef TPCQ_PEER_ETHDEV
	&peer_ethdev,
#endif
};

struct ctx {
	struct peer_run *r;
	const struct peer_transport *t;
	void *priv;
	int rc;
};

static void
pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleeps through long gaps, spins the last 60 us, as testpmd-cq's generator. */
static void
wait_until(uint64_t t)
{
	uint64_t now = peer_now_ns();
	struct timespec ts;

	if (t > now + 60000) {
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(t - now - 50000);
		if (ts.tv_nsec > 10000000)
			ts.tv_nsec = 10000000;
		nanosleep(&ts, NULL);
	}
	while (peer_now_ns() < t)
		;
}

static void *
sender(void *arg)
{
	struct ctx *c = arg;
	struct peer_run *r = c->r;
	uint64_t t0, end, seq = 0, gap;
	int rc = 0;

	if (!c->t->unpinned)
		pin(r->cpu_tx);
	gap = r->pingpong ? 0 : (uint64_t)(1e9 / r->rate);
	t0 = peer_now_ns();
	end = t0 + (uint64_t)(r->duration * 1e9);
	for (;;) {
		if (r->pingpong) {
			while (__atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) != seq &&
			       peer_now_ns() < end)
				;
		} else {
			wait_until(t0 + seq * gap);
			while (seq - __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) >=
			       PEER_WINDOW && peer_now_ns() < end)
				;
		}
		if (peer_now_ns() >= end)
			break;
		__atomic_store_n(&r->post_ns[seq % PEER_POST_SLOTS], peer_now_ns(),
				 __ATOMIC_RELEASE);
		rc = c->t->send(c->priv, seq);
		if (rc != 0)
			break;
		seq++;
	}
	__atomic_store_n(&r->posted, seq, __ATOMIC_RELEASE);
	__atomic_store_n(&r->sender_done, 1, __ATOMIC_RELEASE);
	/* Everything in, or 2 s for the rest: then the receiver stops. */
	end = peer_now_ns() + 2000000000ull;
	while (__atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) < seq &&
	       peer_now_ns() < end)
		usleep(100);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	if (c->t->kick != NULL)
		c->t->kick(c->priv);
	if (rc != 0)
		__atomic_store_n(&r->error, rc, __ATOMIC_RELEASE);
	return NULL;
}

static void *
receiver(void *arg)
{
	struct ctx *c = arg;
	uint64_t cpu0, t0;

	if (!c->t->unpinned)
		pin(c->r->cpu_rx);
	t0 = peer_now_ns();
	cpu0 = thread_cpu_ns();
	c->rc = c->t->receive(c->priv, c->r);
	c->r->rx_cpu_ns = thread_cpu_ns() - cpu0;
	c->r->rx_wall_ns = peer_now_ns() - t0;
	return NULL;
}

/* The layout of testpmd-cq's help, which doc/gen-man1.py turns into the page. */
static void
usage(FILE *f)
{
	fprintf(f, "Usage: " PEER_PROG " --peer=TRANSPORT-WAIT --dev=DEV [options]\n"
		"\n"
		"A peer's own wait on the transports of testpmd-cq's real devices, "
		"without\ncqpoll: what a program written against the transport "
		"alone gets, for\ntestpmd-cq's comparisons (its results page's "
		"\"against peers\"). Prints one\nJSON object with testpmd-cq's "
		"names.\n"
		"\n"
		"Options:\n"
		"  --peer=TRANSPORT-WAIT      the transport and its wait:\n");
	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++) {
		fprintf(f, "   ");
		for (const char *const *w = transports[i]->waits; *w != NULL; w++)
			fprintf(f, " %s-%s", transports[i]->name, *w);
		fprintf(f, "\n");
	}
	fprintf(f, "  --dev=DEV                  the device, as testpmd-cq names it: "
		"ucx:tcp,\n"
		"                             ucx:posix, ucx:sysv, ofi:tcp, uring,\n"
		"                             ethdev:virtio_user\n"
		"  --engine=pingpong|rate     one message outstanding, or a constant "
		"rate\n"
		"                             (default pingpong)\n"
		"  --rate=N                   messages/s of the rate engine, 1 .. "
		"10000000\n"
		"                             (default 1000)\n"
		"  --duration=S               seconds, > 0, at most 3600 (default 2)\n"
		"  --cpus=RX,TX               the receiver's and the sender's CPUs "
		"(default 0,1)\n"
		"  --harness=full|count       the receiver's work on each message: full\n"
		"                             (default) stamps its latency, checks its\n"
		"                             order and counts it, as testpmd-cq's\n"
		"                             poller; count only counts it (the control\n"
		"                             beside testpmd-cq --harness=count)\n"
		"  --json=FILE                also write the result to FILE\n"
		"  --help                     this help\n"
		"\n"
		"Exit status: 0 on a completed run; 1 on a transport error; 2 on a "
		"bad option.\n");
}

static int
parse(int argc, char **argv, struct peer_run *r, const char **json)
{
	static const struct option opts[] = {
		{ "peer", required_argument, NULL, 'p' },
		{ "dev", required_argument, NULL, 'd' },
		{ "engine", required_argument, NULL, 'e' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 't' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'j' },
		{ "harness", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'p': r->peer = optarg; break;
		case 'd': r->dev = optarg; break;
		case 'e':
			if (strcmp(optarg, "pingpong") != 0 && strcmp(optarg, "rate") != 0) {
				fprintf(stderr, PEER_PROG ": --engine: pingpong or rate\n");
				return -1;
			}
			r->pingpong = strcmp(optarg, "pingpong") == 0;
			break;
		case 'r':
			r->rate = strtod(optarg, &end);
			if (*end != '\0' || !(r->rate >= 1 && r->rate <= 1e7)) {
				fprintf(stderr, PEER_PROG ": --rate: 1 .. 10000000\n");
				return -1;
			}
			break;
		case 't':
			r->duration = strtod(optarg, &end);
			if (*end != '\0' || !(r->duration > 0 && r->duration <= 3600)) {
				fprintf(stderr, PEER_PROG ": --duration: seconds, > 0\n");
				return -1;
			}
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &r->cpu_rx, &r->cpu_tx) != 2) {
				fprintf(stderr, PEER_PROG ": --cpus=RX,TX\n");
				return -1;
			}
			break;
		case 'j': *json = optarg; break;
		case 'H':
			if (tpcq_harness_parse(optarg, &r->h.work) != 0) {
				fprintf(stderr, PEER_PROG ": --harness: full or count\n");
				return -1;
			}
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (r->peer == NULL || r->dev == NULL) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* testpmd-cq's names; wakeups_per_s counts sleeps, as its waits. */
static void
print_sleeps(FILE *f, const struct peer_run *r)
{
	if (!r->counts_sleeps)
		return;
	fprintf(f, "\"waits\": %llu, \"wakeups_per_s\": %.1f, \"wait_timeouts\": %llu, "
		"\"timeout_recoveries\": %llu, \"recoveries_lost\": %llu, ",
		(unsigned long long)r->sleeps,
		r->rx_wall_ns != 0 ? (double)r->sleeps * 1e9 / (double)r->rx_wall_ns : 0.0,
		(unsigned long long)r->wait_timeouts, (unsigned long long)r->recoveries,
		(unsigned long long)r->recoveries_lost);
}

static void
print_json(FILE *f, const struct peer_run *r, double cpu_process, bool pinned)
{
	const struct tpcq_hist *h = r->lat;
	double secs = r->duration;

	fprintf(f, "{\"peer\": \"%s\", \"dev\": \"%s\", \"engine\": \"%s\", "
		"\"rate\": %.0f, \"duration_s\": %.3f, \"cpus\": [%d, %d], "
		"\"pinned\": %s, \"harness\": \"%s\", \"posted\": %llu, "
		"\"completions\": %llu, \"order_errors\": %llu, ",
		r->peer, r->dev, r->pingpong ? "pingpong" : "rate",
		r->pingpong ? 0.0 : r->rate, secs, r->cpu_rx, r->cpu_tx,
		pinned ? "true" : "false", tpcq_harness_name(r->h.work),
		(unsigned long long)r->posted, (unsigned long long)r->received,
		(unsigned long long)r->order_errors);
	print_sleeps(f, r);
	fprintf(f, "\"latency_ns\": {\"samples\": %llu, \"p50\": %llu, \"p90\": %llu, "
		"\"p99\": %llu, \"p99.9\": %llu, \"max\": %llu}, "
		"\"cpu_pct\": %.1f, \"cpu_pct_process\": %.1f, "
		"\"rx_cpu_ns\": %llu, \"cpu_ns_per_completion\": %.1f, "
		"\"completions_per_s\": %.0f}\n",
		(unsigned long long)h->count,
		(unsigned long long)tpcq_hist_quantile(h, 0.5),
		(unsigned long long)tpcq_hist_quantile(h, 0.9),
		(unsigned long long)tpcq_hist_quantile(h, 0.99),
		(unsigned long long)tpcq_hist_quantile(h, 0.999),
		(unsigned long long)h->max,
		r->rx_wall_ns != 0 ? 100.0 * (double)r->rx_cpu_ns / (double)r->rx_wall_ns : 0,
		cpu_process, (unsigned long long)r->rx_cpu_ns,
		r->received != 0 ? (double)r->rx_cpu_ns / (double)r->received : 0.0,
		(double)r->received / secs);
}

int
main(int argc, char **argv)
{
	static struct peer_run run = { .pingpong = true, .rate = 1000, .duration = 2,
				       .cpu_rx = 0, .cpu_tx = 1 };
	struct peer_run *r = &run;
	const char *json = NULL;
	struct ctx c = { .r = r };
	struct rusage ru0, ru1;
	char name[64];
	pthread_t tx, rx;
	uint64_t t0, t1;
	double cpu_process;
	char *dash, *colon;
	size_t i;
	FILE *f;

	if (parse(argc, argv, r, &json) != 0)
		return 2;
	snprintf(name, sizeof(name), "%s", r->peer);
	dash = strchr(name, '-');
	colon = strchr(r->dev, ':');
	r->arg = colon != NULL ? colon + 1 : "";
	if (dash != NULL) {
		*dash = '\0';
		r->wait = r->peer + (dash - name) + 1;
	}
	for (i = 0; i < sizeof(transports) / sizeof(transports[0]); i++) {
		if (strcmp(transports[i]->name, name) != 0 || r->wait == NULL)
			continue;
		for (const char *const *w = transports[i]->waits; *w != NULL; w++)
			if (strcmp(*w, r->wait) == 0)
				c.t = transports[i];
	}
	if (c.t == NULL || strncmp(r->dev, name, strlen(name)) != 0) {
		fprintf(stderr, PEER_PROG ": --peer=%s --dev=%s: no such peer in this "
			"build, or not on that device\n", r->peer, r->dev);
		usage(stderr);
		return 2;
	}
	r->lat = tpcq_hist_create();
	r->h.latency = r->lat;
	r->h.completions = &r->received;
	r->h.order_errors = &r->order_errors;
	if (r->lat == NULL || c.t->open(r, &c.priv) != 0)
		return 1;
	getrusage(RUSAGE_SELF, &ru0);
	t0 = peer_now_ns();
	if (pthread_create(&rx, NULL, receiver, &c) != 0 ||
	    pthread_create(&tx, NULL, sender, &c) != 0) {
		fprintf(stderr, PEER_PROG ": pthread_create failed\n");
		return 1;
	}
	pthread_join(tx, NULL);
	pthread_join(rx, NULL);
	t1 = peer_now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	cpu_process = 100.0 * ((double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) * 1e6 +
			       (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) +
			       (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1e6 +
			       (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec)) /
		((double)(t1 - t0) / 1e3);
	c.t->close(c.priv);
	if (r->error != 0 || c.rc != 0) {
		fprintf(stderr, PEER_PROG ": %s on %s failed (%d)\n", r->peer, r->dev,
			r->error != 0 ? r->error : c.rc);
		return 1;
	}
	print_json(stdout, r, cpu_process, !c.t->unpinned);
	if (json != NULL) {
		f = fopen(json, "w");
		if (f == NULL) {
			fprintf(stderr, PEER_PROG ": %s: %s\n", json, strerror(errno));
			return 1;
		}
		print_json(f, r, cpu_process, !c.t->unpinned);
		fclose(f);
	}
	if (r->received != r->posted) {
		fprintf(stderr, PEER_PROG ": %llu of %llu messages arrived\n",
			(unsigned long long)r->received, (unsigned long long)r->posted);
		return 1;
	}
	/*
	 * Said, not fatal: receives in flight together (io_uring's on a UDP
	 * socket) may complete out of posting order without any loss.
	 */
	if (r->order_errors != 0)
		fprintf(stderr, PEER_PROG ": %llu messages out of order\n",
			(unsigned long long)r->order_errors);
	tpcq_hist_free(r->lat);
	return 0;
}
