#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# cqpoll-lab is testpmd-cq --sim without --sim: the same bytes on stdout for
# the same options (after "--" too), the same exit status on a bad option.
# The control: another seed must change the output, or the comparison could
# not see a difference.
#
# usage: check_lab_alias.sh CQPOLL_LAB TESTPMD_CQ
set -euo pipefail

lab=$1
tpcq=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$lab" --trace=pareto --duration=0.5 > "$tmp/lab.txt"
"$tpcq" --sim --trace=pareto --duration=0.5 > "$tmp/sim.txt"
cmp "$tmp/lab.txt" "$tmp/sim.txt" || { echo "FAIL: cqpoll-lab --trace=pareto and testpmd-cq --sim --trace=pareto differ"; exit 1; }
[ -s "$tmp/lab.txt" ] || { echo "FAIL: no output"; exit 1; }
echo "ok: cqpoll-lab --trace=pareto == testpmd-cq --sim --trace=pareto ($(wc -c < "$tmp/lab.txt") bytes)"

short=(--trace=onoff --rate=5000 --duration=0.2 --sim-seeds=2)
"$lab" "${short[@]}" > "$tmp/a.txt"
"$tpcq" -- "${short[@]}" --sim > "$tmp/b.txt"
cmp "$tmp/a.txt" "$tmp/b.txt" || { echo "FAIL: testpmd-cq -- ... --sim differs from cqpoll-lab"; exit 1; }
"$lab" "${short[@]}" --seed=1 > "$tmp/c.txt"
if cmp -s "$tmp/a.txt" "$tmp/c.txt"; then
    echo "FAIL: the control: another seed gave the same bytes"
    exit 1
fi
echo "ok: the options after --, and another seed differs (the control)"

for bad in --sim-seeds=0 --trace=burst --dev=sw; do
    set +e
    "$lab" "$bad" > /dev/null 2>&1; a=$?
    "$tpcq" --sim "$bad" > /dev/null 2>&1; b=$?
    set -e
    if [ "$a" -ne 2 ] || [ "$b" -ne 2 ]; then
        echo "FAIL: $bad: exit $a (cqpoll-lab), $b (testpmd-cq --sim), 2 expected"
        exit 1
    fi
done
echo "ok: bad options exit 2 from both"
