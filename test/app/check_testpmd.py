#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end check of testpmd-cq: run it, read its JSON, assert on it.

Usage: check_testpmd.py TESTPMD CHECK... -- [app options]
CHECK:
  --expect-lost | --expect-no-lost
                  the run must (the negative control: in one of
                  NAIVE_ATTEMPTS runs; lost_wakeups or, on real devices,
                  recoveries_lost) or must not lose wake-ups; one of
                  them, or --expect-usage-error
  --csv           run twice with --csv=FILE: one header, two rows, and the
                  second row must hold the same values as the JSON
  --expect=KEY=VALUE
                  the JSON's top-level KEY (or OBJ.KEY) must be VALUE (a
                  number or string)
  --expect-positive=KEY
                  the JSON's top-level KEY (or OBJ.KEY) must be a number > 0
  --expect-csv-refused
                  --csv=FILE where FILE has another header: exit 1 with a
                  message, FILE unchanged
  --expect-usage-error=TEXT
                  the options are wrong: exit 2 with TEXT on stderr, no JSON
  --expect-error=TEXT
                  the run cannot be made: exit 1 with TEXT on stderr
  --expect-interrupted=SEC
                  send SIGINT after SEC seconds: the run must stop within
                  STOP_S seconds, exit 1 and say it was interrupted
  --lcores=N      give the EAL N lcores on (at most) the first two CPUs this
                  process may use, for --pollers=N-1
The JSON file is added by this script; the keys checked are the ones the
README and the issues name.
"""
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

REQUIRED = ["completions", "lost_wakeups", "cpu_pct", "latency_ns", "arms",
            "events", "spurious_events", "cqs", "policy", "group",
            "cpu_pct_process", "wakeups_per_s", "harness_cpu_pct",
            "harness_sleeps", "floors", "sleep_cpu_ns", "sleeps_timed"]
# In the order they must be: the maximum is the true one, not a bucket's.
PERCENTILES = ["p50", "p90", "p99", "p999", "p9999", "max"]
EXIT_FAIL = 1
EXIT_USAGE = 2
# How long a run may take to stop after SIGINT, on a loaded 2-core machine.
STOP_S = 10


def eal_args(lcores):
    """N lcores on two CPUs at most, as a 2-core machine has; else none."""
    if lcores is None:
        return []
    cpus = sorted(os.sched_getaffinity(0))[:2]
    return ["--lcores=(0-%d)@(%s)" % (lcores - 1, ",".join(map(str, cpus))),
            "--no-pci", "--no-huge", "--no-shconf", "--no-telemetry",
            "--log-level=lib.eal:error"]


def run_app(exe, opts, capture=False, eal=()):
    cmd = [exe] + list(eal) + ["--"] + opts
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, timeout=120,
                          capture_output=capture, text=True)


def check_usage_error(exe, opts, text, code=EXIT_USAGE):
    run = run_app(exe, opts, capture=True)
    print(run.stdout + run.stderr)
    if run.returncode != code or text not in run.stderr:
        print("expected exit", code, "and", repr(text), "on stderr; got exit",
              run.returncode)
        return 1
    if "Traceback" in run.stderr or "Sanitizer" in run.stderr:
        print("crashed instead of refusing the options")
        return 1
    print("ok: refused with", repr(text))
    return 0


def check_csv_refused(exe, opts):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "other.csv")
        other = "time,value\n1,2\n"
        with open(path, "w") as f:
            f.write(other)
        run = run_app(exe, opts + ["--csv=" + path], capture=True)
        print(run.stdout + run.stderr)
        with open(path) as f:
            after = f.read()
    want = "exists with other columns"
    if run.returncode != 1 or want not in run.stderr:
        print("expected exit 1 and", repr(want), "got exit", run.returncode)
        return 1
    if after != other:
        print("the other program's CSV was changed:", repr(after))
        return 1
    print("ok: a CSV with other columns is left alone")
    return 0


def check_interrupted(exe, opts, after):
    cmd = [exe, "--"] + opts
    print("$", " ".join(cmd), "# SIGINT after", after, "s", flush=True)
    app = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    time.sleep(after)
    app.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    try:
        out, err = app.communicate(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        app.kill()
        app.communicate()
        print("still running", STOP_S, "s after SIGINT")
        return 1
    print(out + err)
    want = "interrupted after"
    if app.returncode != EXIT_FAIL or want not in err:
        print("expected exit", EXIT_FAIL, "and", repr(want), "got exit",
              app.returncode)
        return 1
    print("ok: stopped %.1f s after SIGINT" % (time.monotonic() - t0))
    return 0


def flatten(res, header):
    """The JSON as CSV columns: an object's name before its keys. An object
    that is null in this run (group) has its columns, empty, in the header."""
    flat = {}
    for k, v in res.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                flat[k + "_" + kk] = vv
        elif v is None and k not in header:
            for h in header:
                if h.startswith(k + "_"):
                    flat[h] = None
        else:
            flat[k] = v
    return flat


def same_value(cell, value):
    if value is None:
        return cell == ""
    if isinstance(value, bool):
        return cell == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return float(cell) == float(value)
        except ValueError:
            return False
    return cell == value


def check_csv(path, res):
    """Two runs appended to one file: one header, two rows, as the JSON."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(lines) != 3 or len(rows) != 3:
        print("CSV: expected a header and two rows, got", len(lines), "lines")
        return 1
    header = rows[0]
    flat = flatten(res, header)
    if header != list(flat):
        print("CSV columns differ from the JSON keys:\n", header, "\n", list(flat))
        return 1
    if any(len(r) != len(header) for r in rows[1:]):
        print("CSV: a row has not one cell per column")
        return 1
    row = dict(zip(header, rows[2]))
    wrong = [k for k in header if not same_value(row[k], flat[k])]
    if wrong:
        print("CSV values differ from the JSON:",
              [(k, row[k], flat[k]) for k in wrong])
        return 1
    return 0


def check_result(res, expect):
    missing = [k for k in REQUIRED if k not in res]
    if missing:
        print("missing JSON keys:", missing)
        return 1
    for k in PERCENTILES:
        if k not in res["latency_ns"]:
            print("missing latency_ns." + k)
            return 1
    lat = res["latency_ns"]
    ordered = [lat[k] for k in PERCENTILES]
    if ordered != sorted(ordered) or lat["min"] > lat["p50"]:
        print("percentiles out of order:", lat)
        return 1
    # --harness=count (the peers' control) stamps none: 0 samples, checked
    # by --expect=latency_ns.samples=0.
    if lat["samples"] != res["completions"] and res.get("harness") != "count":
        print("latency samples", lat["samples"], "differ from completions",
              res["completions"])
        return 1
    if res["completions"] <= 0 or res.get("order_errors", 0) != 0:
        print("bad delivery:", res["completions"], res.get("order_errors"))
        return 1
    if res["completions"] != res["posted"]:
        print("posted", res["posted"], "but received", res["completions"])
        return 1
    # A group run (adaptive mode or several CQs) reports the group's counters.
    grouped = (res["mode"] == "adaptive" or res["cqs"] > 1 or
               res["pollers"] > 1)
    if grouped != (res["group"] is not None):
        print("group stats", "missing" if grouped else "unexpected")
        return 1
    if grouped and res["group"]["completions"] != res["completions"]:
        print("group completions", res["group"]["completions"], "differ from",
              res["completions"])
        return 1
    # The process's CPU time holds the poller thread's, over a wider window.
    if res["cpu_pct_process"] < res["cpu_pct"]:
        print("process CPU", res["cpu_pct_process"], "below the poller's",
              res["cpu_pct"])
        return 1
    # Wake-ups: the ends of the poller's sleeps, none in poll mode.
    g = res["group"]
    sleeps = (g["wakeups_event"] + g["wakeups_timeout"] + g["wakeups_xthread"]
              if grouped else res["waits"])
    if res["mode"] == "poll" and sleeps != 0:
        print("poll mode slept", sleeps, "times")
        return 1
    if abs(res["wakeups_per_s"] * res["poller_s"] - sleeps) > 1:
        print("wakeups_per_s", res["wakeups_per_s"], "over", res["poller_s"],
              "s is not the", sleeps, "wake-ups counted")
        return 1
    if expect == "--expect-no-lost" and res["lost_wakeups"] != 0:
        print("lost wake-ups:", res["lost_wakeups"])
        return 1
    # Real devices have no oracle: there a lost wake-up shows as a sleep
    # ended by the safety net that found work posted well before its
    # deadline (recoveries_lost; recoveries_late were posted as it ran out).
    if expect == "--expect-lost" and res["lost_wakeups"] == 0 and \
            res.get("recoveries_lost", res.get("timeout_recoveries", 0)) == 0:
        print("the naive transition lost no wake-up and the safety net "
              "found no lost one: the detector is blind")
        return 1
    return 0


def lookup(res, key):
    """res[KEY], or res[OBJ][KEY] for OBJ.KEY; None if absent."""
    v = res
    for part in key.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    return v


def check_values(res, values, positive):
    for k, v in values.items():
        if lookup(res, k) is None or not same_value(v, lookup(res, k)):
            print("expected", k, "=", v, "got", lookup(res, k))
            return 1
    for k in positive:
        v = lookup(res, k)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
            print("expected", k, "> 0, got", v)
            return 1
    return 0


NAIVE_ATTEMPTS = 3


def run_and_check(exe, opts, expect, use_csv, values, positive, lcores):
    """One run (two with --csv), checked: its JSON, or None on failure."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        table = os.path.join(tmp, "runs.csv")
        extra = ["--json=" + out] + (["--csv=" + table] if use_csv else [])
        for _ in range(2 if use_csv else 1):
            run = run_app(exe, opts + extra, eal=eal_args(lcores))
            if run.returncode != 0:
                print("testpmd-cq exited with", run.returncode)
                return None
        with open(out) as f:
            res = json.load(f)
        if check_result(res, expect) != 0 or check_values(res, values,
                                                          positive) != 0:
            return None
        if use_csv and check_csv(table, res) != 0:
            return None
    return res


def main():
    if "--" not in sys.argv[2:]:
        print(__doc__)
        return 2
    sep = sys.argv.index("--", 2)
    exe, checks, opts = sys.argv[1], sys.argv[2:sep], sys.argv[sep + 1:]
    expect, use_csv, values, positive, lcores = None, False, {}, [], None
    for c in checks:
        if c in ("--expect-lost", "--expect-no-lost"):
            expect = c
        elif c == "--csv":
            use_csv = True
        elif c.startswith("--expect=") and "=" in c[len("--expect="):]:
            k, v = c[len("--expect="):].split("=", 1)
            values[k] = v
        elif c.startswith("--expect-positive="):
            positive.append(c.split("=", 1)[1])
        elif c == "--expect-csv-refused":
            return check_csv_refused(exe, opts)
        elif c.startswith("--lcores="):
            lcores = int(c.split("=", 1)[1])
        elif c.startswith("--expect-interrupted="):
            return check_interrupted(exe, opts, float(c.split("=", 1)[1]))
        elif c.startswith("--expect-error="):
            return check_usage_error(exe, opts, c.split("=", 1)[1], EXIT_FAIL)
        elif c.startswith("--expect-usage-error="):
            return check_usage_error(exe, opts, c.split("=", 1)[1])
        else:
            print("unknown check", c, "\n" + __doc__)
            return 2
    if expect is None:
        print(__doc__)
        return 2
    # A negative control loses wake-ups by chance, at odds that fall when
    # other work crowds the CPUs: it must be caught in one of a few runs.
    attempts = NAIVE_ATTEMPTS if expect == "--expect-lost" else 1
    for attempt in range(1, attempts + 1):
        res = run_and_check(exe, opts, expect, use_csv, values, positive,
                            lcores)
        if res is not None:
            break
        if attempt < attempts:
            print("attempt", attempt, "of", attempts, "failed; again")
    if res is None:
        return 1
    lat = res["latency_ns"]
    print("ok: completions", res["completions"], "lost_wakeups", res["lost_wakeups"],
          "cpu_pct", res["cpu_pct"], "p99", lat["p99"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
