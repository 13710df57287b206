/* SPDX-License-Identifier: BSD-3-Clause */
/* The trace hook: one pointer, published with release, read with acquire. */

#include <stddef.h>

#include "cqpoll_trace_private.h"

const struct cqpoll_trace_hook *cqpoll_trace_hook_cur;

int
cqpoll_trace_set_hook(const struct cqpoll_trace_hook *hook)
{
	__atomic_store_n(&cqpoll_trace_hook_cur, hook, __ATOMIC_RELEASE);
	return 0;
}

const struct cqpoll_trace_hook *
cqpoll_trace_get_hook(void)
{
	return __atomic_load_n(&cqpoll_trace_hook_cur, __ATOMIC_ACQUIRE);
}

const char *
cqpoll_trace_wake_name(enum cqpoll_trace_wake why)
{
	switch (why) {
	case CQPOLL_TRACE_WAKE_EVENT:
		return "event";
	case CQPOLL_TRACE_WAKE_TIMEOUT:
		return "timeout";
	case CQPOLL_TRACE_WAKE_XTHREAD:
		return "xthread";
	case CQPOLL_TRACE_WAKE_RECOVERY:
		return "recovery";
	}
	return "unknown";
}
