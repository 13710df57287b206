/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How much of a CPU a busy poller actually gets: a thread pinned to one CPU
 * reads the TSC in a tight loop for a while, and every jump between two
 * reads is time the CPU ran something else (an interrupt, the hypervisor,
 * another thread). An arrival at a random instant that lands in such a gap
 * waits for the rest of it, whatever the poller does, so the gaps set a
 * floor under a busy poller's tail latency. This prints the share of time
 * lost, and the p50/p99/p99.9 of that wait over arrivals at random instants
 * (an arrival lands in a gap of length g with probability g/T and then waits
 * uniformly between 0 and g).
 *
 * usage: bench_noise [CPU [SECONDS]]   (defaults: 0, 2)
 */

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

/* Shorter jumps are the loop itself (and clock_gettime-free TSC reads). */
#define GAP_MIN_NS 200
#define GAPS_MAX (1u << 20)

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Share of arrivals at random instants that wait more than @p x ns. */
static double
share_waiting_over(const double *gaps, size_t n, double total_ns, double x)
{
	double s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (gaps[i] > x)
			s += gaps[i] - x;
	return s / total_ns;
}

/* The wait that a share @p q of arrivals exceeds (bisection on the ns). */
static double
wait_quantile(const double *gaps, size_t n, double total_ns, double q)
{
	double lo = 0, hi = 1e9;
	int k;

	if (share_waiting_over(gaps, n, total_ns, 0) <= q)
		return 0;
	for (k = 0; k < 60; k++) {
		double mid = (lo + hi) / 2;

		if (share_waiting_over(gaps, n, total_ns, mid) > q)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

int
main(int argc, char **argv)
{
	int cpu = argc > 1 ? atoi(argv[1]) : 0;
	double secs = argc > 2 ? atof(argv[2]) : 2.0;
	uint64_t t0, c0, end, prev, now, d, thr, lost = 0, over5 = 0;
	double ghz, total_ns, max_ns = 0, *gaps;
	size_t n = 0, dropped = 0;
	cpu_set_t set;

	if (argc > 3 || cpu < 0 || secs <= 0 || secs > 600) {
		fprintf(stderr, "usage: %s [CPU [SECONDS]]\n", argv[0]);
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		fprintf(stderr, "bench_noise: CPU %d: %s\n", cpu, strerror(errno));
		return 1;
	}
	gaps = malloc(GAPS_MAX * sizeof(*gaps));
	if (gaps == NULL)
		return 1;
	/* The TSC rate against CLOCK_MONOTONIC, measured here. */
	t0 = mono_ns();
	c0 = __rdtsc();
	while (mono_ns() - t0 < 100000000u)
		;
	ghz = (double)(__rdtsc() - c0) / (double)(mono_ns() - t0);
	thr = (uint64_t)(GAP_MIN_NS * ghz);
	prev = __rdtsc();
	end = prev + (uint64_t)(secs * 1e9 * ghz);
	for (;;) {
		now = __rdtsc();
		if (now >= end)
			break;
		d = now - prev;
		prev = now;
		if (d <= thr)
			continue;
		lost += d;
		if ((double)d / ghz > 5000)
			over5 += d;
		if (n < GAPS_MAX)
			gaps[n++] = (double)d / ghz;
		else
			dropped++;
		if ((double)d / ghz > max_ns)
			max_ns = (double)d / ghz;
	}
	total_ns = secs * 1e9;
	printf("CPU %d, %.1f s spinning (TSC %.3f GHz): %zu gaps over %d ns%s\n",
	       cpu, secs, ghz, n + dropped, GAP_MIN_NS,
	       dropped ? " (the longest kept only in the totals)" : "");
	printf("  time lost: %.3f%% (in gaps over 5 us: %.3f%%), longest gap %.1f us\n",
	       100.0 * (double)lost / ghz / total_ns,
	       100.0 * (double)over5 / ghz / total_ns, max_ns / 1000);
	printf("  wait of an arrival at a random instant: p50 %.2f us, p99 %.2f us, p99.9 %.2f us\n",
	       wait_quantile(gaps, n, total_ns, 0.5) / 1000,
	       wait_quantile(gaps, n, total_ns, 0.01) / 1000,
	       wait_quantile(gaps, n, total_ns, 0.001) / 1000);
	free(gaps);
	return 0;
}
