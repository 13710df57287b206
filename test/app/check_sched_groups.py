#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""testpmd-cq --groups: 8 poll groups on 2 poller lcores, moved by the
consolidating scheduler (issue 34).

Usage: check_sched_groups.py TESTPMD_CQ

Judged by counters (the "sched:" line and the JSON), not by timing:
1. At 1000/s (5 us of work a completion) one poller holds all 8 groups at
   the end of the traffic and the other holds none and is woken at most
   twice in the second half of the run (its late wake-ups: its epoll wait
   returning with something to do).
2. At full load (200000/s x 5 us: a whole lcore of work, more than the
   machine's two CPUs give it beside the generator) both pollers hold
   groups.
3. Both runs: no lost wake-up (the emulated device's oracle), no
   recovery judged lost, nothing missing or out of order, moves made.
4. Negative control: --groups-static (the same groups, never moved) at
   1000/s fails check 1: each poller holds 4 groups and is woken by their
   traffic.
5. --groups with --mode=poll is refused (exit 2).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

BASE = ["--dev=sw", "--groups=8", "--pollers=2", "--cqs=8", "--mode=interrupt",
        "--duration=1", "--work-ns=5000"]


def eal():
    cpus = sorted(os.sched_getaffinity(0))[:2]
    return ["--lcores=(0-2)@(%s)" % ",".join(map(str, cpus)), "--no-pci",
            "--no-huge", "--no-shconf", "--no-telemetry",
            "--log-level=lib.eal:error"]


def run(exe, opts):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        cmd = [exe] + eal() + ["--"] + BASE + opts + ["--json=" + path]
        print("$", " ".join(cmd), flush=True)
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=120)
        if p.returncode != 0:
            print(p.stdout, p.stderr)
            return None, None
        with open(path) as f:
            res = json.load(f)
    m = re.search(r"^sched: (.*)$", p.stdout, re.M)
    if m is None:
        print("no sched: line\n", p.stdout)
        return None, None
    kv = dict(x.split("=", 1) for x in m.group(1).split())
    print("sched:", m.group(1))
    return kv, res


def clean(res):
    bad = {k: res.get(k) for k in ("lost_wakeups", "recoveries_lost",
                                   "missing", "order_errors")
           if res.get(k) != 0}
    return bad


def consolidated(kv):
    """One poller holds every group; the other none, and sleeps."""
    groups = [int(kv["poller%d_groups" % k]) for k in (0, 1)]
    idle = 0 if groups[0] <= groups[1] else 1
    late = int(kv["poller%d_wakeups_late" % idle])
    ok = groups[idle] == 0 and late <= 2
    return ok, "poller%d holds %d groups, woken %d times late" % (
        idle, groups[idle], late)


def main():
    exe = sys.argv[1]
    fails = []

    kv, res = run(exe, ["--rate=1000"])
    if kv is None:
        return 1
    ok, why = consolidated(kv)
    print("low load:", why, "->", "PASS" if ok else "FAIL")
    if not ok:
        fails.append("1000/s not consolidated: " + why)
    if clean(res):
        fails.append("1000/s: %s" % clean(res))
    if int(kv["moves"]) == 0:
        fails.append("1000/s: no move")

    kv, res = run(exe, ["--rate=200000"])
    if kv is None:
        return 1
    held = [int(kv["poller%d_groups" % k]) for k in (0, 1)]
    print("full load: pollers hold", held)
    if min(held) == 0:
        fails.append("full load: a poller holds no group: %s" % held)
    if clean(res):
        fails.append("full load: %s" % clean(res))

    kv, res = run(exe, ["--rate=1000", "--groups-static"])
    if kv is None:
        return 1
    ok, why = consolidated(kv)
    print("control (static placement):", why, "->",
          "caught" if not ok else "NOT caught")
    if ok or int(kv["moves"]) != 0:
        fails.append("the control passed the consolidation check: " + why)
    if clean(res):
        fails.append("control: %s" % clean(res))

    p = subprocess.run([exe] + eal() + ["--", "--dev=sw", "--groups=2",
                                        "--cqs=2", "--mode=poll"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 2:
        fails.append("--groups with --mode=poll exited %d, expected 2"
                     % p.returncode)
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
