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
# point; then cqpoll against the peers' own waits, paired per round, a
# verdict per transport naming each check's outcome (devtools/run-peers.py,
# devtools/verdict.py). Every
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
python3 devtools/closing-note.py "$json" "$stat0" "$stat1" || true
# Against what users run today (issues 24, 36): cqpoll's modes and the
# peers' own waits on the real transports, paired: 8 rounds, each running
# every point of a load back to back in a shuffled order, at ping-pong and
# the busy peer's rate, 0.2 s points (about 4 minutes idle, 5 on a loaded
# machine; the 1000/s load, whose p99 needs 10 s a point, is left to the
# page run). Each check is judged on its
# per-round ratios (devtools/verdict.py): one verdict line per transport
# naming each check's outcome. CQPOLL_SKIP_PEERS=1 skips it;
# devtools/run-peers.py --page rewrites the results page's section from a
# full run.
if [ "${CQPOLL_SKIP_PEERS:-0}" != 1 ] && [ -x build/app/testpmd-cq/tpcq-peer ]; then
    # The DPDK row (ethdev-virtio) is left to the page run: each of its
    # points starts and stops an EAL and a vhost-user connection (1.9 s for
    # a 0.2 s point here, about 2.5 minutes more for 8 rounds).
    peers=(python3 devtools/run-peers.py --rounds=8 --duration=0.2
           --transports=ucx-tcp,ucx-posix,ofi-tcp,uring
           --loads=pingpong,high --min-samples=0 --out=build/peers)
    echo
    echo "+ ${peers[*]}"
    "${peers[@]}" | grep -E '^run-peers: ([a-z-]+: |order seed)' || true
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
