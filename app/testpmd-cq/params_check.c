/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rules of every run, checked on the command line and again by the
 * prompt before each start: the policy and what the poll group allows.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cqpoll_group.h>

#include "dev.h"
#include "params.h"
#include "testpmd_cq.h"

/*
 * The policy spec is written to the JSON report as it is: plain characters
 * only, so that it needs no escaping there.
 */
static bool
policy_spec_plain(const char *s)
{
	for (; *s != '\0'; s++)
		if (strchr("abcdefghijklmnopqrstuvwxyz"
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:=+-", *s) == NULL)
			return false;
	return true;
}

/*
 * Make spec, which must outlive p, p's policy. The parameters are checked
 * now, not after the EAL started (or at the prompt's next start). Returns 0,
 * or -EINVAL with why filled.
 */
int
tpcq_params_policy(struct tpcq_params *p, const char *spec, char *why,
		   size_t len)
{
	const struct cqpoll_policy_ops *ops;
	struct cqpoll_group_conf conf;
	struct cqpoll_group *g;
	const char *args;

	ops = cqpoll_policy_find(spec, &args);
	if (ops == NULL || !policy_spec_plain(spec)) {
		snprintf(why, len, "--policy: unknown policy '%s' (spin[:US], "
			 "adaptive[:key=value,...], hybrid[:key=value,...], "
			 "target-p99:US or latency-target[:key=value,...])", spec);
		return -EINVAL;
	}
	memset(&conf, 0, sizeof(conf));
	conf.mode = CQPOLL_GROUP_MODE_ADAPTIVE;
	conf.policy = ops;
	conf.policy_args = args;
	errno = 0;
	g = cqpoll_group_create(&conf);
	if (g == NULL && errno == EINVAL) {
		snprintf(why, len, "--policy: bad parameters in '%s'", spec);
		return -EINVAL;
	}
	cqpoll_group_destroy(g);
	p->policy = spec;
	p->policy_ops = ops;
	p->policy_args = args;
	return 0;
}

/*
 * What the poll group (adaptive mode, or more than one CQ) does not do: the
 * rules of every run, from the options or from the prompt. Returns 0, or
 * -EINVAL with why filled.
 */
int
tpcq_params_check_run(struct tpcq_params *p, char *why, size_t len)
{
	int r;

	if (p->mode == TPCQ_MODE_ADAPTIVE) {
		r = tpcq_params_policy(p, p->policy != NULL ? p->policy :
				       TPCQ_POLICY_DEFAULT, why, len);
		if (r != 0)
			return r;
	}
	if (p->transition == TPCQ_TRANSITION_NAIVE &&
	    (p->cqs > 1 || p->mode == TPCQ_MODE_ADAPTIVE)) {
		snprintf(why, len, "--transition=naive: the negative control runs "
			 "on one CQ in interrupt mode only (--cqs=1 "
			 "--mode=interrupt); the poll group always uses its "
			 "poll-and-arm transition");
		return -EINVAL;
	}
	if (p->transition == TPCQ_TRANSITION_L3FWD_POWER &&
	    (p->dev != &tpcq_dev_ethdev || p->cqs > 1 || p->pollers > 1 ||
	     p->mode != TPCQ_MODE_INTERRUPT)) {
		snprintf(why, len, "--transition=l3fwd-power: DPDK's l3fwd-power "
			 "sleeps on Rx interrupts: one ethdev Rx queue in interrupt "
			 "mode only (--dev=ethdev:PMD --mode=interrupt --cqs=1)");
		return -EINVAL;
	}
	if ((p->cqs > 1 || p->mode == TPCQ_MODE_ADAPTIVE) &&
	    p->burst > TPCQ_GROUP_BURST_MAX) {
		snprintf(why, len, "--burst=%u: the poll group (--cqs > 1 or "
			 "--mode=adaptive) reads at most %d per poll",
			 p->burst, TPCQ_GROUP_BURST_MAX);
		return -EINVAL;
	}
	return 0;
}

