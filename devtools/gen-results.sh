#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Regenerate the results page of testpmd-cq on this machine: build, run the
# default sweep on mlx5-emu (and on uring, a real queue, where io_uring
# runs), draw its plots, and write
# doc/guides/testpmd-cq-results.md from the sweep's JSON (kept beside the
# PNGs in results/). Every number on the page comes
# from that JSON or from this machine's /proc and uname.
#
# usage: devtools/gen-results.sh [--lab-only] [BUILDDIR]   (default: build)
#
# Run it on a machine that is otherwise idle: the sweep measures latency and
# CPU, and other work on the same cores shows in both. The page records the
# load average before and after the sweep.
#
# --lab-only reruns only the policy lab (deterministic, no live run; about
# 5 minutes of CPU on each of two cores) on the committed sweep's floors and
# rewrites only the page's lab section: for a change to a policy or to the
# lab. It exits 1 when a goal of the lab misses (the page is written anyway).
set -euo pipefail

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$topdir"
lab_only=0
if [ "${1:-}" = --lab-only ]; then
    lab_only=1
    shift
fi
builddir=${1:-build}

./devtools/build.sh "$builddir" >/dev/null

app=$builddir/app/testpmd-cq/testpmd-cq
dir=results
page=doc/guides/testpmd-cq-results.md
# The "Against peers" section is measured by devtools/run-peers.py (minutes
# of interleaved runs); a page rewritten here keeps it, re-rendered from the
# raw results kept beside the plots.
peers_section() {
    if [ -s results/peers/raw.jsonl ]; then
        python3 devtools/run-peers.py --page-only >/dev/null || true
    fi
    # bench_wakeup's section (devtools/run-wakeup.py --page), likewise.
    if [ -s results/wakeup/runs.json ]; then
        python3 devtools/run-wakeup.py --page-only >/dev/null || true
    fi
}
json=$dir/sweep.json

# The policy lab: every built-in trace at 1000-100000/s, penalties 1 and
# 10, 10 seeds each, judged against the goals of issue 21 by
# devtools/check-lab-goals.py: first with the reference cost model (the same
# on any machine, so that a change to a policy shows as a change here), then
# with one derived from the sweep's floors (the mapping --sim --floors uses
# when it measures them itself). The two run side by side.
run_lab() {
    local cost st=0
    cost=$(python3 - "$json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["floors"]
def sig2(v):
    m = 1
    while v // m >= 100:
        m *= 10
    return max(1, (v + m // 2) // m * m)
h, w = f["handoff_ns"], f["wakeup_ns"]
if "cpu_per_wakeup" in w:
    # As --sim --floors: medians and the sleeper's CPU time.
    arm, cpu = 2 * h["p50"], w["cpu_per_wakeup"]
else:
    # A sweep from before the floors measured the sleeper's CPU.
    arm, cpu = h["p99"], 10 * h["p99"]
print("poll_ns=%d,arm_ns=%d,wake_ns=%d,wake_p99_ns=%d,wake_cpu_ns=%d" % (
    sig2(h["p50"]), sig2(arm), sig2(w["p50"]), sig2(max(w["p50"], w["p99"])),
    sig2(cpu)))
PY
)
    find "$dir" -maxdepth 1 -name 'lab-*.txt' ! -name lab-live.txt -delete
    rm -rf -- "$dir/lab-ref" "$dir/lab-floors"
    mkdir -p -- "$dir/lab-ref" "$dir/lab-floors"
    nice -n 10 python3 devtools/check-lab-goals.py "$app" --out="$dir/lab-ref" \
        >"$dir/lab-ref/lab-goals.txt" 2>&1 &
    local ref=$!
    nice -n 10 python3 devtools/check-lab-goals.py "$app" --cost="$cost" \
        --out="$dir/lab-floors" >"$dir/lab-floors/lab-goals.txt" 2>&1 || st=1
    wait "$ref" || st=1
    return "$st"
}

if [ "$lab_only" = 1 ]; then
    if [ ! -s "$json" ] || ! grep -q '^## Policy lab' "$page"; then
        echo "gen-results: --lab-only needs $json and the lab section of $page" >&2
        exit 1
    fi
    status=0
    run_lab || status=1
    {
        sed '/^## Policy lab/,$d' "$page"
        python3 devtools/gen-results-page.py "$json" --lab-dir="$dir" --lab-only
    } >"$page.tmp"
    mv -- "$page.tmp" "$page"
    peers_section
    python3 devtools/gen-ethdev-results.py --splice-only
    echo "gen-results: rewrote the lab section of $page"
    exit "$status"
fi

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

run_lab || status=1
python3 devtools/check-lab-live.py "$app" >"$dir/lab-live.txt" 2>&1 || true

python3 devtools/gen-results-page.py "$json" \
    --plots="$dir" --page-dir="$(dirname "$page")" \
    --load-before="$load_before" --load-after="$load_after" \
    --sweep-status="$status" --busy="$busy" --lab-dir="$dir" \
    --reproduce="./devtools/gen-results.sh${1:+ $1}" >"$page.tmp"
mv -- "$page.tmp" "$page"
peers_section
# The ethdev section comes from its own runs (devtools/gen-ethdev-results.py).
python3 devtools/gen-ethdev-results.py --splice-only || status=1
echo "gen-results: wrote $page and $dir/"
exit "$status"
