/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device table: which devices this build can drive, which arm semantics
 * and faults each one has, and the choice of the default device. A device
 * plays its own part (dev_emu.c, loopback.c); this file only chooses and checks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dev.h"
#include "params.h"
#include "plugin.h"
#include "testpmd_cq.h"

/*
 * Every device, in --help's order. A device of a plugin (plugin.h) is
 * described by its plugin once loaded; here it has its name and what follows
 * ':' only. sw is both: the kit's emulated software device (faults, the
 * oracle) when the kit is there, else the sw driver alone.
 */
struct dev_entry {
	const struct tpcq_dev *dev; /* built in; NULL: the plugin's only */
	const char *name;
	const char *plugin;         /* NULL: built in only */
	const char *arg;            /* the plugin's device: what follows ':' */
};

static const struct dev_entry devs[] = {
	{ &tpcq_dev_sw, "sw", TPCQ_PLUGIN_EMU, NULL },
#ifdef TPCQ_HAVE_MLX5
	{ NULL, "mlx5-emu", TPCQ_PLUGIN_EMU, NULL },
#endif
#ifdef TPCQ_HAVE_VERBS
	{ NULL, "verbs-emu", TPCQ_PLUGIN_EMU, NULL },
#endif
#if defined(TPCQ_HAVE_MLX5) && defined(TPCQ_HAVE_VERBS)
	{ &tpcq_dev_mlx5_hw, "mlx5", NULL, NULL },
#endif
#ifdef TPCQ_HAVE_VERBS
	{ &tpcq_dev_verbs_hw, "verbs", NULL, NULL },
#endif
#ifdef TPCQ_HAVE_URING
	{ &tpcq_dev_uring, "uring", NULL, NULL },
#endif
#ifdef TPCQ_HAVE_OFI
	{ NULL, "ofi", TPCQ_PLUGIN_OFI, "PROVIDER" },
#endif
#ifdef TPCQ_HAVE_UCX
	{ NULL, "ucx", TPCQ_PLUGIN_UCX, "TRANSPORT" },
#endif
	{ &tpcq_dev_ethdev, "ethdev", NULL, NULL },
};

#define NB_DEVS (sizeof(devs) / sizeof(devs[0]))

/* Why the last tpcq_dev_select() returned -ENOPKG. */
static char missing[320];

/* Option of each TPCQ_FAULT_* bit, in bit order. */
static const char *const fault_opts[] = {
	"--fault-arm-delay",
	"--fault-visibility-delay",
	"--fault-pct",
	"--fault-event-delay",
	"--fault-spurious",
	"--fault-duplicate",
	"--fault-missed-keeps-armed",
	"--seed",
};

/* "name" or "name:ARG" of an entry. */
static void
entry_name(const struct dev_entry *e, char *buf, size_t len)
{
	const char *arg = e->arg;

	if (e->dev != NULL && e->dev->takes_ibdev)
		arg = e->dev->arg_name != NULL ? e->dev->arg_name : "IBDEV";
	snprintf(buf, len, "%s%s%s", e->name, arg != NULL ? ":" : "",
		 arg != NULL ? arg : "");
}

const char *
tpcq_dev_names(void)
{
	static char names[192];
	char name[32];
	size_t i, n = 0;

	if (names[0] != '\0')
		return names;
	for (i = 0; i < NB_DEVS && n < sizeof(names); i++) {
		entry_name(&devs[i], name, sizeof(name));
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
				      i ? ", " : "", name);
	}
	return names;
}

const char *
tpcq_dev_missing(void)
{
	return missing;
}

/*
 * The device of entry @p e: its plugin's when that loads, else the built-in
 * one; NULL (why in @p why) if neither.
 */
static const struct tpcq_dev *
entry_dev(const struct dev_entry *e, char *why, size_t len)
{
	const struct tpcq_plugin *pl;
	unsigned int i;

	if (e->plugin == NULL)
		return e->dev;
	pl = tpcq_plugin_load(e->plugin, why, len);
	for (i = 0; pl != NULL && i < pl->nb_devs; i++)
		if (strcmp(pl->devs[i]->name, e->name) == 0)
			return pl->devs[i];
	if (pl != NULL)
		snprintf(why, len, "the %s plugin has no %s device", e->plugin,
			 e->name);
	return e->dev;
}

/* "level|edge" with the default first. */
static void
arms_describe(const struct tpcq_dev *d, char *buf, size_t len)
{
	enum cqpoll_arm_semantics a;
	size_t n;

	n = (size_t)snprintf(buf, len, "%s",
			     cqpoll_arm_semantics_name(d->default_arm));
	for (a = CQPOLL_ARM_LEVEL; a <= CQPOLL_ARM_REPORT_MISSED && n < len; a++)
		if ((d->arms & (1u << a)) && a != d->default_arm)
			n += (size_t)snprintf(buf + n, len - n, "|%s",
					      cqpoll_arm_semantics_name(a));
}

static void
faults_list(uint32_t faults, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(fault_opts) / sizeof(fault_opts[0]) && n < len; i++)
		if (faults & (1u << i))
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      n ? " " : "", fault_opts[i]);
	if (n == 0)
		snprintf(buf, len, "none");
}

/* Help text, indented to the option column and wrapped to 80 columns. */
#define HELP_INDENT 29
#define HELP_WIDTH 79

void
tpcq_usage_wrap(FILE *f, const char *text)
{
	const char *w = text, *end;
	int col = HELP_INDENT;
	size_t len;

	fprintf(f, "%*s", HELP_INDENT, "");
	while (*w != '\0') {
		end = strchr(w, ' ');
		len = end != NULL ? (size_t)(end - w) : strlen(w);
		if (col > HELP_INDENT && col + 1 + (int)len > HELP_WIDTH) {
			fprintf(f, "\n%*s", HELP_INDENT, "");
			col = HELP_INDENT;
		}
		fprintf(f, "%s%.*s", col > HELP_INDENT ? " " : "", (int)len, w);
		col += (col > HELP_INDENT ? 1 : 0) + (int)len;
		w += len;
		while (*w == ' ')
			w++;
	}
	fprintf(f, "\n");
}

void
tpcq_dev_usage(FILE *f)
{
	char arms[64], name[32], faults[256], line[512], why[320];
	size_t i;

	for (i = 0; i < NB_DEVS; i++) {
		const struct tpcq_dev *d = entry_dev(&devs[i], why, sizeof(why));

		entry_name(&devs[i], name, sizeof(name));
		if (d == NULL) {
			fprintf(f, "    %-*s%s\n", HELP_INDENT - 4, name,
				"not available:");
			tpcq_usage_wrap(f, why);
			continue;
		}
		arms_describe(d, arms, sizeof(arms));
		faults_list(d->faults, faults, sizeof(faults));
		fprintf(f, "    %-*s%s\n", HELP_INDENT - 4, name, d->help);
		snprintf(line, sizeof(line), "--arm=%s (default %s): %s", arms,
			 cqpoll_arm_semantics_name(d->default_arm), d->arm_help);
		tpcq_usage_wrap(f, line);
		snprintf(line, sizeof(line), "faults: %s", faults);
		tpcq_usage_wrap(f, line);
	}
}

int
tpcq_dev_select(const char *name, struct tpcq_params *p)
{
	const char *colon = strchr(name, ':');
	size_t len = colon != NULL ? (size_t)(colon - name) : strlen(name);
	size_t i;

	if (strlen(name) >= sizeof(p->dev_name))
		return -ENAMETOOLONG;
	for (i = 0; i < NB_DEVS; i++) {
		const struct dev_entry *e = &devs[i];
		const struct tpcq_dev *d;

		if (strlen(e->name) != len || strncmp(e->name, name, len) != 0)
			continue;
		d = entry_dev(e, missing, sizeof(missing));
		if (d == NULL)
			return -ENOPKG;
		/* A real device needs its name; an emulator takes none. */
		if (d->takes_ibdev != (colon != NULL) ||
		    (colon != NULL && colon[1] == '\0'))
			return -EINVAL;
		p->dev = d;
		snprintf(p->dev_name, sizeof(p->dev_name), "%s", name);
		p->ibdev = colon != NULL ? p->dev_name + len + 1 : NULL;
		p->dev_why = NULL;
		return 0;
	}
	return -ENOENT;
}

/*
 * The device a user with hardware wants to measure is the hardware; without
 * it, the emulated mlx5 device runs the same driver code.
 */
void
tpcq_dev_default(struct tpcq_params *p)
{
#if defined(TPCQ_HAVE_MLX5) && defined(TPCQ_HAVE_VERBS)
	static char why[640];
	char ibdev[TPCQ_DEV_NAME_MAX], name[TPCQ_DEV_NAME_MAX + 8];
	char reason[128];

	if (tpcq_loopback_first_mlx5(ibdev, sizeof(ibdev), reason,
				     sizeof(reason)) == 0) {
		snprintf(name, sizeof(name), "mlx5:%s", ibdev);
		if (tpcq_dev_select(name, p) == 0) {
			p->dev_why = "default; the first mlx5 device";
			return;
		}
	}
	if (tpcq_dev_select("mlx5-emu", p) == 0) {
		snprintf(why, sizeof(why), "default; no mlx5 device: %s", reason);
	} else {
		tpcq_dev_select("sw", p);
		snprintf(why, sizeof(why), "default; no mlx5 device (%s) and "
			 "no mlx5-emu: %s", reason, missing);
	}
	p->dev_why = why;
#else
	tpcq_dev_select("sw", p);
	p->dev_why = "default; this build has no mlx5 driver";
#endif
}

/* Options are checked once all are read: --arm may come before --dev. */
int
tpcq_dev_check(struct tpcq_params *p, bool arm_given, char *why, size_t len)
{
	const struct tpcq_dev *d = p->dev;
	char arms[64], bad[256], faults[256];
	uint32_t bad_faults;

	if (!arm_given)
		p->arm = d->default_arm;
	if (!(d->arms & (1u << p->arm))) {
		arms_describe(d, arms, sizeof(arms));
		snprintf(why, len, "--arm=%s: the %s device supports --arm=%s only (%s)",
			 cqpoll_arm_semantics_name(p->arm), d->name, arms,
			 d->arm_help);
		return -EINVAL;
	}
	bad_faults = p->faults_given & ~d->faults;
	/* The built-in sw device stands in for the kit's, without its faults. */
	if (bad_faults != 0 && d == &tpcq_dev_sw) {
		faults_list(bad_faults, bad, sizeof(bad));
		tpcq_plugin_load(TPCQ_PLUGIN_EMU, faults, sizeof(faults));
		snprintf(why, len, "%s: the sw device's faults come with the "
			 "verification kit: %s", bad, faults);
		return -EINVAL;
	}
	if (bad_faults != 0) {
		faults_list(bad_faults, bad, sizeof(bad));
		faults_list(d->faults, faults, sizeof(faults));
		snprintf(why, len, "%s: the %s device cannot inject this fault "
			 "(its faults: %s)", bad, d->name, faults);
		return -EINVAL;
	}
	if (p->transition == TPCQ_TRANSITION_NAIVE &&
	    tpcq_plugin_load(TPCQ_PLUGIN_EMU, faults, sizeof(faults)) == NULL) {
		snprintf(why, len, "--transition=naive: the naive arm comes with "
			 "the verification kit: %s", faults);
		return -EINVAL;
	}
	return 0;
}

int
tpcq_dev_open(struct tpcq_devctx *dc, const struct tpcq_params *p)
{
	memset(dc, 0, sizeof(*dc));
	return p->dev->open(dc, p);
}

void
tpcq_dev_close(const struct tpcq_params *p, struct tpcq_devctx *dc)
{
	if (dc->cq != NULL)
		p->dev->close(dc);
	memset(dc, 0, sizeof(*dc));
}
