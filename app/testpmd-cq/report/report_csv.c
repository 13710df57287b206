/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The results as CSV: a header line, then one row per run. A file that
 * already starts with the same header gets one more row, so that a series of
 * runs (a sweep, a shell loop) collects its rows in one file; a file with
 * another header is left alone, since its columns would not line up.
 * Columns are the JSON keys, with an object's name before its keys
 * (latency_ns_p99, group_sleeps). A file whose last line lacks its line
 * break gets one before the row, so the row never joins that line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "params.h"
#include "report.h"
#include "run.h"
#include "testpmd_cq.h"

static void
csv_header(FILE *out, const struct tpcq_fields *fs)
{
	const struct tpcq_field *f;
	unsigned int i;

	for (i = 0; i < fs->n; i++) {
		f = &fs->f[i];
		fprintf(out, "%s%s%s%s", i > 0 ? "," : "",
			f->obj != NULL ? f->obj : "", f->obj != NULL ? "_" : "",
			f->key);
	}
}

/* RFC 4180: a value with a comma, quote or line break is quoted. */
static void
csv_value(FILE *out, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void
csv_row(FILE *out, const struct tpcq_fields *fs)
{
	unsigned int i;

	for (i = 0; i < fs->n; i++) {
		if (i > 0)
			fputc(',', out);
		/* No value: an empty cell, as spreadsheets and pandas read it. */
		if (!fs->f[i].null)
			csv_value(out, fs->f[i].val);
	}
	fputc('\n', out);
}

/* Our header, to free; NULL when out of memory (said on stderr). */
static char *
csv_header_of(const struct tpcq_fields *fs)
{
	char *header = NULL;
	size_t len = 0;
	FILE *mem;

	mem = open_memstream(&header, &len);
	if (mem == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return NULL;
	}
	csv_header(mem, fs);
	if (fclose(mem) != 0) {
		free(header);
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return NULL;
	}
	return header;
}

/*
 * The file's head read with a bound (a testpmd-cq header is a few KiB) and
 * compared with ours. Returns 0 (h says what is there) or -errno, said on
 * stderr.
 */
static int
csv_head_check(const char *path, const char *header,
	       struct tpcq_outfile_head *h)
{
	char *line;
	int r;

	line = malloc(TPCQ_CSV_HEAD_MAX);
	if (line == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return -ENOMEM;
	}
	r = tpcq_outfile_head("csv", path, line, TPCQ_CSV_HEAD_MAX, h);
	if (r == 0 && h->size > 0 && strcmp(line, header) != 0) {
		fprintf(stderr, TPCQ_PROG ": --csv: %s exists with other columns "
			"(another program, or another testpmd-cq version): not "
			"appending to it; remove it or name another file\n", path);
		r = -EINVAL;
	}
	free(line);
	return r;
}

/*
 * Before the run: the columns depend on no measurement, so a run's header is
 * known from its parameters alone.
 */
int
tpcq_report_csv_check(const struct tpcq_params *p)
{
	struct tpcq_params q = *p;
	struct tpcq_outfile_head h;
	struct tpcq_fields *fs;
	struct tpcq_result res;
	struct tpcq_run run;
	char *header;
	int r;

	if (q.policy == NULL)
		q.policy = "";
	memset(&run, 0, sizeof(run));
	memset(&res, 0, sizeof(res));
	run.params = &q;
	fs = malloc(sizeof(*fs));
	res.latency = tpcq_hist_create();
	if (fs == NULL || res.latency == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		tpcq_hist_free(res.latency);
		free(fs);
		return -ENOMEM;
	}
	tpcq_fields_get(&q, &run, &res, fs);
	tpcq_hist_free(res.latency);
	header = csv_header_of(fs);
	free(fs);
	if (header == NULL)
		return -ENOMEM;
	r = csv_head_check(p->csv_path, header, &h);
	free(header);
	return r;
}

int
tpcq_report_csv(const char *path, const struct tpcq_params *p,
		const struct tpcq_run *run, const struct tpcq_result *res)
{
	struct tpcq_outfile_head h;
	struct tpcq_fields fs;
	char *header;
	FILE *out;
	int r;

	tpcq_fields_get(p, run, res, &fs);
	header = csv_header_of(&fs);
	if (header == NULL)
		return -ENOMEM;
	/* Again: the file may have changed during the run. */
	r = csv_head_check(path, header, &h);
	if (r != 0) {
		free(header);
		return r;
	}
	out = tpcq_outfile_open("csv", path, true);
	if (out == NULL) {
		free(header);
		return -EIO;
	}
	if (h.size == 0)
		fprintf(out, "%s\n", header);
	else if (!h.ends_with_newline)
		fputc('\n', out);
	csv_row(out, &fs);
	free(header);
	return tpcq_report_close(out, path);
}
