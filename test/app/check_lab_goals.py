#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""devtools/check-lab-goals.py: its summary agrees with its own lines.

Usage: check_lab_goals.py CHECKER LAB

Runs the checker on a small grid (onoff and periodic, 1000 and 5000/s,
penalties 1 and 10, 3 seeds of 0.2 s, both models of the machine), then
recounts, from the per-run lines, how many runs of each goal, model and
policy pass, miss and are not judged, and compares each summary line and
the totals with the recount; every per-run line names a run of the grid,
and each run gives the bound goal of every policy under each model: the
reference one (told wake-ups) and the measured profile with untold
wake-ups, whose commands must say so (--sim-cost=measured:, --sim-wake=
untold; a checker that runs the reference alone fails this). The negative
control: the same recount on the output with one per-run PASS turned into
MISS must disagree.
"""
import re
import subprocess
import sys

TRACES = ["onoff", "periodic"]
RATES = [1000, 5000]
PENS = [1, 10]
MODELS = ["reference", "measured"]
POLICIES = ["spin:0", "adaptive", "hybrid", "target-p99:100",
            "target-p99:60"]
RUN = re.compile(r"^(PASS|MISS|SKIP) (\S+) (.+?) (\S+) (\d+)/s p(\d+): (.+)$")
SUM = re.compile(r"^(PASS|MISS) (\S+) (.+?): (\d+) of (\d+) runs pass, "
                 r"(\d+) miss, (\d+) not judged$")
TOTAL = re.compile(r"^total: (\d+) goals pass, (\d+) miss$")


def recount(out):
    """The disagreements between the summary and the lines above it."""
    runs, summary, total, bad = {}, {}, None, []
    in_sum = False
    for line in out.splitlines():
        if line.startswith("summary,"):
            in_sum = True
            continue
        m = TOTAL.match(line)
        if m:
            total = (int(m.group(1)), int(m.group(2)))
            continue
        if in_sum:
            m = SUM.match(line)
            if m:
                summary[(m.group(2), m.group(3))] = (
                    m.group(1), int(m.group(4)), int(m.group(5)),
                    int(m.group(6)), int(m.group(7)))
            continue
        m = RUN.match(line)
        if m:
            v, name, pol, t, rate, pen = m.groups()[:6]
            if t not in TRACES or int(rate) not in RATES or int(pen) not in PENS:
                bad.append("a line of no run of the grid: " + line)
            c = runs.setdefault((name, pol), {"PASS": 0, "MISS": 0, "SKIP": 0,
                                              "where": set()})
            c[v] += 1
            c["where"].add((t, rate, pen))
    for key, c in runs.items():
        want = ("PASS" if c["MISS"] == 0 else "MISS", c["PASS"],
                c["PASS"] + c["MISS"], c["MISS"], c["SKIP"])
        if summary.get(key) != want:
            bad.append("%s %s: lines say %s, summary %s" % (
                key[0], key[1], want, summary.get(key)))
    for key in summary:
        if key not in runs:
            bad.append("summary of %s %s without lines" % key)
    npass = sum(1 for s in summary.values() if s[0] == "PASS")
    if total != (npass, len(summary) - npass):
        bad.append("total %s, summary lines %s" % (
            total, (npass, len(summary) - npass)))
    nruns = len(TRACES) * len(RATES) * len(PENS)
    for model in MODELS:
        for p in POLICIES:
            got = runs.get(("bound@" + model, p), {"where": set()})["where"]
            if len(got) != nruns:
                bad.append("bound@%s %s: %d runs of %d" % (model, p, len(got),
                                                          nruns))
    cmds = [l for l in out.splitlines() if l.startswith("$ ")]
    measured = [c for c in cmds if "--sim-cost=measured:" in c]
    if len(measured) != nruns or not all("--sim-wake=untold" in c
                                         for c in measured):
        bad.append("%d runs of the measured profile with untold wake-ups, "
                   "not %d" % (len(measured), nruns))
    return bad


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    cmd = [sys.executable, sys.argv[1], sys.argv[2], "--seeds=3",
           "--duration=0.2", "--traces=" + ",".join(TRACES),
           "--rates=" + ",".join(str(r) for r in RATES),
           "--penalties=" + ",".join(str(p) for p in PENS)]
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=600)
    if r.returncode not in (0, 1) or "total:" not in r.stdout:
        print(r.stdout + r.stderr)
        raise SystemExit("FAIL: the checker exited %d" % r.returncode)
    bad = recount(r.stdout)
    if bad:
        print(r.stdout)
        raise SystemExit("FAIL: the summary disagrees with its lines:\n  " +
                         "\n  ".join(bad))
    n = len([l for l in r.stdout.splitlines() if RUN.match(l)])
    print("ok: the summary agrees with its %d per-run lines" % n)
    lines = r.stdout.splitlines()
    for i, l in enumerate(lines):
        if RUN.match(l) and l.startswith("PASS "):
            lines[i] = "MISS " + l[5:]
            break
    if not recount("\n".join(lines)):
        raise SystemExit("FAIL: a per-run line turned from PASS to MISS went "
                         "unnoticed by the recount")
    print("ok: negative control: one line flipped, the recount disagrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
