/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_SW_EMU_PRIVATE_H
#define CQPOLL_SW_EMU_PRIVATE_H

/*
 * The emulated software device: libcqpoll's sw driver with the kit's fault
 * table set on it (struct cqpoll_sw_dev_ops, drivers/sw/sw_private.h).
 * The driver is built once, in libcqpoll; this is the state behind the
 * table's points.
 */

#include <stdint.h>

#include "cqpoll_sw_emu.h"
#include "emu_util.h"
#include "sw_private.h"

struct cqpoll_sw_emu_state {
	/* Set at creation, read-only afterwards. */
	struct cqpoll_sw_cq *q;
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

/* The kit's state of @p cq, or NULL if it is not an emulated sw CQ. */
struct cqpoll_sw_emu_state *sw_emu_of(const struct cqpoll_cq *cq);
/* The oracle: 1 if a completion of @p cq is stranded, 0, or -EINVAL. */
int sw_emu_stranded(const struct cqpoll_cq *cq);

#endif /* CQPOLL_SW_EMU_PRIVATE_H */
