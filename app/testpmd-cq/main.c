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

#include "lab.h"
#include "testpmd_cq.h"

/* Upper bound of the EAL arguments testpmd-cq adds by itself. */
#define EAL_DEFAULT_ARGS 13

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

static bool interrupted;

bool
tpcq_interrupted(void)
{
	return __atomic_load_n(&interrupted, __ATOMIC_RELAXED);
}

static void
on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&interrupted, true, __ATOMIC_RELAXED);
}

/*
 * No SA_RESTART: a signal must end a sleep on the CQ (cqpoll_cq_wait()
 * returns -EINTR), so that Ctrl-C stops the run at once.
 */
static void
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* HugePages_Free from /proc/meminfo; 0 if it cannot be read. */
static unsigned long
free_hugepages(void)
{
	unsigned long n = 0;
	char line[256];
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %lu", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * Lost wake-ups are a measurement, not a failure: the negative control is
 * expected to show them. A run fails when the library or the device failed, or
 * when a completion was lost, duplicated, reordered or malformed.
 */
static int
verdict(const struct tpcq_params *p, const struct tpcq_run *tr,
	const struct tpcq_result *res)
{
	int ret = 0;

	if (res->error != 0) {
		fprintf(stderr, TPCQ_PROG ": %s failed: %s\n", res->error_call,
			strerror(-res->error));
		ret = -1;
	}
	if (tr->gen_error != 0) {
		fprintf(stderr, TPCQ_PROG ": posting to the %s device failed: %s\n",
			p->dev_name, strerror(-tr->gen_error));
		ret = -1;
	}
	if (res->order_errors != 0 || res->missing != 0 ||
	    res->bad_completions != 0 || res->no_timestamp != 0) {
		fprintf(stderr, TPCQ_PROG ": delivery check FAILED: %" PRIu64
			" out of order or duplicated, %" PRIu64 " missing, %" PRIu64
			" malformed, %" PRIu64 " without timestamp\n",
			res->order_errors, res->missing, res->bad_completions,
			res->no_timestamp);
		ret = -1;
	}
	/* Interactive runs (-i) and closed-loop engines have no total. */
	if (tpcq_interrupted()) {
		fprintf(stderr, TPCQ_PROG ": interrupted after %" PRIu64
			" completions\n", tr->posted);
		ret = -1;
	}
	return ret;
}

/* Slots of the post-time ring: twice what the device may hold unread. */
static uint64_t
post_ns_slots(const struct tpcq_devctx *dc, uint64_t total)
{
	uint64_t n = 1;

	/*
	 * Twice, because a post that finds no room records its time before it
	 * knows, in the slot of a post up to max_outstanding older. Bounded,
	 * for the endless total of an interactive run: calloc() then refuses.
	 */
	while (n < (dc->max_outstanding != 0 ? 2ULL * dc->max_outstanding : total) &&
	       n < (UINT64_C(1) << 62))
		n <<= 1;
	return n;
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

/* Set up a run of total completions, or print why not and return -1. */
int
tpcq_run_prepare(struct tpcq_run *tr, struct tpcq_result *res,
		 const struct tpcq_params *p, struct tpcq_devctx *dcs,
		 uint64_t total)
{
	struct tpcq_devctx *dc = &dcs[0];
	unsigned int i;

	memset(tr, 0, sizeof(*tr));
	memset(res, 0, sizeof(*res));
	tr->params = p;
	tr->dc = dc;
	tr->cq = dc->cq;
	tr->dcs = dcs;
	tr->ncqs = p->cqs;
	tr->traffic_cqs = p->active_cqs != 0 ? p->active_cqs : p->cqs;
	tr->npollers = p->pollers;
	/* The generator's lcore, the first worker; pollers take the others. */
	tr->gen_lcore = rte_get_next_lcore(-1, 1, 0);
	tr->total = total;
	for (i = 0; i < p->cqs; i++)
		dcs[i].consumed = &tr->consumed;

	res->latency = tpcq_hist_create();
	if (p->record_path != NULL) {
		tr->record = calloc(total, sizeof(*tr->record));
		if (tr->record == NULL) {
			fprintf(stderr, TPCQ_PROG ": --record: out of memory for "
				"%" PRIu64 " timestamps\n", total);
			tpcq_run_release(tr, res);
			return -1;
		}
	}
	if (!dc->monotonic_ts) {
		tr->post_ns_mask = post_ns_slots(dc, tr->total) - 1;
		tr->post_ns = calloc(tr->post_ns_mask + 1, sizeof(*tr->post_ns));
	}
	if (res->latency == NULL || (!dc->monotonic_ts && tr->post_ns == NULL)) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		tpcq_run_release(tr, res);
		return -1;
	}
	cqpoll_cq_info_get(tr->cq, &res->info);
	res->dev_numa_node = tpcq_dev_numa_node(p);
	res->remote_pollers = tpcq_numa_check(p, tr, res->dev_numa_node);
	return 0;
}

/* After the poller and the generator returned: what they left to gather. */
void
tpcq_run_collect(struct tpcq_run *tr, struct tpcq_result *res)
{
	res->gen_s = (double)tr->gen_tsc / (double)rte_get_tsc_hz();
	if (res->wall_s > 0.0)
		res->harness_cpu_pct = 100.0 * (double)tr->gen_cpu_ns /
			(res->wall_s * 1e9);
	/* The group sums its CQs' counters and adds its own. */
	if (!res->grouped)
		cqpoll_cq_stats_get(tr->cq, &res->stats);
	res->stats.waits += res->peer.waits;
	res->stats.wait_timeouts += res->peer.wait_timeouts;
	res->stats.events += res->peer.events;
	res->stats.arms += res->peer.arms;
	res->stats.lost_wakeups += res->peer.lost_wakeups;
}

/* --record: the posts made, one CLOCK_MONOTONIC ns a line. */
static int
record_write(const char *path, const struct tpcq_run *tr)
{
	uint64_t i, n = tr->posted < tr->total ? tr->posted : tr->total;
	FILE *out;

	out = tpcq_outfile_open("record", path, false);
	if (out == NULL)
		return -EIO;
	fprintf(out, "# testpmd-cq --record: post times, CLOCK_MONOTONIC ns\n");
	for (i = 0; i < n; i++)
		fprintf(out, "%" PRIu64 "\n", tr->record[i]);
	return tpcq_report_close(out, path);
}

/* The table, the JSON and CSV files if asked, and the verdict: an exit status. */
int
tpcq_run_report(const struct tpcq_params *p, const struct tpcq_run *tr,
		const struct tpcq_result *res)
{
	int ret = TPCQ_EXIT_OK;

	tpcq_report_table(p, tr, res);
	if (p->json_path != NULL &&
	    tpcq_report_json(p->json_path, p, tr, res) != 0)
		ret = TPCQ_EXIT_FAIL;
	if (p->csv_path != NULL &&
	    tpcq_report_csv(p->csv_path, p, tr, res) != 0)
		ret = TPCQ_EXIT_FAIL;
	if (tr->record != NULL && record_write(p->record_path, tr) != 0)
		ret = TPCQ_EXIT_FAIL;

	if (verdict(p, tr, res) != 0)
		ret = TPCQ_EXIT_FAIL;
	return ret;
}

void
tpcq_run_release(struct tpcq_run *tr, struct tpcq_result *res)
{
	tpcq_hist_free(res->latency);
	res->latency = NULL;
	free(tr->post_ns);
	tr->post_ns = NULL;
	free(tr->record);
	tr->record = NULL;
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
	char lcores[64], lcores3[80], prefix[64];
	bool eal_own = false, paced_rates;

	eal_argv = calloc((size_t)argc + EAL_DEFAULT_ARGS + 1, sizeof(*eal_argv));
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
	/* The lab (--sim) has no EAL: there --trace names its arrivals. */
	for (i = sep < argc ? sep + 1 : 1; i < argc; i++)
		if (strcmp(argv[i], "--sim") == 0)
			sim = true;
	for (i = sep < argc ? sep + 1 : 1; i < argc; i++)
		if (sim || !eal_passthrough(argv[i]))
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
	install_signals();
	/* A path that cannot be written is said now, not after the run. */
	if (tpcq_outfiles_check(&params) != 0) {
		free(eal_argv);
		return TPCQ_EXIT_FAIL;
	}
	/* The policy lab needs neither the EAL nor a device. */
	if (params.sim) {
		free(eal_argv);
		return tpcq_lab_run(&params);
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
		/*
		 * Nothing to ask of the EAL but two lcores: no device to probe,
		 * no state to share with secondary processes, quiet unless wrong.
		 */
		/* "-l 0-1" would fail under taskset or in a container. */
		tpcq_default_lcores(tpcq_dev_numa_node(&params), lcores,
				    sizeof(lcores));
		if (params.dev->needs_eal) {
			/*
			 * A DPDK port: a third lcore on the same CPUs, so that
			 * a poller on a worker leaves the main lcore idle, as a
			 * DPDK application's main lcore often is.
			 */
			snprintf(lcores3, sizeof(lcores3), "(0-2)@(%s)", lcores);
			eal_argv[eal_argc++] = "--lcores";
			eal_argv[eal_argc++] = lcores3;
			/* vhost logs every vhost-user message at INFO. */
			eal_argv[eal_argc++] = "--log-level=lib.vhost.*:warning";
		} else {
			eal_argv[eal_argc++] = "-l";
			eal_argv[eal_argc++] = lcores;
		}
		eal_argv[eal_argc++] = "--no-pci";
		/* A prefix of its own: the telemetry socket's directory. */
		snprintf(prefix, sizeof(prefix), "--file-prefix=tpcq%ld",
			 (long)getpid());
		eal_argv[eal_argc++] = prefix;
		if (!params.telemetry)
			eal_argv[eal_argc++] = "--no-telemetry";
		eal_argv[eal_argc++] = "--log-level=lib.eal:error";
		/* --no-huge implies legacy memory, which --in-memory refuses. */
		if (free_hugepages() == 0) {
			eal_argv[eal_argc++] = "--no-huge";
			eal_argv[eal_argc++] = "--no-shconf";
			/* Room for the mbufs of a DPDK port (64 MB by default). */
			if (params.dev->needs_eal) {
				eal_argv[eal_argc++] = "-m";
				eal_argv[eal_argc++] = "256";
			}
			fprintf(stderr, TPCQ_PROG ": no hugepages, running with "
				"--no-huge --no-pci on lcores %s\n", lcores);
		} else {
			eal_argv[eal_argc++] = "--in-memory";
		}
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
