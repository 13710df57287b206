/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Application options (after "--"). They are parsed before the EAL starts, so
 * --help and bad values answer at once, without EAL start-up noise.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include <cqpoll_config.h>
#include <cqpoll_group.h>

#include "lab.h"
#include "testpmd_cq.h"

enum {
	OPT_HELP = 'h',
	OPT_INTERACTIVE = 'i',
	OPT_DEV = 256,
	OPT_MODE,
	OPT_RATE,
	OPT_DURATION,
	OPT_TRANSITION,
	OPT_ARM,
	OPT_TIMEOUT_MS,
	OPT_BURST,
	OPT_SIZE,
	OPT_FAULT_ARM_DELAY,
	OPT_FAULT_VISIBILITY_DELAY,
	OPT_FAULT_EVENT_DELAY,
	OPT_FAULT_SPURIOUS,
	OPT_FAULT_DUPLICATE,
	OPT_FAULT_PCT,
	OPT_FAULT_KEEP_ARMED,
	OPT_SEED,
	OPT_NAIVE_DELAY_NS,
	OPT_PEER,
	OPT_KILL_PEER_AFTER_MS,
	OPT_DEV_NUMA_NODE,
	OPT_JSON,
	OPT_CQS,
	OPT_ACTIVE_CQS,
	OPT_INLINE_SCATTER,
	OPT_CQE_COMPRESS,
	OPT_POLICY,
	OPT_TELEMETRY,
	OPT_NO_TELEMETRY,
	OPT_CSV,
	OPT_PATTERN,
	OPT_ENGINE,
	OPT_POLLERS,
	OPT_FLOORS,
	OPT_RECORD,
	OPT_SIM,
	OPT_TRACE,
	OPT_SIM_COST,
	OPT_SIM_POLICIES,
	OPT_SIM_PENALTY,
	OPT_SIM_SEEDS,
	OPT_SWEEP,                /* every --sweep option: sweep.c reads them */
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "transition", required_argument, NULL, OPT_TRANSITION },
	{ "arm", required_argument, NULL, OPT_ARM },
	{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT_MS },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "fault-arm-delay", required_argument, NULL, OPT_FAULT_ARM_DELAY },
	{ "fault-visibility-delay", required_argument, NULL, OPT_FAULT_VISIBILITY_DELAY },
	{ "fault-event-delay", required_argument, NULL, OPT_FAULT_EVENT_DELAY },
	{ "fault-spurious", required_argument, NULL, OPT_FAULT_SPURIOUS },
	{ "fault-duplicate", required_argument, NULL, OPT_FAULT_DUPLICATE },
	{ "fault-pct", required_argument, NULL, OPT_FAULT_PCT },
	{ "fault-missed-keeps-armed", required_argument, NULL, OPT_FAULT_KEEP_ARMED },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "naive-delay-ns", required_argument, NULL, OPT_NAIVE_DELAY_NS },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "kill-peer-after-ms", required_argument, NULL, OPT_KILL_PEER_AFTER_MS },
	{ "dev-numa-node", required_argument, NULL, OPT_DEV_NUMA_NODE },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "cqs", required_argument, NULL, OPT_CQS },
	{ "active-cqs", required_argument, NULL, OPT_ACTIVE_CQS },
	{ "inline-scatter", required_argument, NULL, OPT_INLINE_SCATTER },
	{ "cqe-compress", optional_argument, NULL, OPT_CQE_COMPRESS },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "telemetry", no_argument, NULL, OPT_TELEMETRY },
	{ "no-telemetry", no_argument, NULL, OPT_NO_TELEMETRY },
	{ "floors", no_argument, NULL, OPT_FLOORS },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "sim", no_argument, NULL, OPT_SIM },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "sim-cost", required_argument, NULL, OPT_SIM_COST },
	{ "sim-policies", required_argument, NULL, OPT_SIM_POLICIES },
	{ "sim-penalty", required_argument, NULL, OPT_SIM_PENALTY },
	{ "sim-seeds", required_argument, NULL, OPT_SIM_SEEDS },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "pattern", required_argument, NULL, OPT_PATTERN },
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "pollers", required_argument, NULL, OPT_POLLERS },
	{ "interactive", no_argument, NULL, OPT_INTERACTIVE },
	{ "sweep", no_argument, NULL, OPT_SWEEP },
	{ "sweep-loads", required_argument, NULL, OPT_SWEEP },
	{ "sweep-policies", required_argument, NULL, OPT_SWEEP },
	{ "sweep-devs", required_argument, NULL, OPT_SWEEP },
	{ "sweep-duration", required_argument, NULL, OPT_SWEEP },
	{ "sweep-point", no_argument, NULL, OPT_SWEEP }, /* internal: a child */
	{ "plot", required_argument, NULL, OPT_SWEEP },
	{ NULL, 0, NULL, 0 },
};

static const char *const mode_names[] = {
	[TPCQ_MODE_POLL] = "poll",
	[TPCQ_MODE_INTERRUPT] = "interrupt",
	[TPCQ_MODE_ADAPTIVE] = "adaptive",
};

static const char *const transition_names[] = {
	[TPCQ_TRANSITION_POLL_AND_ARM] = "poll-and-arm",
	[TPCQ_TRANSITION_NAIVE] = "naive",
	[TPCQ_TRANSITION_L3FWD_POWER] = "l3fwd-power",
};

const char *
tpcq_mode_name(enum tpcq_mode mode)
{
	if ((unsigned int)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "unknown";
	return mode_names[mode];
}

const char *
tpcq_transition_name(enum tpcq_transition t)
{
	if ((unsigned int)t >= sizeof(transition_names) / sizeof(transition_names[0]))
		return "unknown";
	return transition_names[t];
}

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [EAL options] -- [options]\n"
"\n"
"Measure completion-queue polling with cqpoll: a generator lcore plays the\n"
"device and posts completions as the engine says (by default at a constant\n"
"rate, open loop); the main lcore consumes them, busy polling or sleeping on\n"
"completion events, and reports latency, CPU use and lost wake-ups.\n"
"\n"
"Without EAL options, the EAL runs on the first two CPUs this process may\n"
"use with --no-pci --file-prefix=tpcq<pid> (--no-telemetry: --no-telemetry)\n"
"--log-level=lib.eal:error, and either\n"
"--in-memory or, when no hugepage is free, --no-huge --no-shconf.\n"
"Two lcores are needed: the main one polls, a worker generates.\n"
"The EAL options --log-level and --trace* (--trace, --trace-dir,\n"
"--trace-bufsz, --trace-mode) may also be given among the options and\n"
"do not replace these defaults, e.g. --log-level=lib.cqpoll:debug or\n"
"--trace='cqpoll.*'.\n"
"\n"
"Options:\n"
"  --dev-numa-node=N          the device's NUMA node, 0..%d, instead of\n"
"                             sysfs (real devices; emulated ones have none),\n"
"                             like testpmd's --port-numa-config: default\n"
"                             lcores come from that node, and pollers on\n"
"                             another socket get a warning\n"
"  --dev=NAME                 the device (default: mlx5:IBDEV with the first\n"
"                             mlx5 device if there is one, else mlx5-emu):\n",
		prog, TPCQ_NUMA_NODE_MAX);
	tpcq_dev_usage(f);
	fprintf(f,
"                             On real devices (IBDEV as ibv_devices lists it)\n"
"                             the generator posts signaled RDMA WRITE WITH IMM\n"
"                             on a loopback RC QP pair on the first active port;\n"
"                             completions arrive on the sender's CQ.\n"
"  --engine=%s\n"
"                             what the device side does:\n",
		tpcq_engine_names());
	tpcq_engine_usage(f);
	fprintf(f,
"  --mode=poll|interrupt|adaptive\n"
"                             busy poll only; sleep on completion events when\n"
"                             the CQs are empty; or poll on while the policy\n"
"                             expects more work soon, then sleep (default\n"
"                             interrupt). Adaptive mode, and every mode with\n"
"                             --cqs > 1, runs on a cqpoll poll group\n"
"  --policy=spin[:US]|adaptive[:key=value,...]|hybrid[:key=value,...]|\n"
"          target-p99:US|latency-target[:key=value,...]\n"
"                             adaptive mode only (with -i: any, for a later\n"
"                             'set mode adaptive'): when the group goes to\n"
"                             sleep (default adaptive). spin:US polls US us\n"
"                             after the last completion; adaptive learns the\n"
"                             gap between completions and the wake-up cost\n"
"                             (keys mult, wake_us, min_spin_us, max_spin_us,\n"
"                             probe_ms); hybrid naps on a timer through\n"
"                             predictable gaps, then polls, else acts as\n"
"                             adaptive (keys cv_pct, nap_pct, min_nap_us,\n"
"                             max_nap_us and adaptive's); target-p99:US\n"
"                             spins as little as keeps the p99 completion\n"
"                             latency within US us (latency-target keys\n"
"                             p99_us, min_spin_us, max_spin_us, window,\n"
"                             wake_us)\n"
"  --cqs=N                    CQs of the device, 1..%d (default 1), in the\n"
"                             pollers' groups; the rate is spread round\n"
"                             robin over them and each one's order is checked\n"
"                             on its own. Emulated devices only for N > 1\n"
"  --active-cqs=N             send all the traffic to the first N CQs\n"
"                             (1..--cqs; default: all); the others stay idle,\n"
"                             to measure what idle members cost a group\n"
"  --inline-scatter=32|64     mlx5-emu: every receive carries a payload of\n"
"                             that many bytes scattered into its CQE (64:\n"
"                             128-byte CQEs); the poller checks each byte\n"
"  --cqe-compress[=basic|enhanced]\n"
"                             mlx5-emu: the device compresses CQEs into\n"
"                             sessions of mini CQEs that the driver expands;\n"
"                             basic layout (default, owner bit) or enhanced\n"
"                             (iteration count, blocks after a plain CQE)\n"
"  --pollers=N                poller lcores, 1..%d (default 1), at most\n"
"                             --cqs: poller k runs a poll group of CQs k,\n"
"                             k + N, ... on its own lcore (poller 0 on the\n"
"                             main one). Needs N + 1 lcores: give them before\n"
"                             '--', e.g. --lcores='(0-N)@(0,1)' on two CPUs.\n"
"                             cpu_pct is then the pollers' sum\n"
"  --transition=poll-and-arm|naive|l3fwd-power\n"
"                             how the poller goes to sleep (default poll-and-arm):\n"
"                             poll-and-arm: cqpoll_poll_and_arm(), then wait;\n"
"                             naive: poll until empty, arm, sleep, with no poll\n"
"                             after the arm. The negative control: it loses\n"
"                             wake-ups on edge and report-missed arms. One CQ\n"
"                             in interrupt mode only.\n"
"                             l3fwd-power: DPDK's examples/l3fwd-power on an\n"
"                             ethdev Rx queue: 300 empty polls with 1 us\n"
"                             pauses, enable, 10 ms rte_epoll_wait(), disable,\n"
"                             no poll after the enable (--dev=ethdev:PMD).\n"
"  --peer=thread|process      ofi: the sending endpoint in this process\n"
"                             (thread, default: reliable datagrams) or in a\n"
"                             child process (process: a connected endpoint\n"
"                             whose CQ fails on the peer's FI_SHUTDOWN).\n"
"  --kill-peer-after-ms=N     test/validation, --peer=process only: kill the\n"
"                             peer process N ms after the first post; the run\n"
"                             must end with the CQ failed (FI_SHUTDOWN) and a\n"
"                             non-zero exit status.\n"
"  --naive-delay-ns=N         naive, l3fwd-power only: spin N ns (0..%u)\n"
"                             between the last empty poll and the arm (default\n"
"                             0). It widens the race window to make the naive\n"
"                             transition's loss observable: it models a thread\n"
"                             preempted in the window, which on emulated\n"
"                             devices is otherwise a few nanoseconds wide.\n"
"  --arm=level|edge|report-missed\n"
"                             what the device's arm guarantees (default: the\n"
"                             device's, see above)\n"
"  --rate=N                   rate engine: completions per second, > 0\n"
"                             (default 20000)\n"
"  --pattern=const|poisson|onoff:ON_US:OFF_US\n"
"                             rate engine: when completions are due (default\n"
"                             const):\n"
"                             const: every 1/rate; poisson: exponential gaps\n"
"                             of mean 1/rate from a generator seeded with\n"
"                             --seed (the same seed, the same schedule);\n"
"                             onoff: at --rate for ON_US microseconds, then\n"
"                             none for OFF_US, over and over (each 1..%u);\n"
"                             --duration is then wall time, so the mean rate\n"
"                             is rate x ON_US / (ON_US + OFF_US)\n"
"  --duration=SECONDS         generation time, may be fractional, > 0 (default 3)\n"
"                             (the closed-loop engines post for this long)\n"
"  --timeout-ms=N             safety-net timeout of each sleep, 1..%d\n"
"                             (default %d); a lost wake-up costs at most this\n"
"  --burst=N                  completions per poll, 1..%d (default 32)\n"
"  --size=N                   CQ entries, 0 = driver default (default 0)\n"
"  --json=FILE                also write the results as a JSON object to FILE\n"
"  --csv=FILE                 also write the results as CSV to FILE: a header\n"
"                             line (the JSON keys, latency_ns_p99 for\n"
"                             latency_ns.p99), then one row. If FILE exists\n"
"                             with the same header the row is appended, so\n"
"                             runs collect their rows in one file; a FILE\n"
"                             with another first line is refused (exit %d).\n"
"                             Both FILEs are checked before the run: regular\n"
"                             files only (not /dev/zero, a FIFO, a directory)\n"
"  --floors                   first measure the floors on the run's two CPUs:\n"
"                             the cross-core cache-line hand-off and the\n"
"                             eventfd -> epoll_wait wake-up, back to back\n"
"                             and (rate engine) paced at --rate for\n"
"                             --duration (at most 2 s); the report gives p50\n"
"                             and p99 as multiples of the matching one (a\n"
"                             sweep always measures them, paced at each load)\n"
"  --record=FILE              write each completion's post time (CLOCK_MONOTONIC\n"
"                             ns), one a line: a trace --sim --trace=file:FILE\n"
"                             replays\n"
"  --sim                      the policy lab: no EAL, no device; replays a\n"
"                             trace (--rate, --duration, --seed) through the\n"
"                             library's policies on a virtual clock, against\n"
"                             yardsticks (offline optimum, best fixed\n"
"                             budgets in hindsight); deterministic\n"
"  --trace=NAME               with --sim (which has no EAL, so no EAL trace),\n"
"                             the arrivals: poisson (default), onoff[:ON_US:\n"
"                             OFF_US], pareto, diurnal, periodic, regime,\n"
"                             file:PATH\n"
"  --sim-cost=poll_ns=N,arm_ns=N,wake_ns=N,wake_p99_ns=N,wake_cpu_ns=N\n"
"                             --sim's cost model (default: a fixed one, the\n"
"                             same on every machine; with --floors: from the\n"
"                             floors, measured now; either way printed)\n"
"  --sim-policies=P;P;...     --sim's policies, ';' between them (default\n"
"                             " TPCQ_LAB_POLICIES_DEFAULT ")\n"
"  --sim-penalty=X            --sim: CPU ns a ns of latency costs (default 1)\n"
"  --sim-seeds=N              --sim: traces of seeds --seed to --seed+N-1,\n"
"                             medians and spread printed (default 10)\n"
"  --no-telemetry             turn DPDK telemetry off; by default it is on and\n"
"                             exposes the group (\"testpmd-cq\") and each CQ\n"
"                             (\"cqN\") under /cqpoll/group/ and /cqpoll/cq/;\n"
"                             the file prefix to give dpdk-telemetry.py -f is\n"
"                             printed (tpcq<pid> without EAL options)\n"
"  -i, --interactive          a prompt instead of one run: start, stop, show\n"
"                             stats, set mode|policy|rate, help (runs last\n"
"                             from start to stop: no --duration)\n"
"  -h, --help                 show this help\n"
"\n"
"Fault injection (emulated devices, each the faults listed above; all off by\n"
"default). They widen the race windows between the last poll, the arm and the\n"
"sleep, so that the naive negative control loses wake-ups within a short run;\n"
"a correct transition must still report 0 lost wake-ups with any of them. If a\n"
"naive run shows no lost wake-up, widen the window with --fault-arm-delay=NS\n"
"(e.g. 2000) or --naive-delay-ns=NS.\n"
"  --fault-arm-delay=NS       random delay, up to NS ns, before and after the\n"
"                             arm takes effect\n"
"  --fault-visibility-delay=NS\n"
"                             random delay, up to NS ns, between writing an\n"
"                             entry and making it visible\n"
"  --fault-pct=PCT            chance, 0..100, that an arm or an entry is delayed\n"
"                             as above (default 100 when a delay is given)\n"
"  --fault-event-delay=US     deliver every event US microseconds late\n"
"  --fault-spurious=PCT       chance, 0..100, per post of an event with no cause\n"
"  --fault-duplicate=PCT      chance, 0..100, that an event is delivered twice\n"
"  --fault-missed-keeps-armed=0|1\n"
"                             whether a report-missed arm that reports a miss\n"
"                             leaves the CQ armed (default 0)\n"
"  --seed=N                   seed of the fault generator, and of the arrivals\n"
"                             of --pattern=poisson on any device (default 0,\n"
"                             a fixed seed)\n"
"\n"
"Every completion is checked: exactly once and in order (wr_id = sequence\n"
"number; mlx5 returns its low 16 bits), successful, of the expected opcode,\n"
"QP and length. Latency is the time from the completion becoming visible\n"
"(its CLOCK_MONOTONIC device timestamp, on emulated devices) or, where the\n"
"device's timestamps are on its own clock (real devices), from the post, to\n"
"the poller reading it. Lost wake-ups are counted by the device's oracle,\n"
"which only emulated devices have: on real devices they read 0.\n"
"\n"
"Exit status: %d on a completed run (lost wake-ups are reported, not failed);\n"
"%d on a device or library error, a missing device, or completions lost,\n"
"duplicated or out of order; %d on a bad option.\n",
		TPCQ_CQS_MAX, TPCQ_POLLERS_MAX, TPCQ_NAIVE_DELAY_NS_MAX,
		TPCQ_ONOFF_US_MAX,
		TPCQ_TIMEOUT_MS_MAX,
		CQPOLL_WAIT_TIMEOUT_MS_DEFAULT, TPCQ_BURST_MAX, TPCQ_EXIT_FAIL,
		TPCQ_EXIT_OK, TPCQ_EXIT_FAIL, TPCQ_EXIT_USAGE);
	tpcq_sweep_usage(f);
}

static int __rte_format_printf(1, 2)
bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, TPCQ_PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '" TPCQ_PROG " -- --help'.\n");
	return -EINVAL;
}

/* Unsigned decimal in [min, max]; strtoull() alone accepts "-1" and "". */
static int
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
	  uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (*s < '0' || *s > '9')
		return bad("--%s: '%s' is not a non-negative integer", opt, s);
	errno = 0;
	x = strtoull(s, &end, 10);
	if (*end != '\0')
		return bad("--%s: '%s' is not a non-negative integer", opt, s);
	if (errno == ERANGE || x < min || x > max)
		return bad("--%s: %s is out of range %llu..%llu", opt, s,
			   (unsigned long long)min, (unsigned long long)max);
	*v = x;
	return 0;
}

static int
parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max,
	  uint32_t *v)
{
	uint64_t x;
	int r;

	r = parse_u64(opt, s, min, max, &x);
	if (r == 0)
		*v = (uint32_t)x;
	return r;
}

static int
parse_name(const char *opt, const char *s, const char *const *names,
	   unsigned int n, unsigned int *v)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (strcmp(s, names[i]) == 0) {
			*v = i;
			return 0;
		}
	}
	return bad("--%s: unknown value '%s'", opt, s);
}

static int
parse_duration(const char *s, double *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(x))
		return bad("--duration: '%s' is not a number of seconds", s);
	if (!(x > 0.0) || x > TPCQ_DURATION_MAX_S)
		return bad("--duration: %s is out of range (0, %.0f] seconds", s,
			   TPCQ_DURATION_MAX_S);
	*v = x;
	return 0;
}

/*
 * The policy spec is written to the JSON report as it is: plain characters
 * only, so that it needs no escaping there.
 */
static bool
policy_spec_plain(const char *s)
{
	for (; *s != '\0'; s++)
		if (strchr("abcdefghijklmnopqrstuvwxyz"
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:=+-", *s) == NULL)
			return false;
	return true;
}

/*
 * Make spec, which must outlive p, p's policy. The parameters are checked
 * now, not after the EAL started (or at the prompt's next start). Returns 0,
 * or -EINVAL with why filled.
 */
int
tpcq_params_policy(struct tpcq_params *p, const char *spec, char *why,
		   size_t len)
{
	const struct cqpoll_policy_ops *ops;
	struct cqpoll_group_conf conf;
	struct cqpoll_group *g;
	const char *args;

	ops = cqpoll_policy_find(spec, &args);
	if (ops == NULL || !policy_spec_plain(spec)) {
		snprintf(why, len, "--policy: unknown policy '%s' (spin[:US], "
			 "adaptive[:key=value,...], hybrid[:key=value,...], "
			 "target-p99:US or latency-target[:key=value,...])", spec);
		return -EINVAL;
	}
	memset(&conf, 0, sizeof(conf));
	conf.mode = CQPOLL_GROUP_MODE_ADAPTIVE;
	conf.policy = ops;
	conf.policy_args = args;
	errno = 0;
	g = cqpoll_group_create(&conf);
	if (g == NULL && errno == EINVAL) {
		snprintf(why, len, "--policy: bad parameters in '%s'", spec);
		return -EINVAL;
	}
	cqpoll_group_destroy(g);
	p->policy = spec;
	p->policy_ops = ops;
	p->policy_args = args;
	return 0;
}

/*
 * What the poll group (adaptive mode, or more than one CQ) does not do: the
 * rules of every run, from the options or from the prompt. Returns 0, or
 * -EINVAL with why filled.
 */
int
tpcq_params_check_run(struct tpcq_params *p, char *why, size_t len)
{
	int r;

	if (p->mode == TPCQ_MODE_ADAPTIVE) {
		r = tpcq_params_policy(p, p->policy != NULL ? p->policy :
				       TPCQ_POLICY_DEFAULT, why, len);
		if (r != 0)
			return r;
	}
	if (p->transition == TPCQ_TRANSITION_NAIVE &&
	    (p->cqs > 1 || p->mode == TPCQ_MODE_ADAPTIVE)) {
		snprintf(why, len, "--transition=naive: the negative control runs "
			 "on one CQ in interrupt mode only (--cqs=1 "
			 "--mode=interrupt); the poll group always uses its "
			 "poll-and-arm transition");
		return -EINVAL;
	}
	if (p->transition == TPCQ_TRANSITION_L3FWD_POWER &&
	    (p->dev != &tpcq_dev_ethdev || p->cqs > 1 || p->pollers > 1 ||
	     p->mode != TPCQ_MODE_INTERRUPT)) {
		snprintf(why, len, "--transition=l3fwd-power: DPDK's l3fwd-power "
			 "sleeps on Rx interrupts: one ethdev Rx queue in interrupt "
			 "mode only (--dev=ethdev:PMD --mode=interrupt --cqs=1)");
		return -EINVAL;
	}
	if ((p->cqs > 1 || p->mode == TPCQ_MODE_ADAPTIVE) &&
	    p->burst > TPCQ_GROUP_BURST_MAX) {
		snprintf(why, len, "--burst=%u: the poll group (--cqs > 1 or "
			 "--mode=adaptive) reads at most %d per poll",
			 p->burst, TPCQ_GROUP_BURST_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The prompt may switch to adaptive mode: it keeps a policy for any mode. */
static int
check_group(struct tpcq_params *p)
{
	char why[512];

	if (p->policy != NULL && p->mode != TPCQ_MODE_ADAPTIVE &&
	    !p->interactive)
		return bad("--policy: only the adaptive mode has a policy "
			   "(--mode=adaptive)");
	if (p->policy != NULL && tpcq_params_policy(p, p->policy, why,
						    sizeof(why)) != 0)
		return bad("%s", why);
	if (tpcq_params_check_run(p, why, sizeof(why)) != 0)
		return bad("%s", why);
	return 0;
}

static void
defaults(struct tpcq_params *p)
{
	memset(p, 0, sizeof(*p));
	p->sim_penalty = 1.0;
	p->sim_seeds = TPCQ_LAB_SEEDS_DEFAULT;
	p->engine = tpcq_engine_default();
	p->mode = TPCQ_MODE_INTERRUPT;
	p->transition = TPCQ_TRANSITION_POLL_AND_ARM;
	p->arm = CQPOLL_ARM_EDGE;
	p->rate = 20000;
	p->duration_s = 3.0;
	p->timeout_ms = CQPOLL_WAIT_TIMEOUT_MS_DEFAULT;
	p->burst = 32;
	p->cqs = 1;
	p->pollers = 1;
	p->numa_node = -1;
	/* As DPDK applications do: telemetry on unless asked otherwise. */
	p->telemetry = true;
}

/*
 * Returns 0 to run, 1 when --help was answered, or -EINVAL after printing
 * why the options are wrong.
 */
int
tpcq_params_parse(int argc, char **argv, struct tpcq_params *p)
{
	bool arm_given = false, dev_given = false, rate_given = false;
	bool pattern_given = false, duration_given = false;
	int32_t fault_pct = -1;
	unsigned int u = 0;
	char why[512];
	uint64_t v = 0;
	int c, li = 0, r = 0;

	defaults(p);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":hi", long_opts, &li)) != -1) {
		if (c == OPT_MODE || c == OPT_POLICY || c == OPT_RATE ||
		    c == OPT_DURATION)
			p->sweep.fixed_opt = long_opts[li].name;
		switch (c) {
		case OPT_HELP:
			usage(stdout, argv[0]);
			return 1;
		case OPT_DEV:
			dev_given = true;
			r = tpcq_dev_select(optarg, p);
			if (r == -ENAMETOOLONG)
				r = bad("--dev: '%s' is too long", optarg);
			else if (r == -EINVAL)
				r = bad("--dev: '%s': the emulated devices take no "
					"':IBDEV', the real ones need one (available: %s)",
					optarg, tpcq_dev_names());
			else if (r != 0)
				r = bad("--dev: unknown device '%s' (available: %s)",
					optarg, tpcq_dev_names());
			break;
		case OPT_MODE:
			r = parse_name("mode", optarg, mode_names,
				       RTE_DIM(mode_names), &u);
			p->mode = (enum tpcq_mode)u;
			break;
		case OPT_TRANSITION:
			r = parse_name("transition", optarg, transition_names,
				       RTE_DIM(transition_names), &u);
			p->transition = (enum tpcq_transition)u;
			break;
		case OPT_ARM:
			arm_given = true;
			if (cqpoll_arm_semantics_parse(optarg, &p->arm) != 0)
				r = bad("--arm: unknown value '%s' (level, edge or report-missed)",
					optarg);
			break;
		case OPT_RATE:
			rate_given = true;
			r = parse_u64("rate", optarg, 1, TPCQ_RATE_MAX, &p->rate);
			break;
		case OPT_DURATION:
			duration_given = true;
			r = parse_duration(optarg, &p->duration_s);
			break;
		case OPT_TIMEOUT_MS:
			r = parse_u64("timeout-ms", optarg, 1, TPCQ_TIMEOUT_MS_MAX, &v);
			p->timeout_ms = (int)v;
			break;
		case OPT_BURST:
			r = parse_u64("burst", optarg, 1, TPCQ_BURST_MAX, &v);
			p->burst = (unsigned int)v;
			break;
		case OPT_SIZE:
			r = parse_u32("size", optarg, 0, TPCQ_SIZE_MAX, &p->size);
			break;
		case OPT_FAULT_ARM_DELAY:
			p->faults_given |= TPCQ_FAULT_ARM_DELAY;
			r = parse_u32("fault-arm-delay", optarg, 0, UINT32_MAX,
				      &p->faults.arm_delay_ns);
			break;
		case OPT_FAULT_VISIBILITY_DELAY:
			p->faults_given |= TPCQ_FAULT_VISIBILITY_DELAY;
			r = parse_u32("fault-visibility-delay", optarg, 0, UINT32_MAX,
				      &p->faults.visibility_delay_ns);
			break;
		case OPT_FAULT_EVENT_DELAY:
			p->faults_given |= TPCQ_FAULT_EVENT_DELAY;
			r = parse_u32("fault-event-delay", optarg, 0, UINT32_MAX,
				      &p->faults.event_delay_us);
			break;
		case OPT_FAULT_SPURIOUS:
			p->faults_given |= TPCQ_FAULT_SPURIOUS;
			r = parse_u32("fault-spurious", optarg, 0, 100,
				      &p->faults.spurious_event_pct);
			break;
		case OPT_FAULT_DUPLICATE:
			p->faults_given |= TPCQ_FAULT_DUPLICATE;
			r = parse_u32("fault-duplicate", optarg, 0, 100,
				      &p->faults.duplicate_event_pct);
			break;
		case OPT_FAULT_PCT:
			p->faults_given |= TPCQ_FAULT_PCT;
			r = parse_u64("fault-pct", optarg, 0, 100, &v);
			fault_pct = (int32_t)v;
			break;
		case OPT_FAULT_KEEP_ARMED:
			p->faults_given |= TPCQ_FAULT_KEEP_ARMED;
			r = parse_u32("fault-missed-keeps-armed", optarg, 0, 1,
				      &p->faults.report_missed_keeps_armed);
			break;
		case OPT_SEED:
			p->faults_given |= TPCQ_FAULT_SEED;
			r = parse_u64("seed", optarg, 0, UINT64_MAX, &p->faults.seed);
			break;
		case OPT_NAIVE_DELAY_NS:
			r = parse_u32("naive-delay-ns", optarg, 0,
				      TPCQ_NAIVE_DELAY_NS_MAX, &p->naive_delay_ns);
			break;
		case OPT_PEER:
			if (strcmp(optarg, "process") == 0 || strcmp(optarg, "thread") == 0)
				p->peer_process = strcmp(optarg, "process") == 0;
			else
				r = bad("--peer: '%s': thread or process", optarg);
			break;
		case OPT_KILL_PEER_AFTER_MS:
			r = parse_u32("kill-peer-after-ms", optarg, 1, 3600000,
				      &p->kill_peer_after_ms);
			break;
		case OPT_DEV_NUMA_NODE: {
			uint32_t node = 0;

			r = parse_u32("dev-numa-node", optarg, 0, TPCQ_NUMA_NODE_MAX,
				      &node);
			if (r == 0)
				p->numa_node = (int)node;
			break;
		}
		case OPT_TELEMETRY:
			p->telemetry = true;
			break;
		case OPT_NO_TELEMETRY:
			p->telemetry = false;
			break;
		case OPT_FLOORS:
			p->floors = true;
			break;
		case OPT_RECORD:
			if (*optarg == '\0')
				r = bad("--record: empty file name");
			p->record_path = optarg;
			break;
		case OPT_SIM:
			p->sim = true;
			break;
		case OPT_TRACE:
			p->sim_trace = optarg;
			break;
		case OPT_SIM_COST:
			p->sim_cost = optarg;
			break;
		case OPT_SIM_POLICIES:
			p->sim_policies = optarg;
			break;
		case OPT_SIM_PENALTY: {
			char *end;

			errno = 0;
			p->sim_penalty = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(p->sim_penalty >= 0.0 && p->sim_penalty <= 1e6))
				r = bad("--sim-penalty: expected a number 0..1e6, "
					"got '%s'", optarg);
			break;
		}
		case OPT_SIM_SEEDS:
			r = parse_u64("sim-seeds", optarg, 1, TPCQ_LAB_SEEDS_MAX,
				      &p->sim_seeds);
			break;
		case OPT_INTERACTIVE:
			p->interactive = true;
			break;
		case OPT_JSON:
			if (*optarg == '\0')
				r = bad("--json: empty file name");
			p->json_path = optarg;
			break;
		case OPT_POLLERS:
			r = parse_u64("pollers", optarg, 1, TPCQ_POLLERS_MAX, &v);
			p->pollers = (unsigned int)v;
			break;
		case OPT_ENGINE:
			p->engine = tpcq_engine_find(optarg);
			if (p->engine == NULL)
				r = bad("--engine: unknown engine '%s' (%s)", optarg,
					tpcq_engine_names());
			break;
		case OPT_PATTERN:
			pattern_given = true;
			if (tpcq_pattern_parse(optarg, p, why, sizeof(why)) != 0)
				r = bad("%s", why);
			break;
		case OPT_CSV:
			if (*optarg == '\0')
				r = bad("--csv: empty file name");
			p->csv_path = optarg;
			break;
		case OPT_CQS:
			r = parse_u64("cqs", optarg, 1, TPCQ_CQS_MAX, &v);
			p->cqs = (unsigned int)v;
			break;
		case OPT_ACTIVE_CQS:
			r = parse_u64("active-cqs", optarg, 1, TPCQ_CQS_MAX, &v);
			p->active_cqs = (unsigned int)v;
			break;
		case OPT_INLINE_SCATTER:
			r = parse_u64("inline-scatter", optarg, 1, 64, &v);
			if (r == 0 && v != 32 && v != 64)
				r = bad("--inline-scatter=%s: 32 (in 64-byte CQEs) or 64 "
					"(in 128-byte CQEs)", optarg);
			p->inline_scatter = (uint32_t)v;
			break;
		case OPT_CQE_COMPRESS:
			p->cqe_compress = true;
			if (optarg == NULL || strcmp(optarg, "basic") == 0)
				p->cqe_compress_enhanced = false;
			else if (strcmp(optarg, "enhanced") == 0)
				p->cqe_compress_enhanced = true;
			else
				r = bad("--cqe-compress=%s: basic or enhanced", optarg);
			break;
		case OPT_POLICY:
			p->policy = optarg;
			break;
		case OPT_SWEEP:
			tpcq_sweep_option(long_opts[li].name, optarg, &p->sweep);
			break;
		case ':':
			return bad("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt != 0 && optopt < 256)
				return bad("unknown option '-%c'%s", optopt,
					   " (EAL options go before '--')");
			return bad("unknown option '%s'%s", argv[optind - 1],
				   " (EAL options go before '--')");
		}
		if (r != 0)
			return r;
	}
	if (optind < argc)
		return bad("unexpected argument '%s'", argv[optind]);
	if (tpcq_sweep_check(p, why, sizeof(why)) != 0)
		return bad("%s", why);

	/* A delay with no chance given applies to every arm or entry. */
	if (fault_pct < 0)
		fault_pct = 100;
	if (p->faults.arm_delay_ns != 0)
		p->faults.arm_delay_pct = (uint32_t)fault_pct;
	if (p->faults.visibility_delay_ns != 0)
		p->faults.visibility_delay_pct = (uint32_t)fault_pct;

	if (p->interactive && duration_given)
		return bad("--duration: in interactive mode (-i) a run lasts from "
			   "'start' to 'stop'");
	/* The prompt polls on a thread of its own, not on lcores. */
	if (p->interactive && p->pollers > 1)
		return bad("--pollers=%u: in interactive mode (-i) one poller runs "
			   "the run", p->pollers);
	if (!p->engine->open_loop && (rate_given || pattern_given))
		return bad("--%s: the %s engine is closed loop: it posts as the "
			   "poller consumes, not on a schedule (--rate and "
			   "--pattern are for --engine=rate)",
			   rate_given ? "rate" : "pattern", p->engine->name);
	if (p->engine->open_loop && tpcq_arrival_total(p) < 1)
		return bad("--rate x --duration%s gives no completion to post",
			   p->pattern == TPCQ_PATTERN_ONOFF ? " in ON periods" : "");
	/* Poisson arrivals and the lab's traces use the seed, not as a fault. */
	if (p->pattern == TPCQ_PATTERN_POISSON || p->sim)
		p->faults_given &= ~TPCQ_FAULT_SEED;
#ifdef TPCQ_HAVE_OFI
	if (p->peer_process && p->dev != &tpcq_dev_ofi)
#else
	if (p->peer_process)
#endif
		return bad("--peer=process: only for --dev=ofi:PROVIDER");
	if (p->kill_peer_after_ms != 0 && !p->peer_process)
		return bad("--kill-peer-after-ms: needs --peer=process (a peer to kill)");
	if (p->peer_process && (p->cqs > 1 || p->sweep.on || p->interactive))
		return bad("--peer=process: one CQ, one run (not --cqs, --sweep or -i)");
#ifdef TPCQ_HAVE_OFI
	if (p->peer_process)
		p->dev = &tpcq_dev_ofi_peer;
#endif
	if (p->naive_delay_ns != 0 && (p->mode != TPCQ_MODE_INTERRUPT ||
				       (p->transition != TPCQ_TRANSITION_NAIVE &&
					p->transition != TPCQ_TRANSITION_L3FWD_POWER)))
		return bad("--naive-delay-ns: only the naive and l3fwd-power "
			   "transitions have this window (--mode=interrupt "
			   "--transition=naive|l3fwd-power); use "
			   "--fault-arm-delay to widen the others'");

	if (p->record_path != NULL && (!p->engine->open_loop || p->interactive ||
				       p->sweep.on))
		return bad("--record: records the schedule of one run of the rate "
			   "engine (not -i, --sweep or a closed-loop engine)");
	if (p->sim && (p->sweep.on || p->interactive || p->record_path != NULL))
		return bad("--sim: the lab runs alone (not with --sweep, -i or "
			   "--record)");
	if (!p->sim && (p->sim_trace != NULL || p->sim_cost != NULL ||
			p->sim_policies != NULL))
		return bad("--sim-cost and --sim-policies go with --sim (without it, --trace is the EAL's)");
	if (p->pollers > p->cqs)
		return bad("--pollers=%u: each poller needs a CQ of its own; give "
			   "--cqs=%u or more", p->pollers, p->pollers);
	if (p->active_cqs > p->cqs)
		return bad("--active-cqs=%u: more than the %u CQs of --cqs",
			   p->active_cqs, p->cqs);
	r = check_group(p);
	if (r != 0)
		return r;

	/* Probing for hardware costs a look at sysfs: only when it decides. */
	if (!dev_given)
		tpcq_dev_default(p);
	if (tpcq_dev_check(p, arm_given, why, sizeof(why)) != 0)
		return bad("%s", why);
	if ((p->inline_scatter != 0 || p->cqe_compress) &&
	    strcmp(p->dev->name, "mlx5-emu") != 0)
		return bad("--%s: mlx5 CQE formats, for --dev=mlx5-emu only",
			   p->cqe_compress ? "cqe-compress" : "inline-scatter");
	if (p->inline_scatter != 0 && p->cqe_compress)
		return bad("--cqe-compress: the device never compresses CQEs with "
			   "inline payloads; give one of the two");
	if (p->cqs > 1 && p->dev->takes_ibdev)
		return bad("--cqs=%u: the %s device has one loopback CQ for now; "
			   "use an emulated device (sw, mlx5-emu, verbs-emu) for "
			   "more CQs", p->cqs, p->dev->name);
	return 0;
}
