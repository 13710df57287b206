/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TESTPMD_CQ_H
#define TESTPMD_CQ_H

/*
 * State shared by the files of testpmd-cq. The generator lcore plays the
 * device and the main lcore the consumer; they share only struct tpcq_run,
 * whose cross-thread fields are accessed with __atomic builtins.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include <cqpoll.h>
#include <cqpoll_group.h>
#include <cqpoll_sw.h>
#include <cqpoll_emu.h>
#include <cqpoll_sw_emu.h>

#include "hist.h"
#include "sweep.h"

#define TPCQ_PROG "testpmd-cq"
#define TPCQ_NS_PER_S 1000000000ULL

/* A clock in ns: CLOCK_MONOTONIC for latency, CLOCK_THREAD_CPUTIME_ID for CPU. */
static inline uint64_t
tpcq_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * TPCQ_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/*
 * The clocks of the poller's run: wall time, the poller thread's CPU time and
 * the whole process's (generator and emulated devices included).
 */
struct tpcq_clocks {
	uint64_t wall, thread, process;
};

/* Process first and last, so that its window holds the thread's. */
static inline void
tpcq_clocks_read(struct tpcq_clocks *c, bool start)
{
	if (start)
		c->process = tpcq_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	c->wall = tpcq_now_ns(CLOCK_MONOTONIC);
	c->thread = tpcq_now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (!start)
		c->process = tpcq_now_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* Exit statuses, documented in --help. */
#define TPCQ_EXIT_OK 0
#define TPCQ_EXIT_FAIL 1  /* device error, or completions lost or out of order */
#define TPCQ_EXIT_USAGE 2 /* bad option */

/* Bounds of the options; cqpoll_cq_wait() accepts 1 .. 3600000 ms. */
#define TPCQ_RATE_MAX 1000000000ULL
#define TPCQ_DURATION_MAX_S 86400.0
#define TPCQ_TIMEOUT_MS_MAX 3600000
#define TPCQ_BURST_MAX 4096
#define TPCQ_SIZE_MAX (1U << 24)
#define TPCQ_CQS_MAX 4096
/* Poller lcores, each with its group; the EAL has at most RTE_MAX_LCORE. */
#define TPCQ_POLLERS_MAX 64
/* cqpoll_group_conf::burst accepts 1 .. 1024. */
#define TPCQ_GROUP_BURST_MAX 1024
#define TPCQ_POLICY_DEFAULT "adaptive"

/* The completion every emulated post carries, checked by the poller. */
#define TPCQ_BYTE_LEN 64
#define TPCQ_QP_NUM 1
/* --dev-numa-node: Linux's largest node number (MAX_NUMNODES) is 1023. */
#define TPCQ_NUMA_NODE_MAX 1023
#define TPCQ_NAIVE_DELAY_NS_MAX 100000000U

enum tpcq_mode {
	TPCQ_MODE_POLL = 0,
	TPCQ_MODE_INTERRUPT,
	TPCQ_MODE_ADAPTIVE,       /* the poll group asks its policy when to sleep */
};

/* When the rate engine's completions are due (--pattern, arrival.c). */
enum tpcq_pattern {
	TPCQ_PATTERN_CONST = 0,
	TPCQ_PATTERN_POISSON,
	TPCQ_PATTERN_ONOFF,
};

/* Longest ON or OFF period of --pattern=onoff: a minute. */
#define TPCQ_ONOFF_US_MAX 60000000U

enum tpcq_transition {
	TPCQ_TRANSITION_POLL_AND_ARM = 0,
	TPCQ_TRANSITION_NAIVE,
	/* DPDK's examples/l3fwd-power, reproduced on an ethdev Rx queue. */
	TPCQ_TRANSITION_L3FWD_POWER,
};

/* Fault options, as given on the command line (struct tpcq_params::faults_given). */
#define TPCQ_FAULT_ARM_DELAY        (1u << 0)
#define TPCQ_FAULT_VISIBILITY_DELAY (1u << 1)
#define TPCQ_FAULT_PCT              (1u << 2)
#define TPCQ_FAULT_EVENT_DELAY      (1u << 3)
#define TPCQ_FAULT_SPURIOUS         (1u << 4)
#define TPCQ_FAULT_DUPLICATE        (1u << 5)
#define TPCQ_FAULT_KEEP_ARMED       (1u << 6)
#define TPCQ_FAULT_SEED             (1u << 7)
#define TPCQ_FAULT_ALL              ((1u << 8) - 1)

/* Longest --dev value: a kernel device name is at most 64 bytes. */
#define TPCQ_DEV_NAME_MAX 80

struct tpcq_dev;
struct tpcq_engine;

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
};

struct tpcq_floors {
	bool valid;
	bool pinned;              /* both threads ran on the CPUs named */
	int cpu_poller, cpu_device;
	struct tpcq_floor handoff; /* cross-core cache-line hand-off, one way */
	struct tpcq_floor wakeup;  /* eventfd write -> epoll_wait return */
	uint64_t wake_cpu_ns;     /* the sleeper's CPU time per wake-up */
	struct tpcq_floor_paced paced[TPCQ_FLOORS_PACED_MAX];
	unsigned int npaced;
};

struct tpcq_params {
	const struct tpcq_dev *dev;
	char dev_name[TPCQ_DEV_NAME_MAX]; /* as run, e.g. "mlx5:mlx5_0" */
	const char *ibdev;        /* in dev_name, after ':'; NULL for emulators */
	const char *dev_why;      /* why the default device was chosen; NULL if given */
	const struct tpcq_engine *engine;
	enum tpcq_mode mode;
	enum tpcq_transition transition;
	unsigned int cqs;         /* CQs of the device, spread over the pollers */
	unsigned int active_cqs;  /* the first N of them get the traffic; 0: all */
	/* mlx5-emu: payload scattered into each CQE (--inline-scatter), 0: none. */
	uint32_t inline_scatter;
	bool cqe_compress;        /* mlx5-emu: the device compresses CQEs */
	bool cqe_compress_enhanced; /* ... in the enhanced layout */
	unsigned int pollers;     /* poller lcores, each with its own group */
	const char *policy;       /* adaptive mode: policy spec, e.g. "spin:50" */
	const struct cqpoll_policy_ops *policy_ops; /* NULL unless adaptive */
	const char *policy_args;  /* in policy, after ':'; NULL if none */
	enum cqpoll_arm_semantics arm;
	uint64_t rate;            /* completions per second */
	enum tpcq_pattern pattern;
	uint32_t on_us, off_us;   /* --pattern=onoff:ON_US:OFF_US */
	double duration_s;
	int timeout_ms;           /* safety net of each sleep */
	unsigned int burst;
	uint32_t size;            /* 0: the driver's default */
	uint32_t naive_delay_ns;  /* spin between the naive last poll and arm */
	bool peer_process;        /* ofi: --peer=process (dev_ofi_peer.c) */
	uint32_t kill_peer_after_ms; /* ofi: --kill-peer-after-ms; 0: never */
	struct cqpoll_sw_faults faults; /* the superset every device maps from */
	uint32_t faults_given;    /* TPCQ_FAULT_* options on the command line */
	const char *json_path;    /* NULL: no JSON */
	const char *csv_path;     /* NULL: no CSV */
	bool telemetry;           /* expose the counters through DPDK telemetry */
	int numa_node;            /* --dev-numa-node; -1: from sysfs, if any */
	bool interactive;         /* -i: runs start and stop at the prompt */
	bool floors;              /* --floors: measure them before the run */
	const char *record_path;  /* --record: post times, one a line; NULL: none */
	/* --sim: the policy lab (lab.c), no EAL, no device. */
	bool sim;
	const char *sim_trace;    /* --trace; NULL: poisson */
	const char *sim_cost;     /* --sim-cost; NULL: from the floors */
	const char *sim_policies; /* --sim-policies, ';' between; NULL: defaults */
	double sim_penalty;       /* --sim-penalty: CPU ns per ns of latency */
	uint64_t sim_seeds;       /* --sim-seeds: traces of seeds seed.. */
	const struct tpcq_floors *floors_measured; /* NULL: not measured */
	struct tpcq_sweep_opts sweep;
};

/* What every completion must carry; the poller counts the others as bad. */
struct tpcq_expect {
	uint8_t opcode;
	uint32_t qp_num;
	uint32_t byte_len;
	bool check_byte_len;      /* requester completions report no length */
	/* Bytes of payload each completion carries inline (F_INLINE); 0: none. */
	uint32_t inline_len;
	/*
	 * The sequence number a completion carries, for devices whose wr_id
	 * is not it (ethdev: the mbuf, freed here); NULL: wr_id.
	 */
	uint64_t (*seq_of)(const struct cqpoll_completion *c);
};

/*
 * Byte @p i of the inline payload of the completion of sequence @p seq (its
 * CQ's own count): the poller checks what the device scattered.
 */
static inline uint8_t
tpcq_payload_byte(uint64_t seq, unsigned int i)
{
	return (uint8_t)((seq >> (8 * (i % 8))) ^ (i * 37u));
}

/* An open device: the CQ the poller consumes, the state the generator posts with. */
struct tpcq_devctx {
	struct cqpoll_cq *cq;
	void *priv;               /* the device's own state */
	/* Bits of the sequence number that wr_id carries back (mlx5: 16). */
	uint64_t wr_id_mask;
	/* Completion timestamps are CLOCK_MONOTONIC ns: latency is measured from them. */
	bool monotonic_ts;
	/* Posts the device can hold unread; 0: no bound but the CQ's back-pressure. */
	uint32_t max_outstanding;
	struct tpcq_expect expect;
	bool compress;            /* mlx5-emu with --cqe-compress */
	/*
	 * Set by a post of a device with tpcq_dev::service: the post woke no
	 * consumer, so the consumer's next arm may find this CQE and needs the
	 * device to read its doorbell.
	 */
	bool watch;
	/* The poller's completion count, for devices that must bound what they post. */
	const uint64_t *consumed;
	/*
	 * The poller runs on a worker lcore and the generator on the main
	 * one (ethdev:tap: signals meant for the poller go to the process).
	 */
	bool poller_on_worker;
};

/*
 * A device the generator can drive: open creates the CQ and whatever posts
 * into it; post makes the completion of sequence number seq happen (-ENOSPC:
 * no room yet, try again); close releases everything open made.
 */
struct tpcq_dev {
	const char *name;         /* --dev value, or its part before ':' */
	const char *help;         /* one line for --help */
	bool takes_ibdev;         /* the name is followed by ":<ibdev>" */
	const char *arg_name;     /* what follows ':' in --help; NULL: IBDEV */
	uint32_t arms;            /* allowed arm semantics, bit (1 << value) */
	enum cqpoll_arm_semantics default_arm;
	const char *arm_help;     /* what the arm values mean on this device */
	uint32_t faults;          /* TPCQ_FAULT_* it can inject */
	/* Opened after rte_eal_init(): the device is a DPDK port. */
	bool needs_eal;
	int (*open)(struct tpcq_devctx *dc, const struct tpcq_params *p);
	int (*post)(struct tpcq_devctx *dc, uint64_t seq);
	/*
	 * Emulated devices without a device thread: read the doorbells now.
	 * NULL: the device needs no help (the generator may sleep any time).
	 */
	void (*service)(struct tpcq_devctx *dc);
	/*
	 * On the poller's thread, after it read @p n completions of @p dc and
	 * before the generator learns of them: a device whose consumer must
	 * post again (UCX receives) does so here. NULL: nothing to do.
	 */
	void (*consumed)(struct tpcq_devctx *dc, const struct cqpoll_completion *c,
			 unsigned int n);
	void (*close)(struct tpcq_devctx *dc);
};

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
struct tpcq_run {
	const struct tpcq_params *params;
	struct tpcq_devctx *dc;   /* dcs[0] */
	struct cqpoll_cq *cq;     /* dcs[0].cq */
	/*
	 * One open device per CQ. Completion i of the schedule goes to CQ
	 * i % traffic_cqs with that CQ's sequence number i / traffic_cqs; CQs
	 * from traffic_cqs on get nothing (--active-cqs).
	 */
	struct tpcq_devctx *dcs;
	unsigned int ncqs;
	unsigned int traffic_cqs;
	/*
	 * Completions the generator will post; 0: as many as the closed-loop
	 * engines post in --duration; UINT64_MAX: until stopped (-i).
	 */
	uint64_t total;
	/*
	 * Each poller's group, NULL without one: the generator wakes them when
	 * done, so a group asleep on idle CQs sees the end at once. Poller k
	 * has CQs k, k + npollers, ...
	 */
	struct cqpoll_group *groups[TPCQ_POLLERS_MAX];
	unsigned int npollers;
	unsigned int gen_lcore;   /* the generator's; pollers take the others */
	/*
	 * Held by a poller to clear its groups[] entry before destroying the
	 * group, and by other threads (the prompt) while they use it; NULL when
	 * none does.
	 */
	pthread_mutex_t *group_lock;
	/*
	 * Post times (CLOCK_MONOTONIC ns) by sequence number modulo
	 * post_ns_mask + 1, for devices whose timestamps are on another clock;
	 * NULL when the device's timestamps give the latency.
	 */
	uint64_t *post_ns;
	uint64_t post_ns_mask;
	/* --record: each post's CLOCK_MONOTONIC ns by sequence number; or NULL. */
	uint64_t *record;

	/* Poller to generator. */
	unsigned int ready;       /* pollers ready; the last one sets start */
	bool start;               /* the pollers are ready: begin the schedule */
	bool stop;                /* give up posting (poller error or signal) */

	/* Generator to poller; posted and gen_done are released after each post. */
	uint64_t posted;
	uint64_t overruns;        /* completions that found the CQ full */
	uint64_t gen_tsc;         /* generator run time, TSC cycles */
	uint64_t gen_cpu_ns;      /* the generator thread's CPU time: the harness */
	bool gen_watch;           /* a post since all were read set watch */
	struct tpcq_gen_clock gen_clock; /* the generator's own */
	int gen_error;            /* -errno of a failed post, or 0 */
	bool gen_done;
	bool gen_left;            /* done with group too: it may be destroyed */

	/* Pollers to generator: completions read, added after each burst. */
	uint64_t consumed;
};

/* What the poller measured. */
struct tpcq_result {
	int dev_numa_node;        /* tpcq_dev_numa_node() */
	unsigned int remote_pollers; /* pollers on another socket than it */
	uint64_t completions;     /* completions received */
	uint64_t order_errors;    /* wr_id differed from the expected sequence */
	uint64_t bad_completions; /* wrong status, opcode or length */
	uint64_t no_timestamp;    /* completions without a latency sample */
	uint64_t missing;         /* posted but never received */
	struct tpcq_hist *latency;
	double wall_s;            /* poller, from start to the end of its drain */
	double cpu_pct;           /* poller thread CPU time / wall_s */
	double cpu_pct_process;   /* process CPU time / wall_s: may exceed 100 */
	double harness_cpu_pct;   /* generator (and device) CPU time / wall_s */
	double gen_s;
	int error;                /* -errno of a failed library call, or 0 */
	const char *error_call;   /* the call that failed */
	struct cqpoll_cq_stats stats; /* summed over the CQs */
	/* Counted by a peer's own transition (l3fwd-power), added to stats. */
	struct cqpoll_cq_stats peer;
	struct cqpoll_cq_info info;   /* of the first CQ; all are alike */
	bool grouped;                 /* run by the poll group: group is valid */
	struct cqpoll_group_stats group;
};

/* The delivery check of one CQ (check.c). */
struct tpcq_check {
	uint64_t expected;        /* sequence number of the next completion */
	uint64_t wr_id_mask;      /* bits of the sequence number wr_id carries */
	uint64_t received;        /* completions read from this CQ */
	unsigned int index;       /* the CQ's place in tpcq_run::dcs */
};

void tpcq_check_burst(const struct tpcq_run *run, struct tpcq_result *res,
		      struct tpcq_check *ck, const struct cqpoll_completion *comps,
		      unsigned int n);

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

/* params.c */
int tpcq_params_parse(int argc, char **argv, struct tpcq_params *p);
int tpcq_params_policy(struct tpcq_params *p, const char *spec, char *why,
		       size_t len);
int tpcq_params_check_run(struct tpcq_params *p, char *why, size_t len);
const char *tpcq_mode_name(enum tpcq_mode mode);
const char *tpcq_transition_name(enum tpcq_transition t);

/* dev.c */
int tpcq_dev_select(const char *name, struct tpcq_params *p);
void tpcq_dev_default(struct tpcq_params *p);
int tpcq_dev_check(struct tpcq_params *p, bool arm_given, char *why, size_t len);
void tpcq_dev_usage(FILE *f);
/* Help text indented to the option column and wrapped to 80 columns. */
void tpcq_usage_wrap(FILE *f, const char *text);
const char *tpcq_dev_names(void);
int tpcq_dev_open(struct tpcq_devctx *dc, const struct tpcq_params *p);
void tpcq_dev_close(const struct tpcq_params *p, struct tpcq_devctx *dc);

/* dev_emu.c: devices played in software. */
extern const struct tpcq_dev tpcq_dev_sw;
extern const struct tpcq_dev tpcq_dev_mlx5_emu;
extern const struct tpcq_dev tpcq_dev_verbs_emu;

/* loopback.c: real devices, a loopback RC QP pair. */
extern const struct tpcq_dev tpcq_dev_mlx5_hw;
extern const struct tpcq_dev tpcq_dev_verbs_hw;
int tpcq_loopback_first_mlx5(char *name, size_t len, char *why, size_t why_len);

/* dev_uring.c, dev_ofi.c: real queues written by others (the kernel, libfabric). */
extern const struct tpcq_dev tpcq_dev_uring;
extern const struct tpcq_dev tpcq_dev_ofi;
/* dev_ofi_peer.c: ofi with the sending peer in a child process. */
extern const struct tpcq_dev tpcq_dev_ofi_peer;
int tpcq_ofi_peer_open(struct tpcq_devctx *dc, const struct tpcq_params *p);
/* dev_ucx.c: two UCP workers over one transport. */
extern const struct tpcq_dev tpcq_dev_ucx;

/*
 * dev_ethdev.c: an Rx queue of a DPDK port (drivers/ethdev), fed by a peer
 * port in this process or by a kernel socket; and the l3fwd-power
 * transition's sleep on it, which counts into res->peer.
 */
extern const struct tpcq_dev tpcq_dev_ethdev;
int tpcq_ethdev_l3fwd_sleep(struct tpcq_devctx *dc, struct cqpoll_cq_stats *st);

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

/* poller.c */
void tpcq_poller_run(struct tpcq_run *run, struct tpcq_result *res);
bool tpcq_poller_grouped(const struct tpcq_params *p);

/* poller.c: the poller's clocks at its end, into res. */
void tpcq_poller_clocks(struct tpcq_result *res, const struct tpcq_clocks *start);

/* poller_group.c */
void tpcq_poller_group_run(struct tpcq_run *run, struct tpcq_result *res);
void tpcq_cq_stats_sum(const struct tpcq_run *run, struct cqpoll_cq_stats *sum);
enum cqpoll_group_mode tpcq_group_mode(enum tpcq_mode mode);

/* results.c: what the reports show, derived once from a run. */
struct tpcq_latency {
	uint64_t p50, p90, p99, p999, p9999, min, max, samples;
};

void tpcq_latency_get(const struct tpcq_result *res, struct tpcq_latency *l);
double tpcq_achieved_rate(const struct tpcq_run *run,
			  const struct tpcq_result *res);
const char *tpcq_transition_used(const struct tpcq_params *p);
const char *tpcq_latency_source(const struct tpcq_run *run);
const char *tpcq_arm_used(const struct tpcq_params *p,
			  const struct tpcq_result *res);
const char *tpcq_policy_used(const struct tpcq_params *p);
double tpcq_pct_of_wall(uint64_t ns, const struct tpcq_result *res);
double tpcq_completions_per_s(const struct tpcq_result *res);
/* Sleeps of the poller that ended, per second of its run. */
double tpcq_wakeups_per_s(const struct tpcq_result *res);
/* The pattern the engine followed: "none" for the closed-loop ones. */
void tpcq_pattern_used(const struct tpcq_params *p, char *buf, size_t len);

/* Room for the longest value: the device name, TPCQ_DEV_NAME_MAX. */
#define TPCQ_FIELD_VAL_MAX 128
/* More than the fields of a run: results.c aborts if it is ever short. */
#define TPCQ_FIELDS_MAX 128

/* One setting or measurement of a run, as the JSON and the CSV write it. */
struct tpcq_field {
	const char *obj;          /* the JSON object it is in; NULL: top level */
	const char *key;
	bool quote;               /* a string */
	bool null;                /* no value in this run: null, empty cell */
	char val[TPCQ_FIELD_VAL_MAX];
};

/* Every field of a run, in the order of the JSON keys and CSV columns. */
struct tpcq_fields {
	unsigned int n;
	struct tpcq_field f[TPCQ_FIELDS_MAX];
};

void tpcq_fields_get(const struct tpcq_params *p, const struct tpcq_run *run,
		     const struct tpcq_result *res, struct tpcq_fields *fs);
/* fclose() with write errors reported; returns 0 or -errno. */
int tpcq_report_close(FILE *out, const char *path);
/* A JSON string of @s: names and arguments come from the user, so escaped. */
void tpcq_json_string(FILE *out, const char *s);

/* report.c */
void tpcq_report_table(const struct tpcq_params *p, const struct tpcq_run *run,
		       const struct tpcq_result *res);

/* report_json.c */
int tpcq_report_json(const char *path, const struct tpcq_params *p,
		     const struct tpcq_run *run, const struct tpcq_result *res);

/* report_csv.c */
int tpcq_report_csv(const char *path, const struct tpcq_params *p,
		    const struct tpcq_run *run, const struct tpcq_result *res);

/* Longest CSV first line read back: a testpmd-cq header is a few KiB. */
#define TPCQ_CSV_HEAD_MAX 65536
/* Checks --csv before the run: a FILE that exists has our header. */
int tpcq_report_csv_check(const struct tpcq_params *p);

/*
 * outfile.c: output files. Each function says what is wrong on stderr, the
 * option named as --opt.
 */
/* path can be written: a regular file, or a new one in a writable directory. */
int tpcq_outfile_check(const char *opt, const char *path);
/* Both outputs of p, before the run; 0 or -1. */
int tpcq_outfiles_check(const struct tpcq_params *p);
/* Opened without blocking (a FIFO), refused unless regular; NULL on error. */
FILE *tpcq_outfile_open(const char *opt, const char *path, bool append);
struct tpcq_outfile_head {
	bool exists;
	uint64_t size;
	bool ends_with_newline;   /* or empty */
};
/*
 * The first line of path (its line break dropped) in line, reading at most
 * cap - 1 bytes: -EINVAL if it is longer. A missing file: 0, h->exists false.
 */
int tpcq_outfile_head(const char *opt, const char *path, char *line, size_t cap,
		      struct tpcq_outfile_head *h);

/* floors.c */
struct tpcq_params;
/*
 * The hand-off and wake-up floors, then a paced hand-off at each of the
 * nrates rates (stores spaced by p's --pattern and --seed), secs each.
 * Returns 0 or -errno; f->valid tells whether the floors can be used.
 */
int tpcq_floors_measure(const struct tpcq_params *p, const uint64_t *rates,
			unsigned int nrates, double secs, struct tpcq_floors *f);
void tpcq_floors_print(const struct tpcq_floors *f);
void tpcq_floor_paced_print(const struct tpcq_floor_paced *fp);
/* Pin the calling thread to cpu; false if it could not be. */
bool tpcq_pin_self(int cpu);
/* A non-blocking eventfd in a new epoll set: 0 or -errno (close both fds). */
int tpcq_floor_eventfd(int *efd, int *epfd);

/* floors_paced.c: the floors at one more load, on f's CPUs; 0 or -errno. */
int tpcq_floors_measure_paced(const struct tpcq_params *p, uint64_t rate,
			      double secs, struct tpcq_floors *f);
/* "floors": {...}, without a line break after it. */
void tpcq_floors_json(FILE *out, const struct tpcq_floors *f, const char *indent);
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

/* main.c: set by SIGINT/SIGTERM. */
bool tpcq_interrupted(void);

/* main.c: the steps of one run, shared with the prompt. */
int tpcq_run_prepare(struct tpcq_run *tr, struct tpcq_result *res,
		     const struct tpcq_params *p, struct tpcq_devctx *dcs,
		     uint64_t total);
void tpcq_run_collect(struct tpcq_run *tr, struct tpcq_result *res);
int tpcq_run_report(const struct tpcq_params *p, const struct tpcq_run *tr,
		    const struct tpcq_result *res);
void tpcq_run_release(struct tpcq_run *tr, struct tpcq_result *res);

/* prompt.c: the interactive session (-i). */
int tpcq_prompt(const struct tpcq_params *p, struct tpcq_devctx *dcs);

/*
 * NUMA (numa.c): the device's node (--dev-numa-node, else sysfs for a real
 * device; -1: none known), the default EAL lcores (two CPUs, the node's
 * first), and a warning per poller on another socket (returns how many).
 */
int tpcq_dev_numa_node(const struct tpcq_params *p);
void tpcq_default_lcores(int node, char *buf, size_t len);
struct tpcq_run;
unsigned int tpcq_numa_check(const struct tpcq_params *p,
			     const struct tpcq_run *run, int node);

#endif /* TESTPMD_CQ_H */
