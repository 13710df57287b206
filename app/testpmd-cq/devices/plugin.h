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

#include <cqpoll_config.h>

#include "dev.h"
#include "params.h"

/* Bumped whenever what the structures below mean changes. */
#define TPCQ_PLUGIN_ABI 1

/*
 * What a plugin is built against: its release and the sizes of what the
 * program and it share, so that a plugin of another build is refused (the
 * commit is not part of it: rebuilding the program alone keeps its plugins).
 */
struct tpcq_plugin_id {
	uint32_t abi;             /* TPCQ_PLUGIN_ABI */
	const char *version;      /* CQPOLL_VERSION */
	uint32_t plugin_size, dev_size, devctx_size, params_size;
};

#define TPCQ_PLUGIN_ID { .abi = TPCQ_PLUGIN_ABI, .version = CQPOLL_VERSION, \
	.plugin_size = sizeof(struct tpcq_plugin), \
	.dev_size = sizeof(struct tpcq_dev), \
	.devctx_size = sizeof(struct tpcq_devctx), \
	.params_size = sizeof(struct tpcq_params) }

/* What a plugin hands the program. */
struct tpcq_plugin {
	struct tpcq_plugin_id id; /* TPCQ_PLUGIN_ID */
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
