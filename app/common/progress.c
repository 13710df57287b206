/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "progress.h"

static const char *progress_prog;
static bool progress_on;
static bool progress_shown;

void
tpcq_progress_init(const char *prog, bool quiet)
{
	progress_prog = prog;
	progress_on = !quiet && isatty(STDERR_FILENO);
	progress_shown = false;
}

void
tpcq_progress(const char *fmt, ...)
{
	va_list ap;

	if (!progress_on)
		return;
	/* Carriage return and erase to the end of the line (ECMA-48 EL). */
	fprintf(stderr, "\r\033[K%s: ", progress_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	progress_shown = true;
}

void
tpcq_progress_end(void)
{
	if (!progress_shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	progress_shown = false;
}
