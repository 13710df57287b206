#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cqpoll against what users run today, on the same transports, paired.

For each transport (ucx tcp, ucx posix, libfabric tcp, io_uring, DPDK
virtio_user) and load
(ping-pong, 1000/s open loop, and the highest rate the peer's busy loop
sustains: its ping-pong rate, measured once before the rounds), every round
runs cqpoll's poll, interrupt and adaptive modes (testpmd-cq) and each
peer's own wait (tpcq-peer) at that load back to back: the loads in a
shuffled order, and within a load the points in a shuffled order (seeded,
the seed printed; --seed repeats it), all pinned the same way (receiver or
poller on CPU 0, sender or generator on CPU 1). A round thus gives one
ratio per check, cqpoll / peer, measured minutes apart from no other.

Checks (issues 24 and 36), per transport and load, each a ratio cqpoll /
peer judged by devtools/verdict.py (median of the rounds' ratios with a
sign-test interval: PASS, FAIL, at the goal, or undecided with the
interval):
  interrupt p50 <= 1.1x the stack's blocking wait's (ucx-wait, ofi-sread,
                uring-wait, ethdev-wait)
  poll p50      <= 1.1x its busy loop's (ucx-busy, ofi-spin, uring-peek,
                ethdev-busy)
  adaptive not dominated by any peer (on the DPDK row also by
                ethdev-l3fwd-power, an adaptive rule like it, which is
                not a blocking wait: it sleeps only after 300 empty polls): the peer's p99 <= 0.9x and its CPU per
                completion <= 0.9x adaptive's both is a domination; each is
                judged as adaptive / peer <= 1/0.9, and the check passes when
                either does, fails when both fail.
  interrupt CPU per completion <= 1.05x the stack's blocking wait's, at
                every load
  adaptive CPU per completion  <= 1.10x the stack's blocking wait's, at
                the loads where the wait's p99 is within 1.1x of adaptive's
                (median of the paired p99 ratios wait / adaptive <= 1.1);
                elsewhere adaptive buys latency with its CPU, and the check
                says so instead of judging
A goal not met (FAIL, undecided or at the goal above it) says by how much
its median ratio exceeds the goal.
CPU is the receiver's or poller's own thread CPU time
(CLOCK_THREAD_CPUTIME_ID) per completion, so that another process's work
does not enter it. Open-loop points whose sender fell behind the load (under
90 % of it) measured their own queue: their round's pair is dropped, and
the count said. Each round records the load average and stolen CPU before
and after, and the CPU other processes used while it ran (the machine's
busy time less this script's children's): a round where they used more than
10 % of a CPU is marked shared and counted in the verdict line.

usage: devtools/run-peers.py [--build=build] [--rounds=9] [--duration=1]
                             [--min-samples=10000] [--loads=pingpong,1000,high]
                             [--transports=ucx-tcp,ucx-posix,ofi-tcp,uring,
                                           ethdev-virtio]
                             [--seed=N] [--out=DIR] [--harness=full|count]
                             [--page [--force]]
       devtools/run-peers.py --page-only [--out=DIR]   (re-render, no run)

--harness=count runs the control: every point, cqpoll's and the peers',
with a completion callback that only counts (testpmd-cq and tpcq-peer
--harness=count; no latency stamp, no order check). Its rounds go to
results/peers-count/ and its own section of the page; only the CPU checks
are judged (adaptive's at every load: no latency to condition it on). If
its ratios match the full run's, the harness is not what they measure.

--page refuses to rewrite the results page when the load average before the
run exceeds 0.3 per CPU; --force writes it with LOADED in large letters.
An open-loop point runs at least --min-samples / rate seconds, so that its
p99 rests on 100 samples above it (10000 samples); ping-pong points run
--duration and the samples they got are in raw.jsonl.
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verdict  # noqa: E402

TRANSPORTS = {
    # name: (testpmd-cq --dev, tpcq-peer --dev, busy peer, blocking peer, other peers)
    "ucx-tcp": ("ucx:tcp", "ucx:tcp", "ucx-busy", "ucx-wait", []),
    "ucx-posix": ("ucx:posix", "ucx:posix", "ucx-busy", "ucx-wait", []),
    "ofi-tcp": ("ofi:tcp", "ofi:tcp", "ofi-spin", "ofi-sread", []),
    "uring": ("uring", "uring", "uring-peek", "uring-wait", ["uring-defer"]),
    # DPDK (issue 36 item 5): cqpoll's ethdev driver on a virtio_user Rx
    # queue fed by vhost in the same process, against a plain
    # rte_eth_rx_burst() loop, DPDK's blocking wait (enable the Rx
    # interrupt at every empty poll, poll again, rte_epoll_wait()) and
    # examples/l3fwd-power's transition on the same port pair. l3fwd-power
    # polls 300 times before it sleeps, so at ping-pong it never sleeps: an
    # adaptive rule, held against adaptive only. The EAL's lcores float on
    # both CPUs in testpmd-cq ((0-2)@(0,1)), so the peers' threads do too
    # (tpcq-peer: unpinned).
    "ethdev-virtio": ("ethdev:virtio_user", "ethdev:virtio_user", "ethdev-busy",
                      "ethdev-wait", ["ethdev-l3fwd-power"]),
}
MODES = ["poll", "interrupt", "adaptive"]
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
PAGE = os.path.join(TOP, "doc", "guides", "testpmd-cq-results.md")
DEFAULT_OUT = os.path.join(TOP, "results", "peers")
COUNT_OUT = os.path.join(TOP, "results", "peers-count")
BEGIN = "<!-- against-peers: generated by devtools/run-peers.py -->"
END = "<!-- against-peers: end -->"
COUNT_BEGIN = "<!-- against-peers-control: generated by devtools/run-peers.py --harness=count -->"
COUNT_END = "<!-- against-peers-control: end -->"
SHARED_CPU = 0.10      # CPUs other processes used in a round: marked shared
P50_GOAL = 1.1
P99_SAMPLES = 10000    # a p99 with 100 samples above it
DOMINATE = 0.9
INT_CPU_GOAL = 1.05    # interrupt CPU per completion / the stack's wait's
ADAPT_CPU_GOAL = 1.10  # adaptive's, where the wait's p99 is near adaptive's
P99_NEAR = 1.1         # ... near: wait p99 / adaptive p99, median, at most


def cpu_stat():
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def snapshot():
    return {"stat": cpu_stat(), "load": os.getloadavg()[0],
            "children": children_cpu_s(), "t": time.time()}


def round_conditions(a, b):
    """Load average, stolen CPU and the CPUs other processes used between
    snapshots @a and @b (busy time from /proc/stat less our children's)."""
    d = [y - x for x, y in zip(a["stat"], b["stat"])]
    tick = os.sysconf("SC_CLK_TCK")
    total = sum(d[:8]) or 1
    # less idle, iowait and steal: the host's other guests are steal_pct
    busy_s = (total - d[3] - d[4] - d[7]) / tick
    wall = max(b["t"] - a["t"], 1e-3)
    others = max(0.0, busy_s - (b["children"] - a["children"])) / wall
    return {"load_before": round(a["load"], 2), "load_after": round(b["load"], 2),
            "steal_pct": round(100.0 * d[7] / total, 2),
            "others_cpus": round(others, 3), "shared": others > SHARED_CPU}


def load_args(load):
    return ["--engine=pingpong"] if load == "pingpong" else \
        ["--engine=rate", "--rate=%d" % load]


def point_duration(args, load):
    if load == "pingpong":
        return args.duration
    return max(args.duration, args.min_samples / float(load))


def command(args, tr, variant, load):
    tp_dev, peer_dev, _, _, _ = TRANSPORTS[tr]
    dur = "--duration=%g" % round(point_duration(args, load), 3)
    if variant.startswith("cqpoll-"):
        mode = variant.split("-", 1)[1]
        cmd = [os.path.join(args.build, "app/testpmd-cq/testpmd-cq"),
               "--dev=" + tp_dev, "--mode=" + mode, dur]
        if load == "pingpong":
            cmd.append("--engine=pingpong")
        else:
            cmd.append("--rate=%d" % load)
        return cmd + harness_args(args)
    return [os.path.join(args.build, "app/testpmd-cq/tpcq-peer"),
            "--peer=" + variant, "--dev=" + peer_dev, "--cpus=0,1", dur] + \
        load_args(load) + harness_args(args)


def harness_args(args):
    """The control's option, on both programs alike; none for the full run."""
    h = getattr(args, "harness", "full")
    return [] if h == "full" else ["--harness=" + h]


def cpu_per_completion(j):
    """The receiver's or poller's thread CPU ns per completion."""
    if "cpu_ns_per_completion" in j:                      # tpcq-peer
        return j["cpu_ns_per_completion"]
    if j.get("completions") and "poller_s" in j:          # testpmd-cq
        return j["cpu_pct"] / 100.0 * j["poller_s"] * 1e9 / j["completions"]
    return None


def run_one(args, tr, variant, load, rnd):
    out = os.path.join(args.tmp, "r.json")
    cmd = command(args, tr, variant, load) + ["--json=" + out]
    if os.path.exists(out):
        os.unlink(out)
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=300)
    rec = {"transport": tr, "variant": variant, "load": load, "round": rnd,
           "cmd": " ".join(cmd[:-1]).replace(args.build + "/", "build/"),
           "exit": r.returncode}
    if r.returncode == 0 and os.path.exists(out):
        with open(out) as f:
            j = json.load(f)
        lat = j["latency_ns"]
        rec.update(p50=lat["p50"], p99=lat["p99"], cpu=j["cpu_pct"],
                   cpu_ns=cpu_per_completion(j), samples=lat.get("samples", 0),
                   completions=j["completions"],
                   rate=j.get("completions_per_s", 0),
                   lost=j.get("lost_wakeups", 0),
                   wakeups=j.get("wakeups_per_s"),
                   recoveries=j.get("timeout_recoveries", 0),
                   recoveries_lost=j.get("recoveries_lost", 0))
    else:
        rec["error"] = (r.stderr.strip().splitlines() or ["no output"])[-1][:200]
    return rec


def point_text(rec):
    if "p50" not in rec:
        return "FAILED: " + rec.get("error", "")
    return "p50 %.1f us p99 %.1f us cpu %.1f%% %s ns/completion, %d samples%s" % (
        rec["p50"] / 1e3, rec["p99"] / 1e3, rec["cpu"],
        "%.0f" % rec["cpu_ns"] if rec.get("cpu_ns") is not None else "-",
        rec.get("samples", 0),
        ", %.0f wake-ups/s, %d lost" % (rec["wakeups"], rec.get("lost", 0) +
                                        rec.get("recoveries_lost", 0))
        if rec.get("wakeups") is not None else "")


def resolve_loads(args, high):
    out = []
    for l in args.loads:
        out.append(high if l == "high" else l)
    return list(dict.fromkeys(out))   # 1000 and a high of 1000: once


def measure(args):
    os.makedirs(args.out, exist_ok=True)
    args.tmp = tempfile.mkdtemp(prefix="run-peers.")
    raw = os.path.join(args.out, "raw.jsonl")
    rng = random.Random(args.seed)
    print("run-peers: order seed %d (--seed=%d repeats the order)" %
          (args.seed, args.seed), flush=True)
    recs, rounds = [], []
    t0 = time.time()
    first = snapshot()
    highs = {}
    for tr in args.transports:
        if "high" not in args.loads:
            break
        # The highest load: what the busy peer sustains back to back.
        busy = TRANSPORTS[tr][2]
        rec = run_one(args, tr, busy, "pingpong", -1)
        rate = rec.get("rate", 0)
        highs[tr] = max(2000, int(float("%.2g" % (rate or 2000))))
        print("run-peers: %s: high load %d/s (%s ping-pong)" %
              (tr, highs[tr], busy), flush=True)
    for rnd in range(args.rounds):
        a = snapshot()
        for tr in args.transports:
            _, _, busy, block, other = TRANSPORTS[tr]
            loads = resolve_loads(args, highs.get(tr))
            rng.shuffle(loads)
            for load in loads:
                variants = ["cqpoll-" + m for m in MODES] + [busy, block] + other
                rng.shuffle(variants)
                for v in variants:
                    rec = run_one(args, tr, v, load, rnd)
                    recs.append(rec)
                    print("run-peers: round %d %-9s %-16s %-8s %s" %
                          (rnd + 1, tr, v, load, point_text(rec)), flush=True)
        cond = round_conditions(a, snapshot())
        cond["round"] = rnd
        rounds.append(cond)
        print("run-peers: round %d: load %.2f -> %.2f, stolen %.1f%%, other "
              "processes %.2f CPUs%s" % (rnd + 1, cond["load_before"],
                                         cond["load_after"], cond["steal_pct"],
                                         cond["others_cpus"],
                                         " (shared)" if cond["shared"] else ""),
              flush=True)
    whole = round_conditions(first, snapshot())
    meta = verdict.run_conditions(TOP, "devtools/run-peers.py", t0, first["load"])
    meta.update({"rounds": args.rounds, "duration": args.duration,
            "min_samples": args.min_samples, "seed": args.seed,
            "loads": args.loads,
            "minutes": round((time.time() - t0) / 60, 1),
            "steal_pct": whole["steal_pct"],
            "uname": " ".join(os.uname()[2:3]),
            "highs": highs, "round_conditions": rounds,
            "forced": bool(getattr(args, "force", False)),
            "harness": args.harness})
    with open(raw, "w") as f:
        f.write(json.dumps({"meta": meta}) + "\n")
        for r in recs:
            f.write(json.dumps(r) + "\n")
    if os.path.exists(os.path.join(args.tmp, "r.json")):
        os.unlink(os.path.join(args.tmp, "r.json"))
    os.rmdir(args.tmp)
    return meta, recs


def load_raw(out):
    meta, recs = None, []
    with open(os.path.join(out, "raw.jsonl")) as f:
        for line in f:
            j = json.loads(line)
            if "meta" in j:
                meta = j["meta"]
            else:
                recs.append(j)
    return meta, recs


def summarize(recs):
    """(transport, load, variant) -> medians and spread over the rounds."""
    groups = {}
    for r in recs:
        if "p50" not in r or r["round"] < 0:
            continue
        groups.setdefault((r["transport"], r["load"], r["variant"]), []).append(r)
    out = {}
    for k, rs in groups.items():
        def med(key):
            v = [x[key] for x in rs if x.get(key) is not None]
            return statistics.median(v) if v else None

        def spread(key):
            v = [x[key] for x in rs if x.get(key) is not None]
            return max(v) - min(v) if v else 0
        out[k] = {"n": len(rs), "p50": med("p50"), "p99": med("p99"),
                  "cpu": med("cpu"), "cpu_ns": med("cpu_ns"), "rate": med("rate"),
                  "wakeups": med("wakeups"),
                  "samples": min(x.get("samples", 0) for x in rs),
                  "load": k[1], "p50_spread": spread("p50"),
                  "p99_spread": spread("p99"), "cpu_spread": spread("cpu"),
                  "lost": sum(x["lost"] for x in rs),
                  "recoveries": sum(x.get("recoveries", 0) for x in rs),
                  "recoveries_lost": sum(x.get("recoveries_lost", 0) for x in rs),
                  "cmd": rs[0]["cmd"]}
    return out


def loads_of(summ, tr):
    ls = sorted({k[1] for k in summ if k[0] == tr and k[1] != "pingpong"})
    return (["pingpong"] if any(k[0] == tr and k[1] == "pingpong" for k in summ)
            else []) + ls


def sustained(x):
    """The point's sender kept up with its open-loop load (90 % of it)."""
    return x.get("load") == "pingpong" or x.get("rate", 0) >= 0.9 * x["load"]


def by_round(recs):
    """(transport, load, variant) -> {round: record}, measured points only."""
    out = {}
    for r in recs:
        if "p50" in r and r["round"] >= 0:
            out.setdefault((r["transport"], r["load"], r["variant"]), {})[r["round"]] = r
    return out


def thin_p99(pts, tr, load, a, b):
    """Rounds where a point of the pair had fewer samples than a p99 on 100
    above it needs."""
    ra, rb = pts.get((tr, load, a), {}), pts.get((tr, load, b), {})
    return sum(1 for r in set(ra) & set(rb)
               if min(ra[r].get("samples", 0), rb[r].get("samples", 0)) < P99_SAMPLES)


def paired(pts, tr, load, a, b, key):
    """Per-round ratios a[key] / b[key] at (tr, load), rounds where both ran
    and both senders kept up; and how many rounds were dropped for a sender
    behind its load."""
    ra, rb = pts.get((tr, load, a), {}), pts.get((tr, load, b), {})
    ratios, behind = [], 0
    for rnd in sorted(set(ra) & set(rb)):
        x, y = ra[rnd], rb[rnd]
        if not (sustained(x) and sustained(y)):
            behind += 1
            continue
        if x.get(key) is None or not y.get(key):
            continue
        ratios.append(x[key] / y[key])
    return ratios, behind


def load_name(load):
    return "ping-pong" if load == "pingpong" else "%d/s" % load


def missed(j):
    """By how much a goal "<= g" is missed: '' when it PASSes or its median
    is within it."""
    if j.outcome == verdict.PASS or j.n == 0 or not j.median > j.goal:
        return ""
    return "; missed by %+.0f %% (median %.2fx against %.2fx)" % (
        100 * (j.median / j.goal - 1), j.median, j.goal)


def cpu_checks(pts, tr, load, block, counting):
    """interrupt's and adaptive's CPU per completion against the stack's
    blocking wait's at (tr, load); adaptive's only where the wait's p99 is
    near its own (all loads when @counting: the control has no latency).
    Dicts as checks(); one with outcome None is a check not judged, and why."""
    out = []
    for mode, goal in (("interrupt", INT_CPU_GOAL), ("adaptive", ADAPT_CPU_GOAL)):
        a = "cqpoll-" + mode
        if not pts.get((tr, load, a)) or not pts.get((tr, load, block)):
            continue
        name = "%s CPU/completion / %s's at %s" % (mode, block, load_name(load))
        if mode == "adaptive" and not counting:
            near, _ = paired(pts, tr, load, block, a, "p99")
            if not near:
                continue
            m = statistics.median(near)
            if m > P99_NEAR:
                out.append({"transport": tr, "load": load, "outcome": None,
                            "kind": "cpu", "mode": mode, "name": name, "p99x": m,
                            "text": "not judged: %s's p99 is %.2fx adaptive's "
                            "(median of %d rounds), over %.1fx: adaptive buys "
                            "latency with that CPU" % (block, m, len(near), P99_NEAR)})
                continue
        ratios, behind = paired(pts, tr, load, a, block, "cpu_ns")
        if not ratios and not behind:
            continue
        j = verdict.judge(ratios, goal)
        out.append({"transport": tr, "load": load, "outcome": j.outcome,
                    "kind": "cpu", "mode": mode, "name": name,
                    "median": j.median, "lo": j.lo, "hi": j.hi, "goal": goal,
                    "text": j.text() + missed(j) + dropped(behind)})
    return out


def checks(recs, counting=False):
    """Every check, judged: dicts with transport, load, name, outcome, text
    (outcome None: not judged, the text says why). @counting: the control
    run, no latency: its CPU checks only."""
    pts = by_round(recs)
    out = []
    for tr in TRANSPORTS:
        if not any(k[0] == tr for k in pts):
            continue
        _, _, busy, block, other = TRANSPORTS[tr]
        loads = sorted({k[1] for k in pts if k[0] == tr},
                       key=lambda l: -1 if l == "pingpong" else l)
        for load in loads:
            out += cpu_checks(pts, tr, load, block, counting)
            if counting:
                continue
            for mode, peer in (("interrupt", block), ("poll", busy)):
                ratios, behind = paired(pts, tr, load, "cqpoll-" + mode, peer, "p50")
                if not ratios and not behind:
                    continue
                j = verdict.judge(ratios, P50_GOAL)
                out.append({"transport": tr, "load": load, "outcome": j.outcome,
                            "name": "%s p50 / %s's at %s" % (mode, peer, load_name(load)),
                            "text": j.text() + missed(j) + dropped(behind)})
            for peer in [busy, block] + other:
                if not pts.get((tr, load, "cqpoll-adaptive")) or \
                        not pts.get((tr, load, peer)):
                    continue
                parts, texts, behind = [], [], 0
                for key, what in (("p99", "p99"), ("cpu_ns", "CPU/completion")):
                    ratios, b = paired(pts, tr, load, "cqpoll-adaptive", peer, key)
                    behind = max(behind, b)
                    j = verdict.judge(ratios, 1 / DOMINATE)
                    parts.append(j.outcome)
                    thin = thin_p99(pts, tr, load, "cqpoll-adaptive", peer) \
                        if key == "p99" else 0
                    texts.append("%s %s%s" % (what, j.text(), (
                        " (p99 on fewer than %d samples in %d round(s))" % (
                            P99_SAMPLES, thin)) if thin else ""))
                out.append({"transport": tr, "load": load, "kind": "dominate",
                            "outcome": verdict.any_of(parts),
                            "name": "adaptive vs %s (p99, CPU) at %s" % (
                                peer, load_name(load)),
                            "text": "; ".join(texts) + dropped(behind)})
    return out


def dropped(behind):
    return " (%d round(s) dropped: a sender behind its load)" % behind if behind else ""


def verdicts(recs, meta, details):
    """One line per transport naming each check's outcome, the FAILs first;
    every check's ratio and interval go to @details. Returns (lines, fails)."""
    lines, fails = [], 0
    rc = meta.get("round_conditions") or []
    shared = sum(1 for c in rc if c.get("shared"))
    cond = "%d round(s) of %d shared with other processes" % (shared, len(rc)) \
        if rc else "round conditions not recorded"
    all_checks = checks(recs, counting=meta.get("harness") == "count")
    order = [verdict.FAIL, verdict.UNDECIDED, verdict.AT, verdict.PASS]
    tails = []
    for tr in TRANSPORTS:
        unjudged_cs = [c for c in all_checks if c["transport"] == tr and
                       c["outcome"] is None]
        cs = [c for c in all_checks if c["transport"] == tr and
              c["outcome"] is not None]
        if not cs:
            continue
        count = {o: [c for c in cs if c["outcome"] == o] for o in order}
        head = verdict.FAIL if count[verdict.FAIL] else \
            verdict.UNDECIDED if count[verdict.UNDECIDED] else \
            verdict.AT if count[verdict.AT] else verdict.PASS
        fails += bool(count[verdict.FAIL])
        parts = []
        for o in order:
            if count[o]:
                parts.append("%d %s (%s)" % (len(count[o]), o, ", ".join(
                    c["name"] for c in count[o])))
        _, _, busy, block, _ = TRANSPORTS[tr]
        ran = {r["variant"] for r in recs if r["transport"] == tr}
        unjudged = ["%s: no %s point in this run" % (what, p)
                    for what, p in (("interrupt", block), ("poll", busy))
                    if p not in ran]
        if unjudged:
            parts.append("not judged (%s)" % ", ".join(unjudged))
        lines.append("run-peers: %s: %s: %s; %s" % (tr, head, "; ".join(parts), cond))
        for c in sorted(cs, key=lambda c: order.index(c["outcome"])):
            details.append("  %s: %s: %s" % (tr, c["name"], c["text"]))
        for c in unjudged_cs:
            details.append("  %s: %s: %s" % (tr, c["name"], c["text"]))
        dom = [c["outcome"] for c in cs if c.get("kind") == "dominate"]
        if dom:
            worst = next(o for o in order if o in dom)
            tails.append("run-peers: %s: no peer dominates adaptive at any load "
                         "(%d peer-load pairs): %s" % (tr, len(dom), worst))
    return lines + tails, fails


def plot(summ, tr, load, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("run-peers: no matplotlib for %s (Debian: python3-matplotlib): "
              "no plots" % sys.executable, file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    for (t, l, v), s in sorted(summ.items(), key=lambda kv: kv[0][2]):
        if t != tr or l != load:
            continue
        cq = v.startswith("cqpoll-")
        ax.errorbar(s["cpu"], s["p99"] / 1e3, xerr=s["cpu_spread"] / 2,
                    yerr=s["p99_spread"] / 2e3, fmt="o" if cq else "s",
                    color="tab:blue" if cq else "tab:red", capsize=3)
        ax.annotate(v, (s["cpu"], s["p99"] / 1e3), fontsize=7,
                    xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel("receiver / poller CPU (%)")
    ax.set_ylabel("p99 latency (us)")
    ax.set_yscale("log")
    ax.set_title("%s, %s (medians; bars: spread)" %
                 (tr, "ping-pong" if load == "pingpong" else "%d/s" % load))
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def lost_text(v, x):
    """cqpoll: the oracle's lost wake-ups / timeout recoveries. A peer that
    reports its sleeps (ethdev-wait, ethdev-l3fwd-power) has no oracle: its lost are the
    recoveries holding a packet posted over 1 ms before the timeout ended."""
    if v.startswith("cqpoll-"):
        return "%d / %d" % (x["lost"], x["recoveries"])
    if x.get("wakeups") is not None:
        return "%d / %d" % (x["recoveries_lost"], x["recoveries"])
    return "-"


def first_load(x):
    """A load average as kept: one number, or (before issue 36) the triple."""
    return x[0] if isinstance(x, (list, tuple)) else x


def cpu_cell(c):
    if c is None:
        return "-"
    if c["outcome"] is None:
        return "not judged: the wait's p99 %.2fx adaptive's" % c["p99x"]
    return "%.2fx [%.2f, %.2f]: %s%s" % (
        c["median"], c["lo"], c["hi"], c["outcome"],
        missed_short(c))


def missed_short(c):
    if c["outcome"] == verdict.PASS or not c["median"] > c["goal"]:
        return ""
    return ", missed by %+.0f %%" % (100 * (c["median"] / c["goal"] - 1))


def cpu_table(recs, counting):
    """The page's table of the CPU checks: per transport and load,
    interrupt's and adaptive's CPU per completion / the stack's wait's."""
    cs = [c for c in checks(recs, counting) if c.get("kind") == "cpu"]
    if not cs:
        return []
    s = ["CPU per completion against the stack's own blocking wait (goals: "
         "`interrupt` <= %.2fx at every load, `adaptive` <= %.2fx where the "
         "wait's p99 is within %.1fx of adaptive's%s); median of the paired "
         "rounds' ratios [interval]: outcome, and by how much a goal is missed:" % (
             INT_CPU_GOAL, ADAPT_CPU_GOAL, P99_NEAR,
             "; the control judges adaptive at every load" if counting else ""),
         "", "| transport | load | wait | interrupt / wait | adaptive / wait |",
         "|---|---|---|---|---|"]
    for tr in TRANSPORTS:
        block = TRANSPORTS[tr][3]
        loads = sorted({c["load"] for c in cs if c["transport"] == tr},
                       key=lambda l: -1 if l == "pingpong" else l)
        for load in loads:
            cell = {c["mode"]: c for c in cs
                    if c["transport"] == tr and c["load"] == load}
            s.append("| %s | %s | %s | %s | %s |" % (
                tr, load_name(load), block, cpu_cell(cell.get("interrupt")),
                cpu_cell(cell.get("adaptive"))))
    return s + [""]


def section(summ, meta, lines, out, recs=()):
    rel = os.path.relpath(out, os.path.dirname(PAGE))
    ncpu = meta.get("ncpu") or 1
    rc = meta.get("round_conditions") or []
    counting = meta.get("harness") == "count"
    if counting:
        s = [COUNT_BEGIN, "## Against peers: the control (callbacks that only count)",
             "", "The same rounds with `--harness=count` on both programs: each "
             "completion is only counted (no latency stamp, no order check), so "
             "the CPU ratios below are the waits' alone. Set beside the full "
             "run's above: where they agree, the harness is not what the ratios "
             "measure. Latency columns are empty (0).", ""]
    else:
        s = [BEGIN, "## Against peers", ""]
    s += verdict.loaded_banner(first_load(meta["load_before"]), ncpu)
    s += ["cqpoll's poll, interrupt and adaptive modes (testpmd-cq) against what "
          "users run today on the same transport (tpcq-peer: UCX busy progress "
          "and `ucp_worker_wait()`, libfabric `fi_cq_read()` spin and "
          "`fi_cq_sread()`, liburing busy peek, `io_uring_wait_cqe()` and "
          "DEFER_TASKRUN with `io_uring_get_events()`, DPDK's `rte_eth_rx_burst()` "
          "in a loop, its blocking wait (at every empty poll "
          "`rte_eth_dev_rx_intr_enable()`, a poll again, `rte_epoll_wait()`) and "
          "examples/l3fwd-power's transition on virtio_user fed by "
          "vhost). `interrupt` is held to each stack's blocking wait, `poll` to "
          "its busy loop, and no peer may dominate `adaptive`; examples/l3fwd-power "
          "polls 300 times before it sleeps (it never sleeps at ping-pong), an "
          "adaptive rule, so it is held against `adaptive` only. One-way latency "
          "from the "
          "sender's post to the receiver's read, 64-byte messages; CPU is the "
          "receiver's or poller's own thread CPU time (`CLOCK_THREAD_CPUTIME_ID`) "
          "per completion. Receiver on CPU 0, sender on CPU 1 for every point, "
          "except ethdev-virtio's, where both threads are free on CPUs 0 and 1 "
          "on both sides (testpmd-cq's EAL lcores for a DPDK port, "
          "`(0-2)@(0,1)`). "
          "%d rounds; in each, every load of a transport in a shuffled order and "
          "at each load every point back to back in a shuffled order (seed %s); "
          "ping-pong points of %g s, open-loop points of at least %d samples. "
          "Each check is a ratio cqpoll / peer per round, judged by "
          "`devtools/verdict.py`: %s. High load: the busy peer's ping-pong rate, "
          "measured before the rounds (%s)." %
          (meta["rounds"], meta.get("seed", "not recorded"), meta["duration"],
           meta.get("min_samples", 0), verdict.method_text(),
           ", ".join("%s %d/s" % kv for kv in sorted(meta["highs"].items()))),
          "",
          "Conditions: commit %s, run %s, %.1f minutes, kernel %s, %d CPUs; load "
          "average %.2f before and %.2f after, stolen CPU %.1f%%; %s. Command: `%s`." %
          (meta.get("commit", "not recorded"), meta["started"], meta["minutes"],
           meta["uname"], ncpu, first_load(meta["load_before"]),
           first_load(meta["load_after"]), meta["steal_pct"],
           "%d of %d rounds shared with other processes (over %.0f %% of a CPU)" % (
               sum(1 for c in rc if c.get("shared")), len(rc), 100 * SHARED_CPU)
           if rc else "round conditions not recorded",
           meta.get("command", "devtools/run-peers.py")),
          "", "Where cqpoll's sleep costs more than the stack's own wait, the "
          "breakdown of one sleep-and-wake says where it goes: its system "
          "calls against the peer's "
          "([testpmd-cq.md, What a sleep costs in system calls]"
          "(testpmd-cq.md#what-a-sleep-costs-in-system-calls), "
          "`devtools/count-wake-syscalls.py`), and each driver's guide: "
          "[io_uring](uring-driver.md#where-a-sleeps-cpu-goes-against-io_uring_wait_cqe) "
          "(user-space instructions, `bench/run_sleep_path.sh`), "
          "[UCX](ucx-driver.md#what-a-sleep-and-wake-costs-against-ucp_worker_wait), "
          "[ethdev](ethdev-driver.md#the-sleep), "
          "[libfabric](ofi-driver.md). The largest part found at 1000/s was "
          "the bound on every sleep, which none of the stacks' untimed waits "
          "pays: the safety net's alarm, moved once per half period, 7-25 % "
          "of a wake-up's CPU at a 10 ms net, a few per cent at the default "
          "100 ms "
          "([poll-group.md](poll-group.md#the-transition-into-sleep), paired in one process: "
          "[the price of the bound on a sleep]"
          "(uring-driver.md#the-price-of-the-bound-on-a-sleep-paired)).",
          "", "Both programs do the same work on each completion: "
          "`tpcq_harness_got()` (app/common/harness.c, one object linked into "
          "both) stamps its latency, checks its order and counts it, after one "
          "clock read per burst read at once. `devtools/run-peers.py "
          "--harness=count` runs the control, both programs counting only, "
          "into a section of its own (\"Against peers: the control\").", ""] + cpu_table(recs, counting) + [
          "Verdicts (`devtools/run-peers.py`, also printed by `run-main.sh`), "
          "then every check's median ratio and interval:",
          "", "```"] + lines + ["```", ""]
    if rc:
        s += ["Rounds: " + "; ".join(
            "%d: load %.2f -> %.2f, others %.2f CPUs%s" % (
                c["round"] + 1, c["load_before"], c["load_after"], c["others_cpus"],
                " (shared)" if c["shared"] else "") for c in rc) + ".", ""]
    for tr in TRANSPORTS:
        for load in loads_of(summ, tr):
            name = "%s, %s" % (tr, load_name(load))
            s += ["### %s" % name, "",
                  "| variant | p50 us | p99 us | CPU % | CPU ns / completion | "
                  "wake-ups/s | fewest samples | spread p50 / p99 us, CPU % | "
                  "lost / recovered | command |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
            for (t, l, v), x in sorted(summ.items(), key=lambda kv: kv[0][2]):
                if t != tr or l != load:
                    continue
                s.append("| %s | %.1f | %.1f | %.1f | %s | %s | %d | %.1f / %.1f, %.1f | %s | `%s` |" %
                         (v, x["p50"] / 1e3, x["p99"] / 1e3, x["cpu"],
                          "%.0f" % x["cpu_ns"] if x["cpu_ns"] is not None else "-",
                          "%.0f" % x["wakeups"] if x.get("wakeups") is not None else "-",
                          x["samples"], x["p50_spread"] / 1e3, x["p99_spread"] / 1e3,
                          x["cpu_spread"], lost_text(v, x), x["cmd"]))
            png = "%s-%s.png" % (tr, load)
            if not counting and plot(summ, tr, load, os.path.join(out, png)):
                s += ["", "![%s: p99 against CPU](%s/%s)" % (name, rel, png)]
            s.append("")
    s.append(COUNT_END if counting else END)
    return s


def write_page(sec):
    if sec[0] == COUNT_BEGIN:
        verdict.write_section(PAGE, sec, COUNT_BEGIN, COUNT_END, after=[END])
    else:
        verdict.write_section(PAGE, sec, BEGIN, END)


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def system_python():
    """Re-run under Debian's python3 (python3-matplotlib) when this one has no
    matplotlib, e.g. a pyenv interpreter first in PATH: the page's plots are
    what --page is for."""
    py = "/usr/bin/python3"
    if os.path.realpath(sys.executable) == os.path.realpath(py) or not os.access(py, os.X_OK):
        return
    if subprocess.run([py, "-c", "import matplotlib"], stderr=subprocess.DEVNULL).returncode:
        return
    os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--min-samples", type=int, default=10000)
    ap.add_argument("--loads", default="pingpong,1000,high")
    ap.add_argument("--transports", default=",".join(TRANSPORTS))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--harness", choices=["full", "count"], default="full")
    ap.add_argument("--page", action="store_true")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--page-only", action="store_true")
    args = ap.parse_args()
    if args.out is None:
        args.out = COUNT_OUT if args.harness == "count" else DEFAULT_OUT
    if (args.page or args.page_only) and not have_matplotlib():
        system_python()
    args.build = os.path.abspath(args.build)
    args.transports = [t for t in args.transports.split(",") if t]
    for t in args.transports:
        if t not in TRANSPORTS:
            ap.error("unknown transport %s (one of %s)" % (t, ", ".join(TRANSPORTS)))
    loads = []
    for l in (x for x in args.loads.split(",") if x):
        if l in ("pingpong", "high"):
            loads.append(l)
        elif l.isdigit() and int(l) > 0:
            loads.append(int(l))
        else:
            ap.error("--loads: pingpong, high or a rate in messages/s, not %r" % l)
    args.loads = loads
    if args.rounds < 1 or args.duration <= 0 or args.min_samples < 0 or not loads:
        ap.error("--rounds >= 1, --duration > 0, --min-samples >= 0, a load")
    if args.rounds < verdict.MIN_PAIRS:
        print("run-peers: %d rounds: every check will be undecided (a %d %% "
              "interval needs >= %d pairs)" % (args.rounds, round(verdict.LEVEL * 100),
                                               verdict.MIN_PAIRS), file=sys.stderr)
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    if args.page and not args.page_only and not verdict.load_guard(
            "run-peers", os.getloadavg()[0], os.cpu_count() or 1, args.force):
        return 2
    if args.page_only:
        meta, recs = load_raw(args.out)
    else:
        meta, recs = measure(args)
    summ = summarize(recs)
    details = []
    lines, fails = verdicts(recs, meta, details)
    failed_runs = [r for r in recs if "p50" not in r]
    for r in failed_runs:
        lines.append("run-peers: %s %s at %s FAILED to run: %s" %
                     (r["transport"], r["variant"], r["load"], r.get("error", "")))
    lost = sum(x["lost"] for k, x in summ.items() if k[2].startswith("cqpoll-"))
    if lost:
        lines.append("run-peers: cqpoll lost %d wake-ups (the oracle): FAIL" % lost)
    rec = sum(x["recoveries"] for k, x in summ.items() if k[2].startswith("cqpoll-"))
    rec_lost = sum(x["recoveries_lost"] for k, x in summ.items()
                   if k[2].startswith("cqpoll-"))
    if rec:
        lines.append("run-peers: cqpoll: %d timeout recoveries (sleeps that ended by "
                     "their safety net, testpmd-cq's --timeout-ms, and found "
                     "completions), %d of them judged lost from the generator's "
                     "post times (posted over 1 ms before the earliest the net "
                     "ends a sleep), the others late (testpmd-cq.md, "
                     "recoveries_late and recoveries_lost)%s" % (
                         rec, rec_lost, ": FAIL" if rec_lost else ""))
        lost += rec_lost
    print("\n".join(lines + details))
    if args.page or args.page_only:
        write_page(section(summ, meta, lines + details, args.out, recs))
        print("run-peers: wrote the Against peers%s section of %s" % (
            " control" if meta.get("harness") == "count" else "", PAGE))
    return 1 if fails or failed_runs or lost else 0


if __name__ == "__main__":
    sys.exit(main())
