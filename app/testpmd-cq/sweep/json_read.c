/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sweep's JSON reader on jansson (as DPDK's own JSON readers): the
 * children's reports parsed into a tree, numbers read at dotted paths.
 * Integers are read as reals (JSON_DECODE_INT_AS_REAL), as strtod() reads
 * them, so a counter past 2^63 is a number and not a parse error.
 */
#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "json_read.h"

/* Deeper than any report: what the sweep takes is what it can walk. */
#define JSON_DEPTH_MAX 32

/* Whether v and what it holds sit no deeper than JSON_DEPTH_MAX. */
static int
depth_ok(json_t *v, int depth)
{
	json_t *item;
	const char *key;
	size_t i;

	if (depth > JSON_DEPTH_MAX)
		return 0;
	if (json_is_object(v)) {
		json_object_foreach(v, key, item)
			if (!depth_ok(item, depth + 1))
				return 0;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item)
			if (!depth_ok(item, depth + 1))
				return 0;
	}
	return 1;
}

/* text as one JSON value, any kind; NULL if malformed or too deep. */
static json_t *
load(const char *text)
{
	json_error_t err;
	json_t *v;

	v = json_loads(text, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &err);
	if (v != NULL && !depth_ok(v, 0)) {
		json_decref(v);
		v = NULL;
	}
	return v;
}

int
tpcq_json_check(const char *text)
{
	json_t *v = load(text);

	if (v == NULL)
		return -EINVAL;
	json_decref(v);
	return 0;
}

int
tpcq_json_number(const char *text, const char *path, double *v)
{
	json_t *root, *cur;
	const char *p = path, *dot;
	size_t len;
	int r;

	root = load(text);
	if (root == NULL)
		return -EINVAL;
	cur = root;
	for (;;) {
		dot = strchr(p, '.');
		len = dot != NULL ? (size_t)(dot - p) : strlen(p);
		cur = json_is_object(cur) ? json_object_getn(cur, p, len) : NULL;
		if (cur == NULL || dot == NULL)
			break;
		p = dot + 1;
	}
	if (cur == NULL) {
		r = -ENOENT;
	} else if (json_is_null(cur)) {
		r = -ENODATA;
	} else if (json_is_number(cur)) {
		*v = json_number_value(cur);
		r = 0;
	} else {
		r = -EINVAL;
	}
	json_decref(root);
	return r;
}
