#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Quick start, first command: install the dependencies, build, and run the
# default testpmd-cq sweep on the emulated mlx5 device: 4 loads x 4 policies
# (poll, interrupt, adaptive, spin), 2 s a point, about a minute.
#
# usage: devtools/run-main.sh
#
# Prints the floors, the sweep's table (one row per point: latency
# percentiles, p50 and p99 over the matching floor, the poller's, the
# harness's and the process's CPU, wake-ups, lost wake-ups) and a closing
# note: interrupt p50 over the wake-up floor at the lowest load and poll p99
# over the hand-off floor at the highest, each paced at that load (goals
# <= 1.5x and <= 10x), judged only where the floor is steadier than the
# point; then cqpoll against the peers' own waits, a verdict per transport
# (devtools/run-peers.py). Every
# point's full results go to build/testpmd-cq-sweep.json and the plots (PNG)
# to build/testpmd-cq-plots/.
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
# The machine's noise while the sweep runs: /proc/stat before and after
# (stolen CPU share), and the load average, for the closing note.
stat0=$(head -1 /proc/stat)
# The emulated mlx5 device: the mlx5 driver's real poll and arm code, no hardware.
cmd=("$app" --dev=mlx5-emu --sweep --json="$json" --plot="$plots")
echo "+ ${cmd[*]}"
status=0
"${cmd[@]}" || status=$?

if [ ! -s "$json" ]; then
    echo "run-main: testpmd-cq wrote no JSON to $json" >&2
    exit 1
fi
stat1=$(head -1 /proc/stat)
# The closing note: how close to this machine's floors cqpoll came, judged
# only where the floor itself was steadier than the point: a ratio over a
# floor that is noisier than the point judges nothing (the machine was
# too noisy), and says so with the noise measured.
python3 - "$json" "$stat0" "$stat1" <<'PY' || true
import json, os, sys
sw = json.load(open(sys.argv[1]))
s0 = [int(x) for x in sys.argv[2].split()[1:]]
s1 = [int(x) for x in sys.argv[3].split()[1:]]
d = [b - a for a, b in zip(s0, s1)]
# /proc/stat cpu: user nice system idle iowait irq softirq steal ...
steal = 100.0 * d[7] / sum(d[:8]) if len(d) > 7 and sum(d[:8]) > 0 else 0.0
load1 = os.getloadavg()[0]
ncpu = os.cpu_count() or 1
def floor_of(p):
    """The floor the point is judged against: (name, p50_ns, p99_ns)."""
    fl = sw["floors"]
    kind = "wakeup_ns" if p["floor"].startswith("wakeup") else "handoff_ns"
    if p["floor"].endswith("_paced"):
        for f in fl.get("paced", []):
            if f["rate"] == p["load"]:
                return f[kind]
        return None
    return fl.get(kind)
pts = [p for p in sw["points"] if p["ok"] and p.get("p50_x_floor") is not None]
lo, hi = min(sw["sweep"]["loads"]), max(sw["sweep"]["loads"])
names = {"wakeup": "wake-up", "handoff": "hand-off",
         "wakeup_paced": "wake-up (paced at that load)",
         "handoff_paced": "hand-off (paced at that load)"}
def note(pol, load, key, pct, goal):
    for p in pts:
        if p["policy"] == pol and p["load"] == load:
            v = p[key]
            f = floor_of(p)
            own = p["run"]["latency_ns"]["p99"]
            if f is not None and f["p99"] > own:
                print("run-main: %s %s at %d/s: machine too noisy to judge: the %s "
                      "floor's own p99 (%.1f us) is above the point's (%.1f us); "
                      "stolen CPU %.1f%%, load average %.1f on %d CPUs during the "
                      "sweep" % (pol, pct, load, names[p["floor"]], f["p99"] / 1e3,
                                 own / 1e3, steal, load1, ncpu))
                return
            print("run-main: %s %s at %d/s is %.2fx the %s floor (goal <= %gx): %s"
                  % (pol, pct, load, v, names[p["floor"]], goal,
                     "PASS" if v <= goal else "MISS"))
            return
    print("run-main: no %s point at %d/s with a floor" % (pol, load))
print()
note("interrupt", lo, "p50_x_floor", "p50", 1.5)
note("poll", hi, "p99_x_floor", "p99", 10)
PY
# Against what users run today (issue 24): cqpoll's modes and the peers'
# own waits on the real transports, 3 interleaved rounds of short points
# (about 4 minutes), one verdict line per transport. CQPOLL_SKIP_PEERS=1
# skips it; devtools/run-peers.py --page rewrites the results page's
# section from a full run.
if [ "${CQPOLL_SKIP_PEERS:-0}" != 1 ] && [ -x build/app/testpmd-cq/tpcq-peer ]; then
    echo
    echo "+ devtools/run-peers.py --rounds=3 --duration=0.3 --out=build/peers"
    python3 devtools/run-peers.py --rounds=3 --duration=0.3 --out=build/peers |
        grep -E '^run-peers: [a-z-]+: ' || true
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
