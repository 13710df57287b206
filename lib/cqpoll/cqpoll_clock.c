/* SPDX-License-Identifier: BSD-3-Clause */
/* Time: the library's clock, and the delays emulated devices inject. */

#include <time.h>

#include "cqpoll_emu.h"

uint64_t
cqpoll_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
cqpoll_emu_spin_ns(uint64_t ns)
{
	uint64_t end = cqpoll_now_ns() + ns;

	while (cqpoll_now_ns() < end)
		;
}
