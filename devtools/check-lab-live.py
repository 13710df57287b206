#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Does the policy lab agree with a live run of the same trace?

usage: devtools/check-lab-live.py TESTPMD [--policy=SPEC] [--rate=N]
                                  [--duration=S] [--dev=DEV]

1. A live run of the rate engine (poisson arrivals, --policy, --floors)
   records its arrivals (--record).
2. The lab replays that file through the same policy with a cost model
   calibrated on that run: an iteration's cost as the hand-off floor's p50
   (an empty poll is a cache-line read), a sleep's CPU as the poller's CPU
   time beyond its iterations per sleep, arming as two iterations, the
   wake-up latency from the run's wake-up floor.
3. CPU and wake-ups per second must agree within 20%.
4. The same replay with a wake-up that has no tail (p99 = 3 x p50), to show
   how much of a difference is the wake-up model's: the lab draws wake-ups
   from a log-normal through the floor's p50 and p99, measured before the
   run; a p99 of milliseconds (a descheduled sleeper on a busy machine) gives
   that log-normal a body of hundreds of microseconds, and long wake-ups
   gather several arrivals each, so the lab sees fewer wake-ups than a run
   whose wake-ups were mostly short. Not judged: it brackets.

Prints both, the --sim command, and PASS or MISS; exits 0 on PASS, 1 on
MISS. Timing: run it on a quiet machine (gen-results.sh does, and puts the
output on the results page), not as a unit test.
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
                    "wakeups_per_s": float(r["wakeups/s"])}
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("testpmd")
    ap.add_argument("--policy", default="adaptive")
    ap.add_argument("--rate", type=int, default=5000)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--dev", default="mlx5-emu")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        rec, js = os.path.join(tmp, "rec.txt"), os.path.join(tmp, "live.json")
        live_cmd = [args.testpmd, "--", "--dev=" + args.dev, "--mode=adaptive",
                    "--policy=" + args.policy, "--rate=%d" % args.rate,
                    "--pattern=poisson", "--duration=%g" % args.duration,
                    "--floors", "--no-telemetry", "--record=" + rec,
                    "--json=" + js]
        print("$", " ".join(live_cmd), flush=True)
        with open("/proc/loadavg") as f:
            print("load average before the run:", " ".join(f.read().split()[:3]))
        subprocess.run(live_cmd, stdin=subprocess.DEVNULL, check=True,
                       stdout=subprocess.DEVNULL)
        with open(js) as f:
            live = json.load(f)
        g, fl = live["group"], live["floors"]
        cpu_ns = live["cpu_pct"] / 100.0 * live["poller_s"] * 1e9
        # CPU time, not wall time: a preempted poller's wall time is not cost.
        poll_ns = max(1, fl["handoff_p50_ns"])
        wake_cpu = max(1, round((cpu_ns - g["iterations"] * poll_ns) /
                                max(1, g["sleeps"])))
        cost = ("poll_ns=%d,arm_ns=%d,wake_ns=%d,wake_p99_ns=%d,wake_cpu_ns=%d"
                % (poll_ns, 2 * poll_ns, fl["wakeup_p50_ns"],
                   max(fl["wakeup_p50_ns"], fl["wakeup_p99_ns"]), wake_cpu))
        sim_cmd = [args.testpmd, "--", "--sim", "--trace=file:" + rec,
                   "--sim-policies=" + args.policy, "--sim-cost=" + cost]
        print("$", " ".join(sim_cmd), flush=True)
        out = subprocess.run(sim_cmd, stdin=subprocess.DEVNULL, check=True,
                             capture_output=True, text=True).stdout
        narrow = cost.replace("wake_p99_ns=%d" % max(fl["wakeup_p50_ns"],
                                                     fl["wakeup_p99_ns"]),
                              "wake_p99_ns=%d" % (3 * fl["wakeup_p50_ns"]))
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
    for k in ("cpu_pct", "wakeups_per_s"):
        lv, sv = live[k], lab[k]
        r = sv / lv if lv > 0 else float("inf")
        good = abs(r - 1.0) <= TOLERANCE
        ok = ok and good
        print("| %s | %.2f | %.2f | %.2f%s |" % (k, lv, sv, r,
                                                 "" if good else " (off)"))
    a = row(alt, args.policy)
    if a is not None:
        print("| (wake-up without tail: p99 = 3 x p50) | | %.2f, %.2f | "
              "%.2f, %.2f |" % (a["cpu_pct"], a["wakeups_per_s"],
                                a["cpu_pct"] / max(live["cpu_pct"], 1e-9),
                                a["wakeups_per_s"] /
                                max(live["wakeups_per_s"], 1e-9)))
    print()
    print("%s: lab and live run agree within %d%% on CPU and wake-ups" %
          ("PASS" if ok else "MISS", TOLERANCE * 100) if ok else
          "MISS: lab and live run differ by more than %d%%" % (TOLERANCE * 100))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
