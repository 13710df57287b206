/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cqpoll-hw-check: run the checks on every RDMA device found (or one), or on
 * the emulated devices, and write one JSON object per check and device
 * (devtools/hw-check.sh turns them into the report). Exit 0: nothing failed;
 * 1: a check failed; 77: nothing ran (no device); 2: bad usage.
 *
 *   cqpoll-hw-check [--emulated | --device=IBDEV] [--check=NAME]... [--json=FILE]
 *   cqpoll-hw-check --list-devices | --list-checks
 *
 * --control=swap-imm|vendor-err|qp-wr-id|srq-wr-id (tests only): negative controls of the comparisons.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HW_HAVE_MLX5
#include <infiniband/mlx5dv.h>
#endif
#include "cqpoll_log.h"
#include "hw_check.h"

#define LOG_MAX 256

static char *log_lines[LOG_MAX];
static size_t log_n;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void
log_write(void *arg, enum cqpoll_log_level level, const char *component, const char *msg)
{
	char line[512];

	(void)arg;
	snprintf(line, sizeof(line), "%d %s: %s", (int)level, component, msg);
	pthread_mutex_lock(&log_lock);
	if (log_n < LOG_MAX)
		log_lines[log_n++] = strdup(line);
	pthread_mutex_unlock(&log_lock);
}

/*
 * Notices, warnings and errors: the debug level reports every sleep, which
 * would cost the races their timing and bury what matters.
 */
static bool
log_enabled(void *arg, enum cqpoll_log_level level, const char *component)
{
	(void)arg;
	(void)component;
	return level <= CQPOLL_LOG_INFO;
}

static const struct cqpoll_log_hook log_hook = { .enabled = log_enabled,
						 .write = log_write };

void
hw_log_capture_start(void)
{
	cqpoll_log_set_hook(&log_hook);
}

size_t
hw_log_count(void)
{
	size_t n;

	pthread_mutex_lock(&log_lock);
	n = log_n;
	pthread_mutex_unlock(&log_lock);
	return n;
}

const char *
hw_log_line(size_t i)
{
	return i < log_n ? log_lines[i] : NULL;
}

const char *hw_control;

static const char *const status_names[] = { "pass", "fail", "skip" };

static void
emit(FILE *out, const char *dev, const char *check, const struct hw_result *r)
{
	char e[1100];

	hw_json_escape(e, sizeof(e), r->reason);
	fprintf(out, "{\"device\":\"%s\",\"check\":\"%s\",\"status\":\"%s\",\"reason\":\"%s\","
		"\"data\":{%s}}\n", dev, check, status_names[r->status], e,
		r->data_len ? r->data + 1 : "");
	fflush(out);
	printf("%-12s %-20s %-4s %s\n", dev, check, status_names[r->status], r->reason);
}

static bool
wanted(const struct hw_check *c, char **only, int nonly)
{
	int i;

	if (nonly == 0)
		return true;
	for (i = 0; i < nonly; i++)
		if (strcmp(only[i], c->name) == 0)
			return true;
	return false;
}

/* Every wanted check on t; the number failed and run (not skipped). */
static void
run_target(FILE *out, struct hw_target *t, char **only, int nonly, int *failed, int *ran)
{
	size_t i;

	for (i = 0; i < hw_nchecks; i++) {
		struct hw_result r;

		if (!wanted(hw_checks[i], only, nonly))
			continue;
		memset(&r, 0, sizeof(r));
		hw_checks[i]->run(t, &r);
		if (r.reason[0] == '\0')
			hw_fail(&r, "the check set no result");
		emit(out, t->name, hw_checks[i]->name, &r);
		*failed += r.status == HW_FAIL;
		*ran += r.status != HW_SKIP;
	}
}

/* Every check skipped, with the one reason nothing could run. */
static void
skip_all(FILE *out, const char *dev, const char *why, char **only, int nonly)
{
	size_t i;

	for (i = 0; i < hw_nchecks; i++) {
		struct hw_result r;

		if (!wanted(hw_checks[i], only, nonly))
			continue;
		memset(&r, 0, sizeof(r));
		hw_skip(&r, "%s", why);
		emit(out, dev, hw_checks[i]->name, &r);
	}
}

static void
list_devices(FILE *out, struct ibv_device **list, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct hw_target t;
		struct ibv_device_attr da;
		struct hw_lb_plan p;
		char why[256], e[300], fw[160];

		if (hw_target_ibv_open(&t, list[i], why, sizeof(why)) != 0) {
			hw_json_escape(e, sizeof(e), why);
			fprintf(out, "{\"name\":\"%s\",\"driver\":null,\"usable\":false,"
				"\"reason\":\"%s\"}\n", ibv_get_device_name(list[i]), e);
			continue;
		}
		if (ibv_query_device(t.ctx, &da) != 0)
			snprintf(da.fw_ver, sizeof(da.fw_ver), "unknown");
		hw_json_escape(fw, sizeof(fw), da.fw_ver);
		if (hw_lb_plan_device(t.ctx, &p, why, sizeof(why)) == 0) {
			fprintf(out, "{\"name\":\"%s\",\"driver\":\"%s\",\"fw_ver\":\"%s\","
				"\"usable\":true,\"port\":%u,\"gid_index\":%d,"
				"\"transport\":\"%s\"}\n", t.name, t.has_mlx5 ? "mlx5" : "verbs",
				fw, p.port, p.gid_index, p.gid_index >= 0 ? "RoCE" : "InfiniBand");
		} else {
			hw_json_escape(e, sizeof(e), why);
			fprintf(out, "{\"name\":\"%s\",\"driver\":\"%s\",\"fw_ver\":\"%s\","
				"\"usable\":false,\"reason\":\"%s\"}\n", t.name,
				t.has_mlx5 ? "mlx5" : "verbs", fw, e);
		}
		hw_target_ibv_close(&t);
	}
}

static int
usage(FILE *f, int r)
{
	fprintf(f, "usage: cqpoll-hw-check [--emulated | --device=IBDEV] [--check=NAME]... "
		"[--json=FILE]\n"
		"       cqpoll-hw-check --list-devices | --list-checks\n");
	return r;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "emulated", no_argument, NULL, 'e' },
		{ "device", required_argument, NULL, 'd' },
		{ "check", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'j' },
		{ "list-devices", no_argument, NULL, 'L' },
		{ "list-checks", no_argument, NULL, 'C' },
		{ "control", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *only[64], why[600];
	const char *device = NULL, *json = NULL;
	bool emulated = false, list_dev = false, list_chk = false;
	int nonly = 0, o, failed = 0, ran = 0, n = 0, i, err, found = 0;
	struct ibv_device **list;
	FILE *out = NULL;
	size_t k;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'e': emulated = true; break;
		case 'd': device = optarg; break;
		case 'c':
			if (nonly == 64)
				return usage(stderr, 2);
			only[nonly++] = optarg;
			break;
		case 'j': json = optarg; break;
		case 'L': list_dev = true; break;
		case 'C': list_chk = true; break;
		case 'x':
			if (strcmp(optarg, "swap-imm") != 0 &&
			    strcmp(optarg, "vendor-err") != 0 && strcmp(optarg, "qp-wr-id") != 0 &&
			    strcmp(optarg, "srq-wr-id") != 0) {
				fprintf(stderr, "cqpoll-hw-check: --control=%s: unknown "
					"(swap-imm, vendor-err, qp-wr-id, srq-wr-id)\n", optarg);
				return 2;
			}
			hw_control = optarg;
			break;
		case 'h': return usage(stdout, 0);
		default: return usage(stderr, 2);
		}
	}
	if (optind != argc || (emulated && device != NULL))
		return usage(stderr, 2);
	for (i = 0; i < nonly; i++) {
		for (k = 0; k < hw_nchecks; k++)
			if (strcmp(only[i], hw_checks[k]->name) == 0)
				break;
		if (k == hw_nchecks) {
			fprintf(stderr, "cqpoll-hw-check: --check=%s: no such check (see "
				"--list-checks)\n", only[i]);
			return 2;
		}
	}
	if (list_chk) {
		for (k = 0; k < hw_nchecks; k++)
			printf("{\"check\":\"%s\",\"what\":\"%s\"}\n", hw_checks[k]->name,
			       hw_checks[k]->what);
		return 0;
	}
	if (json != NULL) {
		out = fopen(json, "w");
		if (out == NULL) {
			fprintf(stderr, "cqpoll-hw-check: %s: %s\n", json, strerror(errno));
			return 2;
		}
	} else if (!list_dev) {
		out = fopen("/dev/null", "w");
	}
	hw_log_capture_start();
	if (emulated) {
		struct hw_target t;

		if (hw_target_emu_open(&t, why, sizeof(why)) != 0) {
			fprintf(stderr, "cqpoll-hw-check: %s\n", why);
			return 1;
		}
		run_target(out, &t, only, nonly, &failed, &ran);
		hw_target_emu_close(&t);
		goto done;
	}
	errno = 0;
	list = ibv_get_device_list(&n);
	err = errno;
	if (list_dev) {
		if (list != NULL)
			list_devices(stdout, list, n);
		if (list != NULL)
			ibv_free_device_list(list);
		if (list == NULL || n == 0)
			fprintf(stderr, "no RDMA device: ibv_get_device_list(): %s\n",
				list == NULL ? strerror(err) : "empty list");
		return (list == NULL || n == 0) ? 77 : 0;
	}
	if (list == NULL || n == 0) {
		snprintf(why, sizeof(why), "no RDMA device: ibv_get_device_list(): %s",
			 list == NULL ? strerror(err) : "found none");
		skip_all(out, "none", why, only, nonly);
		if (list != NULL)
			ibv_free_device_list(list);
		goto done;
	}
	for (i = 0; i < n; i++) {
		struct hw_target t;

		if (device != NULL && strcmp(device, ibv_get_device_name(list[i])) != 0)
			continue;
		found++;
		if (hw_target_ibv_open(&t, list[i], why, sizeof(why)) != 0) {
			skip_all(out, ibv_get_device_name(list[i]), why, only, nonly);
			continue;
		}
		/* Every check needs the loopback pair: a port that can carry it. */
		{
			struct hw_lb_plan p;
			char w[256];

			if (hw_lb_plan_device(t.ctx, &p, w, sizeof(w)) != 0) {
				snprintf(why, sizeof(why), "%s cannot carry a loopback QP pair: %s",
					 t.name, w);
				skip_all(out, t.name, why, only, nonly);
				hw_target_ibv_close(&t);
				continue;
			}
		}
		run_target(out, &t, only, nonly, &failed, &ran);
		hw_target_ibv_close(&t);
	}
	if (found == 0) {
		snprintf(why, sizeof(why), "no RDMA device named %s", device);
		skip_all(out, device, why, only, nonly);
	}
	ibv_free_device_list(list);
done:
	for (k = 0; k < log_n; k++) {
		char e[1100];

		hw_json_escape(e, sizeof(e), log_lines[k]);
		fprintf(out, "{\"log\":\"%s\"}\n", e);
		free(log_lines[k]);
	}
	cqpoll_log_set_hook(NULL);
	fclose(out);
	if (failed != 0)
		return 1;
	return ran == 0 ? 77 : 0;
}
