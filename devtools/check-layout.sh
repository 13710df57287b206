#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The applications' layout rule (issue 19): no file under app/ longer than
# 600 lines, so that each stays one job a reader can hold at once.
#
# usage: devtools/check-layout.sh [--max N] [DIR...]
#
# DIR defaults to the source tree's app/. Every regular file counts (C,
# headers, meson.build, scripts). Exits 0 when every file is within the
# limit, 1 naming each one over it, 2 on bad usage.
set -euo pipefail

max=600
if [ "${1:-}" = --max ]; then
    [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] || { echo "check-layout: --max needs a number" >&2; exit 2; }
    max=$2
    shift 2
fi
if [ $# -eq 0 ]; then
    set -- "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/app"
fi
over=0
files=0
for dir in "$@"; do
    [ -d "$dir" ] || { echo "check-layout: $dir: not a directory" >&2; exit 2; }
    while IFS= read -r -d '' f; do
        files=$((files + 1))
        n=$(wc -l < "$f")
        if [ "$n" -gt "$max" ]; then
            echo "check-layout: $f: $n lines (at most $max)"
            over=$((over + 1))
        fi
    done < <(find "$dir" -type f -print0)
done
if [ "$files" -eq 0 ]; then
    echo "check-layout: no file found in $*" >&2
    exit 2
fi
if [ "$over" -ne 0 ]; then
    echo "check-layout: $over of $files files over $max lines"
    exit 1
fi
echo "check-layout: $files files, none over $max lines"
