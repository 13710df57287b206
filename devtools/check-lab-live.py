#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Does the policy lab agree with live runs of the same traces?

usage: devtools/check-lab-live.py TESTPMD [--lab=CQPOLL_LAB] [--runs=N]
                                  [--duration=S] [--dev=DEV]
                                  [--policies=P;P] [--rates=R,R]

For each of 3 policies (adaptive, hybrid, spin:50) x 3 rates (1000, 5000,
20000/s), --runs live runs (default 5) of the rate engine (poisson,
mlx5-emu), each with --floors, so that its cost model is measured in the
same run on the same CPUs: an iteration is the hand-off's p50, arming two
of them; a wake-up the wake-up floor's p50 and p99 and a sleep's CPU the
sleeper's CPU time per wake-up, both from the floor paced at the run's
rate (wakeup_paced_*, wake_cpu_paced_ns), as the run's own wake-ups come:
after a gap, CPUs idle and caches cold. (The back-to-back floor, a hot
loop over a fraction of a second, is used only where no paced one was
measured: it misses the wake-ups' tail, a vCPU woken from halt, and
charges a wake-up a fraction of its CPU.) A sleep's CPU, though, is the
one the run's own group measured (sleep_cpu_ns in its JSON: the thread CPU
of a sample of its sleeps, from poll-and-arm to the first callback, the
arm, the group's epoll, the event read and the driver's calls included)
where it timed any: the lab charges a sleep arm_ns + wake_cpu_ns, so
wake_cpu_ns is that less arm_ns. The floor's sleeper (an eventfd and an
epoll_wait, no CQ) left the policy's own sleep path out, and the lab
charged sleeping policies 0.54-0.63 of the CPU they burnt live (issue 33
item 5): adaptive and hybrid sleep at almost every arrival at these rates
(1-2 iterations a sleep, as spin:0), so their CPU is nearly all sleeps,
which cost the group 9-18 us each against the floor's 4-8.5 us; spin:50
hides the same shortfall under its polling. Runs whose group timed no
sleep keep the floor's. Each run's line prints its iterations and CPU per
sleep beside what the lab charges a sleep (arm_ns + wake_cpu_ns). A nap's
overshoot is the run's timer floor (timer_p50_ns, timer_p99_ns: what
clock_nanosleep() overran there), and each iteration also costs the
instructions of the policy's decide() at one instruction a CPU cycle
(instr_ps, /proc/cpuinfo's clock). Each run records its arrivals (--record,
whose header says whether the device's completions carry host timestamps;
mlx5-emu's do not, so the lab, as the group, tells the policies no
wake-up), and the lab replays that file through the same policy with that
run's cost model. Per cell, the ratios lab / live of
CPU, wake-ups per second and p99, median over the runs with their min..max:
CPU and wake-ups within 20%, p99 within 30%, judged on the medians.

The machine must be idle: the share of its CPUs that other work took
during the check is printed, and over 10% no cell is judged: each says
"not judged", never PASS or MISS. Other work is the CPU time of every
process but this check and its children, read per process from /proc
(the same per-task accounting as the children's own), plus the time the
hypervisor took the CPUs (steal). The busy ticks of /proc/stat less the
children's time, the earlier measure, is printed beside it: it also
counts what no process is charged with (tick sampling of short bursts,
interrupts), so it is no proof that anything else ran. Exit 0 on PASS, 1 on MISS, 2 when not judged.
Timing-dependent: not a unit test (test/app/check_lab_live.py checks its
verdicts on made-up cells).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

POLICIES = ["adaptive", "hybrid", "spin:50"]
RATES = [1000, 5000, 20000]
TOL = {"cpu_pct": 0.20, "wakeups_per_s": 0.20, "p99_us": 0.30}
LOADED = 0.10


def sig2(v):
    """Two significant digits, as the lab's --floors prints its cost."""
    v, m = int(v), 1
    while v // m >= 100:
        m *= 10
    return max(1, (v + m // 2) // m * m)


def paced(floors):
    """Whether the run's floors were also measured paced at its rate."""
    return bool(floors.get("wakeup_paced_p50_ns") and
                floors.get("wake_cpu_paced_ns"))


def cost_of(floors, sleep_cpu_ns=0, instr_ps=0):
    """The lab's cost model from a live run's floors: its wake-ups from the
    floor paced at the run's rate where measured, else back to back (as
    --sim --floors derives it); a sleep's CPU (arm_ns + wake_cpu_ns) the
    run's measured sleep_cpu_ns when it is over 0; a nap's overshoot the
    timer floor's where the run has one; instr_ps when over 0."""
    h = floors["handoff_p50_ns"]
    if paced(floors):
        w50, w99 = floors["wakeup_paced_p50_ns"], floors["wakeup_paced_p99_ns"]
        cpu = floors["wake_cpu_paced_ns"]
    else:
        w50, w99 = floors["wakeup_p50_ns"], floors["wakeup_p99_ns"]
        cpu = floors.get("wake_cpu_ns")
    if sleep_cpu_ns and h:
        cpu = max(1, sleep_cpu_ns - sig2(2 * h))
    if cpu is None or not h or not w50:
        return None
    cost = ("poll_ns=%d,arm_ns=%d,wake_ns=%d,wake_p99_ns=%d,wake_cpu_ns=%d"
            % (sig2(h), sig2(2 * h), sig2(w50), sig2(max(w50, w99)),
               sig2(cpu)))
    t50, t99 = floors.get("timer_p50_ns"), floors.get("timer_p99_ns")
    if t50:
        cost += ",nap_ns=%d,nap_p99_ns=%d" % (sig2(t50),
                                              sig2(max(t50, t99 or 0)))
    if instr_ps > 0:
        cost += ",instr_ps=%d" % int(instr_ps)
    return cost


def instr_ps_of_cpu():
    """A policy instruction's time: one CPU cycle at the clock of the first
    CPU in /proc/cpuinfo (one instruction a cycle: policy code is branchy
    and its state cold after a sleep); 0 (decisions free) if none is
    given."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("cpu mhz"):
                    return int(1e6 / float(line.split(":")[1]))
    except (OSError, ValueError, ZeroDivisionError):
        pass
    return 0


def per_sleep(live):
    """A live run's iterations and CPU (us) per sleep of its group, or None
    when it slept none: where a policy sleeps nearly at once, its CPU is
    nearly all sleeps, and one sleep's CPU against what the lab charges one
    (arm_ns + wake_cpu_ns) is the comparison that decides its CPU ratio."""
    g = live.get("group") or {}
    sleeps = g.get("sleeps", 0)
    if not sleeps:
        return None
    cpu_us = live["cpu_pct"] / 100.0 * live.get("poller_s", 0.0) * 1e6
    return g.get("iterations", 0) / sleeps, cpu_us / sleeps


def charged_us(cost):
    """What the lab charges a sleep (arm_ns + wake_cpu_ns), in us."""
    v = dict(kv.split("=") for kv in cost.split(","))
    return (int(v["arm_ns"]) + int(v["wake_cpu_ns"])) / 1e3


def lab_row(out, policy):
    """The lab's row of policy, by its header."""
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


def ratio(lab, live):
    if live > 0:
        return lab / live
    return 1.0 if lab == 0 else float("inf")


def judge(cells, other_share):
    """Each cell's verdict lines and the overall verdict, from the ratios
    lab / live of each run ({(policy, rate): {metric: [ratios]}})."""
    lines, verdicts = [], []
    loaded = other_share > LOADED
    for (pol, rate), m in cells.items():
        parts, ok = [], True
        for k, tol in TOL.items():
            r = m[k]
            med = statistics.median(r)
            good = abs(med - 1.0) <= tol
            ok = ok and good
            parts.append("%s %.2f (%.2f..%.2f, within %d%%%s)" % (
                k, med, min(r), max(r), tol * 100, "" if good else ": off"))
        v = "not judged" if loaded else "PASS" if ok else "MISS"
        verdicts.append(v)
        lines.append("%s %s %d/s: lab / live %s: %s" % (
            v, pol, rate, ", ".join(parts), v))
    if loaded:
        overall = ("not judged: other work took %.0f%% of the CPUs during "
                   "the check (over %.0f%%)" % (other_share * 100, LOADED * 100))
    elif all(v == "PASS" for v in verdicts):
        overall = "PASS: lab and live runs agree in every cell"
    else:
        overall = "MISS: %d of %d cells differ" % (
            sum(v == "MISS" for v in verdicts), len(verdicts))
    return lines, overall


def cpu_busy():
    """CPU time (s) all CPUs spent busy and stolen by the hypervisor, from
    /proc/stat, and their count."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    tick = os.sysconf("SC_CLK_TCK")
    steal = v[7] if len(v) > 7 else 0
    return (sum(v[:8]) - idle) / tick, steal / tick, os.cpu_count() or 1


def proc_times(skip):
    """{pid: (start time, CPU ticks of it and its reaped children)} of every
    process but skip's; one that ended between two reads is charged to the
    parent that reaped it."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == skip:
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        # After the command's ")": state is field 3, utime 14 .. cstime 17,
        # starttime 22 (proc(5)).
        v = st[st.rindex(")") + 2:].split()
        out[int(d)] = (int(v[19]), sum(int(x) for x in v[11:15]))
    return out


def others_cpu(t0, t1):
    """CPU time (s) processes other than this check took between two
    proc_times() reads. One that ended in between is in its reaper's
    children's time whole: what it had taken before the first read is
    taken off."""
    ticks = 0
    for pid, (start, t) in t1.items():
        old = t0.get(pid)
        ticks += t - old[1] if old is not None and old[0] == start else t
    for pid, (start, t) in t0.items():
        new = t1.get(pid)
        if new is None or new[0] != start:
            ticks -= t
    return max(0, ticks) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("testpmd")
    ap.add_argument("--lab", default=None,
                    help="cqpoll-lab (default: next to TESTPMD's build)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--dev", default="mlx5-emu")
    ap.add_argument("--policies", default=";".join(POLICIES))
    ap.add_argument("--rates", default=",".join(str(r) for r in RATES))
    args = ap.parse_args()
    lab = args.lab or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(args.testpmd)))), "app", "cqpoll-lab", "cqpoll-lab")
    pols = args.policies.split(";")
    rates = [int(r) for r in args.rates.split(",")]
    with open("/proc/loadavg") as f:
        print("load average before the check:", " ".join(f.read().split()[:3]))
    busy0, steal0, ncpu = cpu_busy()
    procs0 = proc_times(os.getpid())
    kids0 = os.times()
    wall0 = os.times().elapsed
    cells = {}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            # Interleaved: a drift of the machine falls on every cell alike.
            for pol in pols:
                for rate in rates:
                    rec = os.path.join(tmp, "rec.txt")
                    js = os.path.join(tmp, "live.json")
                    live_cmd = [args.testpmd, "--", "--dev=" + args.dev,
                                "--mode=adaptive", "--policy=" + pol,
                                "--rate=%d" % rate, "--pattern=poisson",
                                "--duration=%g" % args.duration, "--floors",
                                "--no-telemetry", "--record=" + rec,
                                "--json=" + js]
                    if run == 0 and pol == pols[0] and rate == rates[0]:
                        print("$", " ".join(live_cmd), flush=True)
                    subprocess.run(live_cmd, stdin=subprocess.DEVNULL,
                                   check=True, stdout=subprocess.DEVNULL)
                    with open(js) as f:
                        live = json.load(f)
                    cost = cost_of(live.get("floors") or {},
                                   live.get("sleep_cpu_ns", 0),
                                   instr_ps_of_cpu())
                    if cost is None:
                        print("MISS: run %d %s %d/s: its --floors gave no "
                              "cost model (floors %s)" % (
                                  run, pol, rate, live.get("floors")))
                        return 1
                    live["p99_us"] = live["latency_ns"]["p99"] / 1e3
                    sim_cmd = [lab, "--trace=file:" + rec,
                               "--sim-policies=" + pol, "--sim-cost=" + cost,
                               "--sim-seeds=1"]
                    if run == 0 and pol == pols[0] and rate == rates[0]:
                        print("$", " ".join(sim_cmd), flush=True)
                    out = subprocess.run(sim_cmd, stdin=subprocess.DEVNULL,
                                         check=True, capture_output=True,
                                         text=True).stdout
                    lr = lab_row(out, pol)
                    if lr is None:
                        print(out)
                        print("MISS: the lab printed no row for", pol)
                        return 1
                    c = cells.setdefault((pol, rate), {k: [] for k in TOL})
                    for k in TOL:
                        c[k].append(ratio(lr[k], live[k]))
                    ps = per_sleep(live)
                    print("run %d %s %d/s: cost (%s floors, sleep CPU %s) %s; "
                          "live cpu %.2f%% wake-ups "
                          "%.0f/s p99 %.1f us%s; lab %.2f%% %.0f/s %.1f us "
                          "(a sleep charged %.1f us)" % (
                              run, pol, rate, "paced" if paced(
                                  live["floors"]) else "back-to-back",
                              "%.0f ns measured" % live["sleep_cpu_ns"]
                              if live.get("sleep_cpu_ns") else "of the floor",
                              cost, live["cpu_pct"],
                              live["wakeups_per_s"], live["p99_us"],
                              " (per sleep: %.1f iterations, %.1f us CPU)" %
                              ps if ps else "",
                              lr["cpu_pct"], lr["wakeups_per_s"],
                              lr["p99_us"], charged_us(cost)), flush=True)
    busy1, steal1, _ = cpu_busy()
    procs1 = proc_times(os.getpid())
    kids1 = os.times()
    wall = max(kids1.elapsed - wall0, 1e-9)
    own = (kids1.children_user + kids1.children_system + kids1.user +
           kids1.system - kids0.children_user - kids0.children_system -
           kids0.user - kids0.system)
    share = wall * ncpu
    procs = others_cpu(procs0, procs1) / share
    steal = (steal1 - steal0) / share
    other = procs + steal
    with open("/proc/loadavg") as f:
        print("load average after the check:", " ".join(f.read().split()[:3]))
    print("this check and its children: %.0f%% of %d CPUs; other processes "
          "%.0f%%, the hypervisor (steal) %.0f%%; busy in /proc/stat less "
          "this check: %.0f%%" % (own / share * 100, ncpu, procs * 100,
                                  steal * 100,
                                  max(0.0, busy1 - busy0 - own) / share * 100))
    print("other work: %.0f%% of %d CPUs during the check" % (other * 100, ncpu))
    lines, overall = judge(cells, other)
    print()
    for l in lines:
        print(l)
    print(overall)
    return 0 if overall.startswith("PASS") else 1 if overall.startswith(
        "MISS") else 2


if __name__ == "__main__":
    sys.exit(main())
