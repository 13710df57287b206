#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The policy lab's goals (issues 21 and 33), judged from its own output.

usage: devtools/check-lab-goals.py LAB [--cost=SPEC] [--profile=PATH]
                                   [--models=M,M] [--seeds=N]
                                   [--duration=S] [--out=DIR]
                                   [--traces=T,T] [--rates=R,R]
                                   [--penalties=P,P]

LAB is cqpoll-lab (or testpmd-cq, run as testpmd-cq --sim). Runs the lab on
every built-in trace at 1000, 5000, 10000, 20000, 50000 and 100000/s, at
penalties 1 and 10, each over --seeds seeds (default 10), under two models
of the machine (--models, default both):
  reference  the lab's fixed cost model (--cost), each sleep's wake-up told
             to the policies (a device with host completion timestamps)
  measured   the cost profile --profile (--sim-cost=measured:PATH; default
             results/lab-cost/mlx5-emu-5000-idle.profile, whose measured=
             line says where and when), wake-ups not told (--sim-wake=untold:
             a device without host timestamps, as every device but the
             software one in testpmd-cq)
and reads the lab's own verdicts ("goal NAME POLICY: ...: PASS|MISS", each
on the median over the seeds, with the min..max). Prints every command,
then one line per goal, model, policy, trace, rate and penalty:

    PASS|MISS|SKIP NAME@MODEL POLICY TRACE RATE/s pPEN: the lab's figures

(SKIP: not judged there, with why), then a summary, one line per goal,
model and policy: "PASS|MISS NAME@MODEL POLICY: P of N runs pass, M miss,
S not judged", and the totals. test/app/check_lab_goals.py recounts the summary from the
lines above it. The goals:
  bound           no policy and no fixed budget below the offline optimum
                  on any seed (the optimum is a lower bound)
  adaptive-fixed  adaptive <= 1.03x the best fixed budget
  adaptive-window adaptive <= 1.10x the best per-window budget (onoff,
                  regime, diurnal)
  adaptive-opt    adaptive <= 2x the offline optimum
  adaptive-rate   adaptive <= 1.0x the causal rate rule
  hybrid-periodic hybrid on periodic traffic, at penalty 10 only (at 1 a
                  wake-up is cheaper than the polling a nap leaves)
  target          target-p99:US meets its target where a fixed budget
                  meets it with 20% margin
  not-spin0       a policy is not spin:0 where the best budget is not 0
Deterministic: no timing, the same output on any machine. Exit 0 when every
goal passes, 1 otherwise.
"""
import argparse
import os
import subprocess
import sys

REF = "poll_ns=100,arm_ns=1000,wake_ns=30000,wake_p99_ns=80000,wake_cpu_ns=5000"
TRACES = ["poisson", "onoff", "pareto", "diurnal", "periodic", "regime"]
RATES = [1000, 5000, 10000, 20000, 50000, 100000]
PENALTIES = [1, 10]
POLICIES = "spin:0;adaptive;hybrid;target-p99:100;target-p99:60"
PROFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "results", "lab-cost", "mlx5-emu-5000-idle.profile")
MODELS = ["reference", "measured"]


def model_args(args, model):
    """The lab's options of one model of the machine."""
    if model == "reference":
        return ["--sim-cost=" + args.cost, "--sim-wake=told"]
    return ["--sim-cost=measured:" + os.path.relpath(args.profile),
            "--sim-wake=untold"]


def parse_goal(line):
    """(name, policy, text, verdict) of a lab goal line, or None."""
    if not line.startswith(" goal "):
        return None
    head, text = line[len(" goal "):].split(": ", 1)
    name, pol = head.split(" ", 1)
    if text.endswith(": PASS"):
        return name, pol, text[:-len(": PASS")], "PASS"
    if text.endswith(": MISS"):
        return name, pol, text[:-len(": MISS")], "MISS"
    if text.endswith(": not judged"):
        return name, pol, text[:-len(": not judged")], "SKIP"
    raise SystemExit("check-lab-goals: cannot read the lab's line: " + line)


def run_lines(lab, args, model, t, rate, pen):
    """The lab's run of one model, trace, rate and penalty: (command shown,
    output)."""
    sim = [] if os.path.basename(lab).startswith("cqpoll-lab") else ["--sim"]
    cmd = [lab] + sim + ["--trace=" + t, "--rate=%d" % rate,
                         "--duration=%g" % args.duration,
                         "--sim-seeds=%d" % args.seeds] + \
        model_args(args, model) + ["--sim-penalty=%d" % pen,
                                   "--sim-policies=" + POLICIES]
    out = subprocess.run(cmd, stdin=subprocess.DEVNULL, check=True,
                         capture_output=True, text=True).stdout
    shown = " ".join(c if ";" not in c else "'%s'" % c
                     for c in [os.path.basename(lab)] + cmd[1:])
    return shown, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lab")
    ap.add_argument("--cost", default=REF)
    ap.add_argument("--profile", default=PROFILE)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--traces", default=",".join(TRACES))
    ap.add_argument("--rates", default=",".join(str(r) for r in RATES))
    ap.add_argument("--penalties", default=",".join(str(p) for p in PENALTIES))
    ap.add_argument("--out", default=None,
                    help="directory for each run's output (lab-goals-*.txt)")
    args = ap.parse_args()
    traces = args.traces.split(",")
    rates = [int(r) for r in args.rates.split(",")]
    pens = [int(p) for p in args.penalties.split(",")]
    models = args.models.split(",")
    if any(m not in MODELS for m in models):
        ap.error("--models: of " + ",".join(MODELS))
    lines, goals = [], {}
    for model in models:
        for pen in pens:
            for t in traces:
                for rate in rates:
                    shown, out = run_lines(args.lab, args, model, t, rate, pen)
                    print("$", shown, flush=True)
                    if args.out:
                        with open(os.path.join(args.out,
                                               "lab-goals-%s-%s-%d-p%d.txt"
                                               % (model, t, rate, pen)), "w") as f:
                            f.write("$ " + shown + "\n" + out)
                    for line in out.splitlines():
                        g = parse_goal(line)
                        if g is None:
                            continue
                        name, pol, text, v = g
                        if name == "hybrid-periodic" and pen != 10 and v != "SKIP":
                            v, text = "SKIP", "judged at penalty 10 only"
                        name = "%s@%s" % (name, model)
                        lines.append("%s %s %s %s %d/s p%d: %s" % (
                            v, name, pol, t, rate, pen, text))
                        c = goals.setdefault((name, pol),
                                             {"PASS": 0, "MISS": 0, "SKIP": 0})
                        c[v] += 1
    print()
    for l in lines:
        print(l)
    print()
    print("summary, one line per goal, model and policy:")
    npass = nmiss = 0
    for (name, pol), c in sorted(goals.items()):
        judged = c["PASS"] + c["MISS"]
        ok = c["MISS"] == 0
        npass += ok
        nmiss += not ok
        print("%s %s %s: %d of %d runs pass, %d miss, %d not judged" % (
            "PASS" if ok else "MISS", name, pol, c["PASS"], judged, c["MISS"],
            c["SKIP"]))
    print("total: %d goals pass, %d miss" % (npass, nmiss))
    return 0 if nmiss == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
