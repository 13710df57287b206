/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a sweep leaves: one table on stdout, one JSON file with every point,
 * and the plot command (run at once with --plot=DIR).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_version.h>

#include "floors.h"
#include "plugin.h"
#include "report.h"
#include "sweep.h"
#include "testpmd_cq.h"

#define RULE "-------------------------------------------------------------------------------"
/* The plot script, installed and built beside the binary. */
#define PLOT_SCRIPT "tpcq-plot.py"

/* A point's p50 and p99 over the matching floor's; false: no floors. */
static bool
point_x(const struct tpcq_sweep_point *pt, const struct tpcq_floors *f,
	bool *wakeup, uint64_t *paced_rate, double *p50_x, double *p99_x)
{
	const struct tpcq_floor *m;

	if (f == NULL || !f->valid || pt->report == NULL)
		return false;
	*wakeup = tpcq_floor_is_wakeup(pt->policy, pt->wakeups_per_s,
				       pt->achieved_rate);
	m = tpcq_floor_match(f, *wakeup, pt->load, paced_rate);
	if (m == NULL || m->p50_ns == 0 || m->p99_ns == 0)
		return false;
	*p50_x = pt->p50_ns / (double)m->p50_ns;
	*p99_x = pt->p99_ns / (double)m->p99_ns;
	return true;
}

void
tpcq_sweep_table(const struct tpcq_sweep_point *pts, unsigned int n,
		 bool show_dev, const struct tpcq_floors *floors)
{
	const struct tpcq_sweep_point *pt;
	double p50_x, p99_x;
	uint64_t paced;
	unsigned int i;
	bool wakeup;

	printf(RULE "\n");
	if (show_dev)
		printf(" %-10s", "dev");
	printf(" %7s %-10s %9s %8s %8s %9s %8s %8s %5s %5s %5s %8s %4s\n",
	       "load/s", "policy", "achieved", "p50_us", "p99_us", "max_us",
	       "p50/fl", "p99/fl", "cpu%", "hrn%", "prc%", "wakeup/s", "lost");
	for (i = 0; i < n; i++) {
		pt = &pts[i];
		if (show_dev)
			printf(" %-10s", pt->dev);
		printf(" %7" PRIu64 " %-10s", pt->load, pt->policy);
		if (pt->report == NULL) {
			printf(" FAILED: %s\n", pt->why);
			continue;
		}
		printf(" %9.0f %8.1f %8.1f %9.1f", pt->achieved_rate,
		       pt->p50_ns / 1e3, pt->p99_ns / 1e3, pt->max_ns / 1e3);
		if (point_x(pt, floors, &wakeup, &paced, &p50_x, &p99_x))
			printf(" %6.1f%c%c %6.1f%c%c", p50_x, 'x',
			       wakeup ? 'w' : 'h', p99_x, 'x', wakeup ? 'w' : 'h');
		else
			printf(" %8s %8s", "-", "-");
		printf(" %5.1f %5.1f %5.1f %8.0f %4.0f%s\n", pt->cpu_pct,
		       pt->harness_cpu_pct, pt->cpu_pct_process,
		       pt->wakeups_per_s, pt->lost_wakeups,
		       pt->why != NULL ? "  FAILED" : "");
	}
	printf(RULE "\n");
	if (floors != NULL && floors->valid) {
		printf(" p50/fl, p99/fl: the percentile over the same percentile of "
		       "the floor at the point's load,\n w: wake-up");
		for (i = 0; i < floors->npaced; i++)
			printf("%s %" PRIu64 "/s %.1f / %.1f us", i ? "," : ":",
			       floors->paced[i].rate,
			       (double)floors->paced[i].wakeup.p50_ns / 1e3,
			       (double)floors->paced[i].wakeup.p99_ns / 1e3);
		printf("\n (back to back: %.1f / %.1f us), h: hand-off",
		       (double)floors->wakeup.p50_ns / 1e3,
		       (double)floors->wakeup.p99_ns / 1e3);
		for (i = 0; i < floors->npaced; i++)
			printf("%s %" PRIu64 "/s %.2f / %.2f us", i ? "," : ":",
			       floors->paced[i].rate,
			       (double)floors->paced[i].handoff.p50_ns / 1e3,
			       (double)floors->paced[i].handoff.p99_ns / 1e3);
		printf("\n (back to back: %.2f / %.2f us). cpu%%: the poller's, "
		       "hrn%%: the harness's (generator and\n device), prc%%: the "
		       "process's.\n", (double)floors->handoff.p50_ns / 1e3,
		       (double)floors->handoff.p99_ns / 1e3);
	}
	fflush(stdout);
}

static void
json_argv(FILE *out, int argc, char **argv)
{
	int i;

	fputc('[', out);
	for (i = 0; i < argc; i++) {
		if (i > 0)
			fputs(", ", out);
		tpcq_json_string(out, argv[i]);
	}
	fputc(']', out);
}

static void
json_names(FILE *out, const char (*names)[TPCQ_SWEEP_SPEC_MAX], unsigned int n)
{
	unsigned int i;

	fputc('[', out);
	for (i = 0; i < n; i++) {
		if (i > 0)
			fputs(", ", out);
		tpcq_json_string(out, names[i]);
	}
	fputc(']', out);
}

static void
json_plan(FILE *out, int argc, char **argv, const struct tpcq_sweep_plan *plan)
{
	unsigned int i;

	fprintf(out, "  \"sweep\": {\n    \"command\": ");
	json_argv(out, argc, argv);
	fprintf(out, ",\n    \"devs\": ");
	json_names(out, plan->devs, plan->ndevs);
	fprintf(out, ",\n    \"loads\": [");
	for (i = 0; i < plan->nloads; i++)
		fprintf(out, "%s%" PRIu64, i > 0 ? ", " : "", plan->loads[i]);
	fprintf(out, "],\n    \"policies\": ");
	json_names(out, plan->policies, plan->npolicies);
	fprintf(out, ",\n    \"duration_s\": %.6f,\n", plan->duration_s);
	fprintf(out, "    \"cqpoll_version\": \"%s\",\n", cqpoll_version());
	fprintf(out, "    \"dpdk_version\": \"%s\"\n  },\n", rte_version());
}

static void
json_point(FILE *out, const struct tpcq_sweep_point *pt,
	   const struct tpcq_floors *floors)
{
	double p50_x, p99_x;
	uint64_t paced;
	bool wakeup;
	size_t len;

	fprintf(out, "    {\"dev\": ");
	tpcq_json_string(out, pt->dev);
	fprintf(out, ", \"load\": %" PRIu64 ", \"policy\": ", pt->load);
	tpcq_json_string(out, pt->policy);
	fprintf(out, ", \"ok\": %s, \"exit_status\": %d, \"error\": ",
		pt->why == NULL ? "true" : "false", pt->exit_status);
	if (pt->why != NULL)
		tpcq_json_string(out, pt->why);
	else
		fputs("null", out);
	if (pt->report == NULL) {
		fprintf(out, ", \"lost_wakeups\": null, \"run\": null}");
		return;
	}
	fprintf(out, ", \"lost_wakeups\": %.0f", pt->lost_wakeups);
	if (point_x(pt, floors, &wakeup, &paced, &p50_x, &p99_x))
		fprintf(out, ", \"floor\": \"%s\", \"p50_x_floor\": %.3f, "
			"\"p99_x_floor\": %.3f",
			tpcq_floor_name(wakeup, paced),
			p50_x, p99_x);
	else
		fprintf(out, ", \"floor\": null, \"p50_x_floor\": null, "
			"\"p99_x_floor\": null");
	fprintf(out, ",\n     \"run\": ");
	len = strlen(pt->report);
	while (len > 0 && (pt->report[len - 1] == '\n' ||
			   pt->report[len - 1] == ' '))
		len--;
	fwrite(pt->report, 1, len, out);
	fputc('}', out);
}

int
tpcq_sweep_json(const char *path, int argc, char **argv,
		const struct tpcq_sweep_plan *plan,
		const struct tpcq_sweep_point *pts, unsigned int n,
		double wall_s, const struct tpcq_floors *floors)
{
	unsigned int i, failed = 0, lossy = 0;
	double lost = 0;
	FILE *out;
	int err;

	out = tpcq_outfile_open("json", path, false);
	if (out == NULL)
		return -EIO;
	fprintf(out, "{\n");
	json_plan(out, argc, argv, plan);
	if (floors != NULL && floors->valid)
		tpcq_floors_json(out, floors, "  ");
	else
		fputs("  \"floors\": null", out);
	fprintf(out, ",\n  \"points\": [\n");
	for (i = 0; i < n; i++) {
		json_point(out, &pts[i], floors);
		fprintf(out, "%s\n", i + 1 < n ? "," : "");
		failed += pts[i].why != NULL;
		if (pts[i].report != NULL && pts[i].lost_wakeups > 0) {
			lossy++;
			lost += pts[i].lost_wakeups;
		}
	}
	fprintf(out, "  ],\n");
	fprintf(out, "  \"summary\": {\"points\": %u, \"failed\": %u"
		", \"points_with_lost_wakeups\": %u, \"lost_wakeups\": %.0f"
		", \"wall_s\": %.3f, \"ok\": %s}\n", n, failed, lossy, lost,
		wall_s, failed == 0 ? "true" : "false");
	fprintf(out, "}\n");

	err = tpcq_report_close(out, path);
	if (err != 0)
		return err;
	printf(TPCQ_PROG ": %u points in %s: %u failed, %u with lost wake-ups\n",
	       n, path, failed, lossy);
	return 0;
}

/* The script in the plugins' directory, or beside the binary in the build tree. */
static int
plot_script(char *buf, size_t len)
{
	int r = tpcq_plugin_path(PLOT_SCRIPT, buf, len);

	return r != 0 ? r : access(buf, X_OK) == 0 ? 0 : -errno;
}

/* FILE.json's plots go to FILE-plots unless the user says otherwise. */
static void
plot_dir_default(const char *json, char *buf, size_t len)
{
	size_t l = strlen(json);

	if (l > 5 && strcmp(json + l - 5, ".json") == 0)
		l -= 5;
	snprintf(buf, len, "%.*s-plots", (int)l, json);
}

int
tpcq_sweep_plot(const char *json_path, const char *plot_dir)
{
	char script[PATH_MAX], dir[PATH_MAX];
	int r, st;
	pid_t pid;

	r = plot_script(script, sizeof(script));
	if (r != 0) {
		fprintf(stderr, TPCQ_PROG ": no plot script (%s): %s\n",
			script, strerror(-r));
		return plot_dir != NULL ? -1 : 0;
	}
	if (plot_dir == NULL) {
		plot_dir_default(json_path, dir, sizeof(dir));
		printf(TPCQ_PROG ": plot with: %s %s -o %s\n", script, json_path,
		       dir);
		return 0;
	}
	printf(TPCQ_PROG ": plotting: %s %s -o %s\n", script, json_path,
	       plot_dir);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl(script, script, json_path, "-o", plot_dir, (char *)NULL);
		fprintf(stderr, TPCQ_PROG ": cannot run %s: %s\n", script,
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, TPCQ_PROG ": the plot failed (%s)\n", script);
		return -1;
	}
	printf(TPCQ_PROG ": plots in %s\n", plot_dir);
	return 0;
}
