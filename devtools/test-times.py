#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where the suite's time goes: each test's wall time, from meson's log.

usage: devtools/test-times.py [--top N] BUILDDIR...

For each build directory, reads meson-logs/testlog.json (what the last
`meson test` there ran) and `meson introspect --tests` (whether a test runs
alone), and prints the phase's sum of test times, split into tests that run
alone (is_parallel: false, their times add up to the phase's wall time) and
tests that may share the CPUs, then the N longest tests with their suites.
Exits 2 when a directory has no test log.
"""

import argparse
import json
import os
import subprocess
import sys


def load(builddir):
    path = os.path.join(builddir, "meson-logs", "testlog.json")
    try:
        with open(path, encoding="utf-8") as f:
            runs = [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        sys.exit(f"test-times: {path}: {e.strerror}")
    intro = subprocess.run(["meson", "introspect", builddir, "--tests"],
                           capture_output=True, text=True, check=False)
    serial = {}
    if intro.returncode == 0:
        for t in json.loads(intro.stdout):
            serial[t["name"]] = not t.get("is_parallel", True)
    out = []
    for r in runs:
        # "project:suite / name" in the log.
        name = r["name"].split(" / ", 1)[-1]
        suite = r["name"].split(" / ", 1)[0].split(":", 1)[-1]
        out.append((r["duration"], name, suite, serial.get(name), r["result"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("builddirs", nargs="+")
    a = ap.parse_args()
    every = []
    for b in a.builddirs:
        runs = load(b)
        alone = sum(d for d, _, _, s, _ in runs if s)
        shared = sum(d for d, _, _, s, _ in runs if not s)
        print(f"{b}: {len(runs)} tests, {alone:.1f} s alone (serial), "
              f"{shared:.1f} s that may share the CPUs")
        every += [(d, f"{b}: {n}", su, s, r) for d, n, su, s, r in runs]
    every.sort(reverse=True)
    print(f"\nthe {a.top} longest:")
    for d, n, su, s, r in every[:a.top]:
        print(f"{d:8.2f} s  {'alone ' if s else 'shared'}  {r:12s} {n}  [{su}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
