#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""run-main.sh's closing note: how close to this machine's floors cqpoll came.

usage: closing-note.py SWEEP_JSON "$(head -1 /proc/stat)" "$(head -1 /proc/stat)"
       (the second /proc/stat line taken after the sweep)

interrupt p50 over the wake-up floor at the lowest load (goal <= 1.5x) and
poll p99 over the hand-off floor at the highest (goal <= 10x), each judged
only where the floor itself was steadier than the point: a ratio over a
floor whose own p99 is above the point's judges nothing, and the note says
the machine was too noisy to judge, with the noise measured (stolen CPU
share between the two /proc/stat lines, load average), never PASS.
"""
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
    """The floor the point is judged against: its {p50, p99} in ns, or None."""
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
                      "stolen CPU %.1f%% during the sweep, load average %.1f on %d CPUs at its "
                      "end" % (pol, pct, load, names[p["floor"]], f["p99"] / 1e3,
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
