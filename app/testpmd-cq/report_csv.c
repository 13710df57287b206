/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The results as CSV: a header line, then one row per run. A file that
 * already starts with the same header gets one more row, so that a series of
 * runs (a sweep, a shell loop) collects its rows in one file; a file with
 * another header is left alone, since its columns would not line up.
 * Columns are the JSON keys, with an object's name before its keys
 * (latency_ns_p99, group_sleeps).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * The file's first line, without its line break, in *line (to free); NULL
 * for a missing or empty file. Returns 0 or -errno.
 */
static int
first_line(const char *path, char **line)
{
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int err;

	*line = NULL;
	f = fopen(path, "r");
	if (f == NULL)
		return errno == ENOENT ? 0 : -errno;
	errno = 0;
	n = getline(line, &cap, f);
	err = errno;
	fclose(f);
	if (n < 0) {
		free(*line);
		*line = NULL;
		return err != 0 ? -err : 0;
	}
	if (n > 0 && (*line)[n - 1] == '\n')
		(*line)[n - 1] = '\0';
	return 0;
}

int
tpcq_report_csv(const char *path, const struct tpcq_params *p,
		const struct tpcq_run *run, const struct tpcq_result *res)
{
	char *header = NULL, *line;
	struct tpcq_fields fs;
	size_t header_len = 0;
	FILE *out, *mem;
	int r, err;

	tpcq_fields_get(p, run, res, &fs);
	mem = open_memstream(&header, &header_len);
	if (mem == NULL) {
		fprintf(stderr, TPCQ_PROG ": out of memory\n");
		return -ENOMEM;
	}
	csv_header(mem, &fs);
	fclose(mem);

	r = first_line(path, &line);
	if (r < 0) {
		fprintf(stderr, TPCQ_PROG ": cannot read %s: %s\n", path,
			strerror(-r));
		free(header);
		return r;
	}
	if (line != NULL && strcmp(line, header) != 0) {
		fprintf(stderr, TPCQ_PROG ": --csv: %s exists with other columns "
			"(another program, or another testpmd-cq version): not "
			"appending to it; remove it or name another file\n", path);
		free(line);
		free(header);
		return -EINVAL;
	}

	out = fopen(path, "a");
	if (out == NULL) {
		err = errno;
		fprintf(stderr, TPCQ_PROG ": cannot open %s: %s\n", path,
			strerror(err));
		free(line);
		free(header);
		return -err;
	}
	if (line == NULL)
		fprintf(out, "%s\n", header);
	csv_row(out, &fs);
	free(line);
	free(header);
	return tpcq_report_close(out, path);
}
