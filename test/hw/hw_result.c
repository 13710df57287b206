/* SPDX-License-Identifier: BSD-3-Clause */
/* A check's outcome and its data, kept as JSON members for the report. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hw_check.h"

void
hw_json_escape(char *buf, size_t len, const char *s)
{
	size_t n = 0;

	for (; *s != '\0' && n + 7 < len; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			n += (size_t)snprintf(buf + n, len - n, "\\%c", ch);
		else if (ch < 0x20)
			n += (size_t)snprintf(buf + n, len - n, "\\u%04x", ch);
		else
			buf[n++] = (char)ch;
	}
	buf[n] = '\0';
}

static void __attribute__((format(printf, 3, 0)))
set(struct hw_result *r, enum hw_status st, const char *fmt, va_list ap)
{
	/* The first failure is the one to report. */
	if (r->status == HW_FAIL && r->reason[0] != '\0')
		return;
	r->status = st;
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
}

void
hw_pass(struct hw_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set(r, HW_PASS, fmt, ap);
	va_end(ap);
}

void
hw_fail(struct hw_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set(r, HW_FAIL, fmt, ap);
	va_end(ap);
}

void
hw_skip(struct hw_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set(r, HW_SKIP, fmt, ap);
	va_end(ap);
}

static void
member(struct hw_result *r, const char *key, const char *val)
{
	int n = snprintf(r->data + r->data_len, sizeof(r->data) - r->data_len,
			 ",\"%s\":%s", key, val);

	if (n > 0 && (size_t)n < sizeof(r->data) - r->data_len)
		r->data_len += (size_t)n;
	else
		r->data[r->data_len] = '\0';
}

void
hw_data_u64(struct hw_result *r, const char *key, uint64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	member(r, key, b);
}

void
hw_data_i64(struct hw_result *r, const char *key, int64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%lld", (long long)v);
	member(r, key, b);
}

void
hw_data_dbl(struct hw_result *r, const char *key, double v)
{
	char b[64];

	snprintf(b, sizeof(b), "%.3f", v);
	member(r, key, b);
}

void
hw_data_str(struct hw_result *r, const char *key, const char *v)
{
	char e[512], b[520];

	hw_json_escape(e, sizeof(e), v);
	snprintf(b, sizeof(b), "\"%s\"", e);
	member(r, key, b);
}
