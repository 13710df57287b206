/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_LOG_H
#define CQPOLL_LOG_H

/**
 * @file
 * Where the library's messages go: a log hook.
 *
 * libcqpoll has no logger of its own and no DPDK dependency. It says why a
 * control-path call failed (at CQPOLL_LOG_ERR) and what a poll group does
 * around its sleeps (mode changes, transitions, wake-ups, at
 * CQPOLL_LOG_DEBUG) through a hook the application installs. Without a hook
 * nothing is formatted and every log point costs one load and a branch.
 * libcqpoll_dpdk installs a hook at start-up that writes to DPDK's log
 * (logtype lib.cqpoll for the core, pmd.cqpoll.DRIVER for a driver), so
 * `--log-level=lib.cqpoll:debug` shows them.
 *
 * The per-poll fast path (cqpoll_poll_burst(), each arm inside
 * cqpoll_poll_and_arm()) logs only in a build configured with
 * `-Ddebug_fastpath=true`.
 *
 * Stable API since 0.5.0 (version node CQPOLL_0.5, doc/guides/abi.md).
 */

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Severity of a message; the numbers are syslog's and rte_log's. */
enum cqpoll_log_level {
	CQPOLL_LOG_ERR = 4,     /**< A call failed: the reason. */
	CQPOLL_LOG_WARNING = 5, /**< Something works, but not as asked. */
	CQPOLL_LOG_NOTICE = 6,  /**< Normal but significant. */
	CQPOLL_LOG_INFO = 7,    /**< Informational. */
	CQPOLL_LOG_DEBUG = 8,   /**< State changes around sleeps. */
};

/** Component name of the core's own messages; drivers use their ops name. */
#define CQPOLL_LOG_CORE "cqpoll"

/** A log hook: where messages go. */
struct cqpoll_log_hook {
	/**
	 * Whether messages of @p level from @p component are wanted: asked
	 * before a message is formatted, so that disabled levels cost no
	 * formatting. Optional (NULL: every message is wanted).
	 */
	bool (*enabled)(void *arg, enum cqpoll_log_level level,
			const char *component);
	/**
	 * Write one message: one line, without the trailing newline. Called
	 * from whichever thread logs, possibly concurrently. Mandatory.
	 */
	void (*write)(void *arg, enum cqpoll_log_level level,
		      const char *component, const char *msg);
	void *arg; /**< Passed to both. */
};

/**
 * Install the log hook, replacing the previous one.
 *
 * @param hook
 *   The hook, or NULL for none (messages are dropped). Not copied: it must
 *   stay valid, unchanged, for as long as the library may use it, i.e.
 *   until the process ends (a static object is the normal case).
 * @return
 *   0, or -EINVAL if @p hook has no write function.
 *
 * Thread safety: safe from any thread; a message being written through the
 * previous hook may still complete after this returns.
 */
int cqpoll_log_set_hook(const struct cqpoll_log_hook *hook);

/**
 * The hook installed, e.g. to chain to it.
 *
 * @return
 *   The hook, or NULL if none.
 *
 * Thread safety: safe from any thread.
 */
const struct cqpoll_log_hook *cqpoll_log_get_hook(void);

/**
 * Name of a level: "err", "warning", "notice", "info" or "debug".
 *
 * @param level
 *   The level.
 * @return
 *   A static string; "unknown" for a value out of range.
 *
 * Thread safety: safe from any thread.
 */
const char *cqpoll_log_level_name(enum cqpoll_log_level level);

#ifdef __cplusplus
}
#endif

#endif /* CQPOLL_LOG_H */
