/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log hook: one pointer, read with acquire so that a hook installed by
 * one thread is seen whole by the others.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "cqpoll_log_private.h"

/* One line: longer messages are cut, never split. */
#define CQPOLL_LOG_LINE_MAX 256

const struct cqpoll_log_hook *cqpoll_log_hook_cur;

/*
 * The last answer of cqpoll_log_lib_debug() and when it was asked (0: ask
 * now). Shared by every thread: a thread may read a time and an answer of
 * two different askings, which only moves a message by a period.
 */
static uint64_t debug_asked_ns;
static bool debug_wanted;

int
cqpoll_log_set_hook(const struct cqpoll_log_hook *hook)
{
	if (hook != NULL && hook->write == NULL)
		return -EINVAL;
	__atomic_store_n(&cqpoll_log_hook_cur, hook, __ATOMIC_RELEASE);
	__atomic_store_n(&debug_asked_ns, 0, __ATOMIC_RELEASE);
	return 0;
}

bool
cqpoll_log_lib_debug(uint64_t now)
{
	uint64_t t = __atomic_load_n(&debug_asked_ns, __ATOMIC_ACQUIRE);
	const struct cqpoll_log_hook *h;
	bool w;

	if (t != 0 && now >= t && now - t < CQPOLL_LOG_RECHECK_NS)
		return __atomic_load_n(&debug_wanted, __ATOMIC_RELAXED);
	h = __atomic_load_n(&cqpoll_log_hook_cur, __ATOMIC_ACQUIRE);
	w = h != NULL && cqpoll_log_wanted(h, CQPOLL_LOG_DEBUG, CQPOLL_LOG_CORE);
	__atomic_store_n(&debug_wanted, w, __ATOMIC_RELAXED);
	__atomic_store_n(&debug_asked_ns, now != 0 ? now : 1, __ATOMIC_RELEASE);
	return w;
}

const struct cqpoll_log_hook *
cqpoll_log_get_hook(void)
{
	return __atomic_load_n(&cqpoll_log_hook_cur, __ATOMIC_ACQUIRE);
}

const char *
cqpoll_log_level_name(enum cqpoll_log_level level)
{
	switch (level) {
	case CQPOLL_LOG_ERR:
		return "err";
	case CQPOLL_LOG_WARNING:
		return "warning";
	case CQPOLL_LOG_NOTICE:
		return "notice";
	case CQPOLL_LOG_INFO:
		return "info";
	case CQPOLL_LOG_DEBUG:
		return "debug";
	}
	return "unknown";
}

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
	char line[CQPOLL_LOG_LINE_MAX];
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	h->write(h->arg, level, component, line);
	/* Callers log just before returning with errno set: keep it. */
	errno = saved;
}
