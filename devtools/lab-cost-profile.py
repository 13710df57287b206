#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A cost profile for cqpoll-lab --sim-cost=measured:PATH from a testpmd-cq run.

Usage: lab-cost-profile.py RUN.json --where=TEXT [--instr-ps=N] [-o PATH]

RUN.json is testpmd-cq's --json of a run with --floors (paced at its rate
where it is a rate run). The profile (doc/guides/testpmd-cq.md, "Cost
profiles") is the lab's cost model as devtools/check-lab-live.py derives it
from such a run (the same function): a wake-up from the floor paced at the
run's rate, a sleep's CPU as the run's group measured it (sleep_cpu_ns, the
arm, the group's epoll and the event read included), an iteration and an
arm from the hand-off; and a timer nap's overshoot from the timer floor
(timer_p50_ns, timer_p99_ns). instr_ps, the time of one instruction of a
policy's decide(), is one CPU cycle at the clock /proc/cpuinfo gives unless
--instr-ps says otherwise (one instruction a cycle: policy code is branchy
and its state cold after a sleep). --where names the machine and its state
(idle or loaded); the profile's measured= line gives it with the run's time,
since a number without its machine and date is not a measurement.
"""
import argparse
import importlib.util
import json
import os
import sys
import time


def live_check():
    """devtools/check-lab-live.py as a module: one derivation of the cost."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "check-lab-live.py")
    spec = importlib.util.spec_from_file_location("check_lab_live", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def profile(run, where, instr_ps, when):
    """The profile's text from a run's JSON, or raise ValueError."""
    lcl = live_check()
    floors = run.get("floors") or {}
    if not floors.get("timer_p50_ns"):
        raise ValueError("the run's floors have no timer floor "
                         "(timer_p50_ns: run it with --floors, a testpmd-cq "
                         "that measures it)")
    cost = lcl.cost_of(floors, run.get("sleep_cpu_ns", 0), instr_ps)
    if cost is None:
        raise ValueError("the run has no floors (run it with --floors)")
    keys = dict(kv.split("=") for kv in cost.split(","))
    lines = ["# cqpoll-lab cost profile: --sim-cost=measured:PATH",
             "# from testpmd-cq --json with --floors, by "
             "devtools/lab-cost-profile.py",
             "measured=%s, %s, %s/s %s, sleep_cpu_ns %s" % (
                 where, when, run.get("rate", "?"), run.get("policy", "?"),
                 run.get("sleep_cpu_ns", "none"))]
    lines += ["%s=%s" % (k, keys[k]) for k in
              ("poll_ns", "arm_ns", "wake_ns", "wake_p99_ns", "wake_cpu_ns",
               "nap_ns", "nap_p99_ns", "instr_ps")]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--where", required=True,
                    help="the machine and its state (idle, loaded)")
    ap.add_argument("--instr-ps", type=float, default=None)
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    with open(args.run) as f:
        run = json.load(f)
    instr_ps = args.instr_ps
    if instr_ps is None:
        instr_ps = live_check().instr_ps_of_cpu()
        if not instr_ps:
            print("lab-cost-profile: no CPU clock in /proc/cpuinfo: give "
                  "--instr-ps", file=sys.stderr)
            return 2
    when = time.strftime("%Y-%m-%d %H:%M UTC",
                         time.gmtime(os.path.getmtime(args.run)))
    try:
        text = profile(run, args.where, instr_ps, when)
    except ValueError as e:
        print("lab-cost-profile: %s: %s" % (args.run, e), file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
