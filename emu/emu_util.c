/* SPDX-License-Identifier: BSD-3-Clause */
/* Delays the emulated devices inject. */

#include "emu_util.h"

void
cqpoll_emu_spin_ns(uint64_t ns)
{
	uint64_t end = cqpoll_now_ns() + ns;

	while (cqpoll_now_ns() < end)
		;
}
