#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The goals of issue 21, judged from the policy lab's output.

usage: devtools/check-lab-goals.py TESTPMD [--cost=SPEC] [--seeds=N]
                                   [--duration=S] [--out=DIR]

Runs testpmd-cq --sim on every built-in trace at 1000, 5000, 20000, 50000
and 100000/s, at penalties 1 and 10, each over --seeds seeds (default 10),
and reads the lab's own verdicts ("goal NAME POLICY: ...: PASS|MISS", each
on the median over the seeds). Prints every command, then one line per
goal: PASS when every run that judged it passed, with the worst runs.
The hybrid goal is the issue's at penalty 10 only (at penalty 1 a wake-up
is cheaper than the polling a nap leaves, and hybrid rightly sleeps).
Deterministic: no timing, the same output on any machine. Exit 0 when every
goal passes, 1 otherwise.
"""
import argparse
import os
import subprocess
import sys

REF = "poll_ns=100,arm_ns=1000,wake_ns=30000,wake_p99_ns=80000,wake_cpu_ns=5000"
TRACES = ["poisson", "onoff", "pareto", "diurnal", "periodic", "regime"]
RATES = [1000, 5000, 20000, 50000, 100000]
PENALTIES = [1, 10]
POLICIES = "spin:0;adaptive;hybrid;target-p99:100;target-p99:60"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("testpmd")
    ap.add_argument("--cost", default=REF)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--out", default=None,
                    help="directory for each run's output (lab-goals-*.txt)")
    args = ap.parse_args()
    goals = {}
    for pen in PENALTIES:
        for t in TRACES:
            for rate in RATES:
                cmd = [args.testpmd, "--sim", "--trace=" + t,
                       "--rate=%d" % rate, "--duration=%g" % args.duration,
                       "--sim-seeds=%d" % args.seeds, "--sim-cost=" + args.cost,
                       "--sim-penalty=%d" % pen, "--sim-policies=" + POLICIES]
                out = subprocess.run(cmd, stdin=subprocess.DEVNULL, check=True,
                                     capture_output=True, text=True).stdout
                shown = " ".join(c if ";" not in c else "'%s'" % c
                                 for c in ["testpmd-cq"] + cmd[1:])
                print("$", shown)
                if args.out:
                    with open(os.path.join(args.out, "lab-goals-%s-%d-p%d.txt"
                                           % (t, rate, pen)), "w") as f:
                        f.write("$ " + shown + "\n" + out)
                for line in out.splitlines():
                    if not line.startswith(" goal ") or "not judged" in line:
                        continue
                    name, pol = line.split()[1], line.split()[2].rstrip(":")
                    if name == "hybrid-periodic" and pen != 10:
                        continue
                    ok = line.endswith("PASS")
                    key = (name, pol)
                    g = goals.setdefault(key, {"pass": 0, "miss": []})
                    if ok:
                        g["pass"] += 1
                    else:
                        g["miss"].append("%s %d/s p%d: %s" % (
                            t, rate, pen, line.split(": ", 1)[1]))
    print()
    allok = True
    for (name, pol), g in sorted(goals.items()):
        n = g["pass"] + len(g["miss"])
        ok = not g["miss"]
        allok = allok and ok
        print("%s %s %s: %d of %d runs pass" % ("PASS" if ok else "MISS",
                                                name, pol, g["pass"], n))
        for m in g["miss"]:
            print("    miss: " + m)
    return 0 if allok else 1


if __name__ == "__main__":
    sys.exit(main())
