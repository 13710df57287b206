#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""testpmd-cq's output files (--json, --csv) on paths that misbehave.

Usage: check_outfiles.py TESTPMD

Each case runs a short emulated run. A path that cannot take the results is
refused before the run (exit 1, the reason on stderr, no results table on
stdout) and within seconds: an unbounded read of /dev/zero or a blocking open
of a FIFO runs into the timeout instead. A CSV whose last line lacks its line
break gets the new row on a line of its own.
"""
import csv
import os
import subprocess
import sys
import tempfile

OPTS = ["--dev=sw", "--rate=20000", "--duration=0.2"]
# Far longer than a refusal takes, far shorter than reading /dev/zero into
# memory until the machine gives up.
TIMEOUT_S = 20
EXIT_FAIL = 1
TABLE = "completions_per_s"


def run(exe, extra):
    cmd = [exe, "--"] + OPTS + extra
    print("$", " ".join(cmd), flush=True)
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, text=True,
                              capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print("FAIL: still running after", TIMEOUT_S, "s")
        return None


def refused(exe, extra, want, path=None):
    """Refused before the run with want on stderr; path, if given, unchanged."""
    before = None
    if path is not None and os.path.isfile(path):
        with open(path, "rb") as f:
            before = f.read()
    r = run(exe, extra)
    if r is None:
        return 1
    print(r.stderr.strip())
    if r.returncode != EXIT_FAIL or want not in r.stderr:
        print("FAIL: expected exit", EXIT_FAIL, "and", repr(want), "; got exit",
              r.returncode)
        return 1
    if TABLE in r.stdout:
        print("FAIL: refused only after the run (the results table was printed)")
        return 1
    if before is not None:
        with open(path, "rb") as f:
            if f.read() != before:
                print("FAIL:", path, "was changed")
                return 1
    print("ok")
    return 0


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def appended(exe, tmp, cut, rows_before):
    """A CSV of ours with cut bytes dropped from its end gets one more row of
    full width, on its own line."""
    path = os.path.join(tmp, "cut%d-%d.csv" % (cut, rows_before))
    r = run(exe, ["--csv=" + path])
    if r is None or r.returncode != 0:
        print("FAIL: first run")
        return 1
    if rows_before == 1:
        with open(path) as f:
            header = f.readline()
        with open(path, "w") as f:
            f.write(header)
    with open(path, "rb+") as f:
        f.seek(-cut, os.SEEK_END)
        f.truncate()
    r = run(exe, ["--csv=" + path])
    if r is None or r.returncode != 0:
        print("FAIL: second run:", r and r.stderr)
        return 1
    rows = rows_of(path)
    widths = [len(x) for x in rows]
    print("rows", len(rows), "widths", widths)
    if len(rows) != rows_before + 1 or len(set(widths)) != 1:
        print("FAIL: expected", rows_before + 1, "rows of", widths[0],
              "fields: the row was glued onto the last line")
        return 1
    print("ok")
    return 0


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    exe = sys.argv[1]
    fails = 0
    not_reg = "is not a regular file"
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        for extra in (["--csv=/dev/zero"], ["--csv=/dev/full"],
                      ["--json=/dev/full"], ["--json=/dev/zero"],
                      ["--json=" + fifo], ["--csv=" + fifo], ["--csv=" + tmp]):
            fails += refused(exe, extra, not_reg)
        missing = os.path.join(tmp, "no-such-dir", "out")
        fails += refused(exe, ["--json=" + missing + ".json"], "cannot create")
        fails += refused(exe, ["--csv=" + missing + ".csv"], "cannot create")
        if os.path.exists(os.path.dirname(missing)):
            print("FAIL: the missing directory was created")
            fails += 1

        other = os.path.join(tmp, "other.csv")
        with open(other, "w") as f:
            f.write("time,value\n1,2\n")
        fails += refused(exe, ["--csv=" + other], "exists with other columns",
                         other)
        huge = os.path.join(tmp, "huge.csv")
        with open(huge, "w") as f:
            f.write("x" * (1 << 20))
        fails += refused(exe, ["--csv=" + huge], "first line longer than", huge)
        # Both files are checked: a good JSON does not let a bad CSV through.
        fails += refused(exe, ["--json=" + os.path.join(tmp, "ok.json"),
                               "--csv=/dev/zero"], not_reg)
        if os.path.exists(os.path.join(tmp, "ok.json")):
            print("FAIL: the JSON was written by a refused run")
            fails += 1

        # The header alone, without its line break; then a header and a row
        # without the row's.
        fails += appended(exe, tmp, 1, 1)
        fails += appended(exe, tmp, 1, 2)
    print("FAILED:" if fails else "ok:", fails, "case(s) failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
