/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --sweep's options: read as they come (tpcq_sweep_option()), checked
 * together once all are known (tpcq_sweep_check()), and made into the
 * plan of points the parent runs (sweep.c).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include <cqpoll_group.h>

#include "dev.h"
#include "params.h"
#include "sweep.h"
#include "testpmd_cq.h"

static int __rte_format_printf(3, 4)
why_set(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Options are checked together, once all are known: tpcq_sweep_check(). */
void
tpcq_sweep_option(const char *name, const char *arg, struct tpcq_sweep_opts *o)
{
	if (strcmp(name, "sweep") == 0)
		o->on = true;
	else if (strcmp(name, "sweep-point") == 0)
		o->point = true;
	else if (strcmp(name, "sweep-loads") == 0)
		o->loads = arg;
	else if (strcmp(name, "sweep-policies") == 0)
		o->policies = arg;
	else if (strcmp(name, "sweep-devs") == 0)
		o->devs = arg;
	else if (strcmp(name, "sweep-duration") == 0)
		o->duration = arg;
	else if (strcmp(name, "plot") == 0)
		o->plot_dir = arg;
}

void
tpcq_sweep_usage(FILE *f)
{
	fprintf(f,
"\n"
"Sweep (one JSON file and one table for many runs):\n"
"  --sweep                    run every load x policy (x device) as its own\n"
"                             run of this program, with the other options\n"
"                             given (EAL ones too), and merge the reports into\n"
"                             --json=FILE (required). Exit status %d if a point\n"
"                             failed or lost a wake-up.\n"
"  --sweep-loads=N,...        completions/s (default %s)\n"
"  --sweep-policies=P,...     poll, interrupt (the modes), or a policy of\n"
"                             the adaptive mode, as --policy takes it\n"
"                             (default %s); an item k=v\n"
"                             continues the policy before it\n"
"  --sweep-duration=SECONDS   each point's duration (default %.1f)\n"
"  --sweep-devs=DEV,...       devices to sweep, instead of --dev\n"
"  --plot=DIR                 after the sweep, draw its PNGs into DIR (without\n"
"                             it, the plot command is printed)\n"
"The sweep sets --mode, --policy, --rate and --duration of each point: do not\n"
"give them with --sweep.\n",
		TPCQ_EXIT_FAIL, TPCQ_SWEEP_LOADS_DEFAULT,
		TPCQ_SWEEP_POLICIES_DEFAULT, TPCQ_SWEEP_DURATION_DEFAULT_S);
}

/*
 * Splits list at commas into items of at most TPCQ_SWEEP_SPEC_MAX - 1 bytes.
 * With policies set, an item of the form key=value continues the previous
 * one: "adaptive:mult=2,wake_us=5,poll" is two policies.
 */
static int
list_split(const char *opt, const char *list, bool policies,
	   char (*items)[TPCQ_SWEEP_SPEC_MAX], unsigned int max,
	   unsigned int *n, char *why, size_t len)
{
	const char *s = list, *end;
	size_t l, used;

	*n = 0;
	for (;;) {
		end = strchr(s, ',');
		l = end != NULL ? (size_t)(end - s) : strlen(s);
		if (l == 0)
			return why_set(why, len, "--%s: empty item in '%s'", opt,
				       list);
		if (policies && *n > 0 && memchr(s, '=', l) != NULL &&
		    memchr(s, ':', l) == NULL) {
			used = strlen(items[*n - 1]);
			if (used + 1 + l >= TPCQ_SWEEP_SPEC_MAX)
				return why_set(why, len, "--%s: '%s' is too long",
					       opt, items[*n - 1]);
			items[*n - 1][used] = ',';
			memcpy(items[*n - 1] + used + 1, s, l);
			items[*n - 1][used + 1 + l] = '\0';
		} else {
			if (*n == max)
				return why_set(why, len, "--%s: more than %u items",
					       opt, max);
			if (l >= TPCQ_SWEEP_SPEC_MAX)
				return why_set(why, len, "--%s: '%.*s' is too long",
					       opt, (int)l, s);
			memcpy(items[*n], s, l);
			items[*n][l] = '\0';
			(*n)++;
		}
		if (end == NULL)
			return 0;
		s = end + 1;
	}
}

static int
loads_parse(const char *list, struct tpcq_sweep_plan *plan, char *why,
	    size_t len)
{
	char items[TPCQ_SWEEP_LOADS_MAX][TPCQ_SWEEP_SPEC_MAX];
	unsigned long long x;
	unsigned int i;
	char *end;
	int r;

	r = list_split("sweep-loads", list, false, items, TPCQ_SWEEP_LOADS_MAX,
		       &plan->nloads, why, len);
	if (r != 0)
		return r;
	for (i = 0; i < plan->nloads; i++) {
		errno = 0;
		x = strtoull(items[i], &end, 10);
		if (items[i][0] < '0' || items[i][0] > '9' || *end != '\0' ||
		    errno == ERANGE || x < 1 || x > TPCQ_RATE_MAX)
			return why_set(why, len, "--sweep-loads: '%s' is not a "
				       "rate in 1..%llu completions/s", items[i],
				       (unsigned long long)TPCQ_RATE_MAX);
		plan->loads[i] = x;
	}
	return 0;
}

/* poll and interrupt are modes; anything else is the adaptive mode's policy. */
bool
tpcq_sweep_policy_is_mode(const char *spec)
{
	return strcmp(spec, "poll") == 0 || strcmp(spec, "interrupt") == 0;
}

static int
policies_parse(const char *list, struct tpcq_sweep_plan *plan, char *why,
	       size_t len)
{
	const char *args;
	unsigned int i;
	int r;

	r = list_split("sweep-policies", list, true, plan->policies,
		       TPCQ_SWEEP_POLICIES_MAX, &plan->npolicies, why, len);
	if (r != 0)
		return r;
	for (i = 0; i < plan->npolicies; i++)
		if (!tpcq_sweep_policy_is_mode(plan->policies[i]) &&
		    cqpoll_policy_find(plan->policies[i], &args) == NULL)
			return why_set(why, len, "--sweep-policies: unknown "
				       "policy '%s' (poll, interrupt, or a policy "
				       "that --policy takes, see --help)",
				       plan->policies[i]);
	return 0;
}

static int
devs_parse(const struct tpcq_params *p, struct tpcq_sweep_plan *plan,
	   char *why, size_t len)
{
	struct tpcq_params scratch;
	unsigned int i;
	int r;

	if (p->sweep.devs == NULL) {
		plan->ndevs = 1;
		snprintf(plan->devs[0], sizeof(plan->devs[0]), "%s", p->dev_name);
		return 0;
	}
	r = list_split("sweep-devs", p->sweep.devs, false, plan->devs,
		       TPCQ_SWEEP_DEVS_MAX, &plan->ndevs, why, len);
	if (r != 0)
		return r;
	for (i = 0; i < plan->ndevs; i++) {
		scratch = *p;
		r = tpcq_dev_select(plan->devs[i], &scratch);
		if (r == -ENOPKG)
			return why_set(why, len, "--sweep-devs: %s: %s",
				       plan->devs[i], tpcq_dev_missing());
		if (r != 0)
			return why_set(why, len, "--sweep-devs: unknown device "
				       "'%s' (available: %s)", plan->devs[i],
				       tpcq_dev_names());
	}
	return 0;
}

static int
duration_parse(const char *s, double *v, char *why, size_t len)
{
	char *end;

	if (s == NULL) {
		*v = TPCQ_SWEEP_DURATION_DEFAULT_S;
		return 0;
	}
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(*v) ||
	    !(*v > 0.0) || *v > TPCQ_SWEEP_DURATION_MAX_S)
		return why_set(why, len, "--sweep-duration: '%s' is not a number "
			       "of seconds in (0, %.0f]", s,
			       TPCQ_SWEEP_DURATION_MAX_S);
	return 0;
}

int
tpcq_sweep_plan_make(const struct tpcq_params *p, struct tpcq_sweep_plan *plan,
		     char *why, size_t len)
{
	const struct tpcq_sweep_opts *o = &p->sweep;
	int r;

	memset(plan, 0, sizeof(*plan));
	r = loads_parse(o->loads != NULL ? o->loads : TPCQ_SWEEP_LOADS_DEFAULT,
			plan, why, len);
	if (r == 0)
		r = policies_parse(o->policies != NULL ? o->policies :
				   TPCQ_SWEEP_POLICIES_DEFAULT, plan, why, len);
	if (r == 0)
		r = devs_parse(p, plan, why, len);
	if (r == 0)
		r = duration_parse(o->duration, &plan->duration_s, why, len);
	return r;
}

int
tpcq_sweep_check(struct tpcq_params *p, char *why, size_t len)
{
	struct tpcq_sweep_opts *o = &p->sweep;
	struct tpcq_sweep_plan plan;

	if (!o->on) {
		if (o->loads != NULL || o->policies != NULL || o->devs != NULL ||
		    o->duration != NULL || o->plot_dir != NULL)
			return why_set(why, len, "--sweep-loads, --sweep-policies, "
				       "--sweep-devs, --sweep-duration and --plot "
				       "go with --sweep");
		return 0;
	}
	if (o->point) {
		o->on = false;
		return 0;
	}
	if (p->interactive)
		return why_set(why, len, "-i: a sweep runs its points unattended; "
			       "give either --sweep or -i");
	if (o->fixed_opt != NULL)
		return why_set(why, len, "--%s: the sweep sets it for each point; "
			       "use --sweep-loads, --sweep-policies and "
			       "--sweep-duration", o->fixed_opt);
	if (p->json_path == NULL)
		return why_set(why, len, "--sweep: give --json=FILE, the file "
			       "that collects every point (the plot reads it)");
	if (o->plot_dir != NULL && *o->plot_dir == '\0')
		return why_set(why, len, "--plot: empty directory name");
	if (o->devs != NULL && p->dev != NULL)
		return why_set(why, len, "--dev and --sweep-devs: give the "
			       "sweep's devices in --sweep-devs only");
	return tpcq_sweep_plan_make(p, &plan, why, len);
}

