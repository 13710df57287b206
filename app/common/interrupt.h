/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_INTERRUPT_H
#define TPCQ_INTERRUPT_H

#include <stdbool.h>

/*
 * SIGINT and SIGTERM set a flag instead of ending the process, so that a
 * run interrupted still reports what it measured.
 */

/* Install the handlers (once, before the first run). */
void tpcq_signals_install(void);
/* Whether SIGINT or SIGTERM came. */
bool tpcq_interrupted(void);

#endif /* TPCQ_INTERRUPT_H */
