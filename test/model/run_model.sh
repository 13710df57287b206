#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Check the Promela model of the poll group's transition into sleep, its
# safety net and the channel demux with SPIN.
#
# usage: test/model/run_model.sh EXPECT [DEFINE...]
#
#   EXPECT  pass: the search must complete with "errors: 0";
#           fail: the search must find a counterexample (errors > 0).
#   DEFINE  passed to spin -a, e.g. -DARM_EDGE -DNCQ=3 -DNAIVE, or
#           -DLOSE=1 -DTIMEOUT_ACTIVE_ONLY (see cqpoll_group.pml and
#           doc/guides/model.md).
#
# Environment: MODEL=path to another .pml (default: cqpoll_group.pml next to
# this script); PAN_FLAGS (default "-m100000 -w24"); MODEL_TRAIL=1 prints the
# whole counterexample (spin -t -p -g), not only its last state.
#
# Exit: 0 on the expected outcome, 1 otherwise, 77 (skip) without spin or gcc.
set -euo pipefail

if [ $# -lt 1 ] || { [ "$1" != pass ] && [ "$1" != fail ]; }; then
    echo "usage: $0 pass|fail [-DNAME[=VALUE]...]" >&2
    exit 1
fi
expect=$1
shift

for tool in spin gcc; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "run_model: $tool not found: skipping"
        exit 77
    fi
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model=${MODEL:-$here/cqpoll_group.pml}
pan_flags=${PAN_FLAGS:--m100000 -w24}
name=$(basename "$model")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cqpoll-model.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "$model" "$tmp/$name"
cd "$tmp"

echo "run_model: expect $expect: spin -a $* $name"
start=$(date +%s.%N)
if ! spin -a "$@" "$name" >spin.log 2>&1; then
    cat spin.log
    echo "run_model: spin -a failed"
    exit 1
fi
# -DSAFETY: the properties are assertions and invalid end states only.
# -w: gcc's warnings about pan.c's generated code are noise.
# -O1: the searches here take about a second; -O2 doubles the compile of
# pan.c for a few percent of search speed.
if ! gcc -O1 -w -DSAFETY -o pan pan.c >gcc.log 2>&1; then
    cat gcc.log
    echo "run_model: gcc failed on pan.c"
    exit 1
fi
# shellcheck disable=SC2086 # PAN_FLAGS is a list of flags
./pan $pan_flags >pan.log 2>&1 || true
end=$(date +%s.%N)

grep -E '^pan:[0-9]+:|^(State-vector|Full statespace|error:|Warning:)|states, (stored|matched)|transitions \(|total actual memory|elapsed time' pan.log || true
printf 'run_model: %.1f s in all (spin -a, gcc, pan)\n' "$(echo "$end - $start" | bc 2>/dev/null || echo 0)"

errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.log | head -n 1)
if [ -z "$errors" ]; then
    cat pan.log
    echo "run_model: no 'errors:' line from pan"
    exit 1
fi

if [ "$errors" -gt 0 ]; then
    if [ "${MODEL_TRAIL:-0}" = 1 ]; then
        spin -t -p -g "$@" "$name" || true
    else
        echo "run_model: counterexample, last state (MODEL_TRAIL=1 for all of it):"
        spin -t -g "$@" "$name" 2>&1 | tail -n 30 || true
    fi
fi

case $expect in
pass)
    if [ "$errors" -ne 0 ]; then
        echo "run_model: FAIL: expected no error, pan found $errors"
        exit 1
    fi
    # A search cut by the depth bound proves nothing.
    if grep -q 'max search depth too small' pan.log; then
        echo "run_model: FAIL: search truncated by the depth bound (raise -m)"
        exit 1
    fi
    echo "run_model: PASS: no error in the full state space"
    ;;
fail)
    if [ "$errors" -eq 0 ]; then
        echo "run_model: FAIL: expected a counterexample, pan found none"
        exit 1
    fi
    echo "run_model: PASS: counterexample found, as expected"
    ;;
esac
exit 0
