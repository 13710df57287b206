#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end check of testpmd-cq: run it, read its JSON, assert on it.

Usage: check_testpmd.py TESTPMD --expect-lost|--expect-no-lost -- [app options]
The JSON file is added by this script; the keys checked are the ones the
README and the issues name.
"""
import json
import os
import subprocess
import sys
import tempfile

REQUIRED = ["completions", "lost_wakeups", "cpu_pct", "latency_ns", "arms",
            "events", "spurious_events", "cqs", "policy", "group"]
# In the order they must be: the maximum is the true one, not a bucket's.
PERCENTILES = ["p50", "p90", "p99", "p999", "p9999", "max"]


def main():
    if len(sys.argv) < 4 or sys.argv[3] != "--":
        print(__doc__)
        return 2
    exe, expect, opts = sys.argv[1], sys.argv[2], sys.argv[4:]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        cmd = [exe, "--"] + opts + ["--json=" + out]
        print("$", " ".join(cmd), flush=True)
        run = subprocess.run(cmd, stdin=subprocess.DEVNULL, timeout=120)
        if run.returncode != 0:
            print("testpmd-cq exited with", run.returncode)
            return 1
        with open(out) as f:
            res = json.load(f)
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
    if lat["samples"] != res["completions"]:
        print("latency samples", lat["samples"], "differ from completions",
              res["completions"])
        return 1
    if res["completions"] <= 0 or res.get("order_errors", 0) != 0:
        print("bad delivery:", res["completions"], res.get("order_errors"))
        return 1
    # A group run (adaptive mode or several CQs) reports the group's counters.
    grouped = res["mode"] == "adaptive" or res["cqs"] > 1
    if grouped != (res["group"] is not None):
        print("group stats", "missing" if grouped else "unexpected")
        return 1
    if grouped and res["group"]["completions"] != res["completions"]:
        print("group completions", res["group"]["completions"], "differ from",
              res["completions"])
        return 1
    if expect == "--expect-no-lost" and res["lost_wakeups"] != 0:
        print("lost wake-ups:", res["lost_wakeups"])
        return 1
    if expect == "--expect-lost" and res["lost_wakeups"] == 0:
        print("the naive transition lost no wake-up: the detector is blind")
        return 1
    print("ok: completions", res["completions"], "lost_wakeups", res["lost_wakeups"],
          "cpu_pct", res["cpu_pct"], "p99", lat["p99"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
