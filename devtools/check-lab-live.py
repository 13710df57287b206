#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Does the policy lab agree with a live run of the same trace?

usage: devtools/check-lab-live.py TESTPMD [--policy=SPEC] [--rate=N]
                                  [--duration=S] [--dev=DEV] [--bench=PATH]

Nothing of the cost model is fitted from the live run; each part is
measured on its own, just before it, on this machine:
1. `testpmd-cq --sim --floors` measures the floors and derives the cost of
   an iteration (the hand-off's p50), of a wake-up (the eventfd ->
   epoll_wait floor's p50 and p99) and of a sleep's CPU (the sleeper's CPU
   time per wake-up there), as the lab does with --floors;
2. bench_wakeup measures cqpoll_poll_and_arm() from unarmed (level arm, as
   mlx5's): arm_ns;
3. a live run of the rate engine (poisson arrivals, --policy) records its
   arrivals (--record);
4. the lab replays that file through the same policy with that cost model:
   CPU, wake-ups per second and p99 must agree within 20%;
5. the same replay with a wake-up that has no tail (p99 = 3 x p50), to show
   how much of a difference is the wake-up model's. Not judged: it brackets.

Prints every command, the table and PASS or MISS; exits 0 on PASS, 1 on
MISS. Timing: the live run and the floors are measured, so the machine's
load shows in them (the load average is printed); not a unit test.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

TOLERANCE = 0.20


def row(out, policy):
    """The lab's row of policy (medians over the seeds), by its header."""
    head = None
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "policy":
            head = f
        elif head is not None and len(f) == len(head) and f[0] == policy:
            r = dict(zip(head, f))
            return {"cpu_pct": float(r["cpu_%"]),
                    "wakeups_per_s": float(r["wakeups/s"]),
                    "p99_us": float(r["p99_us"])}
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("testpmd")
    ap.add_argument("--policy", default="adaptive")
    ap.add_argument("--rate", type=int, default=5000)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--dev", default="mlx5-emu")
    ap.add_argument("--bench", default=None,
                    help="bench_wakeup (default: next to TESTPMD's build)")
    args = ap.parse_args()
    bench = args.bench or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(args.testpmd)))), "bench", "bench_wakeup")

    with open("/proc/loadavg") as f:
        print("load average before the run:", " ".join(f.read().split()[:3]))
    fl_cmd = [args.testpmd, "--", "--sim", "--floors", "--trace=poisson",
              "--duration=0.1", "--sim-seeds=1", "--sim-policies=spin:0"]
    print("$", " ".join(fl_cmd), flush=True)
    fl = subprocess.run(fl_cmd, stdin=subprocess.DEVNULL, check=True,
                        capture_output=True, text=True).stdout
    cost = None
    for line in fl.splitlines():
        if "--sim-cost=" in line and "(from the floors)" in line:
            cost = dict(kv.split("=") for kv in
                        line.split("--sim-cost=")[1].split()[0].split(","))
    if cost is None:
        print(fl)
        print("MISS: --sim --floors printed no cost model")
        return 1
    print("$", bench, "--samples=2000", flush=True)
    bo = subprocess.run([bench, "--samples=2000"], stdin=subprocess.DEVNULL,
                        check=True, capture_output=True, text=True).stdout
    arm = [l for l in bo.splitlines() if l.strip().startswith("level")]
    if not arm:
        print(bo)
        print("MISS: bench_wakeup printed no poll_and_arm cost")
        return 1
    cost["arm_ns"] = str(max(1, round(float(arm[0].split()[1]))))
    cost_s = ",".join("%s=%s" % (k, cost[k]) for k in
                      ("poll_ns", "arm_ns", "wake_ns", "wake_p99_ns",
                       "wake_cpu_ns"))
    print("cost model, measured apart from the live run: " + cost_s)

    with tempfile.TemporaryDirectory() as tmp:
        rec, js = os.path.join(tmp, "rec.txt"), os.path.join(tmp, "live.json")
        live_cmd = [args.testpmd, "--", "--dev=" + args.dev, "--mode=adaptive",
                    "--policy=" + args.policy, "--rate=%d" % args.rate,
                    "--pattern=poisson", "--duration=%g" % args.duration,
                    "--no-telemetry", "--record=" + rec, "--json=" + js]
        print("$", " ".join(live_cmd), flush=True)
        subprocess.run(live_cmd, stdin=subprocess.DEVNULL, check=True,
                       stdout=subprocess.DEVNULL)
        with open(js) as f:
            live = json.load(f)
        live["p99_us"] = live["latency_ns"]["p99"] / 1e3
        sim_cmd = [args.testpmd, "--", "--sim", "--trace=file:" + rec,
                   "--sim-policies=" + args.policy, "--sim-cost=" + cost_s]
        print("$", " ".join(sim_cmd), flush=True)
        out = subprocess.run(sim_cmd, stdin=subprocess.DEVNULL, check=True,
                             capture_output=True, text=True).stdout
        narrow = cost_s.replace("wake_p99_ns=" + cost["wake_p99_ns"],
                                "wake_p99_ns=%d" % (3 * int(cost["wake_ns"])))
        alt = subprocess.run(sim_cmd[:-1] + ["--sim-cost=" + narrow],
                             stdin=subprocess.DEVNULL, check=True,
                             capture_output=True, text=True).stdout
    print(out)
    lab = row(out, args.policy)
    if lab is None:
        print("MISS: the lab printed no row for", args.policy)
        return 1
    ok = True
    print("| | live | lab | lab / live |")
    print("|---|---|---|---|")
    for k in ("cpu_pct", "wakeups_per_s", "p99_us"):
        lv, sv = live[k], lab[k]
        r = sv / lv if lv > 0 else float("inf")
        good = abs(r - 1.0) <= TOLERANCE
        ok = ok and good
        print("| %s | %.2f | %.2f | %.2f%s |" % (k, lv, sv, r,
                                                 "" if good else " (off)"))
    a = row(alt, args.policy)
    if a is not None:
        print("| (wake-up without tail: p99 = 3 x p50) | | %.2f, %.2f, %.2f | "
              "%.2f, %.2f, %.2f |" % (a["cpu_pct"], a["wakeups_per_s"],
                                      a["p99_us"],
                                      a["cpu_pct"] / max(live["cpu_pct"], 1e-9),
                                      a["wakeups_per_s"] /
                                      max(live["wakeups_per_s"], 1e-9),
                                      a["p99_us"] / max(live["p99_us"], 1e-9)))
    print()
    print("%s: lab and live run agree within %d%% on CPU, wake-ups and p99" %
          ("PASS" if ok else "MISS", TOLERANCE * 100) if ok else
          "MISS: lab and live run differ by more than %d%%" % (TOLERANCE * 100))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
