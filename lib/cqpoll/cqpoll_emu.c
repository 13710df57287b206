/* SPDX-License-Identifier: BSD-3-Clause */
/* Time for the software and emulated devices: timestamps and injected delays. */

#include <time.h>

#include "cqpoll_emu.h"

uint64_t
cqpoll_emu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
cqpoll_emu_spin_ns(uint64_t ns)
{
	uint64_t end = cqpoll_emu_now_ns() + ns;

	while (cqpoll_emu_now_ns() < end)
		;
}
