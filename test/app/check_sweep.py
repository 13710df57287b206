#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end check of testpmd-cq --sweep and its plot command.

Usage: check_sweep.py TESTPMD DEV

1. A tiny sweep on DEV (2 loads x 2 policies, 0.3 s each) exits 0 and its
   JSON holds exactly those 4 points, each with its labels, its run's full
   report and lost_wakeups 0, its p50 and p99 over the matching floor
   (the sweep's JSON carries the floors) and the harness's CPU; --csv,
   passed to every point, gets 4 rows.
2. The plot command the sweep prints makes non-empty PNGs from that JSON,
   and a sweep with --plot=DIR draws them itself (both skipped, saying so,
   when matplotlib is not installed).
3. Bad sweep options exit 2 without running anything.
4. Negative control: a sweep of the naive transition, which loses wake-ups,
   must exit 1 and record the loss, or the check above could not fail.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

LOADS = [2000, 20000]
POLICIES = ["interrupt", "adaptive"]
EXIT_SKIP = 77
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(cmd, timeout=300):
    print("$", " ".join(shlex.quote(c) for c in cmd), flush=True)
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)


def fail(msg, out=None):
    if out:
        print(out)
    print("FAIL:", msg)
    return 1


def check_sweep(exe, dev, tmp):
    out = os.path.join(tmp, "sweep.json")
    csv = os.path.join(tmp, "sweep.csv")
    r = run([exe, "--dev=" + dev, "--sweep",
             "--sweep-loads=" + ",".join(map(str, LOADS)),
             "--sweep-policies=" + ",".join(POLICIES),
             "--sweep-duration=0.3", "--json=" + out, "--csv=" + csv])
    print(r.stdout)
    if r.returncode != 0:
        return fail("the sweep exited %d" % r.returncode), None
    with open(out) as f:
        sweep = json.load(f)
    fl = sweep.get("floors")
    if not fl or fl["handoff_ns"]["p50"] <= 0 or fl["wakeup_ns"]["p50"] <= 0 \
            or fl["wakeup_ns"].get("cpu_per_wakeup", 0) <= 0:
        return fail("the sweep measured no floors: %s" % fl), None
    # Paced floors at each load, each with the stamps its schedule makes
    # in the point's duration: the pacing kept the schedule, and the reader
    # took every stamp, spinning and asleep.
    paced = {f["rate"]: f for f in fl.get("paced", [])}
    if sorted(paced) != sorted(LOADS):
        return fail("paced floors at %s, expected %s" %
                    (sorted(paced), LOADS)), None
    for rate, f in paced.items():
        want_n = round(rate * f["secs"])
        for kind in ("handoff_ns", "wakeup_ns"):
            k = f[kind]
            if f["secs"] != 0.3 or k["samples"] != want_n or k["p50"] <= 0 \
                    or k["p99"] < k["p50"]:
                return fail("paced %s at %d/s: %s, expected %d samples "
                            "in 0.3 s" % (kind, rate, f, want_n)), None
    pts = sweep["points"]
    got = sorted((p["load"], p["policy"]) for p in pts)
    want = sorted((l, p) for l in LOADS for p in POLICIES)
    if got != want:
        return fail("points %s, expected %s" % (got, want)), None
    for p in pts:
        run_ = p["run"]
        label = "%s/%s" % (p["load"], p["policy"])
        if not p["ok"] or p["exit_status"] != 0 or run_ is None:
            return fail("point %s failed: %s" % (label, p["error"])), None
        if p["lost_wakeups"] != 0 or run_["lost_wakeups"] != 0:
            return fail("point %s lost wake-ups" % label), None
        if p["dev"] != dev or run_["dev"] != dev or run_["rate"] != p["load"]:
            return fail("point %s ran dev %s at rate %s" %
                        (label, run_["dev"], run_["rate"])), None
        mode = p["policy"] if p["policy"] in ("poll", "interrupt") else "adaptive"
        if run_["mode"] != mode or run_["completions"] <= 0:
            return fail("point %s: mode %s, %s completions" %
                        (label, run_["mode"], run_["completions"])), None
        for k in ("p50", "p99", "p999", "max"):
            if k not in run_["latency_ns"]:
                return fail("point %s lacks latency_ns.%s" % (label, k)), None
        # A ratio may round to 0 (a floor slowed down by a loaded machine): only a
        # missing one fails.
        if p["floor"] not in ("wakeup_paced", "handoff_paced") or p.get("p50_x_floor") is None \
                or "harness_cpu_pct" not in run_:
            return fail("point %s: no ratio to a floor or no harness CPU" %
                        label), None
    s = sweep["summary"]
    if s["points"] != 4 or s["failed"] != 0 or s["lost_wakeups"] != 0 or not s["ok"]:
        return fail("summary %s" % s), None
    # Other options reach every point: each run adds its row to the CSV.
    with open(csv) as f:
        rows = f.read().splitlines()
    if len(rows) != 1 + len(want):
        return fail("the CSV has %d lines, expected a header and %d rows" %
                    (len(rows), len(want))), None
    plot = [l for l in r.stdout.splitlines() if "plot with: " in l]
    if len(plot) != 1:
        return fail("the sweep printed no plot command"), None
    print("ok: 4 points, lost_wakeups 0")
    return 0, shlex.split(plot[0].split("plot with: ", 1)[1])


def check_plot(cmd, tmp):
    outdir = cmd[cmd.index("-o") + 1]
    r = run(cmd)
    print(r.stdout)
    if r.returncode == EXIT_SKIP:
        print("SKIP (plot part): matplotlib is not installed")
        return EXIT_SKIP
    if r.returncode != 0:
        return fail("the plot command exited %d" % r.returncode)
    pngs = [os.path.join(outdir, f) for f in os.listdir(outdir)]
    if len(pngs) != 3:
        return fail("%d PNG files, expected 3: %s" % (len(pngs), pngs))
    for p in pngs:
        with open(p, "rb") as f:
            data = f.read()
        if not data.startswith(PNG_MAGIC) or len(data) < 10000:
            return fail("%s is not a drawn PNG (%d bytes)" % (p, len(data)))
    print("ok: plots", sorted(pngs))
    return 0


def check_sweep_plot(exe, dev, tmp):
    """--plot=DIR: the sweep runs the plot itself (only with matplotlib)."""
    outdir = os.path.join(tmp, "plots-by-sweep")
    r = run([exe, "--dev=" + dev, "--sweep", "--sweep-loads=2000",
             "--sweep-policies=interrupt", "--sweep-duration=0.3",
             "--json=" + os.path.join(tmp, "one.json"), "--plot=" + outdir])
    print(r.stdout)
    if r.returncode != 0 or "plots in " + outdir not in r.stdout:
        return fail("the sweep with --plot exited %d" % r.returncode)
    pngs = [f for f in os.listdir(outdir) if f.endswith(".png")]
    if len(pngs) != 3:
        return fail("--plot drew %d PNG files, expected 3" % len(pngs))
    print("ok: --plot drew", sorted(pngs))
    return 0


def check_usage(exe, tmp):
    j = "--json=" + os.path.join(tmp, "bad.json")
    bad = [
        ["--sweep"],                                         # no --json
        ["--sweep", j, "--sweep-loads=fast"],
        ["--sweep", j, "--sweep-loads=1000,,2000"],
        ["--sweep", j, "--sweep-loads=0"],
        ["--sweep", j, "--sweep-policies=sleepy"],
        ["--sweep", j, "--sweep-policies=spin:abc"],
        ["--sweep", j, "--sweep-duration=-1"],
        ["--sweep", j, "--sweep-devs=nodev"],
        ["--sweep", j, "--rate=1000"],
        ["--sweep", j, "--mode=poll"],
        ["--sweep", j, "--plot="],
        ["--sweep-loads=1000"],                              # without --sweep
        ["--sweep", j, "--sweep-policies=adaptive", "--transition=naive"],
        ["--sweep", j, "-i"],
        ["--sweep", j, "--engine=drain"],                   # no load to sweep
    ]
    for opts in bad:
        r = run([exe] + opts, timeout=60)
        if r.returncode != 2 or "Try" not in r.stdout:
            return fail("exit %d, expected 2 with a reason" % r.returncode, r.stdout)
        if os.path.exists(os.path.join(tmp, "bad.json")):
            return fail("a rejected sweep wrote its JSON")
        print(r.stdout.splitlines()[0])
    print("ok: %d bad sweeps rejected with exit 2" % len(bad))
    return 0


def check_lossy(exe, tmp):
    out = os.path.join(tmp, "naive.json")
    # Two points of half a second each (10000 and 25000 posts, the window
    # widened by the arm delay): the loss is a race, and one of them losing
    # a wake-up must fail the sweep.
    r = run([exe, "--dev=sw", "--arm=edge", "--transition=naive",
             "--fault-arm-delay=5000", "--naive-delay-ns=2000", "--sweep",
             "--sweep-loads=20000,50000", "--sweep-policies=interrupt",
             "--sweep-duration=0.5", "--json=" + out])
    print(r.stdout)
    if r.returncode != 1:
        return fail("a sweep that lost wake-ups exited %d, expected 1" % r.returncode)
    with open(out) as f:
        sweep = json.load(f)
    lossy = [p for p in sweep["points"] if p["lost_wakeups"]]
    s = sweep["summary"]
    if (not lossy or any(p["ok"] for p in lossy) or s["ok"] or
            s["points_with_lost_wakeups"] != len(lossy)):
        return fail("the lost wake-ups are not recorded: %s" % s)
    print("ok: the naive sweep lost", s["lost_wakeups"], "wake-ups and failed")
    return 0


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    exe, dev = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        r, plot = check_sweep(exe, dev, tmp)
        if r != 0:
            return r
        r = check_plot(plot, tmp)
        if r == 0:
            r = check_sweep_plot(exe, dev, tmp)
        elif r == EXIT_SKIP:
            r = 0
        return r or check_usage(exe, tmp) or check_lossy(exe, tmp)


if __name__ == "__main__":
    sys.exit(main())
