#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tpcq-peer and devtools/run-peers.py's verdicts.

usage: check_peers.py run TPCQ_PEER     every peer of this build runs briefly,
                                        ping-pong and rate, and reports every
                                        message once (77 if none can run here)
       check_peers.py verdicts          the verdict rules on made-up medians:
                                        a dominating peer FAILs, a p50 over
                                        1.1x FAILs, a gap inside the spread
                                        is "too noisy to judge", so are fewer
                                        than 3 rounds and a sender behind its
                                        open-loop load, a clear run PASSes
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

PEERS = [("ucx-busy", "ucx:posix"), ("ucx-wait", "ucx:tcp"),
         ("ofi-spin", "ofi:tcp"), ("ofi-sread", "ofi:tcp"),
         ("uring-wait", "uring"), ("uring-peek", "uring"), ("uring-defer", "uring")]


def run(exe):
    ran = 0
    for peer, dev in PEERS:
        for eng in (["--engine=pingpong"], ["--engine=rate", "--rate=2000"]):
            with tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "p.json")
                r = subprocess.run([exe, "--peer=" + peer, "--dev=" + dev,
                                    "--duration=0.2", "--json=" + out] + eng,
                                   stdin=subprocess.DEVNULL, capture_output=True,
                                   text=True, timeout=60)
                if r.returncode == 2 and "no such peer in this build" in r.stderr:
                    print("%s: not in this build" % peer)
                    break
                if r.returncode != 0:
                    print("%s %s: exit %d: %s" % (peer, eng, r.returncode, r.stderr))
                    return 1
                j = json.load(open(out))
                ok = j["completions"] == j["posted"] > 0 and \
                    j["latency_ns"]["samples"] == j["completions"]
                print("%s %s: %d messages, p50 %d ns, cpu %.1f%%: %s" %
                      (peer, eng[-1], j["completions"], j["latency_ns"]["p50"],
                       j["cpu_pct"], "ok" if ok else "FAIL"))
                if not ok:
                    return 1
                ran += 1
    # Bad input is refused with exit 2, never a crash.
    r = subprocess.run([exe, "--peer=ucx-nope", "--dev=ucx:tcp"],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 2:
        print("a bad --peer must exit 2, got", r.returncode)
        return 1
    return 0 if ran else 77


def point(p50, p99, cpu, spread=0.0, n=3, load="pingpong", rate=0.0):
    return {"n": n, "load": load, "rate": rate,
            "p50": p50, "p99": p99, "cpu": cpu, "p50_spread": p50 * spread,
            "p99_spread": p99 * spread, "cpu_spread": cpu * spread, "lost": 0,
            "recoveries": 0, "cmd": "x"}


def verdicts():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "devtools", "run-peers.py")
    spec = importlib.util.spec_from_file_location("run_peers", path)
    rp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rp)
    meta = {"steal_pct": 1.5, "load_before": [0.5], "load_after": [0.6], "ncpu": 2}

    def judge(pts):
        summ = {("ucx-tcp", p["load"], v): p for v, p in pts.items()}
        lines, fails = rp.verdicts(summ, meta, [])
        return lines[0], fails

    good = {"cqpoll-poll": point(10, 20, 100), "cqpoll-interrupt": point(14, 100, 20),
            "cqpoll-adaptive": point(11, 25, 30), "ucx-busy": point(10, 26, 100),
            "ucx-wait": point(14, 175, 25)}
    cases = [
        ("clear", good, "PASS", 0),
        ("dominated", dict(good, **{"ucx-wait": point(14, 20, 20)}), "dominates", 1),
        ("interrupt slow", dict(good, **{"cqpoll-interrupt": point(20, 100, 20)}),
         "interrupt p50 1.43x", 1),
        ("noisy", {k: point(v["p50"], v["p99"], v["cpu"], spread=2.0)
                   for k, v in good.items()}, "machine too noisy to judge", 0),
        ("two rounds", {k: point(v["p50"], v["p99"], v["cpu"], n=2)
                        for k, v in good.items()}, "machine too noisy to judge", 0),
        ("sustained load", {k: point(v["p50"], v["p99"], v["cpu"], load=20000,
                                     rate=19900) for k, v in good.items()}, "PASS", 0),
        ("sender behind", {k: point(v["p50"], v["p99"], v["cpu"], load=20000,
                                    rate=5000) for k, v in good.items()},
         "machine too noisy to judge", 0),
    ]
    bad = 0
    for name, pts, want, fails in cases:
        line, f = judge(pts)
        ok = want in line and f == fails and not (want != "PASS" and "PASS" in line)
        print("%-15s %s\n  %s" % (name, "ok" if ok else "FAIL", line))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2]))
    if len(sys.argv) == 2 and sys.argv[1] == "verdicts":
        sys.exit(verdicts())
    print(__doc__)
    sys.exit(2)
