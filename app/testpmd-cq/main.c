/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * testpmd-cq: start the EAL, create the CQ, run the generator on a worker
 * lcore and the poller on the main lcore, then report.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <cqpoll_dpdk.h>
#include <cqpoll_monitor.h>

#include "cpus.h"
#include "lab.h"
#include "dev.h"
#include "eal_args.h"
#include "engine.h"
#include "floors.h"
#include "floors_paced.h"
#include "interrupt.h"
#include "params.h"
#include "poller.h"
#include "prompt.h"
#include "report.h"
#include "run.h"
#include "sweep.h"
#include "testpmd_cq.h"

/*
 * EAL options that add to testpmd-cq's defaults instead of replacing them,
 * accepted on either side of "--": what to log and what to trace.
 */
static bool
eal_passthrough(const char *arg)
{
	static const char *const opts[] = { "--log-level", "--trace" };
	size_t i, len;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		len = strlen(opts[i]);
		if (strncmp(arg, opts[i], len) == 0 &&
		    (arg[len] == '=' || arg[len] == '-'))
			return true;
	}
	return false;
}

/*
 * The EAL's runtime directory when testpmd-cq named it (its own prefix per
 * run): removed at exit, after the telemetry socket in it, so that runs
 * leave no directory each behind.
 */
static char runtime_dir[PATH_MAX];

static void
runtime_dir_remove(void)
{
	if (runtime_dir[0] != '\0')
		rmdir(runtime_dir);
}

/* Whether policies can wait in a power monitor here, and if not why. */
static void
monitor_announce(void)
{
	const char *why;

	if (cqpoll_monitor_available(1, &why))
		fprintf(stderr, TPCQ_PROG ": power-monitor tier: on "
			"(rte_power_monitor)\n");
	else
		fprintf(stderr, TPCQ_PROG ": power-monitor tier: off: %s\n", why);
}

/* Where dpdk-telemetry.py finds this process: the runtime dir's name. */
static void
telemetry_announce(const struct tpcq_params *p)
{
	const char *dir = rte_eal_get_runtime_dir();
	const char *prefix = strrchr(dir, '/');

	if (!p->telemetry)
		return;
	prefix = prefix != NULL ? prefix + 1 : dir;
	fprintf(stderr, TPCQ_PROG ": telemetry on, file prefix %s "
		"(dpdk-telemetry.py -f %s)\n", prefix, prefix);
}

/* Name of CQ k in DPDK telemetry (--telemetry). */
static void
cq_telemetry_name(unsigned int k, char *buf, size_t len)
{
	snprintf(buf, len, "cq%u", k);
}

static void
cqs_telemetry_unregister(unsigned int n)
{
	char name[CQPOLL_DPDK_NAME_MAX];
	unsigned int k;

	for (k = 0; k < n; k++) {
		cq_telemetry_name(k, name, sizeof(name));
		cqpoll_dpdk_telemetry_unregister_cq(name);
	}
}

static int
cqs_telemetry_register(const struct tpcq_params *p, struct tpcq_devctx *dcs)
{
	char name[CQPOLL_DPDK_NAME_MAX];
	unsigned int k;
	int r;

	for (k = 0; k < p->cqs; k++) {
		cq_telemetry_name(k, name, sizeof(name));
		r = cqpoll_dpdk_telemetry_register_cq(name, dcs[k].cq);
		if (r < 0) {
			fprintf(stderr, TPCQ_PROG ": cannot expose %s through "
				"telemetry: %s\n", name, strerror(-r));
			cqs_telemetry_unregister(k);
			return r;
		}
	}
	return 0;
}

static int
run_cqs(const struct tpcq_params *p, struct tpcq_devctx *dcs);

static int
run(const struct tpcq_params *p, struct tpcq_devctx *dcs)
{
	int ret;

	if (p->telemetry && cqs_telemetry_register(p, dcs) != 0)
		return TPCQ_EXIT_FAIL;
	ret = p->interactive ? tpcq_prompt(p, dcs) : run_cqs(p, dcs);
	if (p->telemetry)
		cqs_telemetry_unregister(p->cqs);
	return ret;
}

/* ethdev:tap: the poller on the worker lcore, the generator on the main one. */
struct poller_on_worker {
	struct tpcq_run *tr;
	struct tpcq_result *res;
};

static int
poller_main(void *arg)
{
	struct poller_on_worker *pw = arg;

	tpcq_poller_run(pw->tr, pw->res);
	return 0;
}

static int
run_cqs(const struct tpcq_params *p, struct tpcq_devctx *dcs)
{
	struct tpcq_result res;
	struct tpcq_run tr;
	unsigned int worker;
	int ret, r;

	if (rte_lcore_count() < p->pollers + 1) {
		fprintf(stderr, TPCQ_PROG ": needs %u lcores (%u poller%s, one "
			"generator), the EAL has %u; give them before '--', e.g. "
			"-l 0-%u, or --lcores='(0-%u)@(0,1)' to share two CPUs\n",
			p->pollers + 1, p->pollers, p->pollers > 1 ? "s" : "",
			rte_lcore_count(), p->pollers, p->pollers);
		return TPCQ_EXIT_FAIL;
	}
	worker = rte_get_next_lcore(-1, 1, 0);

	if (tpcq_run_prepare(&tr, &res, p, dcs, p->engine->total(p)) != 0)
		return TPCQ_EXIT_FAIL;

	if (dcs[0].poller_on_worker) {
		struct poller_on_worker pw = { .tr = &tr, .res = &res };
		unsigned int plc = rte_get_next_lcore(worker, 1, 0);

		/* Main lcore idle if there is a second worker, else the generator. */
		if (plc >= RTE_MAX_LCORE)
			plc = worker;
		r = rte_eal_remote_launch(poller_main, &pw, plc);
		if (r == 0 && plc != worker)
			r = rte_eal_remote_launch(tpcq_gen_main, &tr, worker);
		if (r != 0) {
			fprintf(stderr, TPCQ_PROG ": cannot launch the poller on "
				"lcore %u: %s\n", plc, strerror(-r));
			__atomic_store_n(&tr.stop, true, __ATOMIC_RELAXED);
			rte_eal_mp_wait_lcore();
			tpcq_run_release(&tr, &res);
			return TPCQ_EXIT_FAIL;
		}
		if (plc == worker)
			tpcq_gen_main(&tr);
		rte_eal_mp_wait_lcore();
	} else {
		r = rte_eal_remote_launch(tpcq_gen_main, &tr, worker);
		if (r != 0) {
			fprintf(stderr, TPCQ_PROG ": cannot launch the generator on lcore %u: %s\n",
				worker, strerror(-r));
			tpcq_run_release(&tr, &res);
			return TPCQ_EXIT_FAIL;
		}
		tpcq_poller_run(&tr, &res);
		rte_eal_wait_lcore(worker);
	}

	tpcq_run_collect(&tr, &res);
	ret = tpcq_run_report(p, &tr, &res);
	tpcq_run_release(&tr, &res);
	return ret;
}

static void
devs_close(const struct tpcq_params *p, struct tpcq_devctx *dcs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		tpcq_dev_close(p, &dcs[i]);
	free(dcs);
}

/* One device per CQ: each emulated CQ is its own device with its own events. */
static struct tpcq_devctx *
devs_open(const struct tpcq_params *p)
{
	struct tpcq_devctx *dcs;
	unsigned int i;

	dcs = calloc(p->cqs, sizeof(*dcs));
	if (dcs == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return NULL;
	}
	for (i = 0; i < p->cqs; i++) {
		if (tpcq_dev_open(&dcs[i], p) != 0) {
			devs_close(p, dcs, i);
			return NULL;
		}
	}
	return dcs;
}

int
main(int argc, char **argv)
{
	struct tpcq_params params;
	struct tpcq_floors floors;
	struct tpcq_devctx *dcs;
	char **eal_argv, **app_argv;
	bool sim = false;
	int eal_argc = 0, app_argc = 0, sep, i, r, ret;
	/* The EAL keeps pointers into these: main's, for as long as it runs. */
	struct tpcq_eal_args ea = { .prefix = "tpcq" };
	char lcores[64];
	bool eal_own = false, paced_rates;

	eal_argv = calloc((size_t)argc + TPCQ_EAL_ARGS_MAX + 1, sizeof(*eal_argv));
	app_argv = calloc((size_t)argc + 1, sizeof(*app_argv));
	if (eal_argv == NULL || app_argv == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		free(app_argv);
		free(eal_argv);
		return TPCQ_EXIT_FAIL;
	}

	/* EAL options are those before "--"; without "--", there are none. */
	for (sep = 1; sep < argc; sep++)
		if (strcmp(argv[sep], "--") == 0)
			break;
	app_argv[app_argc++] = argv[0];
	for (i = sep < argc ? sep + 1 : 1; i < argc; i++)
		if (strcmp(argv[i], "--sim") == 0)
			sim = true;
	/*
	 * --sim: the policy lab (cqpoll-lab), which has no EAL: its options
	 * are the others after "--" (there --trace names its arrivals).
	 */
	if (sim) {
		for (i = sep < argc ? sep + 1 : 1; i < argc; i++)
			if (strcmp(argv[i], "--sim") != 0)
				app_argv[app_argc++] = argv[i];
		app_argv[app_argc] = NULL;
		r = tpcq_lab_main(TPCQ_PROG " --sim", app_argc, app_argv);
		free(app_argv);
		free(eal_argv);
		return r;
	}
	for (i = sep < argc ? sep + 1 : 1; i < argc; i++)
		if (!eal_passthrough(argv[i]))
			app_argv[app_argc++] = argv[i];
	app_argv[app_argc] = NULL;
	for (i = 1; sep < argc && i < sep; i++)
		if (!eal_passthrough(argv[i]))
			eal_own = true;

	/* Option values point into argv's strings, not into app_argv. */
	r = tpcq_params_parse(app_argc, app_argv, &params);
	free(app_argv);
	if (r != 0) {
		free(eal_argv);
		return r > 0 ? TPCQ_EXIT_OK : TPCQ_EXIT_USAGE;
	}
	/*
	 * Now, not after the EAL started: a Ctrl-C while the EAL starts (a
	 * second or more on a busy machine) must end the run with its report,
	 * not kill the process.
	 */
	tpcq_signals_install();
	/* A path that cannot be written is said now, not after the run. */
	if (tpcq_outfiles_check(&params) != 0) {
		free(eal_argv);
		return TPCQ_EXIT_FAIL;
	}
	/* Before the EAL and the devices, whose threads would disturb them. */
	if (params.floors && !params.sweep.on && !params.sweep.point) {
		/* A scheduled load also gets its hand-off paced as it is. */
		paced_rates = params.engine->open_loop && !params.interactive;
		r = tpcq_floors_measure(&params, &params.rate, paced_rates ? 1 : 0,
					params.duration_s, &floors);
		if (r != 0)
			fprintf(stderr, TPCQ_PROG ": --floors: cannot measure "
				"the floors: %s\n", strerror(-r));
		else
			params.floors_measured = &floors;
		tpcq_floors_print(&floors);
	}
	/* A sweep's parent runs its points as children: no EAL, no device. */
	if (params.sweep.on) {
		free(eal_argv);
		return tpcq_sweep_run(argc, argv, &params);
	}

	/*
	 * The device first: a missing one is reported before any EAL output, and
	 * the threads of emulated devices keep this process's CPU set instead of
	 * inheriting the main lcore's single CPU.
	 */
	/* A DPDK port is a device only once the EAL runs. */
	dcs = NULL;
	if (!params.dev->needs_eal) {
		dcs = devs_open(&params);
		if (dcs == NULL) {
			free(eal_argv);
			return TPCQ_EXIT_FAIL;
		}
	}

	eal_argv[eal_argc++] = argv[0];
	if (eal_own) {
		for (i = 1; i < sep; i++)
			eal_argv[eal_argc++] = argv[i];
	} else {
		/* "-l 0-1" would fail under taskset or in a container. */
		tpcq_default_lcores(tpcq_dev_numa_node(&params), lcores,
				    sizeof(lcores));
		ea.cpus = lcores;
		ea.dpdk_port = params.dev->needs_eal;
		ea.telemetry = params.telemetry;
		eal_argc = tpcq_eal_args_add(&ea, eal_argv, eal_argc);
		if (ea.no_huge)
			fprintf(stderr, TPCQ_PROG ": no hugepages, running with "
				"--no-huge --no-pci on lcores %s\n", lcores);
	}
	/* Given on either side of "--": after the defaults, so they win. */
	for (i = 1; i < argc; i++)
		if (eal_passthrough(argv[i]) && (!eal_own || i > sep))
			eal_argv[eal_argc++] = argv[i];
	eal_argv[eal_argc] = NULL;

	/*
	 * Before the EAL's own exit handlers: run after them, once telemetry
	 * unlinked its socket.
	 */
	atexit(runtime_dir_remove);
	/* The EAL keeps pointers into eal_argv: free it only at exit. */
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		fprintf(stderr, TPCQ_PROG ": cannot initialise the EAL: %s\n",
			rte_strerror(rte_errno));
		ret = TPCQ_EXIT_FAIL;
	} else {
		telemetry_announce(&params);
		monitor_announce();
		if (!eal_own)
			snprintf(runtime_dir, sizeof(runtime_dir), "%s",
				 rte_eal_get_runtime_dir());
		if (dcs == NULL)
			dcs = devs_open(&params);
		ret = dcs != NULL ? run(&params, dcs) : TPCQ_EXIT_FAIL;
		/* Ports are closed while the EAL still runs. */
		if (dcs != NULL && params.dev->needs_eal) {
			devs_close(&params, dcs, params.cqs);
			dcs = NULL;
		}
		rte_eal_cleanup();
	}
	if (dcs != NULL)
		devs_close(&params, dcs, params.cqs);
	free(eal_argv);
	return ret;
}
