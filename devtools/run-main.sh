#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Quick start, first command: install the dependencies, build, and run the
# default testpmd-cq sweep on the emulated mlx5 device: 4 loads x 4 policies
# (poll, interrupt, adaptive, spin), 2 s a point, about a minute.
#
# usage: devtools/run-main.sh
#
# Prints the sweep's table (one row per point: latency percentiles, CPU,
# wake-ups, lost wake-ups); every point's full results go to
# build/testpmd-cq-sweep.json and the plots (PNG) to build/testpmd-cq-plots/.
# Exits non-zero if a point failed or lost a wake-up.
set -euo pipefail
shopt -s nullglob

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$topdir"

./devtools/install-deps.sh
./devtools/build.sh build

app=build/app/testpmd-cq/testpmd-cq
json=build/testpmd-cq-sweep.json
plots=build/testpmd-cq-plots
if [ ! -x "$app" ]; then
    echo "run-main: $app was not built" >&2
    exit 1
fi

rm -rf -- "$json" "$plots"
# The emulated mlx5 device: the mlx5 driver's real poll and arm code, no hardware.
cmd=("$app" --dev=mlx5-emu --sweep --json="$json" --plot="$plots")
echo "+ ${cmd[*]}"
status=0
"${cmd[@]}" || status=$?

if [ ! -s "$json" ]; then
    echo "run-main: testpmd-cq wrote no JSON to $json" >&2
    exit 1
fi
echo
echo "run-main: every point in $topdir/$json"
if [ -d "$plots" ]; then
    echo "run-main: plots in $topdir/$plots/:"
    for f in "$plots"/*.png; do
        echo "  $f"
    done
fi
if [ "$status" -ne 0 ]; then
    echo "run-main: the sweep failed (exit $status): see the points marked FAILED" >&2
fi
exit "$status"
