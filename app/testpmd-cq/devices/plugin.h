/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_PLUGIN_H
#define TPCQ_PLUGIN_H

/*
 * Devices loaded only when a run asks for them (plugin.c): the verification
 * kit's emulated devices, which an installed testpmd-cq holds only with the
 * kit, and the stacks whose libraries cost every start (libfabric, UCX).
 * Each plugin is a shared module of the same build exporting
 * tpcq_plugin_info(); the program checks its ABI and version before using it.
 */

#include "dev.h"

/* Bumped whenever struct tpcq_plugin, tpcq_dev or tpcq_params change. */
#define TPCQ_PLUGIN_ABI 1

/* What a plugin hands the program. */
struct tpcq_plugin {
	uint32_t abi;             /* TPCQ_PLUGIN_ABI of its build */
	const char *version;      /* TPCQ_VERSION of its build */
	const struct tpcq_dev *const *devs;
	unsigned int nb_devs;
	/* ofi: the device with its peer in a child process (--peer=process). */
	const struct tpcq_dev *peer_process;
	/* The kit: the naive arm and the oracle's question; NULL elsewhere. */
	int (*arm_naive)(struct cqpoll_cq *cq);
	int (*stranded)(struct cqpoll_cq *cq);
};

/* The one symbol a plugin exports. */
#define TPCQ_PLUGIN_SYMBOL "tpcq_plugin_info"
const struct tpcq_plugin *tpcq_plugin_info(void);

#define TPCQ_PLUGIN_EXPORT __attribute__((visibility("default")))

/* The plugins: the kit's emulated devices, libfabric, UCX. */
#define TPCQ_PLUGIN_EMU "emu"
#define TPCQ_PLUGIN_OFI "ofi"
#define TPCQ_PLUGIN_UCX "ucx"

/*
 * Load plugin @p name (once; later calls return the same answer).
 * NULL with the reason in @p why: not installed, or from another build.
 */
const struct tpcq_plugin *tpcq_plugin_load(const char *name, char *why,
					   size_t len);

/*
 * The path of @p file in the plugins' directory (tpcq-plot.py is there too),
 * or beside the program in the build tree. 0, or -errno with the installed
 * path in @p buf.
 */
int tpcq_plugin_path(const char *file, char *buf, size_t len);

/*
 * The kit's naive arm (-ENOTSUP without the kit) and its oracle's answer
 * (-ENOTSUP without the kit, as for a CQ of no emulated device).
 */
int tpcq_kit_arm_naive(struct cqpoll_cq *cq);
int tpcq_kit_stranded(struct cqpoll_cq *cq);

#endif /* TPCQ_PLUGIN_H */
