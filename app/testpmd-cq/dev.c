/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices the generator lcore can drive. Only a device whose completions can be
 * posted from software fits: the generator must play the device side.
 */
#include <stddef.h>
#include <string.h>

#include "testpmd_cq.h"

static struct cqpoll_cq *
sw_open(const struct tpcq_params *p)
{
	struct cqpoll_sw_conf conf;

	memset(&conf, 0, sizeof(conf));
	conf.size = p->size;
	conf.arm = p->arm;
	conf.faults = p->faults;
	return cqpoll_sw_cq_create(&conf);
}

static const struct tpcq_dev devs[] = {
	{ .name = "sw", .open = sw_open, .post = cqpoll_sw_post },
};

const struct tpcq_dev *
tpcq_dev_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		if (strcmp(devs[i].name, name) == 0)
			return &devs[i];
	return NULL;
}

const char *
tpcq_dev_names(void)
{
	return "sw";
}
