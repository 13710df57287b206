#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""run-main.sh's closing note (devtools/closing-note.py) on made-up sweeps:
with floors steadier than the points it judges them (PASS, or MISS over
the goal); with a floor whose own p99 is above the point's it must say
"machine too noisy to judge" with the stolen CPU share, and never PASS.

usage: check_closing_note.py
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NOTE = os.path.join(HERE, "..", "..", "devtools", "closing-note.py")
STAT0 = "cpu  100 0 100 700 0 0 0 100 0 0"
STAT1 = "cpu  200 0 200 1400 0 0 0 200 0 0"   # 100 of 1000 ticks stolen: 10%


def sweep(floor_p99, ratio):
    def point(pol, load, floor):
        return {"dev": "sw", "load": load, "policy": pol, "ok": True,
                "floor": floor, "p50_x_floor": ratio, "p99_x_floor": ratio,
                "run": {"latency_ns": {"p50": 20000, "p99": 50000}}}
    paced = [{"rate": r, "secs": 1, "handoff_ns": {"p50": 300, "p99": floor_p99},
              "wakeup_ns": {"p50": 30000, "p99": floor_p99}} for r in (1000, 200000)]
    return {"sweep": {"loads": [1000, 200000]},
            "floors": {"handoff_ns": {"p50": 200, "p99": 400},
                       "wakeup_ns": {"p50": 30000, "p99": 40000}, "paced": paced},
            "points": [point("interrupt", 1000, "wakeup_paced"),
                       point("poll", 200000, "handoff_paced")]}


def run(sw):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "s.json")
        with open(p, "w") as f:
            json.dump(sw, f)
        r = subprocess.run([sys.executable, NOTE, p, STAT0, STAT1],
                           capture_output=True, text=True, timeout=30)
        return r.returncode, r.stdout


def main():
    bad = 0
    for name, sw, want, never in [
            ("steady floors, within the goals", sweep(40000, 1.2), ["PASS"], ["noisy"]),
            ("steady floors, over the goals", sweep(40000, 20.0), ["MISS"], ["PASS"]),
            ("floors noisier than the points", sweep(774000, 0.04),
             ["machine too noisy to judge", "stolen CPU 10.0%"], ["PASS"])]:
        rc, out = run(sw)
        ok = rc == 0 and all(w in out for w in want) and not any(n in out for n in never)
        print("%-34s %s\n%s" % (name, "ok" if ok else "FAIL", out.rstrip()))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
