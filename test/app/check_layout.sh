#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# devtools/check-layout.sh on the source tree's app/ (no file over 600
# lines), and its negative control: a copy of a tree with one file of 601
# lines must fail it, naming that file, and one of 600 lines pass.
#
# usage: check_layout.sh CHECK_LAYOUT APPDIR
set -euo pipefail

check=$1
app=$2
"$check" "$app"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/app/sub"
seq 600 > "$tmp/app/sub/ok.c"
"$check" "$tmp/app" > /dev/null || { echo "FAIL: a 600-line file was refused"; exit 1; }
seq 601 > "$tmp/app/sub/long.c"
if out=$("$check" "$tmp/app"); then
    echo "FAIL: a 601-line file passed the layout check"
    exit 1
fi
case $out in
*long.c*) echo "ok: the control with a 601-line file fails: $out" | head -1 ;;
*) echo "FAIL: the check failed without naming the long file: $out"; exit 1 ;;
esac
