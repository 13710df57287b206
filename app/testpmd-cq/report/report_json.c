/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The results as one JSON object: the fields of results.c in their order, a
 * field's object written on one line, an object with no values as null.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "params.h"
#include "report.h"
#include "run.h"

void
tpcq_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", (unsigned int)(unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void
json_value(FILE *out, const struct tpcq_field *f)
{
	if (f->null)
		fputs("null", out);
	else if (f->quote)
		tpcq_json_string(out, f->val);
	else
		fputs(f->val, out);
}

static bool
same_obj(const struct tpcq_field *a, const struct tpcq_field *b)
{
	return a->obj != NULL && b->obj != NULL && strcmp(a->obj, b->obj) == 0;
}

static void
json_write(FILE *out, const struct tpcq_fields *fs)
{
	const struct tpcq_field *f;
	unsigned int i, j, k;

	fputs("{\n", out);
	for (i = 0; i < fs->n; i = j) {
		f = &fs->f[i];
		fprintf(out, "%s  \"%s\": ", i > 0 ? ",\n" : "",
			f->obj != NULL ? f->obj : f->key);
		if (f->obj == NULL) {
			json_value(out, f);
			j = i + 1;
			continue;
		}
		for (j = i; j < fs->n && same_obj(&fs->f[j], f); j++)
			;
		/* The builder marks a whole object null, never part of one. */
		if (f->null) {
			fputs("null", out);
			continue;
		}
		fputc('{', out);
		for (k = i; k < j; k++) {
			fprintf(out, "%s\"%s\": ", k > i ? ", " : "", fs->f[k].key);
			json_value(out, &fs->f[k]);
		}
		fputc('}', out);
	}
	fputs("\n}\n", out);
}

int
tpcq_report_json(const char *path, const struct tpcq_params *p,
		 const struct tpcq_run *run, const struct tpcq_result *res)
{
	struct tpcq_fields fs;
	FILE *out;

	out = tpcq_outfile_open("json", path, false);
	if (out == NULL)
		return -EIO;
	tpcq_fields_get(p, run, res, &fs);
	json_write(out, &fs);
	return tpcq_report_close(out, path);
}
