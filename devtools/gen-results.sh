#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Regenerate the results page of testpmd-cq on this machine: build, run the
# default sweep on mlx5-emu (and on uring, a real queue, where io_uring
# runs), draw its plots, and write
# doc/guides/testpmd-cq-results.md from the sweep's JSON (kept beside the
# PNGs in doc/guides/testpmd-cq-results/). Every number on the page comes
# from that JSON or from this machine's /proc and uname.
#
# usage: devtools/gen-results.sh [BUILDDIR]     (default: build)
#
# Run it on a machine that is otherwise idle: the sweep measures latency and
# CPU, and other work on the same cores shows in both. The page records the
# load average before and after the sweep.
set -euo pipefail

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$topdir"
builddir=${1:-build}

./devtools/build.sh "$builddir" >/dev/null

app=$builddir/app/testpmd-cq/testpmd-cq
dir=doc/guides/testpmd-cq-results
page=doc/guides/testpmd-cq-results.md
json=$dir/sweep.json

rm -rf -- "$dir"
mkdir -p -- "$dir"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# Next to the emulated device, a real queue where this build and machine
# have one: io_uring, whose CQEs the kernel posts (a NOP per completion).
devs=mlx5-emu
if "$app" --help 2>/dev/null | grep -q '^    uring ' &&
    "$app" --dev=uring --duration=0.05 </dev/null >/dev/null 2>&1; then
    devs=mlx5-emu,uring
fi
cmd=("$app" --sweep --sweep-devs="$devs" --json="$json" --plot="$dir")
echo "+ ${cmd[*]}"
status=0
"${cmd[@]}" &
sweep_pid=$!
# What else runs, a few seconds in: the page says what the machine was doing.
busy=$(mktemp)
trap 'rm -f -- "$busy"' EXIT
sleep 5
ps -eo pcpu,args --sort=-pcpu | head -12 | cut -c1-60 >"$busy" || true
wait "$sweep_pid" || status=$?
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
if [ ! -s "$json" ]; then
    echo "gen-results: the sweep wrote no JSON ($json)" >&2
    exit 1
fi

# The policy lab on each built-in trace, with a cost model from the sweep's
# floors (the mapping --sim uses when it measures them itself), so that the
# page's commands reproduce its tables exactly; then the lab against a live
# run of a recorded trace.
cost=$(python3 - "$json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["floors"]
def sig2(v):
    m = 1
    while v // m >= 100:
        m *= 10
    return max(1, (v + m // 2) // m * m)
h, w = f["handoff_ns"], f["wakeup_ns"]
print("poll_ns=%d,arm_ns=%d,wake_ns=%d,wake_p99_ns=%d,wake_cpu_ns=%d" % (
    sig2(h["p50"]), sig2(h["p99"]), sig2(w["p50"]), sig2(max(w["p50"], w["p99"])),
    sig2(10 * h["p99"])))
PY
)
for trace in poisson onoff pareto diurnal periodic; do
    lab=("$app" -- --sim --trace="$trace" --rate=10000 --duration=2 --sim-cost="$cost")
    { echo "\$ testpmd-cq ${lab[*]:2}"; "${lab[@]}"; } >"$dir/lab-$trace.txt" 2>&1 || status=1
done
python3 devtools/check-lab-live.py "$app" >"$dir/lab-live.txt" 2>&1 || true

python3 devtools/gen-results-page.py "$json" \
    --plots="$dir" --page-dir="$(dirname "$page")" \
    --load-before="$load_before" --load-after="$load_after" \
    --sweep-status="$status" --busy="$busy" --lab-dir="$dir" \
    --reproduce="./devtools/gen-results.sh${1:+ $1}" >"$page.tmp"
mv -- "$page.tmp" "$page"
echo "gen-results: wrote $page and $dir/"
exit "$status"
