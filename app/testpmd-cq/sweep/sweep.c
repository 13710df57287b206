/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --sweep: the points from the options, one child process per point, and the
 * reports read back. The parent never starts the EAL: each child is this same
 * binary (/proc/self/exe) with the parent's arguments, EAL ones included,
 * plus the point's --mode, --policy, --rate, --duration and --json.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_common.h>

#include <cqpoll_group.h>

#include "json_read.h"
#include "dev.h"
#include "floors.h"
#include "floors_paced.h"
#include "interrupt.h"
#include "params.h"
#include "sweep.h"
#include "testpmd_cq.h"

/* Start-up and report time a child may take on top of its duration. */
#define CHILD_GRACE_S 60.0
/* How often the parent looks at a running child: rare enough to cost nothing. */
#define CHILD_POLL_US 50000
/* Largest report read back: a few kilobytes are expected. */
#define REPORT_MAX (1 << 20)
/* Arguments the parent adds to a child's: see point_argv(). */
#define POINT_ARGS 7

/*
 * The child's arguments: the parent's, then the point's. Options given twice
 * keep the last value, so the point's --json wins over the sweep's; the
 * parent's own --sweep options stay and --sweep-point disarms them.
 */
static void
point_argv(int argc, char **argv, char **cargv, char (*bufs)[TPCQ_SWEEP_SPEC_MAX + 16],
	   const struct tpcq_sweep_point *pt, double duration_s,
	   const char *json, bool dev_label)
{
	int n = 0, i, b = 0;

	for (i = 0; i < argc; i++)
		cargv[n++] = argv[i];
	cargv[n++] = "--sweep-point";
	if (tpcq_sweep_policy_is_mode(pt->policy)) {
		snprintf(bufs[b], sizeof(bufs[b]), "--mode=%s", pt->policy);
		cargv[n++] = bufs[b++];
	} else {
		cargv[n++] = "--mode=adaptive";
		snprintf(bufs[b], sizeof(bufs[b]), "--policy=%s", pt->policy);
		cargv[n++] = bufs[b++];
	}
	snprintf(bufs[b], sizeof(bufs[b]), "--rate=%" PRIu64, pt->load);
	cargv[n++] = bufs[b++];
	snprintf(bufs[b], sizeof(bufs[b]), "--duration=%.17g", duration_s);
	cargv[n++] = bufs[b++];
	if (dev_label) {
		snprintf(bufs[b], sizeof(bufs[b]), "--dev=%s", pt->dev);
		cargv[n++] = bufs[b++];
	}
	cargv[n++] = (char *)(uintptr_t)json;
	cargv[n] = NULL;
}

/* Index of the app's first option: after "--", or 1 when there is none. */
static int
app_args_start(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i + 1;
	return 1;
}

/*
 * Checks every point's options as its child will, before running any: a
 * combination the app refuses (e.g. --transition=naive with a policy) is a
 * usage error of the sweep, found in milliseconds, not after minutes.
 */
static int
points_check(int argc, char **argv, const struct tpcq_sweep_point *pts,
	     unsigned int n, double duration_s, bool dev_label)
{
	char bufs[POINT_ARGS][TPCQ_SWEEP_SPEC_MAX + 16];
	char **cargv, **app;
	struct tpcq_params p;
	int start, napp, r = 0;
	unsigned int i;

	cargv = calloc((size_t)argc + POINT_ARGS + 1, sizeof(*cargv));
	app = calloc((size_t)argc + POINT_ARGS + 1, sizeof(*app));
	if (cargv == NULL || app == NULL) {
		free(cargv);
		free(app);
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return TPCQ_EXIT_FAIL;
	}
	start = app_args_start(argc, argv);
	for (i = 0; i < n && r == 0; i++) {
		point_argv(argc, argv, cargv, bufs, &pts[i], duration_s,
			   "--json=/dev/null", dev_label);
		app[0] = argv[0];
		for (napp = 1; cargv[start + napp - 1] != NULL; napp++)
			app[napp] = cargv[start + napp - 1];
		app[napp] = NULL;
		if (tpcq_params_parse(napp, app, &p) != 0) {
			fprintf(stderr, TPCQ_PROG ": --sweep: the point dev %s, "
				"load %" PRIu64 ", policy %s cannot run (above)\n",
				pts[i].dev, pts[i].load, pts[i].policy);
			r = TPCQ_EXIT_USAGE;
		}
	}
	free(app);
	free(cargv);
	return r;
}

/*
 * This program's path. Read through readlink() rather than exec'd as
 * /proc/self/exe, so that under valgrind, which answers the readlink() for
 * its client, the children are this program and not valgrind's tool.
 */
int
tpcq_sweep_self(char *buf, size_t len)
{
	ssize_t n;

	n = readlink("/proc/self/exe", buf, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

/* A point reads nothing: the terminal's input stays the parent's. */
static void
child_exec(const char *exe, char **cargv, const char *log)
{
	int fd, in;

	/* In this order, a closed stdin is the only number taken and kept. */
	in = open("/dev/null", O_RDONLY);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || in < 0 || dup2(in, STDIN_FILENO) < 0 ||
	    dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(127);
	/* Either may have taken a standard descriptor's number, if it was closed. */
	if (fd > STDERR_FILENO)
		close(fd);
	if (in > STDERR_FILENO)
		close(in);
	execv(exe, cargv);
	fprintf(stderr, TPCQ_PROG ": cannot run %s: %s\n", exe,
		strerror(errno));
	_exit(127);
}

/*
 * Waits for the child, passing a SIGINT or SIGTERM the parent got on to it
 * (a terminal's Ctrl-C reaches it anyway), and killing it past its deadline.
 */
static int
child_wait(pid_t pid, double deadline_s, struct tpcq_sweep_point *pt)
{
	double waited = 0.0;
	bool told = false;
	int st;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			pt->why = "lost track of the child process";
			pt->exit_status = -1;
			return -1;
		}
		if (tpcq_interrupted() && !told) {
			kill(pid, SIGTERM);
			told = true;
		}
		if (waited > deadline_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			pt->why = "did not finish in time: killed";
			pt->exit_status = -1;
			return -1;
		}
		usleep(CHILD_POLL_US);
		waited += CHILD_POLL_US / 1e6;
	}
	if (WIFEXITED(st)) {
		pt->exit_status = WEXITSTATUS(st);
		if (pt->exit_status != TPCQ_EXIT_OK)
			pt->why = pt->exit_status == 127 ?
				"could not be started" : "the run failed";
	} else {
		pt->exit_status = -1;
		pt->why = "ended by a signal";
	}
	return pt->why != NULL ? -1 : 0;
}

static char *
file_read(const char *path)
{
	char *buf;
	size_t n;
	FILE *f;

	f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	buf = malloc(REPORT_MAX + 1);
	if (buf != NULL) {
		n = fread(buf, 1, REPORT_MAX + 1, f);
		if (ferror(f) || n > REPORT_MAX) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
		}
	}
	fclose(f);
	return buf;
}

static int
report_read(const char *path, struct tpcq_sweep_point *pt)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "achieved_rate", offsetof(struct tpcq_sweep_point, achieved_rate) },
		{ "cpu_pct", offsetof(struct tpcq_sweep_point, cpu_pct) },
		{ "cpu_pct_process", offsetof(struct tpcq_sweep_point, cpu_pct_process) },
		{ "harness_cpu_pct", offsetof(struct tpcq_sweep_point, harness_cpu_pct) },
		{ "wakeups_per_s", offsetof(struct tpcq_sweep_point, wakeups_per_s) },
		{ "lost_wakeups", offsetof(struct tpcq_sweep_point, lost_wakeups) },
		{ "latency_ns.p50", offsetof(struct tpcq_sweep_point, p50_ns) },
		{ "latency_ns.p99", offsetof(struct tpcq_sweep_point, p99_ns) },
		{ "latency_ns.p999", offsetof(struct tpcq_sweep_point, p999_ns) },
		{ "latency_ns.max", offsetof(struct tpcq_sweep_point, max_ns) },
	};
	unsigned int i;
	char *r;

	r = file_read(path);
	if (r == NULL || tpcq_json_check(r) != 0) {
		free(r);
		pt->why = pt->why != NULL ? pt->why : "wrote no valid JSON report";
		return -1;
	}
	for (i = 0; i < RTE_DIM(keys); i++) {
		double v;

		if (tpcq_json_number(r, keys[i].key, &v) != 0) {
			free(r);
			pt->why = "its report lacks a key the sweep reads";
			return -1;
		}
		/* By bytes: the field's offset says nothing of its alignment to the compiler. */
		memcpy((char *)pt + keys[i].off, &v, sizeof(v));
	}
	pt->report = r;
	if (pt->lost_wakeups != 0 && pt->why == NULL)
		pt->why = "lost wake-ups";
	return pt->why != NULL ? -1 : 0;
}

/* The child's log, so that a failed point says why in its own words. */
static void
log_show(const char *log)
{
	char line[512];
	FILE *f;

	f = fopen(log, "r");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		fprintf(stderr, "  | %s", line);
	fclose(f);
}

static int
point_run(const char *exe, int argc, char **argv, char **cargv,
	  const char *dir, unsigned int index, struct tpcq_sweep_point *pt,
	  double duration_s, bool dev_label)
{
	char bufs[POINT_ARGS][TPCQ_SWEEP_SPEC_MAX + 16];
	char json[PATH_MAX], jsonopt[PATH_MAX + 8], log[PATH_MAX];
	pid_t pid;
	int r;

	/* dir came from mkdtemp() and is short: the names fit. */
	if (snprintf(json, sizeof(json), "%.*s/point%u.json", PATH_MAX / 2,
		     dir, index) >= (int)sizeof(json) ||
	    snprintf(log, sizeof(log), "%.*s/point%u.log", PATH_MAX / 2,
		     dir, index) >= (int)sizeof(log)) {
		pt->why = "temporary file name too long";
		return -1;
	}
	snprintf(jsonopt, sizeof(jsonopt), "--json=%s", json);
	point_argv(argc, argv, cargv, bufs, pt, duration_s, jsonopt, dev_label);

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		pt->why = "cannot fork";
		pt->exit_status = -1;
		return -1;
	}
	if (pid == 0)
		child_exec(exe, cargv, log);
	r = child_wait(pid, duration_s * 3 + CHILD_GRACE_S, pt);
	r |= report_read(json, pt);
	if (r != 0 && pt->exit_status != TPCQ_EXIT_OK)
		log_show(log);
	unlink(json);
	unlink(log);
	return r;
}

static double
now_s(void)
{
	return (double)tpcq_now_ns(CLOCK_MONOTONIC) / 1e9;
}

/*
 * The paced floors of a load, measured just before its first point: close
 * in time to the points they are held against, as a VM's noise drifts.
 */
static void
floors_at(const struct tpcq_params *p, uint64_t load, double secs,
	  struct tpcq_floors *f)
{
	unsigned int before = f->npaced;
	uint64_t paced;
	int r;

	/* Already measured at this load: for an earlier device's points. */
	if (!f->valid || (tpcq_floor_match(f, false, load, &paced), paced != 0))
		return;
	r = tpcq_floors_measure_paced(p, load, secs, f);
	if (r != 0)
		fprintf(stderr, TPCQ_PROG ": --sweep: cannot measure the floors "
			"at %" PRIu64 "/s: %s\n", load, strerror(-r));
	else if (f->npaced > before)
		tpcq_floor_paced_print(&f->paced[before]);
}

static int
points_run(int argc, char **argv, struct tpcq_sweep_point *pts, unsigned int n,
	   const struct tpcq_sweep_plan *plan, bool dev_label,
	   const struct tpcq_params *p, struct tpcq_floors *floors)
{
	char tdir[PATH_MAX], exe[PATH_MAX];
	unsigned int i, failed = 0;
	const char *tmp;
	char **cargv;
	int r;

	r = tpcq_sweep_self(exe, sizeof(exe));
	if (r != 0) {
		fprintf(stderr, TPCQ_PROG ": --sweep: cannot find this program "
			"(/proc/self/exe): %s\n", strerror(-r));
		return -1;
	}

	tmp = getenv("TMPDIR");
	if (tmp == NULL || *tmp == '\0' || strlen(tmp) > PATH_MAX / 4)
		tmp = "/tmp";
	snprintf(tdir, sizeof(tdir), "%s/testpmd-cq-sweep.XXXXXX", tmp);
	cargv = calloc((size_t)argc + POINT_ARGS + 1, sizeof(*cargv));
	if (cargv == NULL || mkdtemp(tdir) == NULL) {
		fprintf(stderr, TPCQ_PROG ": --sweep: cannot make a directory "
			"like %s: %s\n", tdir, strerror(errno));
		free(cargv);
		return -1;
	}
	for (i = 0; i < n && !tpcq_interrupted(); i++) {
		floors_at(p, pts[i].load, plan->duration_s, floors);
		printf(TPCQ_PROG ": point %u/%u: dev %s, load %" PRIu64
		       "/s, policy %s ...", i + 1, n, pts[i].dev, pts[i].load,
		       pts[i].policy);
		fflush(stdout);
		if (point_run(exe, argc, argv, cargv, tdir, i, &pts[i],
			      plan->duration_s, dev_label) != 0)
			failed++;
		if (pts[i].why != NULL)
			printf(" FAILED: %s\n", pts[i].why);
		else
			printf(" ok\n");
	}
	for (; i < n; i++)
		pts[i].why = "not run: interrupted";
	rmdir(tdir);
	free(cargv);
	return failed != 0 || tpcq_interrupted() ? -1 : 0;
}

int
tpcq_sweep_run(int argc, char **argv, const struct tpcq_params *p)
{
	struct tpcq_sweep_plan plan;
	struct tpcq_sweep_point *pts;
	struct tpcq_floors floors;
	unsigned int d, l, k, n, i;
	int ret = TPCQ_EXIT_OK, r;
	char why[512];
	double t0;

	/* Checked by the option parser already; a plan cannot fail here. */
	if (tpcq_sweep_plan_make(p, &plan, why, sizeof(why)) != 0) {
		fprintf(stderr, TPCQ_PROG ": %s\n", why);
		return TPCQ_EXIT_USAGE;
	}
	n = plan.ndevs * plan.nloads * plan.npolicies;
	pts = calloc(n, sizeof(*pts));
	if (pts == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return TPCQ_EXIT_FAIL;
	}
	i = 0;
	for (d = 0; d < plan.ndevs; d++)
		for (l = 0; l < plan.nloads; l++)
			for (k = 0; k < plan.npolicies; k++) {
				pts[i].dev = plan.devs[d];
				pts[i].load = plan.loads[l];
				pts[i].policy = plan.policies[k];
				i++;
			}

	ret = points_check(argc, argv, pts, n, plan.duration_s,
			   p->sweep.devs != NULL);
	if (ret == TPCQ_EXIT_OK) {
		printf(TPCQ_PROG ": sweep of %u point%s (%u device%s x %u "
		       "load%s x %u polic%s), %.3g s each\n", n,
		       n > 1 ? "s" : "", plan.ndevs, plan.ndevs > 1 ? "s" : "",
		       plan.nloads, plan.nloads > 1 ? "s" : "", plan.npolicies,
		       plan.npolicies > 1 ? "ies" : "y", plan.duration_s);
		t0 = now_s();
		/* On the CPUs the points use, before them: the yardsticks. */
		r = tpcq_floors_measure(p, NULL, 0, 0.0, &floors);
		if (r != 0)
			fprintf(stderr, TPCQ_PROG ": --sweep: cannot measure the "
				"floors: %s\n", strerror(-r));
		tpcq_floors_print(&floors);
		if (points_run(argc, argv, pts, n, &plan,
			       p->sweep.devs != NULL, p, &floors) != 0)
			ret = TPCQ_EXIT_FAIL;
		tpcq_sweep_table(pts, n, plan.ndevs > 1, &floors);
		if (tpcq_sweep_json(p->json_path, argc, argv, &plan, pts, n,
				    now_s() - t0, &floors) != 0)
			ret = TPCQ_EXIT_FAIL;
		else if (tpcq_sweep_plot(p->json_path, p->sweep.plot_dir) != 0)
			ret = TPCQ_EXIT_FAIL;
	}
	for (i = 0; i < n; i++)
		free(pts[i].report);
	free(pts);
	return ret;
}
