#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""devtools/check-lab-live.py's verdicts on made-up cells (no live run).

Usage: check_lab_live.py SCRIPT

1. 3 policies x 3 rates, 5 runs each, every ratio lab / live within its
   tolerance on the median (one run off in a cell does not decide): PASS.
2. The same with one cell's CPU off by 30% on the median: MISS, that cell
   named (the negative control of 1).
3. The cells of 1 on a machine where other work took 30% of the CPUs: "not
   judged" in every cell and overall, never PASS or MISS.
4. The cost model of a run's floors: the wake-ups from the floor paced at
   the run's rate where measured (the back-to-back one is the negative
   control: its figures must not come out), else back to back, as --sim
   --floors derives it; none without the sleeper's CPU. A run's measured
   sleep CPU (sleep_cpu_ns) replaces the floor's: arm_ns + wake_cpu_ns is
   it (the floor's 21000 must not come out); 0 keeps the floor's.
5. Other work from two reads of /proc: a process that ran on, one that
   started, one that ended and was reaped (its CPU before the first read
   not counted again), one whose pid was reused.
"""
import importlib.util
import sys


def load(path):
    spec = importlib.util.spec_from_file_location("check_lab_live", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def cells(off=None):
    out = {}
    for p in ("adaptive", "hybrid", "spin:50"):
        for r in (1000, 5000, 20000):
            c = {"cpu_pct": [1.05, 0.97, 1.10, 1.45, 1.02],
                 "wakeups_per_s": [0.95, 1.0, 1.12, 0.9, 1.04],
                 "p99_us": [1.2, 0.8, 1.25, 2.0, 1.1]}
            if off == (p, r):
                c["cpu_pct"] = [x * 1.3 for x in c["cpu_pct"]]
            out[(p, r)] = c
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    m = load(sys.argv[1])
    lines, overall = m.judge(cells(), 0.02)
    if not overall.startswith("PASS") or len(lines) != 9 or \
            not all(l.startswith("PASS ") for l in lines):
        raise SystemExit("FAIL: agreeing cells: %s\n%s" % (overall, lines))
    print("ok: 9 agreeing cells: " + overall)
    lines, overall = m.judge(cells(("hybrid", 5000)), 0.02)
    bad = [l for l in lines if l.startswith("MISS ")]
    if not overall.startswith("MISS") or len(bad) != 1 or \
            not bad[0].startswith("MISS hybrid 5000/s"):
        raise SystemExit("FAIL: one cell off: %s\n%s" % (overall, lines))
    print("ok: one cell off: " + overall)
    lines, overall = m.judge(cells(("hybrid", 5000)), 0.30)
    if not overall.startswith("not judged") or \
            not all(l.startswith("not judged ") for l in lines) or \
            any("PASS" in l or "MISS" in l for l in lines + [overall]):
        raise SystemExit("FAIL: loaded machine: %s\n%s" % (overall, lines))
    print("ok: loaded machine: " + overall)
    fl = {"handoff_p50_ns": 123, "wakeup_p50_ns": 31234, "wakeup_p99_ns": 131000,
          "wake_cpu_ns": 4567}
    c = m.cost_of(fl)
    if c != "poll_ns=120,arm_ns=250,wake_ns=31000,wake_p99_ns=130000,wake_cpu_ns=4600":
        raise SystemExit("FAIL: cost of the floors: %s" % c)
    del fl["wake_cpu_ns"]
    if m.cost_of(fl) is not None:
        raise SystemExit("FAIL: a cost model without the sleeper's CPU")
    print("ok: the cost model of a run's floors: " + c)
    fl = {"handoff_p50_ns": 123, "wakeup_p50_ns": 7900, "wakeup_p99_ns": 20000,
          "wake_cpu_ns": 4567, "wakeup_paced_p50_ns": 31234,
          "wakeup_paced_p99_ns": 1234567, "wake_cpu_paced_ns": 21012}
    c = m.cost_of(fl)
    if c != ("poll_ns=120,arm_ns=250,wake_ns=31000,wake_p99_ns=1200000,"
             "wake_cpu_ns=21000") or not m.paced(fl):
        raise SystemExit("FAIL: cost of the paced floors: %s" % c)
    print("ok: the cost model of the floors paced at the run's rate: " + c)
    c = m.cost_of(fl, 30250)
    if c != ("poll_ns=120,arm_ns=250,wake_ns=31000,wake_p99_ns=1200000,"
             "wake_cpu_ns=30000"):
        raise SystemExit("FAIL: cost with the measured sleep CPU: %s" % c)
    if m.cost_of(fl, 0) != m.cost_of(fl):
        raise SystemExit("FAIL: no sleep timed must keep the floor's CPU")
    print("ok: a sleep's CPU as the run measured it: " + c)
    tick = m.os.sysconf("SC_CLK_TCK")
    # pid: (start, ticks of it and its reaped children)
    t0 = {10: (5, 100), 11: (6, 40), 12: (7, 30), 13: (8, 50)}
    # 10 ran 20 more and reaped 12 (30 before, 10 since); 11 ran 5 more
    # and reaped 13 (50 before, 2 since), whose pid came back as a new
    # process with 7 ticks; 14 is new.
    t1 = {10: (5, 100 + 20 + 40), 11: (6, 40 + 5 + 52), 13: (99, 7),
          14: (100, 3)}
    got = m.others_cpu(t0, t1) * tick
    if abs(got - (20 + 10 + 5 + 2 + 7 + 3)) > 1e-6:
        raise SystemExit("FAIL: other processes' CPU %.1f ticks, not 47" % got)
    print("ok: other processes' CPU from /proc: %.0f ticks" % got)
    return 0


if __name__ == "__main__":
    sys.exit(main())
