/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress of a long run on a terminal: one line on stderr, rewritten in
 * place, erased at the end. Off with --quiet and when stderr is not a
 * terminal, so that logs, pipes and tests see the same bytes as before.
 */
#ifndef TPCQ_PROGRESS_H
#define TPCQ_PROGRESS_H

#include <stdbool.h>

/* On when not quiet and stderr is a terminal. */
void tpcq_progress_init(const char *prog, bool quiet);
/* The line: "PROG: " and the text, over the last one. */
void tpcq_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Erase the line, if one was written: the output continues clean. */
void tpcq_progress_end(void);

#endif /* TPCQ_PROGRESS_H */
