/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQPOLL_DPDK_PRIVATE_H
#define CQPOLL_DPDK_PRIVATE_H

/* What the files of libcqpoll_dpdk share: errors, log, telemetry registry. */

#include <errno.h>
#include <stdbool.h>

#include <rte_errno.h>
#include <rte_log.h>
#include <rte_telemetry.h>

/*
 * DPDK 23.03 renamed the unsigned telemetry calls (*_u64 -> *_uint) and
 * later LTS releases deprecate the old names, which a -Werror build would
 * refuse: meson checks which this DPDK has.
 */
#ifdef CQPOLL_DPDK_HAVE_TEL_UINT
#define TEL_DICT_UINT rte_tel_data_add_dict_uint
#define TEL_ARRAY_UINT rte_tel_data_add_array_uint
#define TEL_UINT_VAL RTE_TEL_UINT_VAL
#else
#define TEL_DICT_UINT rte_tel_data_add_dict_u64
#define TEL_ARRAY_UINT rte_tel_data_add_array_u64
#define TEL_UINT_VAL RTE_TEL_U64_VAL
#endif

struct cqpoll_dpdk_handoff;

/* The lib.cqpoll logtype (cqpoll_dpdk_log.c). */
extern int cqpoll_dpdk_logtype;

#define CQPOLL_DPDK_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, (uint32_t)cqpoll_dpdk_logtype, \
		"CQPOLL: " fmt "\n", ##__VA_ARGS__)

/*
 * Every failing call of the library says why in rte_errno, as DPDK calls do,
 * and in errno for those documented with it. Returns -err.
 */
static inline int
cqpoll_dpdk_err(int err)
{
	rte_errno = err;
	errno = err;
	return -err;
}

struct cqpoll_monitor_cond;
struct rte_power_monitor_cond;

/* A core monitor condition as DPDK's (address, callback, opaque, size). */
void cqpoll_dpdk_monitor_cond(const struct cqpoll_monitor_cond *c,
			      struct rte_power_monitor_cond *pmc);
/* DPDK's callback of @pmc on @val: -1 the completion is there, else 0. */
int cqpoll_dpdk_monitor_cond_clb(const struct rte_power_monitor_cond *pmc,
				 uint64_t val);

/* Whether the EAL knows @socket_id (after rte_eal_init()). */
bool cqpoll_dpdk_socket_exists(int socket_id);

/* Telemetry registry entries of handoffs, made and removed with them. */
int cqpoll_dpdk_telemetry_add_handoff(const char *name,
				      struct cqpoll_dpdk_handoff *h);
void cqpoll_dpdk_telemetry_remove_handoff(struct cqpoll_dpdk_handoff *h);

/* Handoff description and counters for telemetry: fills @d as a dict. */
void cqpoll_dpdk_handoff_tel_info(const struct cqpoll_dpdk_handoff *h,
				  struct rte_tel_data *d);
void cqpoll_dpdk_handoff_tel_stats(const struct cqpoll_dpdk_handoff *h,
				   struct rte_tel_data *d);

#endif /* CQPOLL_DPDK_PRIVATE_H */
