/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TPCQ_JSON_READ_H
#define TPCQ_JSON_READ_H

/*
 * The sweep parent's JSON reading (jansson), of the reports its children
 * wrote: check that a text is one well-formed value (at most 32 containers
 * deep), and read a number at a dotted path ("latency_ns.p99"). Keys are
 * compared decoded; the reports use plain keys.
 */

/* 0 if text is exactly one JSON value, with white space around it; else -EINVAL. */
int tpcq_json_check(const char *text);

/*
 * The number at path in the object text. Returns 0 and sets *v; -ENOENT if a
 * key of path is missing or a step is not an object; -ENODATA if the value is
 * null; -EINVAL if it is another non-number or text is malformed.
 */
int tpcq_json_number(const char *text, const char *path, double *v);

#endif /* TPCQ_JSON_READ_H */
