/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_SW_EMU_PRIVATE_H
#define CQPOLL_SW_EMU_PRIVATE_H

/*
 * Fault points of the emulated software device. drivers/sw/sw_private.h
 * includes this header when libcqpoll_emu builds the sw sources with
 * CQPOLL_SW_EMU; the build of libcqpoll has empty fault points instead.
 * The copy built here takes the emulator's names, so that it never collides
 * with libcqpoll's sw driver.
 */

#include <stdint.h>

#include "cqpoll_log_private.h"
#include "cqpoll_sw_emu.h"
#include "emu_util.h"

/*
 * libcqpoll's log state is private to it: this copy logs through the hook
 * libcqpoll has (cqpoll_log_get_hook()), so messages reach the same place.
 */
#undef CQPOLL_LOG
#define CQPOLL_LOG(level, component, ...) do { \
	const struct cqpoll_log_hook *cqpoll_log_h_ = cqpoll_log_get_hook(); \
	if (cqpoll_log_h_ != NULL && \
	    cqpoll_log_wanted(cqpoll_log_h_, CQPOLL_LOG_##level, (component))) \
		cqpoll_log_emit(cqpoll_log_h_, CQPOLL_LOG_##level, \
				(component), __VA_ARGS__); \
} while (0)

#define cqpoll_sw_conf cqpoll_sw_emu_conf
#define cqpoll_sw_cq_create cqpoll_sw_emu_cq_create
#define cqpoll_sw_post cqpoll_sw_emu_post
#define cqpoll_sw_ops cqpoll_sw_emu_ops
#define cqpoll_sw_poll cqpoll_sw_emu_poll
#define cqpoll_sw_arm cqpoll_sw_emu_arm
#define cqpoll_sw_event_fd cqpoll_sw_emu_event_fd
#define cqpoll_sw_event_get cqpoll_sw_emu_event_get
#define cqpoll_sw_raise cqpoll_sw_emu_raise
#define cqpoll_sw_deliver cqpoll_sw_emu_deliver

struct cqpoll_sw_cq;
struct cqpoll_sw_emu_conf;

struct cqpoll_sw_emu_state {
	/* Set at creation, read-only afterwards. */
	struct cqpoll_sw_faults faults;
	int tfd;   /* timerfd: delayed events, -1 without event_delay_us */
	int epfd;  /* epoll over the eventfd and tfd, -1 without event_delay_us */
	/* Consumer thread only. */
	uint64_t consumer_rng;
	void (*hook[CQPOLL_SW_HOOK_COUNT])(void *arg);
	void *hook_arg[CQPOLL_SW_HOOK_COUNT];
	/* Device thread only. */
	uint64_t device_rng;
	/* Shared. */
	uint32_t posted;    /* entries whose post finished (the oracle's frontier) */
	/* 1 from arming the delay timer until the consumer takes its expiry. */
	uint32_t timer_due;
	/* 0, or the -errno of an injected failure (cqpoll_sw_emu_fail()). */
	int error;
};

#define SW_EMU_STATE struct cqpoll_sw_emu_state emu;

int sw_emu_init(struct cqpoll_sw_cq *q, const struct cqpoll_sw_emu_conf *c);
void sw_emu_fini(struct cqpoll_sw_cq *q);
void sw_emu_arm_begin(struct cqpoll_sw_cq *q);
void sw_emu_arm_end(struct cqpoll_sw_cq *q);
int sw_emu_keeps_armed(struct cqpoll_sw_cq *q);
void sw_emu_post_begin(struct cqpoll_sw_cq *q);
void sw_emu_post_visible(struct cqpoll_sw_cq *q);
int sw_emu_post_end(struct cqpoll_sw_cq *q, int claimed, int r, uint32_t pi);
uint64_t sw_emu_raise_count(struct cqpoll_sw_cq *q, int consumer);
int sw_emu_deliver(struct cqpoll_sw_cq *q, uint64_t n);
int sw_emu_event_fd(struct cqpoll_sw_cq *q);
int sw_emu_event_get(struct cqpoll_sw_cq *q, uint64_t *n);
/* 0, or the injected failure's -errno: polls read it once drained. */
int sw_emu_error(struct cqpoll_sw_cq *q);
/* The oracle: 1 if a completion is stranded, else 0. */
int sw_emu_stranded(struct cqpoll_sw_cq *q);

#endif /* CQPOLL_SW_EMU_PRIVATE_H */
