#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The ninja targets that some suites' tests need, one a line.

usage: devtools/test-targets.py BUILDDIR [SUITES]

SUITES as devtools/test-all.sh's run_tests takes them: empty for every
test, "A,B" for the tests of suites A and B, "!A,B" for every test but
those of suites A and B. Prints the files of the build targets those tests
depend on (meson introspect: the test's program and its `depends:`), what
`meson test` itself builds before a run without --no-rebuild, and every
shared module (plugins loaded at run time); ninja builds the libraries they
link with. A build directory whose tests run in only
some suites (devtools/test-all.sh's build-asan) need not build the rest. Exits 1 if no test matches: a phase must not build and run nothing.
"""

import json
import os
import sys


def suites_of(test):
    names = set()
    for s in test["suite"]:
        names.add(s)
        # "project:suite": `meson test --suite suite` selects it too.
        names.add(s.split(":", 1)[-1])
    return names


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: devtools/test-targets.py BUILDDIR [SUITES]")
    builddir = sys.argv[1]
    sel = sys.argv[2] if len(sys.argv) == 3 else ""
    info = os.path.join(builddir, "meson-info")
    with open(os.path.join(info, "intro-tests.json"), encoding="utf-8") as f:
        tests = json.load(f)
    with open(os.path.join(info, "intro-targets.json"), encoding="utf-8") as f:
        intro = json.load(f)
    targets = {t["id"]: t["filename"] for t in intro}
    # Plugins (testpmd-cq's devices) are dlopen()ed at run time: no test
    # names them, the programs that load them do. Always built: a few
    # small modules.
    modules = [p for t in intro if t["type"] == "shared module" for p in t["filename"]]

    negate = sel.startswith("!")
    wanted = {s for s in sel.lstrip("!").split(",") if s}
    chosen = []
    for t in tests:
        hit = bool(suites_of(t) & wanted)
        if not wanted or hit != negate:
            chosen.append(t)
    if not chosen:
        print(f"test-targets: no test in {builddir} for '{sel}'", file=sys.stderr)
        return 1

    top = os.path.realpath(builddir)
    out = {os.path.relpath(os.path.realpath(p), top) for p in modules}
    for t in chosen:
        for dep in t["depends"]:
            for path in targets.get(dep, []):
                out.add(os.path.relpath(os.path.realpath(path), top))
    for path in sorted(out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
