#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Fail when doxygen warns about the API reference (meson test doxygen).
#
# usage: doc/check-doxygen.sh DOXYGEN DOXYFILE
#
# Runs DOXYGEN on the configured DOXYFILE with its output redirected to a
# temporary directory, so that the doc target's output is left alone, and
# exits 1 printing the warnings if there are any.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 DOXYGEN DOXYFILE" >&2
	exit 2
fi
doxygen=$1
doxyfile=$2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqpoll-doxygen.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Later settings override earlier ones; "-" reads the configuration from stdin.
rc=0
{
	cat "$doxyfile"
	echo "OUTPUT_DIRECTORY = \"$tmp/out\""
	echo "WARN_LOGFILE = \"$tmp/warnings.log\""
	echo "QUIET = YES"
} | "$doxygen" - >"$tmp/doxygen.log" 2>&1 || rc=$?

if [ "$rc" -ne 0 ]; then
	echo "doxygen failed (exit $rc):" >&2
	cat "$tmp/doxygen.log" >&2
	[ -s "$tmp/warnings.log" ] && cat "$tmp/warnings.log" >&2
	exit 1
fi
if [ -s "$tmp/warnings.log" ]; then
	echo "doxygen warnings:" >&2
	cat "$tmp/warnings.log" >&2
	exit 1
fi
echo "doxygen: no warnings"
