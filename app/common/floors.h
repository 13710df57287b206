/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_FLOORS_H
#define TPCQ_FLOORS_H

/*
 * The floors (floors.c): what the machine costs a hand-off and a wake-up,
 * shared by testpmd-cq and the lab (which derives its cost model from them).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* floors.c: what the machine costs, on the run's two CPUs. */
struct tpcq_floor {
	uint64_t p50_ns, p99_ns, samples;
};

/* Loads a paced hand-off floor is measured at: one per load of a sweep. */
#define TPCQ_FLOORS_PACED_MAX 32
/* Longest a paced floor runs: as long as a default sweep point. */
#define TPCQ_FLOORS_PACED_MAX_S 2.0

/*
 * The floors at one load (floors_paced.c): stamps paced as the generator
 * paces its posts, for as long as a point runs (up to
 * TPCQ_FLOORS_PACED_MAX_S), taken by a thread that spins (hand-off) or
 * sleeps on an eventfd (wake-up). Their tails are the machine's at that
 * load (time the CPUs ran something else), which the back-to-back floors,
 * over in a fraction of a second, do not sample.
 */
struct tpcq_floor_paced {
	uint64_t rate;            /* stamps per second */
	double secs;
	struct tpcq_floor handoff;
	struct tpcq_floor wakeup;
	uint64_t wake_cpu_ns;     /* the sleeper's CPU time per wake-up */
};

struct tpcq_floors {
	bool valid;
	bool pinned;              /* both threads ran on the CPUs named */
	int cpu_poller, cpu_device;
	struct tpcq_floor handoff; /* cross-core cache-line hand-off, one way */
	struct tpcq_floor wakeup;  /* eventfd write -> epoll_wait return */
	uint64_t wake_cpu_ns;     /* the sleeper's CPU time per wake-up */
	/* A timer nap's overshoot (clock_nanosleep past its end): the lab's nap. */
	struct tpcq_floor timer;
	struct tpcq_floor_paced paced[TPCQ_FLOORS_PACED_MAX];
	unsigned int npaced;
};

/*
 * The hand-off and wake-up floors back to back, on the default lcores of
 * NUMA node @p node (-1: any): 0 or -errno; f->valid
 * tells whether they can be used. f->npaced is 0 after it.
 */
int tpcq_floors_measure_base(int node, struct tpcq_floors *f);
void tpcq_floors_print(const struct tpcq_floors *f);
void tpcq_floor_paced_print(const struct tpcq_floor_paced *fp);
/* Pin the calling thread to cpu; false if it could not be. */
bool tpcq_pin_self(int cpu);
/* A non-blocking eventfd in a new epoll set: 0 or -errno (close both fds). */
int tpcq_floor_eventfd(int *efd, int *epfd);
/* "floors": {...}, without a line break after it. */
void tpcq_floors_json(FILE *out, const struct tpcq_floors *f,
		      const char *indent);
/* Whether a point's latency is held against the wake-up (else the hand-off). */
bool tpcq_floor_is_wakeup(const char *policy, double wakeups_per_s,
			  double achieved_rate);
/*
 * The floor a point at rate is held against: the wake-up or the hand-off,
 * paced at rate if measured there, else back to back. *paced_rate: the
 * paced floors' rate, 0 if none was used. NULL if none is measured.
 */
const struct tpcq_floor *tpcq_floor_match(const struct tpcq_floors *f,
					  bool wakeup, uint64_t rate,
					  uint64_t *paced_rate);
/* The matched floor's name in the reports: "wakeup_paced", "handoff", ... */
const char *tpcq_floor_name(bool wakeup, uint64_t paced_rate);

#endif /* TPCQ_FLOORS_H */
