/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_OPT_PARSE_H
#define TPCQ_OPT_PARSE_H

/*
 * Option values as testpmd-cq and cqpoll-lab read them, and how they say a
 * value is wrong: "PROG: what is wrong\nTry 'PROG HELP'.\n" on stderr.
 */

#include <stdarg.h>
#include <stdint.h>

struct tpcq_opt_prog {
	const char *prog;
	const char *help;       /* after the name in the hint: " --help" */
};

/* Say @p fmt as a bad option of @p p; returns -EINVAL. */
int tpcq_opt_vbad(const struct tpcq_opt_prog *p, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * --@p opt's value @p s, an unsigned decimal in [@p min, @p max], into
 * @p v (strtoull() alone takes "-1" and ""). Returns 0 or -EINVAL, said.
 */
int tpcq_opt_u64(const struct tpcq_opt_prog *p, const char *opt, const char *s,
		 uint64_t min, uint64_t max, uint64_t *v);

/* --duration's value @p s, seconds in (0, @p max_s], into @p v; 0 or -EINVAL. */
int tpcq_opt_duration(const struct tpcq_opt_prog *p, const char *s, double max_s,
		      double *v);

#endif /* TPCQ_OPT_PARSE_H */
