/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A JSON reader that never builds a tree: each query walks the text again.
 * The sweep reads a dozen numbers from a few reports of a few kilobytes, so
 * the walks cost nothing next to a run, and the reader stays small.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

/* Deeper than any report; bounds the recursion on hostile input. */
#define JSON_DEPTH_MAX 32

static const char *
skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

/* s at the opening quote; returns past the closing one, or NULL. */
static const char *
skip_string(const char *s)
{
	for (s++; *s != '"'; s++) {
		if (*s == '\0' || (unsigned char)*s < 0x20)
			return NULL;
		if (*s == '\\') {
			s++;
			if (*s == '\0' || strchr("\"\\/bfnrtu", *s) == NULL)
				return NULL;
		}
	}
	return s + 1;
}

static const char *
skip_digits(const char *s)
{
	const char *start = s;

	while (*s >= '0' && *s <= '9')
		s++;
	return s == start ? NULL : s;
}

/* JSON's grammar, stricter than strtod(), which takes hex, inf and nan. */
static const char *
skip_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if ((s = skip_digits(s)) == NULL)
		return NULL;
	if (*s == '.' && (s = skip_digits(s + 1)) == NULL)
		return NULL;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		s = skip_digits(s);
	}
	return s;
}

static const char *skip_value(const char *s, int depth);

/* s at '{' or '['; returns past the closing bracket, or NULL. */
static const char *
skip_container(const char *s, int depth)
{
	char close = *s == '{' ? '}' : ']';
	bool object = *s == '{';

	s = skip_ws(s + 1);
	if (*s == close)
		return s + 1;
	for (;;) {
		if (object) {
			if (*s != '"' || (s = skip_string(s)) == NULL)
				return NULL;
			s = skip_ws(s);
			if (*s != ':')
				return NULL;
			s = skip_ws(s + 1);
		}
		s = skip_value(s, depth + 1);
		if (s == NULL)
			return NULL;
		s = skip_ws(s);
		if (*s == close)
			return s + 1;
		if (*s != ',')
			return NULL;
		s = skip_ws(s + 1);
	}
}

static const char *
skip_value(const char *s, int depth)
{
	if (depth > JSON_DEPTH_MAX)
		return NULL;
	switch (*s) {
	case '{':
	case '[':
		return skip_container(s, depth);
	case '"':
		return skip_string(s);
	case 't':
		return strncmp(s, "true", 4) == 0 ? s + 4 : NULL;
	case 'f':
		return strncmp(s, "false", 5) == 0 ? s + 5 : NULL;
	case 'n':
		return strncmp(s, "null", 4) == 0 ? s + 4 : NULL;
	default:
		return skip_number(s);
	}
}

int
tpcq_json_check(const char *text)
{
	const char *s = skip_value(skip_ws(text), 0);

	return s != NULL && *skip_ws(s) == '\0' ? 0 : -EINVAL;
}

/* The value of member key (len bytes) of the object at s, or NULL. */
static const char *
member(const char *s, const char *key, size_t len)
{
	const char *k, *end;

	if (*s != '{')
		return NULL;
	s = skip_ws(s + 1);
	while (*s == '"') {
		k = s + 1;
		end = skip_string(s);
		if (end == NULL)
			return NULL;
		s = skip_ws(end);
		if (*s != ':')
			return NULL;
		s = skip_ws(s + 1);
		if ((size_t)(end - 1 - k) == len && memcmp(k, key, len) == 0)
			return s;
		s = skip_value(s, 1);
		if (s == NULL)
			return NULL;
		s = skip_ws(s);
		if (*s != ',')
			return NULL;
		s = skip_ws(s + 1);
	}
	return NULL;
}

int
tpcq_json_number(const char *text, const char *path, double *v)
{
	const char *s = skip_ws(text), *dot;
	size_t len;

	if (tpcq_json_check(text) != 0)
		return -EINVAL;
	for (;;) {
		dot = strchr(path, '.');
		len = dot != NULL ? (size_t)(dot - path) : strlen(path);
		s = member(s, path, len);
		if (s == NULL)
			return -ENOENT;
		if (dot == NULL)
			break;
		path = dot + 1;
	}
	if (strncmp(s, "null", 4) == 0)
		return -ENODATA;
	if (skip_number(s) == NULL)
		return -EINVAL;
	*v = strtod(s, NULL);
	return 0;
}
