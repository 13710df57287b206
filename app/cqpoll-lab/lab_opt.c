/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's offline optimum: the least expected total cost (CPU +
 * penalty x latency) of any schedule that knows every arrival of the trace
 * but not the wake-up latencies it will draw, under the lab's cost model.
 * Such a schedule decides, after each arrival it handled awake (and after
 * each wake-up, once it sees when it woke), whether to poll until the next
 * arrival or to sleep at once: spinning a while and then sleeping is never
 * better when the gap is known, since the sleep ends at the same time.
 *
 * The model, that of lab.c's clock:
 *  - polling from t to the next arrival a costs a - t of CPU, and the
 *    arrival waits half an iteration (poll_ns / 2) on average;
 *  - a sleep costs poll_ns (the empty iteration that decides it) + arm_ns +
 *    wake_cpu_ns + poll_ns (the iteration after the wake-up) of CPU; it is
 *    possible only if the gap is longer than poll_ns + arm_ns (else the
 *    re-poll after the arm finds the arrival); it ends a wake-up latency w
 *    after its first arrival j, and every arrival k up to a_j + w waits
 *    a_j + w - a_k; the schedule is then awake at a_j + w;
 *  - w is one of nq equally likely quantiles of the lab's log-normal.
 *
 * V(i), the cost from "awake at a_i, arrivals up to i handled", and S(j),
 * the expected cost of a sleep that ends with arrival j (without the
 * sleep's own CPU), satisfy
 *   V(i) = min(a_{i+1} - a_i + p poll/2 + V(i+1), Cs + S(i+1))
 *   S(j) = mean_q [ p lat(j, w_q) + after(a_j + w_q, m_q) ]
 * with after(t, m) the cheaper of polling from t to a_{m+1} and sleeping
 * there; so one backward pass over the trace, O(n nq).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "lab.h"

#define Z99 2.326347874

static double
norm_cdf(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

void
tpcq_lab_wake_quantiles(const struct tpcq_lab_cost *c, unsigned int nq,
			double *w)
{
	double mu = log((double)c->wake_ns), sigma, lo, hi, mid, q;
	unsigned int i, k;

	sigma = c->wake_p99_ns > c->wake_ns ?
		log((double)c->wake_p99_ns / (double)c->wake_ns) / Z99 : 0.0;
	for (i = 0; i < nq; i++) {
		/* The middle of the i-th of nq equal slices of probability. */
		q = (i + 0.5) / nq;
		lo = -10.0;
		hi = 10.0;
		for (k = 0; k < 100; k++) {
			mid = (lo + hi) / 2;
			if (norm_cdf(mid) < q)
				lo = mid;
			else
				hi = mid;
		}
		w[i] = exp(mu + sigma * (lo + hi) / 2);
	}
}

static double
sleep_cpu(const struct tpcq_lab_cost *c)
{
	return (double)(2 * c->poll_ns + c->arm_ns + c->wake_cpu_ns);
}

static int
may_sleep(const struct tpcq_lab_cost *c, double gap)
{
	return gap > (double)(c->poll_ns + c->arm_ns);
}

/*
 * One backward pass. greedy_ns < 0: the optimum; otherwise the expected cost
 * of the rule "sleep when the gap ahead is longer than greedy_ns" (the
 * clairvoyant of ski rental, which ignores who queues behind a wake-up).
 */
static double
backward(const uint64_t *at, size_t n, const struct tpcq_lab_cost *c,
	 double p, const double *w, unsigned int nq, double greedy_ns)
{
	double *v, *s, cs = sleep_cpu(c), half = p * (double)c->poll_ns / 2;
	double poll, nap, acc, t, gap, r;
	uint64_t *pre;
	size_t i, m, cnt;
	unsigned int q;

	if (n == 0)
		return 0.0;
	v = malloc(n * sizeof(*v));
	s = malloc(n * sizeof(*s));
	pre = malloc((n + 1) * sizeof(*pre));
	if (v == NULL || s == NULL || pre == NULL) {
		free(v);
		free(s);
		free(pre);
		return -1.0;
	}
	pre[0] = 0;
	for (i = 0; i < n; i++)
		pre[i + 1] = pre[i] + (at[i] - at[0]);
	for (i = n; i-- > 0;) {
		/* S(i): a sleep whose first arrival is i. */
		acc = 0.0;
		m = i;
		for (q = 0; q < nq; q++) {
			t = (double)at[i] + w[q];
			while (m + 1 < n && (double)at[m + 1] <= t)
				m++;
			cnt = m - i + 1;
			/* sum over k = i..m of (a_i + w - a_k), exactly. */
			r = (double)((int64_t)(cnt * (at[i] - at[0])) -
				     (int64_t)(pre[m + 1] - pre[i])) +
			    (double)cnt * w[q];
			acc += p * r;
			if (m + 1 >= n)
				continue;
			gap = (double)at[m + 1] - t;
			poll = gap + half + v[m + 1];
			nap = may_sleep(c, gap) ? cs + s[m + 1] : INFINITY;
			if (greedy_ns >= 0)
				acc += may_sleep(c, gap) && gap > greedy_ns ? nap : poll;
			else
				acc += poll < nap ? poll : nap;
		}
		s[i] = acc / nq;
		/* V(i): awake at a_i. */
		if (i + 1 >= n) {
			v[i] = 0.0;
			continue;
		}
		gap = (double)(at[i + 1] - at[i]);
		poll = gap + half + v[i + 1];
		nap = may_sleep(c, gap) ? cs + s[i + 1] : INFINITY;
		if (greedy_ns >= 0)
			v[i] = may_sleep(c, gap) && gap > greedy_ns ? nap : poll;
		else
			v[i] = poll < nap ? poll : nap;
	}
	r = v[0];
	free(v);
	free(s);
	free(pre);
	return r;
}

double
tpcq_lab_opt_cost(const uint64_t *at, size_t n, const struct tpcq_lab_cost *c,
		  double penalty, const double *w, unsigned int nq)
{
	return backward(at, n, c, penalty, w, nq, -1.0);
}

double
tpcq_lab_greedy_cost(const uint64_t *at, size_t n,
		     const struct tpcq_lab_cost *c, double penalty,
		     const double *w, unsigned int nq, double threshold_ns)
{
	return backward(at, n, c, penalty, w, nq,
			threshold_ns < 0 ? 0 : threshold_ns);
}

/*
 * The same optimum by exhaustive search of the decision tree, every branch
 * walked, times and latencies summed arrival by arrival: exponential, for
 * the lab's own test on traces of a few arrivals.
 */
static double
brute(const uint64_t *at, size_t n, const struct tpcq_lab_cost *c, double p,
      const double *w, unsigned int nq, double t, size_t next)
{
	double poll, nap, acc, end, gap;
	size_t k;
	unsigned int q;

	if (next >= n)
		return 0.0;
	gap = (double)at[next] - t;
	poll = gap + p * (double)c->poll_ns / 2 +
	       brute(at, n, c, p, w, nq, (double)at[next], next + 1);
	if (!may_sleep(c, gap))
		return poll;
	acc = 0.0;
	for (q = 0; q < nq; q++) {
		end = (double)at[next] + w[q];
		for (k = next; k < n && (double)at[k] <= end; k++)
			acc += p * (end - (double)at[k]);
		acc += brute(at, n, c, p, w, nq, end, k);
	}
	nap = sleep_cpu(c) + acc / nq;
	return poll < nap ? poll : nap;
}

double
tpcq_lab_opt_brute(const uint64_t *at, size_t n, const struct tpcq_lab_cost *c,
		   double penalty, const double *w, unsigned int nq)
{
	if (n == 0)
		return 0.0;
	return brute(at, n, c, penalty, w, nq, (double)at[0], 1);
}
