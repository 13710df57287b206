/* SPDX-License-Identifier: BSD-3-Clause */
/* The option values testpmd-cq and cqpoll-lab share, read the same way. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "opt_parse.h"

int
tpcq_opt_vbad(const struct tpcq_opt_prog *p, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", p->prog);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry '%s%s'.\n", p->prog, p->help);
	return -EINVAL;
}

static int __attribute__((format(printf, 2, 3)))
bad(const struct tpcq_opt_prog *p, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tpcq_opt_vbad(p, fmt, ap);
	va_end(ap);
	return r;
}

int
tpcq_opt_u64(const struct tpcq_opt_prog *p, const char *opt, const char *s,
	     uint64_t min, uint64_t max, uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (*s < '0' || *s > '9')
		return bad(p, "--%s: '%s' is not a non-negative integer", opt, s);
	errno = 0;
	x = strtoull(s, &end, 10);
	if (*end != '\0')
		return bad(p, "--%s: '%s' is not a non-negative integer", opt, s);
	if (errno == ERANGE || x < min || x > max)
		return bad(p, "--%s: %s is out of range %llu..%llu", opt, s,
			   (unsigned long long)min, (unsigned long long)max);
	*v = x;
	return 0;
}

int
tpcq_opt_duration(const struct tpcq_opt_prog *p, const char *s, double max_s,
		  double *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(x))
		return bad(p, "--duration: '%s' is not a number of seconds", s);
	if (!(x > 0.0) || x > max_s)
		return bad(p, "--duration: %s is out of range (0, %.0f] seconds", s,
			   max_s);
	*v = x;
	return 0;
}
