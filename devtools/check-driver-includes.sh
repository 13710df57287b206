#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# No driver includes another driver's header (doc/guides/architecture.md):
# a file under drivers/<a>/ may include its own headers, drivers/common/*,
# lib/cqpoll and system headers, never a header that lives in drivers/<b>/.
#
# usage: devtools/check-driver-includes.sh [TOPDIR]   (default: this tree)
# Exit 0 when clean, 1 listing every offending include.
set -eu
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top/drivers"
# "driver header" for every header of every driver but common/.
index=$(find . -path ./common -prune -o -name '*.h' -print | awk -F/ '{ print $2, $NF }')
bad=0
for a in */; do
	a=${a%/}
	[ "$a" = common ] && continue
	for f in $(find "$a" -name '*.[ch]'); do
		for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			h=$(basename "$h")
			# A header of this driver: allowed.
			printf '%s\n' "$index" | grep -qx "$a $h" && continue
			owner=$(printf '%s\n' "$index" | awk -v h="$h" '$2 == h { print $1; exit }')
			if [ -n "$owner" ]; then
				echo "drivers/$f includes $h of drivers/$owner" >&2
				bad=1
			fi
		done
	done
done
exit $bad
