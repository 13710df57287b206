#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The lab's placement of poll groups, cqpoll-lab --sim-sched.

Usage: check_lab_sched.py CQPOLL_LAB

1. The same command twice prints the same bytes; another --seed, other
   numbers (the table is computed, not a constant).
2. The table has the 20 rows (onoff and diurnal, low and high load; static,
   cqpoll_sched, spdk, spdk-10ms, spdk-offered), static's ratios are 1 and
   it never moves a group.
3. Each goal line's verdict follows from its own numbers, and the goals are
   judged against SPDK as SPDK runs it (the `goal` lines name spdk); the
   verdicts themselves are the lab's finding, not this test's.
4. cqpoll_sched against static (the `also ... vs static` lines): CPU at most
   0.70x at low load and 1.00x at high, p99 at most 1.10x, on both traces.
   Negative controls from the table with the same judge: static as the
   candidate (CPU 1.00x at low load) and the offered-load variant of SPDK's
   rule (its p99 at high load) must be rejected.
5. SPDK's facts: its reactors poll while they hold groups, so its CPU is
   its lcores (the old spin-then-sleep model fails this); at low load every
   group is on its main lcore; on its own load measure a reactor's idle
   time is shared among its threads, so at high load onoff spreads over
   more lcores than the offered-load variant, which gathers every group
   under 20 % of offered load on one (the old measure fails this).
6. A bad option exits 2.
"""
import re
import subprocess
import sys

PLACES = ["static", "cqpoll_sched", "spdk", "spdk-10ms", "spdk-offered"]
TRACES = ["onoff", "diurnal"]
LOADS = ["low", "high"]
GOAL_CPU = {"low": 0.70, "high": 1.00}
GOAL_P99 = 1.10
GOAL_RE = re.compile(r"^(goal|also) (\S+) (\S+) cqpoll_sched vs (\S+): cpu "
                     r"([0-9.]+)x \(goal <= ([0-9.]+)\), p99 ([0-9.]+)x "
                     r"\(goal <= ([0-9.]+)\): (PASS|FAIL)$")


def run(lab, *args):
    p = subprocess.run([lab, "--sim-sched", *args], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def table(out):
    rows, goals = {}, {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 9 and f[0] in TRACES and f[2] in PLACES:
            rows[(f[0], f[1], f[2])] = {
                "cpu": float(f[3]), "p99": float(f[4]), "cpu_x": float(f[5]),
                "p99_x": float(f[6]), "lcores": float(f[7]),
                "moves": float(f[8])}
        m = GOAL_RE.match(line)
        if m:
            goals[(m[2], m[3], m[4])] = (m[1], float(m[5]), float(m[6]),
                                         float(m[7]), float(m[8]),
                                         m[9] == "PASS")
    return rows, goals


def judge(row, load):
    return row["cpu_x"] <= GOAL_CPU[load] and row["p99_x"] <= GOAL_P99


def main():
    lab = sys.argv[1]
    fails = []

    rc, out, err = run(lab)
    rc2, out2, _ = run(lab, "--sim-seeds=1")
    rc3, out3, _ = run(lab, "--sim-seeds=1")
    if rc != 0 or rc2 != 0 or rc3 != 0:
        print(f"--sim-sched exited {rc}/{rc2}/{rc3}: {err}")
        return 1
    print(out)
    if out2 != out3:
        fails.append("two runs of the same command differ")
    _, other, _ = run(lab, "--seed=100", "--sim-seeds=1")
    if other == out2:
        fails.append("--seed=100 prints the same table")

    rows, goals = table(out)
    for t in TRACES:
        for load in LOADS:
            for p in PLACES:
                if (t, load, p) not in rows:
                    fails.append(f"no row {t} {load} {p}")
            for ref in ("spdk", "spdk-10ms", "static"):
                if (t, load, ref) not in goals:
                    fails.append(f"no goal line {t} {load} vs {ref}")
    if fails:
        print("\n".join("FAIL: " + f for f in fails))
        return 1
    for t in TRACES:
        for load in LOADS:
            st = rows[(t, load, "static")]
            if st["cpu_x"] != 1.0 or st["p99_x"] != 1.0 or st["moves"] != 0:
                fails.append(f"{t} {load}: static is not its own yardstick")
            for ref in ("spdk", "spdk-10ms", "static"):
                kind, cx, gc, px, gp, ok = goals[(t, load, ref)]
                if kind != ("goal" if ref == "spdk" else "also"):
                    fails.append(f"{t} {load}: judged against {ref}")
                if gc != GOAL_CPU[load] or gp != GOAL_P99:
                    fails.append(f"{t} {load} vs {ref}: wrong goals")
                if ok != (cx <= gc and px <= gp):
                    fails.append(f"{t} {load} vs {ref}: verdict disagrees "
                                 "with its numbers")
            cand = rows[(t, load, "cqpoll_sched")]
            ok = judge(cand, load)
            print(f"{t:8} {load:5} cqpoll_sched vs static cpu "
                  f"{cand['cpu_x']:.3f}x p99 {cand['p99_x']:.3f}x: "
                  f"{'PASS' if ok else 'FAIL'}")
            if not ok:
                fails.append(f"{t} {load}: cqpoll_sched misses its goals "
                             "over static")
            if goals[(t, load, "static")][5] != ok:
                fails.append(f"{t} {load}: the goal line over static "
                             "disagrees with the table")
            for p in ("spdk", "spdk-10ms"):
                r = rows[(t, load, p)]
                if abs(r["cpu"] - r["lcores"]) > 0.1:
                    fails.append(f"{t} {load} {p}: CPU {r['cpu']} is not its "
                                 f"{r['lcores']} polling lcores")
    for t in TRACES:
        if rows[(t, "low", "spdk")]["lcores"] != 1.0:
            fails.append(f"{t} low: SPDK left light groups off its main lcore")
    if not (rows[("onoff", "high", "spdk-10ms")]["lcores"] >
            rows[("onoff", "high", "spdk-offered")]["lcores"] + 0.5):
        fails.append("onoff high: SPDK's own load measure gathers groups as "
                     "the offered load does")
    caught_static = [t for t in TRACES
                     if not judge(rows[(t, "low", "static")], "low")]
    caught_offered = [(t, load) for t in TRACES for load in LOADS
                      if not judge(rows[(t, load, "spdk-offered")], load)]
    print(f"control static as candidate: rejected on {caught_static}")
    print(f"control spdk-offered: rejected on {caught_offered}")
    if len(caught_static) != len(TRACES):
        fails.append("the judge passed static placement at low load")
    if not caught_offered:
        fails.append("the judge passed the offered-load variant everywhere")

    rc, _, err = run(lab, "--sim-seeds=0")
    if rc != 2:
        fails.append(f"--sim-seeds=0 exited {rc}, expected 2")
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
