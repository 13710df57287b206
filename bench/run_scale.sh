#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What idle CQs cost a busy-polling group: testpmd-cq on the software CQ in
# poll mode at 10000 completions/s, all of them to one CQ (--active-cqs=1),
# with 1, 64, 1024 and 4096 CQs in the poller's group, all in one run of this
# script. Prints p50/p99 latency, p50 against the 1-CQ run, the poller's CPU
# and its CPU per loop iteration (group iterations, or polls of the lone CQ
# when --cqs=1 runs without a group).
#
# The cross-core hand-off that a busy poller's p50 measures comes in two
# modes on these VMs (~120 ns and ~420 ns, whatever N is), so each size runs
# REPEATS times, interleaved with the others, and the table gives the
# medians; every run's p50 is printed too.
#
# usage: bench/run_scale.sh [BUILDDIR] [MODE] [DURATION_S] [REPEATS]
#        (defaults: build, poll, 3, 3)
set -euo pipefail

build=${1:-build}
mode=${2:-poll}
duration=${3:-3}
repeats=${4:-3}
app=$build/app/testpmd-cq/testpmd-cq
[ -x "$app" ] || { echo "run_scale: $app not built" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf -- "$dir"' EXIT

for r in $(seq 1 "$repeats"); do
    for n in 1 64 1024 4096; do
        "$app" --dev=sw --mode="$mode" --cqs="$n" --active-cqs=1 --rate=10000 \
            --duration="$duration" --json="$dir/$n.$r.json" >"$dir/$n.log" 2>&1 || {
            echo "run_scale: --cqs=$n failed:" >&2
            tail -20 "$dir/$n.log" >&2
            exit 1
        }
    done
done

python3 - "$dir" "$mode" "$repeats" <<'PY'
import json, statistics, sys
d, mode, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = []
runs = {}
for n in (1, 64, 1024, 4096):
    pts = []
    for r in range(1, reps + 1):
        with open(f"{d}/{n}.{r}.json") as f:
            j = json.load(f)
        j = j[-1] if isinstance(j, list) else j
        lat = j["latency_ns"]
        g = j.get("group")
        iters = g["iterations"] if g else j["polls"]
        cpu_s = j["cpu_pct"] / 100.0 * j["duration_s"]
        pts.append((lat["p50"], lat["p99"], j["cpu_pct"],
                    cpu_s * 1e9 / iters if iters else float("nan"),
                    j["completions"], j["lost_wakeups"]))
    runs[n] = [p[0] for p in pts]
    med = lambda k: statistics.median(p[k] for p in pts)
    rows.append((n, int(med(0)), int(med(1)), med(2), med(3),
                 sum(p[4] for p in pts), sum(p[5] for p in pts)))
base = rows[0][1] or 1
print(f"testpmd-cq --dev=sw --mode={mode} --rate=10000 --active-cqs=1"
      f" (median of {reps} interleaved runs per size)")
print(f"{'cqs':>5} {'p50_ns':>9} {'p99_ns':>9} {'p50/p50(1)':>10} "
      f"{'cpu_pct':>8} {'cpu_ns/iter':>11} {'completions':>11} {'lost':>5}")
for n, p50, p99, cpu, per, comp, lost in rows:
    print(f"{n:>5} {p50:>9} {p99:>9} {p50 / base:>10.2f} {cpu:>8.1f} "
          f"{per:>11.1f} {comp:>11} {lost:>5}")
print("p50 of each run: " + "; ".join(
    f"{n}: " + " ".join(str(v) for v in runs[n]) for n in runs))
PY
