/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lab's options: the trace (--trace, --rate, --duration, --seed), the
 * cost model (--sim-cost or --floors), the policies and their judging
 * (--sim-policies, --sim-penalty, --sim-seeds). The same options and bounds
 * as testpmd-cq --sim has always taken.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interrupt.h"
#include "lab.h"
#include "lab_sched.h"
#include "opt_parse.h"
#include "progress.h"
#include "tpcq_version.h"

/* testpmd-cq's bounds of --rate and --duration, which the lab shares. */
#define LAB_RATE_MAX 1000000000ULL
#define LAB_DURATION_MAX_S 86400.0

enum {
	OPT_HELP = 'h',
	OPT_RATE = 256,
	OPT_DURATION,
	OPT_SEED,
	OPT_FLOORS,
	OPT_TRACE,
	OPT_SIM_COST,
	OPT_SIM_POLICIES,
	OPT_SIM_PENALTY,
	OPT_SIM_SEEDS,
	OPT_SIM_SCHED,
	OPT_SIM_WAKE,
	OPT_VERSION,
	OPT_QUIET,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "floors", no_argument, NULL, OPT_FLOORS },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "sim-cost", required_argument, NULL, OPT_SIM_COST },
	{ "sim-policies", required_argument, NULL, OPT_SIM_POLICIES },
	{ "sim-penalty", required_argument, NULL, OPT_SIM_PENALTY },
	{ "sim-seeds", required_argument, NULL, OPT_SIM_SEEDS },
	{ "sim-sched", no_argument, NULL, OPT_SIM_SCHED },
	{ "sim-wake", required_argument, NULL, OPT_SIM_WAKE },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ NULL, 0, NULL, 0 },
};

void
tpcq_lab_usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [options]\n"
"       testpmd-cq --sim [options]   (the same program)\n"
"\n"
"The policy lab: no EAL, no device. Replays an arrival trace through the\n"
"library's own policies on a virtual clock, with a cost model, against\n"
"yardsticks of the same trace (the offline optimum, the best fixed spin\n"
"budget in hindsight, the best budget per window); deterministic: the same\n"
"options print the same output.\n"
"\n"
"Options:\n"
"  --trace=NAME               the arrivals: poisson (default), onoff[:ON_US:\n"
"                             OFF_US], pareto, diurnal, periodic, regime,\n"
"                             file:PATH (post times, one a line, as\n"
"                             testpmd-cq --record writes them)\n"
"  --rate=N                   arrivals per second, > 0 (default 20000)\n"
"  --duration=SECONDS         length of the trace, may be fractional, > 0\n"
"                             (default 3)\n"
"  --seed=N                   seed of the first trace (default 0)\n"
"  --sim-cost=poll_ns=N,arm_ns=N,wake_ns=N,wake_p99_ns=N,wake_cpu_ns=N\n"
"             [,nap_ns=N,nap_p99_ns=N][,instr_ps=N]\n"
"                             the cost model (default: a fixed one, the\n"
"                             same on every machine; with --floors: from the\n"
"                             floors, measured now; either way printed); a\n"
"                             nap's overshoot (default: a wake-up's); ps an\n"
"                             instruction of decide() takes (default: free)\n"
"  --sim-cost=measured:PATH   the cost model from a profile measured on a\n"
"                             machine (devtools/lab-cost-profile.py)\n"
"  --sim-wake=trace|told|untold\n"
"                             whether the policies are told each sleep's\n"
"                             wake-up (as from completion timestamps):\n"
"                             trace (default): told, but for a file recorded\n"
"                             on a device without host timestamps\n"
"  --floors                   measure this machine's floors (cross-core\n"
"                             hand-off, eventfd -> epoll_wait wake-up) and\n"
"                             derive the cost model from them\n"
"  --sim-policies=P;P;...     the policies, ';' between them (default\n"
"                             " TPCQ_LAB_POLICIES_DEFAULT ")\n"
"  --sim-penalty=X            CPU ns a ns of latency costs (default 1)\n"
"  --sim-seeds=N              traces of seeds --seed to --seed+N-1, medians\n"
"                             and spread printed (1..%d, default %d)\n"
"  --sim-sched                instead of the policies: 64 poll groups on 16\n"
"                             lcores placed statically, by cqpoll_sched, by\n"
"                             SPDK's dynamic scheduler as SPDK runs it (1 s\n"
"                             and 10 ms periods) and by the lab's earlier\n"
"                             offered-load variant, on onoff and diurnal traces at\n"
"                             a low and a high load (its own rates and\n"
"                             length; --seed, --sim-seeds, --sim-cost apply)\n"
"  --quiet                    no progress line (one is shown on stderr, seed\n"
"                             by seed, only when it is a terminal)\n"
"  -h, --help                 show this help\n"
"  --version                  show the version (and the commit of a git\n"
"                             build)\n"
"\n"
"Exit status: 0 on a completed run, 1 when the floors cannot be measured or\n"
"memory runs out, 2 on a bad option.\n",
		prog, TPCQ_LAB_SEEDS_MAX, TPCQ_LAB_SEEDS_DEFAULT);
}

static struct tpcq_opt_prog opt_prog = { TPCQ_LAB_PROG, " --help" };

const char *
tpcq_lab_prog(void)
{
	return opt_prog.prog;
}

static int __attribute__((format(printf, 1, 2)))
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

int
tpcq_lab_params_parse(int argc, char **argv, const char *prog,
		      struct tpcq_lab_opts *o)
{
	uint64_t seeds = TPCQ_LAB_SEEDS_DEFAULT;
	int c, r = 0;
	char *end;

	opt_prog.prog = prog;
	memset(o, 0, sizeof(*o));
	o->rate = 20000;
	o->duration_s = 3.0;
	o->penalty = 1.0;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_HELP:
			tpcq_lab_usage(stdout, prog);
			return 1;
		case OPT_VERSION:
			printf("%s (cqpoll) %s\n", prog, TPCQ_VERSION);
			return 1;
		case OPT_RATE:
			r = parse_u64("rate", optarg, 1, LAB_RATE_MAX, &o->rate);
			break;
		case OPT_DURATION:
			r = tpcq_opt_duration(&opt_prog, optarg, LAB_DURATION_MAX_S,
					      &o->duration_s);
			break;
		case OPT_SEED:
			r = parse_u64("seed", optarg, 0, UINT64_MAX, &o->seed);
			break;
		case OPT_FLOORS:
			o->floors = true;
			break;
		case OPT_TRACE:
			o->trace = optarg;
			break;
		case OPT_SIM_COST:
			o->cost = optarg;
			break;
		case OPT_SIM_POLICIES:
			o->policies = optarg;
			break;
		case OPT_SIM_PENALTY:
			errno = 0;
			o->penalty = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(o->penalty >= 0.0 && o->penalty <= 1e6))
				r = bad("--sim-penalty: expected a number 0..1e6, "
					"got '%s'", optarg);
			break;
		case OPT_SIM_WAKE:
			if (strcmp(optarg, "trace") == 0)
				o->wake = TPCQ_LAB_WAKE_TRACE;
			else if (strcmp(optarg, "told") == 0)
				o->wake = TPCQ_LAB_WAKE_TOLD;
			else if (strcmp(optarg, "untold") == 0)
				o->wake = TPCQ_LAB_WAKE_UNTOLD;
			else
				r = bad("--sim-wake: expected trace, told or untold, "
					"got '%s'", optarg);
			break;
		case OPT_SIM_SCHED:
			o->sched = true;
			break;
		case OPT_QUIET:
			o->quiet = true;
			break;
		case OPT_SIM_SEEDS:
			r = parse_u64("sim-seeds", optarg, 1, TPCQ_LAB_SEEDS_MAX,
				      &seeds);
			break;
		case ':':
			return bad("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt != 0 && optopt < 256)
				return bad("unknown option '-%c'", optopt);
			return bad("unknown option '%s'", argv[optind - 1]);
		}
		if (r != 0)
			return r;
	}
	if (optind < argc)
		return bad("unexpected argument '%s'", argv[optind]);
	o->seeds = (unsigned int)seeds;
	/* As testpmd-cq's constant schedule counts them. */
	if ((uint64_t)((double)o->rate * o->duration_s + 0.5) < 1)
		return bad("--rate x --duration gives no completion to post");
	return 0;
}

int
tpcq_lab_main(const char *prog, int argc, char **argv)
{
	struct tpcq_lab_opts o;
	int r;

	r = tpcq_lab_params_parse(argc, argv, prog, &o);
	if (r != 0)
		return r > 0 ? TPCQ_LAB_EXIT_OK : TPCQ_LAB_EXIT_USAGE;
	tpcq_progress_init(prog, o.quiet);
	/* Ctrl-C ends a floor's measurement early instead of the process. */
	tpcq_signals_install();
	if (o.sched)
		return tpcq_lab_sched_run(&o);
	return tpcq_lab_run(&o);
}
