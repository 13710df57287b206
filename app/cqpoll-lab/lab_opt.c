/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy lab's offline optimum: the least total cost (CPU + penalty x
 * latency) of any schedule of the actions a policy may take, on the same
 * wake-up draws the policies are charged with (lab_sim.c draws them by
 * arrival index: common random numbers). It knows every arrival and every
 * draw, so no policy can cost less on any seed: a lower bound, not an
 * expectation.
 *
 * The actions, as lab_sim.c's clock charges them, relaxed only where the
 * relaxation lowers the cost (so that the bound stays one):
 *  - polling costs its time as CPU, and finds an arrival at once (the clock:
 *    up to an iteration late);
 *  - a decision is taken the moment an arrival is found (the clock: an
 *    iteration, poll_ns, later);
 *  - a sleep, possible when the next arrival j is more than arm_ns away,
 *    costs arm_ns + wake_cpu_ns and ends at a_j + w_j, w_j the wake-up drawn
 *    for arrival j; every arrival up to then waits until then (the clock
 *    adds two iterations);
 *  - a nap of any length L costs wake_cpu_ns and ends at e + L + o_j, o_j
 *    the overshoot drawn while j is the next arrival; arrivals up to its end
 *    wait until then;
 *  - the run ends when the last arrival is found (the clock: an iteration
 *    later).
 * Any sequence of them within a gap is allowed; those that are never
 * cheaper drop out: spinning before a sleep (it ends at the same time),
 * two naps in one gap (the second draws the same overshoot: one nap
 * reaches its end), a nap that ends before the next arrival but not at it.
 *
 * G(e, j), the cost from "awake at e, arrivals before j found, a_j > e", is
 * the least of: polling to a_j, then V(j+1) = G(a_j, j+1); a sleep, then
 * S(j), its latency and G after it; a nap that ends at a later arrival
 * a_q (q >= j, a_q >= e + o_j), the arrivals j..q-1 waiting for it, then
 * V(q+1); a nap of L = 0, which ends at e + o_j past a_j, then G there.
 * Ending a nap between those points is never cheaper (the cost is linear
 * between them; test_lab_opt checks it against a search of every ns).
 * Only the L = 0 naps lead to times other than an arrival or a wake-up; a
 * chain of them is followed CHAIN_MAX deep, then bounded below by
 * V(j) - (e - a_{j-1}) (polling from a_{j-1} to e reaches that state).
 * One backward pass over the arrivals.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

/* L = 0 naps followed in a row before the chain is bounded below. */
#define CHAIN_MAX 64
/* Naps to later arrivals weighed from one state before the rest is bounded. */
#define CAND_MAX 4096

struct opt {
	const struct tpcq_lab_opt_in *in;
	double *v;      /* v[j] = G(a_{j-1}, j); v[n] = 0 */
	double *s;      /* s[j]: a sleep that arrival j ends, from its start */
	uint64_t *pre;  /* pre[k] = sum of a_i - a_0, i < k */
};

/* sum over k = j..m of (t - a_k), t >= a_m; 0 when m < j. */
static double
wait_sum(const struct opt *x, size_t j, size_t m, uint64_t t)
{
	const uint64_t *a = x->in->at;

	if (m + 1 <= j)
		return 0.0;
	return (double)(m - j + 1) * (double)(t - a[0]) -
	       (double)(x->pre[m + 1] - x->pre[j]);
}

/* The last arrival at or before t, from j on (j - 1 if none). */
static size_t
last_by(const struct opt *x, size_t j, uint64_t t)
{
	const uint64_t *a = x->in->at;
	size_t m = j;

	while (m < x->in->n && a[m] <= t)
		m++;
	return m - 1;
}

static double
g(const struct opt *x, uint64_t e, size_t j, unsigned int depth)
{
	const struct tpcq_lab_opt_in *in = x->in;
	const uint64_t *a = in->at;
	double p = in->penalty, cw = (double)in->c->wake_cpu_ns, best, cost, after;
	uint64_t end;
	size_t n = in->n, m, q, cand;

	if (j >= n)
		return 0.0;
	best = (double)(a[j] - e) + x->v[j + 1];
	if (a[j] - e > in->c->arm_ns) {
		cost = (double)in->c->arm_ns + cw + x->s[j];
		if (cost < best)
			best = cost;
	}
	if (!in->naps)
		return best;
	end = e + in->o[j];
	q = j;
	if (end > a[j]) {
		/* L = 0: the earliest end, past a_j. */
		m = last_by(x, j, end);
		cost = cw + p * wait_sum(x, j, m, end);
		/*
		 * Polling from e to end reaches the same state for o_j: a nap
		 * that costs as much is never better.
		 */
		if (cost < (double)in->o[j]) {
			if (m + 1 >= n)
				after = 0.0;
			else if (depth < CHAIN_MAX)
				after = g(x, end, m + 1, depth + 1);
			else
				after = x->v[m + 1] - (double)(end - a[m]);
			if (cost + after < best)
				best = cost + after;
		}
		q = m + 1;
	}
	/* Naps that end at arrival q, the arrivals j..q-1 waiting for it. */
	for (cand = 0; q < n; q++, cand++) {
		cost = cw + p * wait_sum(x, j, q - 1, a[q]);
		/*
		 * Polling to a_q costs a_q - e; once that is cheaper and each ns
		 * more adds at least a ns of waiting, it stays cheaper. Below
		 * penalty 1 that needs q - j + 1 arrivals waiting, which tied
		 * arrivals can make untrue of the ns between: there the result
		 * is a bound, not the least cost (lab.h).
		 */
		if (cost >= (double)(a[q] - e) && p * (double)(q - j + 1) >= 1.0)
			break;
		if (cand == CAND_MAX) {
			/* Later ends wait at least this long: a bound below. */
			if (cost < best)
				best = cost;
			break;
		}
		if (cost + x->v[q + 1] < best)
			best = cost + x->v[q + 1];
	}
	return best;
}

double
tpcq_lab_opt_bound(const struct tpcq_lab_opt_in *in)
{
	struct opt x = { .in = in };
	const uint64_t *a = in->at;
	size_t n = in->n, j, m;
	uint64_t end;
	double r;

	if (n < 2)
		return 0.0;
	x.v = calloc(n + 1, sizeof(*x.v));
	x.s = calloc(n + 1, sizeof(*x.s));
	x.pre = malloc((n + 1) * sizeof(*x.pre));
	if (x.v == NULL || x.s == NULL || x.pre == NULL) {
		r = -1.0;
		goto out;
	}
	x.pre[0] = 0;
	for (j = 0; j < n; j++)
		x.pre[j + 1] = x.pre[j] + (a[j] - a[0]);
	for (j = n - 1; j >= 1; j--) {
		end = a[j] + in->w[j];
		m = last_by(&x, j, end);
		x.s[j] = in->penalty * wait_sum(&x, j, m, end) +
			 g(&x, end, m + 1, 0);
		x.v[j] = g(&x, a[j - 1], j, 0);
	}
	r = x.v[1];
out:
	free(x.v);
	free(x.s);
	free(x.pre);
	return r;
}

/*
 * The same by a search of every schedule at 1 ns resolution: from "awake at
 * t, arrivals before j found", poll one ns, sleep, or nap to every end from
 * t + o_j on. Memoised over (t, j), which prunes nothing: the cost from a
 * state does not depend on how it was reached. For tests, on traces of a
 * few hundred ns.
 */
struct brute {
	const struct tpcq_lab_opt_in *in;
	uint64_t tmax;
	double *memo;
};

static double
brute_at(struct brute *b, uint64_t t, size_t j)
{
	const struct tpcq_lab_opt_in *in = b->in;
	const uint64_t *a = in->at;
	double p = in->penalty, cw = (double)in->c->wake_cpu_ns, best, cost, lat;
	double *memo;
	uint64_t e;
	size_t n = in->n, k;

	if (j >= n)
		return 0.0;
	memo = &b->memo[t * (n + 1) + j];
	if (!isnan(*memo))
		return *memo;
	/* Poll one ns: an arrival then is found at once. */
	for (k = j; k < n && a[k] <= t + 1; k++)
		;
	best = 1.0 + brute_at(b, t + 1, k);
	if (a[j] - t > in->c->arm_ns) {
		e = a[j] + in->w[j];
		lat = 0.0;
		for (k = j; k < n && a[k] <= e; k++)
			lat += (double)(e - a[k]);
		cost = (double)in->c->arm_ns + cw + p * lat + brute_at(b, e, k);
		if (cost < best)
			best = cost;
	}
	for (e = t + in->o[j]; in->naps && e <= b->tmax; e++) {
		lat = 0.0;
		for (k = j; k < n && a[k] <= e; k++)
			lat += (double)(e - a[k]);
		cost = cw + p * lat + brute_at(b, e, k);
		if (cost < best)
			best = cost;
	}
	*memo = best;
	return best;
}

double
tpcq_lab_opt_brute(const struct tpcq_lab_opt_in *in)
{
	struct brute b = { .in = in };
	uint64_t most = 0;
	size_t i, cells;
	double r;

	if (in->n < 2)
		return 0.0;
	for (i = 0; i < in->n; i++) {
		if (in->w[i] > most)
			most = in->w[i];
		if (in->o[i] > most)
			most = in->o[i];
	}
	b.tmax = in->at[in->n - 1] + most;
	cells = (size_t)(b.tmax + 2) * (in->n + 1);
	b.memo = malloc(cells * sizeof(*b.memo));
	if (b.memo == NULL)
		return -1.0;
	for (i = 0; i < cells; i++)
		b.memo[i] = NAN;
	/* The first poll finds every arrival at the first one's time. */
	for (i = 1; i < in->n && in->at[i] <= in->at[0]; i++)
		;
	r = brute_at(&b, in->at[0], i);
	free(b.memo);
	return r;
}
