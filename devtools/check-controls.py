#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run every negative control of a build N times and tell each one's catch rate.

usage: devtools/check-controls.py [--runs N] [--match REGEX] [--markdown] BUILDDIR

A negative control is a test that passes only when the harness catches the
naive or broken variant it runs (the naive transition, a mutant of the
library, a model with the defect put back): doc/guides/testing.md lists
them. They are found by name (CONTROL below) among the build's tests;
--match narrows them down. Each runs N times (one at a time, as the suite
runs the serial ones, round after round), and one line per control says how
many runs caught it and how long a run took. A control on a device this
machine lacks skips (77) and is listed as skipped. Exits 1 if any control
was caught in fewer than N runs, 0 otherwise.
"""

import argparse
import json
import os
import re
import subprocess
import sys

# The controls' names: the naive transition, the library's mutants and the
# harness's own controls.
CONTROL = re.compile(r"naive|control|old-routing|-static$|-caught$|wrong-cmd|"
                     r"eal-only|no-async|no-net|repoll-one|take-any|"
                     r"timeout-active-only|log-default")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--match", default="")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("builddir")
    a = ap.parse_args()
    if a.runs < 1:
        sys.exit("check-controls: --runs must be 1 or more")
    intro = subprocess.run(["meson", "introspect", a.builddir, "--tests"],
                           capture_output=True, text=True, check=False)
    if intro.returncode != 0:
        sys.exit(f"check-controls: {a.builddir}: not a meson build directory")
    tests = json.loads(intro.stdout)
    sel = re.compile(a.match)
    names = [t["name"] for t in tests
             if CONTROL.search(t["name"]) and sel.search(t["name"])]
    if not names:
        sys.exit("check-controls: no control matches")
    suites = {t["name"]: "+".join(t["suite"]) for t in tests}
    # Round by round, not meson's --repeat: that stops at a first failure.
    runs = {}
    for rnd in range(a.runs):
        subprocess.run(["meson", "test", "-C", a.builddir, "--no-rebuild",
                        "--num-processes", "1", "--logbase", "controls"] + names,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        log = os.path.join(a.builddir, "meson-logs", "controls.json")
        with open(log, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                name = r["name"].split(" / ", 1)[-1]
                runs.setdefault(name, []).append((r["result"], r["duration"]))
        print(f"check-controls: round {rnd + 1} of {a.runs} done", file=sys.stderr)
    short = 0
    if a.markdown:
        print("| control | suite | caught | seconds a run (mean) |")
        print("|---|---|---|---|")
    for name in names:
        rs = runs.get(name, [])
        caught = sum(1 for res, _ in rs if res in ("OK", "EXPECTEDFAIL"))
        skipped = all(res == "SKIP" for res, _ in rs) and rs
        mean = sum(d for _, d in rs) / len(rs) if rs else 0.0
        if skipped:
            verdict = "skipped (no such device here)"
        else:
            verdict = f"{caught} of {len(rs)}"
            if caught < a.runs:
                short += 1
        if a.markdown:
            print(f"| `{name}` | {suites.get(name, '')} | {verdict} | {mean:.2f} |")
        else:
            print(f"{verdict:>10s}  {mean:6.2f} s  {name}  [{suites.get(name, '')}]")
    if short:
        print(f"check-controls: {short} control(s) caught in fewer than {a.runs} runs")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
