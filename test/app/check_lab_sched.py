#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The lab's placement of poll groups, cqpoll-lab --sim-sched (issue 34).

Usage: check_lab_sched.py CQPOLL_LAB

1. The same command twice prints the same bytes; another --seed, other
   numbers (the table is computed, not a constant).
2. The table has the 12 rows (onoff and diurnal, low and high load, static,
   cqpoll_sched, spdk), static's ratios are 1 and it never moves a group.
3. The judge, from the table's numbers (not from the program's own goal
   lines, which must agree with it): cqpoll_sched's CPU at most 0.70x
   static's at low load and at most 1.00x at high load, its p99 at most
   1.10x static's at both, on both traces, over 10 seeds.
4. Negative controls, the same judge on other rows: static placement judged
   as the candidate (CPU 1.00x at low load) and SPDK's rule (its p99 at high
   load, where its 20 % rule gathers every light group on its main core)
   must be rejected. A judge that passes everything would pass them.
5. SPDK's rule keeps its own fact: at low load every group (all under 20 %
   busy) is on its main lcore.
6. A bad option exits 2.
"""
import subprocess
import sys

PLACES = ["static", "cqpoll_sched", "spdk"]
TRACES = ["onoff", "diurnal"]
LOADS = ["low", "high"]
GOAL_CPU = {"low": 0.70, "high": 1.00}
GOAL_P99 = 1.10


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
        if line.startswith("goal "):
            goals[(f[1], f[2], f[3].rstrip(":"))] = line.endswith("PASS")
    return rows, goals


def judge(row, load):
    return row["cpu_x"] <= GOAL_CPU[load] and row["p99_x"] <= GOAL_P99


def main():
    lab = sys.argv[1]
    fails = []

    rc, out, err = run(lab)
    rc2, out2, _ = run(lab)
    if rc != 0 or rc2 != 0:
        print(f"--sim-sched exited {rc}/{rc2}: {err}")
        return 1
    print(out)
    if out != out2:
        fails.append("two runs of the same command differ")
    _, other, _ = run(lab, "--seed=100", "--sim-seeds=3")
    if other == out:
        fails.append("--seed=100 prints the same table")

    rows, goals = table(out)
    for t in TRACES:
        for load in LOADS:
            for p in PLACES:
                if (t, load, p) not in rows:
                    fails.append(f"no row {t} {load} {p}")
    if fails:
        print("\n".join("FAIL: " + f for f in fails))
        return 1
    for t in TRACES:
        for load in LOADS:
            st = rows[(t, load, "static")]
            if st["cpu_x"] != 1.0 or st["p99_x"] != 1.0 or st["moves"] != 0:
                fails.append(f"{t} {load}: static is not its own yardstick")
            cand = rows[(t, load, "cqpoll_sched")]
            ok = judge(cand, load)
            print(f"{t:8} {load:5} cqpoll_sched cpu {cand['cpu_x']:.3f}x "
                  f"p99 {cand['p99_x']:.3f}x: {'PASS' if ok else 'FAIL'}")
            if not ok:
                fails.append(f"{t} {load}: cqpoll_sched misses the goals")
            for p in ("cqpoll_sched", "spdk"):
                if goals.get((t, load, p)) != judge(rows[(t, load, p)], load):
                    fails.append(f"{t} {load} {p}: the program's goal line "
                                 "disagrees with its table")
    # SPDK's rule as its source says: groups under 20 % busy all on the
    # main lcore (at low load every group is).
    for t in TRACES:
        if rows[(t, "low", "spdk")]["lcores"] != 1.0:
            fails.append(f"{t} low: SPDK's rule left light groups off its "
                         "main lcore")
    # Controls: the same judge must reject these.
    caught_static = [(t, load) for t in TRACES for load in ["low"]
                     if not judge(rows[(t, load, "static")], load)]
    caught_spdk = [(t, load) for t in TRACES for load in LOADS
                   if not judge(rows[(t, load, "spdk")], load)]
    print(f"control static as candidate: rejected on {caught_static}")
    print(f"control spdk's rule: rejected on {caught_spdk}")
    if len(caught_static) != len(TRACES):
        fails.append("the judge passed static placement at low load")
    if not caught_spdk:
        fails.append("the judge passed SPDK's rule everywhere")

    rc, _, err = run(lab, "--sim-seeds=0")
    if rc != 2:
        fails.append(f"--sim-seeds=0 exited {rc}, expected 2")
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
