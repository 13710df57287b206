/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interrupt flag: set by SIGINT/SIGTERM, read by every loop that must end
 * early (the run, the prompt, the sweep's points, the floors).
 */
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "interrupt.h"

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
void
tpcq_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

