#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The policy lab, testpmd-cq --sim.

Usage: check_lab.py TESTPMD

1. The same command twice prints the same bytes, with the default cost
   model too (--sim alone measures nothing on the machine); another --seed
   another trace (the output is not a constant).
2. Every built-in trace runs every default policy; a fixed budget of the
   grid is never cheaper than the best fixed budget (/fixed >= 1), and no
   policy is cheaper than the offline optimum on any seed (the least /opt
   >= 1: the optimum is a lower bound on the draws the policies are charged
   with), the lab's own "goal bound" lines say PASS.
3. The policies' own code decides: on a periodic trace with 100 us gaps,
   spin:200 never sleeps (100% CPU, no wake-up) while spin:5 sleeps in
   nearly every gap; a lab that ignored the policy could not tell them apart.
4. The policies are told the penalty: adaptive at --sim-penalty=10 is not
   adaptive at 1 on a trace where the trade matters.
5. Adaptive's total cost stays within 1.10x the best fixed budget on
   every built-in trace at 10000/s (a regression guard; the goals are
   judged by devtools/check-lab-goals.py).
6. --sim --floors takes a sleep's CPU from the sleeper's CPU time per
   wake-up that the floors measured (not from a latency percentile).
7. A live run's --record file replays with --trace=file:, one arrival per
   posted completion; a file going back in time is refused. Its header
   says whether the device's completions carry host timestamps (sw: yes,
   mlx5-emu: no), and the lab tells the policies each wake-up only on
   such a trace: adaptive's figures differ told and untold, and
   --sim-wake= overrides the trace.
8. The cost model measured: a profile (--sim-cost=measured:PATH) is read
   with its measured= line, printed; one without that line is refused; a
   nap's overshoot (nap_ns, nap_p99_ns) moves hybrid's figures and only
   its (the others do not nap); instr_ps moves every policy's CPU.
9. Bad lab options exit 2.
"""
import os
import subprocess
import sys
import tempfile

COST = ("--sim-cost=poll_ns=100,arm_ns=1000,wake_ns=30000,wake_p99_ns=80000,"
        "wake_cpu_ns=5000")
# Wake-ups of 20 us: the periodic trace's jitter window is wider than one.
COST_FAST_WAKE = ("--sim-cost=poll_ns=100,arm_ns=1000,wake_ns=20000,"
                  "wake_p99_ns=60000,wake_cpu_ns=5000")
TRACES = ["poisson", "onoff", "pareto", "diurnal", "periodic", "regime"]
DEFAULT_POLICIES = ["spin:0", "spin:5", "spin:50", "spin:200", "adaptive",
                    "hybrid", "target-p99:100"]
SEEDS = "--sim-seeds=3"


def run(exe, args, code=0):
    cmd = [exe, "--"] + args
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=120)
    if r.returncode != code:
        print(r.stdout + r.stderr)
        raise SystemExit("FAIL: exit %d, expected %d" % (r.returncode, code))
    return r


def rows(out):
    """policy -> {column: value} of the lab's table."""
    res, head = {}, None
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "policy":
            # Each "spread" column is that of the ratio before it.
            head = [h if h != "spread" else "spread" + f[i - 1]
                    for i, h in enumerate(f)]
            continue
        if head is not None and len(f) == len(head) and f[0] not in res:
            try:
                float(f[1])
            except ValueError:
                continue
            res[f[0]] = dict(zip(head[1:], f[1:]))
    return res


def num(row, col):
    return float(row[col])


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    exe = sys.argv[1]
    base = ["--sim", "--rate=10000", "--duration=0.5", COST, SEEDS]

    a = run(exe, base + ["--trace=pareto"]).stdout
    b = run(exe, base + ["--trace=pareto"]).stdout
    if a != b:
        raise SystemExit("FAIL: the same command printed different output")
    bare = ["--sim", "--trace=pareto", "--rate=10000", "--duration=0.5",
            SEEDS]
    if run(exe, bare).stdout != run(exe, bare).stdout:
        raise SystemExit("FAIL: --sim with the default cost model printed "
                         "different output twice")
    c = run(exe, base + ["--trace=pareto", "--seed=7"]).stdout
    if c == a:
        raise SystemExit("FAIL: another seed gave the same output")
    print("ok: deterministic, and the seed matters")

    for t in TRACES:
        out = run(exe, base + ["--trace=" + t]).stdout
        got = rows(out)
        missing = [p for p in DEFAULT_POLICIES if p not in got]
        if missing:
            raise SystemExit("FAIL: trace %s lacks %s" % (t, missing))
        for p in ("spin:0", "spin:5", "spin:50"):
            if num(got[p], "/fixed") < 1.0:
                raise SystemExit("FAIL: %s on %s: /fixed %s" %
                                 (p, t, got[p]["/fixed"]))
        for p in DEFAULT_POLICIES:
            lo = float(got[p]["spread/opt"].split("..")[0])
            if lo < 1.0:
                raise SystemExit("FAIL: %s on %s: cost %.3fx the offline "
                                 "optimum on a seed (a lower bound)" % (p, t, lo))
        if [l for l in out.splitlines() if l.startswith(" goal bound") and
                not l.endswith("PASS")]:
            raise SystemExit("FAIL: %s: a goal bound line misses:\n%s" % (t, out))
    print("ok: every trace, every policy; fixed budgets against the "
          "yardsticks")

    got = rows(run(exe, base + ["--trace=periodic",
                                "--sim-policies=spin:5;spin:200"]).stdout)
    s5, s200 = got["spin:5"], got["spin:200"]
    if num(s200, "cpu_%") < 99.0 or num(s200, "wakeups/s") != 0 or \
            num(s5, "wakeups/s") < 0.9 * 10000:
        raise SystemExit("FAIL: spin:200 %s, spin:5 %s" % (s200, s5))
    print("ok: the policies' own decisions")

    pen = [rows(run(exe, ["--sim", "--trace=poisson", "--rate=20000",
                          "--duration=0.5", COST, SEEDS,
                          "--sim-penalty=%d" % x,
                          "--sim-policies=adaptive"]).stdout)["adaptive"]
           for x in (1, 10)]
    if pen[0]["cpu_%"] == pen[1]["cpu_%"]:
        raise SystemExit("FAIL: adaptive ignores the penalty: %s" % pen)
    print("ok: the penalty reaches the policy (cpu %s%% at 1, %s%% at 10)" %
          (pen[0]["cpu_%"], pen[1]["cpu_%"]))

    worst = (0.0, "")
    for t in TRACES:
        got = rows(run(exe, base + ["--trace=" + t,
                                    "--sim-policies=adaptive"]).stdout)
        worst = max(worst, (num(got["adaptive"], "/fixed"), t))
    if worst[0] > 1.10:
        raise SystemExit("FAIL: adaptive's cost %.3fx the best fixed budget "
                         "on %s (at most 1.10)" % worst)
    print("ok: adaptive within 1.10x the best fixed budget (worst %.3f, %s)" %
          worst)

    out = run(exe, ["--sim", "--floors", "--trace=poisson",
                    "--duration=0.2", SEEDS]).stdout
    fl = [l for l in out.splitlines() if "the sleeper's CPU" in l]
    cost = [l for l in out.splitlines() if "(from the floors)" in l]
    if len(fl) != 1 or len(cost) != 1:
        print(out)
        raise SystemExit("FAIL: --sim --floors printed no floors or no cost")
    cpu = float(fl[0].split("the sleeper's CPU ")[1].split()[0]) * 1000
    wake_cpu = float(cost[0].split("wake_cpu_ns=")[1].split()[0].split(",")[0])
    if cpu <= 0 or abs(wake_cpu - cpu) > 0.06 * cpu + 10:
        raise SystemExit("FAIL: the sleeper's CPU %.0f ns a wake-up, the cost "
                         "model's wake_cpu_ns %.0f" % (cpu, wake_cpu))
    print("ok: --sim --floors: a sleep's CPU is the sleeper's, %.0f ns" % cpu)

    with tempfile.TemporaryDirectory() as tmp:
        rec = os.path.join(tmp, "rec.txt")
        run(exe, ["--dev=sw", "--rate=2000", "--duration=0.3",
                  "--record=" + rec])
        with open(rec) as f:
            ts = [int(l) for l in f if l.strip() and not l.startswith("#")]
        if len(ts) != 600 or ts != sorted(ts):
            raise SystemExit("FAIL: %d timestamps recorded (600 expected), "
                             "sorted: %s" % (len(ts), ts == sorted(ts)))
        out = run(exe, ["--sim", "--trace=file:" + rec, COST, SEEDS]).stdout
        if " 600 arrivals" not in out:
            raise SystemExit("FAIL: the replay did not read 600 arrivals")
        back = os.path.join(tmp, "back.txt")
        with open(back, "w") as f:
            f.write("100\n200\n150\n")
        err = run(exe, ["--sim", "--trace=file:" + back, COST], 2).stderr
        if "not before the one above" not in err:
            raise SystemExit("FAIL: a trace going back in time: %s" % err)
        hdr = open(rec).readline()
        if "host timestamps: yes" not in hdr:
            raise SystemExit("FAIL: sw's --record header: %s" % hdr)
        out = run(exe, ["--sim", "--trace=file:" + rec, COST, SEEDS]).stdout
        if "wake-ups told to the policies" not in out:
            raise SystemExit("FAIL: a trace of host timestamps, not told")
        rec2 = os.path.join(tmp, "rec2.txt")
        run(exe, ["--dev=mlx5-emu", "--rate=5000", "--duration=0.3",
                  "--record=" + rec2])
        hdr = open(rec2).readline()
        if "host timestamps: no" not in hdr:
            raise SystemExit("FAIL: mlx5-emu's --record header: %s" % hdr)
        pol = ["--sim-policies=adaptive", "--sim-penalty=10"]
        untold = run(exe, ["--sim", "--trace=file:" + rec2, COST, SEEDS] +
                     pol).stdout
        told = run(exe, ["--sim", "--trace=file:" + rec2, COST, SEEDS,
                         "--sim-wake=told"] + pol).stdout
        if "wake-ups not told" not in untold or "wake-ups told" not in told:
            raise SystemExit("FAIL: mlx5-emu's trace told, or --sim-wake=told "
                             "ignored")
        if rows(untold)["adaptive"] == rows(told)["adaptive"]:
            raise SystemExit("FAIL: adaptive the same told and untold")
    print("ok: --record, and its replay; wake-ups told per trace")

    # The measured cost profile.
    base_cost = ("poll_ns=100\narm_ns=1000\nwake_ns=30000\nwake_p99_ns=80000"
                 "\nwake_cpu_ns=5000\n")
    trace = ["--sim", "--trace=periodic", "--rate=5000", "--duration=0.2",
             SEEDS, "--sim-penalty=10", "--sim-policies=spin:50;hybrid"]
    with tempfile.TemporaryDirectory() as tmp:
        prof = os.path.join(tmp, "p.profile")
        with open(prof, "w") as f:
            f.write("# a test profile\nmeasured=nowhere, never\n" + base_cost)
        out = run(exe, trace + ["--sim-cost=measured:" + prof]).stdout
        ref = run(exe, trace + [COST]).stdout
        if "(measured: nowhere, never)" not in out or rows(out) != rows(ref):
            raise SystemExit("FAIL: a profile of the reference model is not "
                             "read as it")
        with open(prof, "w") as f:
            f.write(base_cost)
        err = run(exe, trace + ["--sim-cost=measured:" + prof], 2).stderr
        if "no measured= line" not in err:
            raise SystemExit("FAIL: a profile without provenance: %s" % err)
        nap = run(exe, trace + [COST + ",nap_ns=60000,nap_p99_ns=90000"]).stdout
        a, b = rows(ref), rows(nap)
        if a["spin:50"] != b["spin:50"] or a["hybrid"] == b["hybrid"]:
            raise SystemExit("FAIL: nap_ns: spin:50 %s -> %s, hybrid %s -> %s"
                             % (a["spin:50"], b["spin:50"], a["hybrid"],
                                b["hybrid"]))
        ins = rows(run(exe, trace + [COST + ",instr_ps=1000"]).stdout)
        for p in ("spin:50", "hybrid"):
            if not num(ins[p], "cpu_%") > num(a[p], "cpu_%"):
                raise SystemExit("FAIL: instr_ps=1000 left %s's CPU at %s"
                                 % (p, ins[p]["cpu_%"]))
    print("ok: measured profiles, naps' overshoot, decisions' instructions")

    for bad, why in ((["--trace=burst"], "unknown trace"),
                     (["--sim-cost=poll_ns=1"], "--sim-cost: expected"),
                     (["--sim-policies=spin:5;nap"], "unknown policy"),
                     (["--sim-penalty=-1"], "--sim-penalty"),
                     (["--sim-seeds=0"], "sim-seeds"),
                     (["--sim-wake=sometimes"], "--sim-wake")):
        err = run(exe, base[:-1] + [COST] + bad, 2).stderr
        if why not in err:
            raise SystemExit("FAIL: %s: %s" % (bad, err))
    err = run(exe, ["--dev=sw", COST], 2).stderr
    if "go with --sim" not in err:
        raise SystemExit("FAIL: --sim-cost without --sim: %s" % err)
    print("ok: bad options refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
