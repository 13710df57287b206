#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Quick start, first command: install the dependencies, build, and run
# testpmd-cq on the emulated mlx5 device in interrupt mode for 3 s at 20000
# completions/s, with the hardware's (level) arm semantics.
#
# usage: devtools/run-main.sh
#
# Prints testpmd-cq's table; the same results go to build/testpmd-cq.json.
set -euo pipefail

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$topdir"

./devtools/install-deps.sh
./devtools/build.sh build

app=build/app/testpmd-cq/testpmd-cq
json=build/testpmd-cq.json
if [ ! -x "$app" ]; then
    echo "run-main: $app was not built" >&2
    exit 1
fi

rm -f -- "$json"
# The emulated mlx5 device: the mlx5 driver's real poll and arm code, no hardware.
cmd=("$app" --dev=mlx5-emu --mode=interrupt --rate=20000 --duration=3 --json="$json")
echo "+ ${cmd[*]}"
"${cmd[@]}"

if [ ! -s "$json" ]; then
    echo "run-main: testpmd-cq wrote no JSON to $json" >&2
    exit 1
fi
echo
echo "run-main: JSON results in $topdir/$json"
