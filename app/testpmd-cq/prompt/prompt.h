/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_PROMPT_H
#define TPCQ_PROMPT_H

/*
 * The interactive session (-i): the settings the next start runs with, the
 * run going on or last stopped, and the counters "show stats" reads from it.
 * prompt.c parses the commands; prompt_session.c starts, samples and stops
 * runs. Every function here is called on the prompt's thread only.
 */

#include "engine.h"
#include "interrupt.h"
#include "poller.h"
#include "report.h"
#include "run.h"

/* Room for a policy spec: a cmdline string token holds at most 127 bytes. */
#define TPCQ_PROMPT_POLICY_MAX 128

/* Run settings that own the policy spec they point to. */
struct tpcq_settings {
	struct tpcq_params p;     /* p.policy is NULL or points to policy */
	char policy[TPCQ_PROMPT_POLICY_MAX];
};

/* Counters of a run at one moment. */
struct tpcq_sample {
	uint64_t ns;              /* CLOCK_MONOTONIC */
	uint64_t cpu_ns;          /* the poller thread's CPU time */
	uint64_t completions;
	uint64_t events;
	uint64_t spurious_events;
	uint64_t lost_wakeups;    /* the CQs' and the group's */
	uint64_t wait_timeouts;
	struct tpcq_hist *latency;
};

struct tpcq_session {
	struct tpcq_devctx *dcs;
	unsigned int worker;          /* the generator's lcore */
	struct tpcq_settings next;    /* what the next start runs */
	struct tpcq_settings cur;     /* what the running or last run runs */
	struct tpcq_run tr;
	struct tpcq_result res;
	bool have_run;                /* tr and res hold a run, going or stopped */
	bool running;                 /* started and not stopped yet */
	int status;                   /* worst exit status of the runs */
	uint64_t start_ns;
	unsigned int mode_changes;    /* applied live to the running group */
	pthread_t poller;
	pthread_mutex_t group_lock;   /* tr.group_lock */
	bool ready;                   /* initialised: group_lock too */
	/* Written by the poller thread before it polls (released by tr.start). */
	clockid_t poller_clock;
	uint64_t poller_start_ns;
	uint64_t poller_start_cpu_ns;
	/* Written by the poller thread when it is done (released by poller_done). */
	uint64_t poller_end_ns;
	uint64_t poller_end_cpu_ns;
	bool poller_done;
	/* "show stats": since the start or "clear stats", and since the last show. */
	struct tpcq_sample base;
	struct tpcq_sample last;
	struct tpcq_sample now;
	bool cleared;                 /* base is a "clear stats", not the start */
	bool quit;
};

int tpcq_settings_init(struct tpcq_settings *s, const struct tpcq_params *p);
void tpcq_settings_copy(struct tpcq_settings *dst, const struct tpcq_settings *src);

int tpcq_session_init(struct tpcq_session *s, const struct tpcq_params *p,
		      struct tpcq_devctx *dcs);
void tpcq_session_fini(struct tpcq_session *s);
int tpcq_session_start(struct tpcq_session *s);
int tpcq_session_stop(struct tpcq_session *s);
bool tpcq_session_ended(const struct tpcq_session *s);
void tpcq_session_sample(struct tpcq_session *s, struct tpcq_sample *m);
void tpcq_sample_copy(struct tpcq_sample *dst, const struct tpcq_sample *src);
int tpcq_session_mode_live(struct tpcq_session *s, enum tpcq_mode mode);

/* prompt.c: the interactive session (-i); an exit status. */
int tpcq_prompt(const struct tpcq_params *p, struct tpcq_devctx *dcs);

#endif /* TPCQ_PROMPT_H */
