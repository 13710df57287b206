#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""devtools/verdict.py's page part, shared by run-peers.py and run-wakeup.py:
the load-average guard (0.3 per CPU, --force overrides and marks the section
LOADED), the run's conditions, and the section's place on the results page
(where it was; else after a given section; else before "## Policy lab";
else at the end), on a page in a temporary folder.

Negative controls, each caught by the same checks: a guard on the load
average alone (not per CPU), and a writer that appends the section instead
of replacing it.

usage: check_verdict_page.py
"""
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(TOP, "devtools"))
import verdict  # noqa: E402

B1, E1 = "<!-- one: begin -->", "<!-- one: end -->"
B2, E2 = "<!-- two: begin -->", "<!-- two: end -->"
PAGE = "# Results\n\nIntro.\n\n## Policy lab\n\nLab text.\n"

# load, CPUs, force, may write, LOADED banner
GUARD_CASES = [
    (0.10, 1, False, True, False),
    (0.30, 1, False, True, False),     # at the limit: still quiet
    (0.31, 1, False, False, True),
    (0.59, 2, False, True, False),     # per CPU: 0.295
    (0.61, 2, False, False, True),
    (0.61, 2, True, True, True),       # forced: written, marked
    (1.00, 4, False, True, False),
    (0.50, 0, False, False, True),     # no CPU count: taken as one
]


def naive_guard(tool, load, ncpu, force):
    """The load average against 0.3 whatever the CPUs."""
    return force or load <= verdict.QUIET_LOAD


def naive_write(page, sec, begin, end, after=(), before="## Policy lab"):
    """Appends every time: a second run leaves two sections."""
    with open(page, "a") as f:
        f.write("\n".join(sec) + "\n")


def check_guard(guard):
    wrong = []
    for load, ncpu, force, want, banner in GUARD_CASES:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            got = guard("check", load, ncpu, force)
        if got != want:
            wrong.append("guard(%.2f, %d CPUs, force=%s) = %s, want %s" %
                         (load, ncpu, force, got, want))
        if not got and not err.getvalue().startswith("check: --page: load average"):
            wrong.append("guard(%.2f, %d CPUs): refused without saying so" % (load, ncpu))
        b = verdict.loaded_banner(load, ncpu)
        if bool(b) != banner or (b and not b[0].startswith("# LOADED: load average %.2f"
                                                              % load)):
            wrong.append("loaded_banner(%.2f, %d CPUs) = %r" % (load, ncpu, b))
    return wrong


def check_write(write):
    wrong = []
    with tempfile.TemporaryDirectory() as d:
        page = os.path.join(d, "page.md")
        with open(page, "w") as f:
            f.write(PAGE)
        # Not there yet: before the policy lab.
        write(page, [B1, "first", E1], B1, E1)
        want = ("# Results\n\nIntro.\n\n" + B1 + "\nfirst\n" + E1 +
                "\n\n## Policy lab\n\nLab text.\n")
        with open(page) as f:
            got = f.read()
        if got != want:
            wrong.append("first write:\n%s" % got)
        # There: replaced where it is, the rest kept.
        write(page, [B1, "second", E1], B1, E1)
        with open(page) as f:
            got = f.read()
        if got != want.replace("first", "second"):
            wrong.append("rewrite:\n%s" % got)
        # Another section after it, then again (replaced in place).
        for text in ("third", "fourth"):
            write(page, [B2, text, E2], B2, E2, after=[E1])
        with open(page) as f:
            got = f.read()
        want2 = want.replace("first", "second").replace(
            E1 + "\n\n", E1 + "\n\n" + B2 + "\nfourth\n" + E2 + "\n\n")
        if got != want2:
            wrong.append("a section after another:\n%s" % got)
        # No place named: at the end.
        with open(page, "w") as f:
            f.write("# Bare\n")
        write(page, [B1, "x", E1], B1, E1)
        with open(page) as f:
            got = f.read()
        if got != "# Bare\n\n" + B1 + "\nx\n" + E1 + "\n\n":
            wrong.append("at the end:\n%s" % got)
    return wrong


def check_conditions():
    wrong = []
    c = verdict.run_conditions(TOP, "devtools/tool.py", 0, 0.25)
    want = subprocess.run(["git", "-C", TOP, "describe", "--always", "--dirty",
                           "--abbrev=12"], capture_output=True, text=True)
    if want.returncode == 0 and c["commit"] != want.stdout.strip():
        wrong.append("commit %s, want %s" % (c["commit"], want.stdout.strip()))
    if c["started"] != "1970-01-01 00:00 UTC":
        wrong.append("started %s, want 1970-01-01 00:00 UTC" % c["started"])
    if not c["command"].startswith("devtools/tool.py"):
        wrong.append("command %s" % c["command"])
    if c["load_before"] != 0.25 or not re.match(r"^\d", "%s" % c["load_after"]) or \
            c["ncpu"] < 1:
        wrong.append("load and CPUs: %r" % c)
    return wrong


def main():
    bad = 0
    for name, wrong in (("guard", check_guard(verdict.load_guard)),
                        ("section", check_write(verdict.write_section)),
                        ("conditions", check_conditions())):
        print("  %-10s %s" % (name, "ok" if not wrong else "WRONG"))
        for w in wrong:
            print("    " + w)
        bad += len(wrong)
    for name, wrong in (("guard on the load alone", check_guard(naive_guard)),
                        ("append, not replace", check_write(naive_write))):
        print("control %-28s %d check(s) wrong: %s" % (
            name, len(wrong), "caught" if wrong else "NOT CAUGHT"))
        if not wrong:
            bad += 1
    print("check_verdict_page: %s" % ("FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
