/* SPDX-License-Identifier: BSD-3-Clause */
/* Time for the software device: timestamps and injected delays. */

#include <time.h>

#include "sw_private.h"

uint64_t
cqpoll_sw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
cqpoll_sw_spin_ns(uint64_t ns)
{
	/* Spin, not sleep: a sleep is far longer than the windows we widen. */
	uint64_t end = cqpoll_sw_now_ns() + ns;

	while (cqpoll_sw_now_ns() < end)
		;
}
