/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loading the plugins (plugin.h). An installed program finds them in its
 * private directory, TPCQ_PLUGIN_RELDIR from its own (relative, so that a
 * staged install under DESTDIR finds its own); in the build tree they are
 * built beside it. Each is loaded once, when a run first asks for one of its
 * devices, and stays loaded: its CQs live until exit.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plugin.h"
#include "testpmd_cq.h"

struct slot {
	const char *name;
	const char *what;         /* for the reason it is missing */
	bool tried;
	const struct tpcq_plugin *info;
	char why[320];
};

static struct slot slots[] = {
	{ .name = TPCQ_PLUGIN_EMU, .what = "the verification kit (-Demu=install)" },
	{ .name = TPCQ_PLUGIN_OFI, .what = "the libfabric device" },
	{ .name = TPCQ_PLUGIN_UCX, .what = "the UCX device" },
};

#define NB_SLOTS (sizeof(slots) / sizeof(slots[0]))

/* Where the program is: its directory in @p dir. */
static int
exe_dir(char *dir, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", dir, len - 1);
	char *slash;

	if (n <= 0)
		return -errno;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

int
tpcq_plugin_path(const char *file, char *buf, size_t len)
{
	char dir[PATH_MAX];
	int r;

	r = exe_dir(dir, sizeof(dir));
	if (r != 0)
		return r;
	if (TPCQ_PLUGIN_RELDIR[0] == '/')
		r = snprintf(buf, len, "%s/%s", TPCQ_PLUGIN_RELDIR, file);
	else
		r = snprintf(buf, len, "%s/%s/%s", dir, TPCQ_PLUGIN_RELDIR, file);
	if (r < 0 || (size_t)r >= len)
		return -ENAMETOOLONG;
	if (access(buf, F_OK) == 0)
		return 0;
	/* The build tree's. */
	r = snprintf(buf, len, "%s/%s", dir, file);
	if (r < 0 || (size_t)r >= len)
		return -ENAMETOOLONG;
	if (access(buf, F_OK) == 0)
		return 0;
	r = -errno;
	/* Name the installed place in what the caller says. */
	if (TPCQ_PLUGIN_RELDIR[0] == '/')
		snprintf(buf, len, "%s/%s", TPCQ_PLUGIN_RELDIR, file);
	else
		snprintf(buf, len, "%s/%s/%s", dir, TPCQ_PLUGIN_RELDIR, file);
	return r;
}

static void *
open_plugin(struct slot *s)
{
	char file[64], path[PATH_MAX];
	void *h;
	int r;

	snprintf(file, sizeof(file), "tpcq-%s.so", s->name);
	r = tpcq_plugin_path(file, path, sizeof(path));
	if (r != 0) {
		snprintf(s->why, sizeof(s->why), "%s is not installed here "
			 "(%.200s: %s)", s->what, path, strerror(-r));
		return NULL;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	/* There, but its libraries or symbols are not. */
	if (h == NULL)
		snprintf(s->why, sizeof(s->why), "%s cannot be loaded: %s",
			 s->what, dlerror());
	return h;
}

static bool
id_same(const struct tpcq_plugin_id *a, const struct tpcq_plugin_id *b)
{
	return a->abi == b->abi && strcmp(a->version, b->version) == 0 &&
	       a->plugin_size == b->plugin_size && a->dev_size == b->dev_size &&
	       a->devctx_size == b->devctx_size &&
	       a->params_size == b->params_size;
}

static const struct tpcq_plugin *
load(struct slot *s)
{
	static const struct tpcq_plugin_id id = TPCQ_PLUGIN_ID;
	const struct tpcq_plugin *(*info)(void);
	const struct tpcq_plugin *pl;
	void *h;

	h = open_plugin(s);
	if (h == NULL)
		return NULL;
	*(void **)&info = dlsym(h, TPCQ_PLUGIN_SYMBOL);
	pl = info != NULL ? info() : NULL;
	if (pl == NULL || !id_same(&pl->id, &id)) {
		snprintf(s->why, sizeof(s->why), "%s is of another build "
			 "(%s, ABI %u; this program %s, ABI %u)", s->what,
			 pl != NULL ? pl->id.version : "no " TPCQ_PLUGIN_SYMBOL,
			 pl != NULL ? pl->id.abi : 0, id.version, id.abi);
		dlclose(h);
		return NULL;
	}
	return pl;
}

const struct tpcq_plugin *
tpcq_plugin_load(const char *name, char *why, size_t len)
{
	unsigned int i;

	for (i = 0; i < NB_SLOTS && strcmp(slots[i].name, name) != 0; i++)
		;
	if (i == NB_SLOTS) {
		snprintf(why, len, "no plugin '%s'", name);
		return NULL;
	}
	if (!slots[i].tried) {
		slots[i].info = load(&slots[i]);
		slots[i].tried = true;
	}
	if (slots[i].info == NULL)
		snprintf(why, len, "%s", slots[i].why);
	return slots[i].info;
}

/* Read only: the kit is loaded, if at all, while the options are checked. */
int
tpcq_kit_arm_naive(struct cqpoll_cq *cq)
{
	const struct tpcq_plugin *kit = slots[0].info;

	return kit != NULL ? kit->arm_naive(cq) : -ENOTSUP;
}

int
tpcq_kit_stranded(struct cqpoll_cq *cq)
{
	const struct tpcq_plugin *kit = slots[0].info;

	return kit != NULL ? kit->stranded(cq) : -ENOTSUP;
}
