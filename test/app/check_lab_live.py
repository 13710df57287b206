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
4. The cost model of a run's floors, as --sim --floors derives it; none
   without the sleeper's CPU.
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
