/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_ENGINE_H
#define TPCQ_ENGINE_H

/*
 * The traffic engines and the generator lcore that runs them (engines/).
 */

#include "params.h"

struct tpcq_run;

/*
 * How the generator sleeps (gen.c): until a margin before a post is due,
 * then spins; the margin follows how late its wake-ups are.
 */
#define TPCQ_GEN_MARGIN_START_NS 50000U
#define TPCQ_GEN_MARGIN_MIN_NS   5000U
#define TPCQ_GEN_MARGIN_MAX_NS   100000U
/* A shorter sleep costs more than the spin it saves. */
#define TPCQ_GEN_SLEEP_MIN_NS    20000U
/* Longest single sleep: a stop is seen within it. */
#define TPCQ_GEN_SLEEP_MAX_NS    10000000U

struct tpcq_gen_clock {
	double ns_per_tsc;
	uint64_t margin_ns;       /* wake this long before a post is due */
	uint64_t sleeps;
};

/* Everything both lcores see during a run. */

/* arrival.c: the schedule of the rate engine. */
struct tpcq_arrival {
	enum tpcq_pattern pattern;
	double period;            /* 1/rate, in the unit given to init */
	double on, off;           /* onoff: burst and silence, same unit */
	double t;                 /* poisson: the last arrival */
	uint64_t rng;             /* poisson: generator state, from --seed */
};

const char *tpcq_pattern_name(enum tpcq_pattern pattern);
/* The --pattern value as given: "onoff:ON_US:OFF_US" with its numbers. */
void tpcq_pattern_describe(const struct tpcq_params *p, char *buf, size_t len);
/* Returns 0, or -EINVAL with the reason in why. */
int tpcq_pattern_parse(const char *s, struct tpcq_params *p, char *why,
		       size_t len);
/* Completions the schedule holds within --duration. */
uint64_t tpcq_arrival_total(const struct tpcq_params *p);
void tpcq_arrival_init(struct tpcq_arrival *a, const struct tpcq_params *p,
		       double units_per_s);
/* When completion seq is due; call with seq = 0, 1, 2, ... in turn. */
double tpcq_arrival_at(struct tpcq_arrival *a, uint64_t seq);

/*
 * A traffic engine, like testpmd's forwarding engines: when the device side
 * posts each completion. One file each (engine_*.c); the generator lcore
 * (gen.c) runs the one --engine names.
 */
struct tpcq_engine {
	const char *name;         /* --engine value */
	const char *help;         /* for --help */
	bool open_loop;           /* posts on a schedule: --rate, --pattern */
	/* Completions it will post; 0: as many as --duration allows. */
	uint64_t (*total)(const struct tpcq_params *p);
	/*
	 * The generator's loop, from TSC time start. Posts with tpcq_gen_post()
	 * and returns 0, or the -errno of a failed post.
	 */
	int (*run)(struct tpcq_run *run, uint64_t start);
};

extern const struct tpcq_engine tpcq_engine_rate;
extern const struct tpcq_engine tpcq_engine_pingpong;
extern const struct tpcq_engine tpcq_engine_drain;

/* gen.c */
const struct tpcq_engine *tpcq_engine_find(const char *name);
const struct tpcq_engine *tpcq_engine_default(void);
const char *tpcq_engine_names(void);
void tpcq_engine_usage(FILE *f);
int tpcq_gen_main(void *arg);
bool tpcq_gen_must_stop(const struct tpcq_run *run);
/*
 * Post completion seq of the schedule, retrying while the device is full
 * (counted in overruns if count_full), then publish it in run->posted.
 * Returns 0, 1 if told to stop while the device was full, or -errno.
 */
int tpcq_gen_post(struct tpcq_run *run, uint64_t seq, bool count_full);
/* Let the emulated devices read their doorbells (tpcq_dev::service). */
void tpcq_gen_service(struct tpcq_run *run);
/*
 * Until TSC time due: asleep through long gaps, spinning through short ones
 * and while a posted completion is unread on a device that needs service.
 * Returns 0 at due, 1 if told to stop.
 */
int tpcq_gen_wait(struct tpcq_run *run, uint64_t due);
/*
 * The calling thread paces with c (and sleeps with 1 ns timer slack);
 * c->ns_per_tsc is the caller's to set if it uses the TSC.
 */
void tpcq_gen_clock_init(struct tpcq_gen_clock *c);
/*
 * One step towards a time left_ns ahead: a sleep to a margin before it if
 * the gap is worth one, else a pause. The generator's pacing, shared with
 * the paced hand-off floor so that both wait alike.
 */
void tpcq_gen_clock_pace(struct tpcq_gen_clock *c, uint64_t left_ns);
/* TSC time a closed-loop engine stops posting: --duration, or never (-i). */
uint64_t tpcq_gen_end(const struct tpcq_run *run, uint64_t start);

#endif /* TPCQ_ENGINE_H */
