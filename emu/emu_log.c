/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Formatting of the log messages of the driver code libcqpoll_emu builds
 * again (see sw_emu.h): libcqpoll's own are hidden in it. They go to the
 * hook libcqpoll has.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "cqpoll_log_private.h"

bool
cqpoll_log_wanted(const struct cqpoll_log_hook *h, enum cqpoll_log_level level,
		  const char *component)
{
	return h->enabled == NULL || h->enabled(h->arg, level, component);
}

void
cqpoll_log_emit(const struct cqpoll_log_hook *h, enum cqpoll_log_level level,
		const char *component, const char *fmt, ...)
{
	char line[256]; /* as libcqpoll: longer messages are cut */
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	h->write(h->arg, level, component, line);
	errno = saved;
}
