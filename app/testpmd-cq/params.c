/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Application options (after "--"). They are parsed before the EAL starts, so
 * --help and bad values answer at once, without EAL start-up noise.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include <cqpoll_config.h>
#include <cqpoll_group.h>

#include "dev.h"
#include "engine.h"
#include "opt_parse.h"
#include "params.h"
#include "plugin.h"
#include "sweep.h"
#include "testpmd_cq.h"
#include "tpcq_version.h"

enum {
	OPT_HELP = 'h',
	OPT_INTERACTIVE = 'i',
	OPT_DEV = 256,
	OPT_MODE,
	OPT_RATE,
	OPT_DURATION,
	OPT_TRANSITION,
	OPT_HARNESS,
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
	OPT_GROUPS,
	OPT_GROUPS_STATIC,
	OPT_WORK_NS,
	OPT_FLOORS,
	OPT_RECORD,
	OPT_VERSION,
	OPT_LAB,                  /* the lab's options: only with --sim */
	OPT_SWEEP,                /* every --sweep option: sweep.c reads them */
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "transition", required_argument, NULL, OPT_TRANSITION },
	{ "harness", required_argument, NULL, OPT_HARNESS },
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
	{ "trace", required_argument, NULL, OPT_LAB },
	{ "sim-cost", required_argument, NULL, OPT_LAB },
	{ "sim-policies", required_argument, NULL, OPT_LAB },
	{ "sim-penalty", required_argument, NULL, OPT_LAB },
	{ "sim-seeds", required_argument, NULL, OPT_LAB },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "pattern", required_argument, NULL, OPT_PATTERN },
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "pollers", required_argument, NULL, OPT_POLLERS },
	{ "groups", required_argument, NULL, OPT_GROUPS },
	{ "groups-static", no_argument, NULL, OPT_GROUPS_STATIC },
	{ "work-ns", required_argument, NULL, OPT_WORK_NS },
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

static const struct tpcq_opt_prog opt_prog = { TPCQ_PROG, " -- --help" };

static int __rte_format_printf(1, 2)
bad(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tpcq_opt_vbad(&opt_prog, fmt, ap);
	va_end(ap);
	return r;
}

static int
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
	  uint64_t *v)
{
	return tpcq_opt_u64(&opt_prog, opt, s, min, max, v);
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
	char valid[256];
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (strcmp(s, names[i]) == 0) {
			*v = i;
			return 0;
		}
	}
	/* The valid values, as the help lists them: "a, b or c". */
	valid[0] = '\0';
	for (i = 0; i < n && len < sizeof(valid); i++)
		len += (size_t)snprintf(valid + len, sizeof(valid) - len, "%s%s",
					i == 0 ? "" : i + 1 == n ? " or " : ", ",
					names[i]);
	return bad("--%s: unknown value '%s' (%s)", opt, s, valid);
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
			tpcq_params_usage(stdout, argv[0]);
			return 1;
		case OPT_VERSION:
			printf(TPCQ_PROG " (cqpoll) " TPCQ_VERSION "\n");
			return 1;
		case OPT_DEV:
			dev_given = true;
			r = tpcq_dev_select(optarg, p);
			if (r == -ENAMETOOLONG)
				r = bad("--dev: '%s' is too long", optarg);
			else if (r == -ENOPKG)
				r = bad("--dev=%s: %s", optarg, tpcq_dev_missing());
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
		case OPT_HARNESS:
			if (tpcq_harness_parse(optarg, &p->harness) != 0)
				r = bad("--harness: unknown value '%s' (full or count)",
					optarg);
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
			r = tpcq_opt_duration(&opt_prog, optarg, TPCQ_DURATION_MAX_S,
					      &p->duration_s);
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
		case OPT_LAB:
			/* main.c hands --sim to the lab before the options get here. */
			return bad("--%s: the lab's options go with --sim (the lab, "
				   "cqpoll-lab; without it, --trace is the EAL's)",
				   long_opts[li].name);
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
		case OPT_GROUPS:
			r = parse_u64("groups", optarg, 1, TPCQ_POLLERS_MAX, &v);
			p->groups = (unsigned int)v;
			break;
		case OPT_GROUPS_STATIC:
			p->groups_static = true;
			break;
		case OPT_WORK_NS:
			r = parse_u64("work-ns", optarg, 0, 1000000, &v);
			p->work_ns = (uint32_t)v;
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
	/* Poisson arrivals use the seed, not as a fault. */
	if (p->pattern == TPCQ_PATTERN_POISSON)
		p->faults_given &= ~TPCQ_FAULT_SEED;
	if (p->peer_process && (p->dev == NULL || strcmp(p->dev->name, "ofi") != 0))
		return bad("--peer=process: only for --dev=ofi:PROVIDER");
	if (p->kill_peer_after_ms != 0 && !p->peer_process)
		return bad("--kill-peer-after-ms: needs --peer=process (a peer to kill)");
	if (p->peer_process && (p->cqs > 1 || p->sweep.on || p->interactive))
		return bad("--peer=process: one CQ, one run (not --cqs, --sweep or -i)");
	/* The ofi device loaded its plugin, which has the peer's too. */
	if (p->peer_process)
		p->dev = tpcq_plugin_load(TPCQ_PLUGIN_OFI, why,
					  sizeof(why))->peer_process;
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
	if (p->pollers > p->cqs)
		return bad("--pollers=%u: each poller needs a CQ of its own; give "
			   "--cqs=%u or more", p->pollers, p->pollers);
	if ((p->groups_static || p->work_ns != 0) && p->groups == 0)
		return bad("--groups-static, --work-ns: go with --groups");
	if (p->groups > 0 && (p->groups > p->cqs || p->mode != TPCQ_MODE_INTERRUPT ||
			      p->interactive || p->sweep.on))
		return bad("--groups=%u: needs --cqs=%u or more and --mode=interrupt "
			   "(the pollers sleep when their groups are idle), not -i "
			   "or --sweep", p->groups, p->groups);
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
