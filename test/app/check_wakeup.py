#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench_wakeup's interleaved blocks and devtools/run-wakeup.py (issue 37).

usage: check_wakeup.py BENCH_WAKEUP

1. The mode split on synthetic latencies: two modes (4 us and 18 us, 70/30)
   are named with their shares; one mode, narrow or with a long tail, is
   not. Control: the split without its checks (Otsu alone) names modes in
   one-mode data, and is caught.
2. The goals on synthetic rounds whose machine state swings between the
   modes from round to round: pairing within a round judges group-1 at
   1.05x raw a PASS and at 1.5x a FAIL; on timelines where the mode
   switches every 0.3 s or so, interleaved blocks give PASS on each.
   Control: the same timelines run one scenario after the other, pooled
   medians (the method before issue 37), misjudge some by >= 1.5x.
3. The CPU goals against the floor (issue 43), on synthetic rounds that
   swing between the modes: group-1 at 1.03x raw and raw at 1.05x
   bare-epoll PASS; raw at 1.3x bare-epoll FAILs and says by how much
   (+17 %); with --runs, the runs' rounds judged together. Control: raw paired
   with bare-epoll's block of another round (the pairing lost) no longer
   PASSes the clear case.
4. bench_wakeup end to end, briefly: every round holds one block of each
   scenario, the floors among them, the order differs between rounds,
   every block has its CPU time, and run-wakeup.py prints a verdict for
   each goal. Bad input (--block over --samples) exits 2.
"""
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEVTOOLS = os.path.join(HERE, "..", "..", "devtools")
sys.path.insert(0, DEVTOOLS)
import verdict  # noqa: E402
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location(
    "run_wakeup", os.path.join(DEVTOOLS, "run-wakeup.py"))
rw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rw)


def lognormal(rng, center_ns, sigma, n):
    return [int(center_ns * math.exp(rng.gauss(0, sigma))) for _ in range(n)]


def check_modes():
    rng = random.Random(37)
    bad = 0
    two = lognormal(rng, 4000, 0.08, 7000) + lognormal(rng, 18000, 0.08, 3000)
    one = lognormal(rng, 4000, 0.15, 10000)
    tail = lognormal(rng, 4000, 0.1, 9500) + \
        [int(4000 + rng.expovariate(1 / 6000.0)) for _ in range(500)]
    m = rw.modes(two)
    slow = sum(1 for v in two if m and v >= m[0]) / len(two)
    ok = m is not None and abs(m[1] - 4000) < 400 and abs(m[2] - 18000) < 1800 \
        and abs(slow - 0.30) < 0.01
    print("two modes: %s: %s" % (m and "fast %.1f us, slow %.1f us, %.0f %% slow" % (
        m[1] / 1e3, m[2] / 1e3, 100 * slow), "ok" if ok else "FAIL"))
    bad += not ok
    for name, data in (("one mode", one), ("one mode, long tail", tail)):
        m = rw.modes(data)
        print("%s: %s: %s" % (name, m and "named %.1f/%.1f us" % (m[1] / 1e3, m[2] / 1e3)
                              or "none named", "ok" if m is None else "FAIL"))
        bad += m is not None
    # Control: Otsu alone, without the share, gap and valley checks.
    saved = (rw.MODE_SHARE, rw.MODE_GAP, rw.VALLEY)
    rw.MODE_SHARE, rw.MODE_GAP, rw.VALLEY = 0.0, 1.0, float("inf")
    caught = rw.modes(one) is not None or rw.modes(tail) is not None
    rw.MODE_SHARE, rw.MODE_GAP, rw.VALLEY = saved
    print("control: Otsu alone names modes in one-mode data: %s" %
          ("caught" if caught else "NOT CAUGHT"))
    bad += not caught
    return bad


def doc_of(rounds, factor, rng, floor=None):
    """Blocks of 50 samples, raw / group-1 / group-N in a shuffled order per
    round; each round in the fast (4 us) or the slow (18 us) mode, one
    round in three slow; group-1 @factor x raw, group-N 1.1x group-1. With
    @floor, the floors too: raw @floor x bare-epoll, bare-uring as
    bare-epoll; each block's CPU then carries 1 % noise of its own."""
    names = ["raw", "group-1", "group-N"]
    f = {"raw": 1.0, "group-1": factor, "group-N": factor * 1.1}
    if floor is not None:
        names += ["bare-epoll", "bare-uring"]
        f.update({"bare-epoll": 1 / floor, "bare-uring": 1 / floor})
    blocks = []
    for r in range(rounds):
        base = 18000 if r % 3 == 0 else 4000
        order = names[:]
        rng.shuffle(order)
        for pos, n in enumerate(order):
            c = base * f[n]
            noise = 1 + rng.gauss(0, 0.01) if floor is not None else 1
            blocks.append({"scenario": n, "round": r, "pos": pos,
                           "cpu_ns": int(50 * c * 0.5 * noise),
                           "lat_ns": lognormal(rng, c, 0.05, 50)})
    return {"block": 50, "rounds": rounds, "seed": 1, "cqs": 4096,
            "gap_us": [50, 150], "blocks": blocks,
            "scenarios": [{"name": n} for n in names]}


def timeline(rng, n, dwell):
    """The machine's wake-up mode at each of @n sample times: 4 us or
    18 us, switching after exponential dwells of mean @dwell samples."""
    out, mode = [], rng.random() < 0.5
    while len(out) < n:
        out += [18000 if mode else 4000] * max(1, int(rng.expovariate(1.0 / dwell)))
        mode = not mode
    return out[:n]


FACTOR = {"raw": 1.0, "group-1": 1.05, "group-N": 1.1}


def sequential(rng, modes, per):
    """Before issue 37: each scenario's samples one after the other; the
    pooled median ratio group-1 / raw."""
    med = {}
    for k, n in enumerate(FACTOR):
        med[n] = statistics.median(
            modes[k * per + i] * FACTOR[n] * math.exp(rng.gauss(0, 0.05))
            for i in range(per))
    return med["group-1"] / med["raw"]


def interleaved(rng, modes, per, bs):
    """bench_wakeup's schedule over the same timeline: blocks of @bs in a
    shuffled order per round; the document run-wakeup.py judges."""
    names, blocks, t = list(FACTOR), [], 0
    for r in range(per // bs):
        order = names[:]
        rng.shuffle(order)
        for pos, n in enumerate(order):
            lat = [int(modes[t + i] * FACTOR[n] * math.exp(rng.gauss(0, 0.05)))
                   for i in range(bs)]
            t += bs
            blocks.append({"scenario": n, "round": r, "pos": pos,
                           "cpu_ns": sum(lat) // 2, "lat_ns": lat})
    return {"block": bs, "rounds": per // bs, "seed": 1, "cqs": 4096,
            "gap_us": [50, 150], "blocks": blocks,
            "scenarios": [{"name": n} for n in names]}


def check_goals():
    bad = 0
    rng = random.Random(7)
    for factor, want in ((1.05, verdict.PASS), (1.5, verdict.FAIL)):
        doc = doc_of(12, factor, rng)
        got = rw.judge(doc)
        j = got[0][1]
        ok = j.outcome == want and got[1][1].outcome == verdict.PASS and \
            got[2][1].outcome == verdict.PASS
        print("group-1 at %.2fx raw, modes swinging by round: %s: %s" % (
            factor, j.text(), "ok" if ok else "FAIL"))
        bad += not ok
    # The machine switching modes over time (mean dwell 2000 samples, about
    # 0.3 s), group-1 at 1.05x raw: interleaved blocks judged per round
    # PASS on every timeline. Control: the same timelines run one scenario
    # after the other with pooled medians (bench_wakeup before issue 37)
    # misjudge at least one by 1.5x or more, as the runs of issue 37 did.
    per, wrong, seeds = 3000, 0, 8
    for seed in range(seeds):
        trng = random.Random(100 + seed)
        modes = timeline(trng, 3 * per, 2000)
        j = rw.judge(interleaved(trng, modes, per, 100))[0][1]
        seq = sequential(trng, modes, per)
        wrong += abs(math.log(seq / 1.05)) > math.log(1.5)
        ok = j.outcome == verdict.PASS
        print("timeline %d: interleaved %s: %s; sequential pooled %.2fx" % (
            seed, j.text(), "ok" if ok else "FAIL", seq))
        bad += not ok
    print("control: sequential runs, pooled medians: %d of %d timelines off by "
          ">= 1.5x: %s" % (wrong, seeds, "caught" if wrong else "NOT CAUGHT"))
    bad += not wrong
    return bad


def check_floors():
    rng = random.Random(43)
    bad = 0
    want = {"group-1 / raw, CPU per wake-up": verdict.PASS,
            "raw / bare-epoll, CPU per wake-up": verdict.PASS}
    for floor, factor, outcome in ((1.05, 1.03, verdict.PASS),
                                   (1.3, 1.03, verdict.FAIL)):
        doc = doc_of(12, factor, rng, floor=floor)
        got = dict(rw.judge(doc))
        lines, fails = rw.report([doc])
        j = got["raw / bare-epoll, CPU per wake-up"]
        ok = j.outcome == outcome and \
            got["group-1 / raw, CPU per wake-up"].outcome == verdict.PASS and \
            fails == (outcome == verdict.FAIL) and \
            any("raw / bare-uring, CPU per wake-up" in l and "not judged" in l
                for l in lines)
        if outcome == verdict.FAIL:
            ok = ok and any("raw / bare-epoll" in l and "missed by +17 %" in l
                            for l in lines)
        print("raw at %.2fx bare-epoll, group-1 at %.2fx raw: %s: %s" % (
            floor, factor, j.text(), "ok" if ok else "FAIL"))
        bad += not ok
    # --runs: the runs' rounds together, one verdict per goal.
    docs = [doc_of(6, 1.03, rng, floor=1.05) for _ in range(3)]
    lines, _ = rw.report(docs)
    together = [l for l in lines if "the 3 runs' rounds together" in l]
    ok = len(together) == 5 and all(
        ("18 pairs" in l and verdict.PASS in l) for l in together
        if any(k in l for k in want))
    print("--runs=3: %d goals judged on the runs' rounds together: %s" % (
        len(together), "ok" if ok else "FAIL"))
    bad += not ok
    # Control: raw paired with bare-epoll's block of the next round.
    real = rw.round_ratios

    def unpaired(doc, a, b, key):
        x, y = real(doc, a, a, key), real(doc, b, b, key)
        per = {}
        for bl in doc["blocks"]:
            per.setdefault(bl["round"], {})[bl["scenario"]] = bl["cpu_ns"]
        rs = sorted(per)
        return [per[r][a] / per[rs[(i + 1) % len(rs)]][b] for i, r in enumerate(rs)] \
            if x and y else []
    rw.round_ratios = unpaired
    j = dict(rw.judge(doc_of(12, 1.03, rng, floor=1.05)))["raw / bare-epoll, CPU per wake-up"]
    rw.round_ratios = real
    caught = j.outcome != verdict.PASS
    print("control: unpaired rounds: raw / bare-epoll %s: %s" % (
        j.text(), "caught" if caught else "NOT CAUGHT"))
    bad += not caught
    return bad


def check_bench(exe):
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "w.json")
        # --oracle: the emulator's sleep check on, so that a lost wake-up
        # fails the run (bench_wakeup exits 1).
        r = subprocess.run([exe, "--samples=300", "--block=30", "--cqs=64",
                            "--seed=5", "--oracle", "--json=" + out],
                           capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0:
            print("bench_wakeup failed (%d): %s" % (r.returncode, r.stderr))
            return 1
        doc = json.load(open(out))
    rounds = {}
    for b in doc["blocks"]:
        rounds.setdefault(b["round"], []).append(b)
    orders = {tuple(x["scenario"] for x in sorted(bs, key=lambda x: x["pos"]))
              for bs in rounds.values()}
    names = {s["name"] for s in doc["scenarios"]}
    ok = len(rounds) == 10 and doc["sleep_check"] is True and \
        all(sorted(x["scenario"] for x in bs) == sorted(names) for bs in rounds.values()) and \
        len(orders) > 1 and all(b["cpu_ns"] > 0 and len(b["lat_ns"]) == 30
                                for b in doc["blocks"])
    print("bench_wakeup --samples=300 --block=30: %d rounds, %d orders: %s" % (
        len(rounds), len(orders), "ok" if ok else "FAIL"))
    bad += not ok
    got = rw.judge(doc)
    lines, _ = rw.report([doc])
    print("\n".join("  " + l for l in lines))
    floors = {"bare-epoll"} <= names
    ok = floors and len(got) == 5 and all(j.outcome in (verdict.PASS, verdict.FAIL, verdict.AT,
                                             verdict.UNDECIDED) and j.n == 10
                               for _, j in got)
    print("verdicts on every goal: %s" % ("ok" if ok else "FAIL"))
    bad += not ok
    r = subprocess.run([exe, "--samples=20", "--block=30"], capture_output=True,
                       text=True, timeout=30)
    print("--block over --samples: exit %d: %s" % (r.returncode,
                                                   "ok" if r.returncode == 2 else "FAIL"))
    bad += r.returncode != 2
    return bad


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    bad = check_modes() + check_goals() + check_floors() + check_bench(sys.argv[1])
    print("check_wakeup: %s" % ("FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
