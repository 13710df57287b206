#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the testpmd-cq results page (Markdown, on stdout) from a sweep.

usage: gen-results-page.py SWEEP.json --plots=DIR --page-dir=DIR
           [--load-before=L] [--load-after=L] [--sweep-status=N]
           [--reproduce=COMMAND] [--busy=FILE]

Called by devtools/gen-results.sh. Every figure on the page is read from the
sweep's JSON or from this machine (/proc/cpuinfo, /proc/meminfo, uname, git):
nothing is typed in by hand. The goals computed here:
  - at the lowest load, adaptive CPU / interrupt CPU <= 1.2
  - at the highest load, adaptive p99 / poll p99 <= 1.2
  - at the lowest load, interrupt p50 / wake-up floor p50 <= 1.5
  - at the highest load, poll p99 / hand-off floor p99 <= 10
(each floor paced at that load; the back-to-back one given beside it)
--busy names a file with what else ran during the sweep (ps output).
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys

GOAL = 1.2


def cpu_model():
    models, n = [], 0
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, val = line.partition(":")
            if key.strip() == "processor":
                n += 1
            elif key.strip() == "model name" and val.strip() not in models:
                models.append(val.strip())
    return ", ".join(models) or platform.processor() or "unknown", n


def mem_total_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1 << 20)
    return 0.0


def git_revision():
    def git(*args):
        return subprocess.run(["git"] + list(args), capture_output=True,
                              text=True).stdout.strip()
    rev = git("rev-parse", "--short", "HEAD")
    if not rev:
        return "unknown (not a git checkout)"
    dirty = git("status", "--porcelain", "--", "lib", "drivers", "app")
    return rev + (" with uncommitted changes in lib/, drivers/ or app/" if dirty else "")


def us(ns):
    return ns / 1e3


def find(points, dev, load, policy):
    for p in points:
        if p["dev"] == dev and p["load"] == load and p["policy"] == policy:
            return p if p["ok"] and p["run"] is not None else None
    return None


def busy_asleep(p):
    g = p["run"].get("group")
    if not g:
        return ""
    return ", busy %.1f%% / asleep %.1f%% of the run" % (g["busy_pct"], g["asleep_pct"])


def describe(p):
    r = p["run"]
    return ("%s: CPU %.1f%%, p50 %.1f us, p99 %.1f us, %.0f wake-ups/s, "
            "achieved %.0f of %d completions/s%s" %
            (p["policy"], r["cpu_pct"], us(r["latency_ns"]["p50"]),
             us(r["latency_ns"]["p99"]), p["run"]["wakeups_per_s"],
             r["achieved_rate"], p["load"], busy_asleep(p)))


def caveats(pts, loadavg, ncpu):
    """Facts from the data that bear on a comparison, whatever its verdict."""
    out = []
    for p in pts:
        r = p["run"]
        if r["achieved_rate"] < 0.95 * p["load"]:
            out.append("`%s` achieved %.0f%% of the offered load: the "
                       "generator fell behind during its run, so its figures "
                       "are not at the nominal load." %
                       (p["policy"], 100.0 * r["achieved_rate"] / p["load"]))
        if p["policy"] == "poll" and r["cpu_pct"] < 90:
            out.append("`poll` never sleeps, so it uses a whole core when it "
                       "has one; it got %.0f%% of one here: for the rest of the "
                       "run it was waiting for a CPU, and so were the "
                       "completions it had not read yet." % r["cpu_pct"])
    if out and loadavg is not None and loadavg > ncpu:
        out.append("The machine was shared: load average up to %.2f on %d "
                   "CPUs around the sweep." % (loadavg, ncpu))
    return out


def comparison(title, points, dev, load, num_pol, den_pol, metric, label, loadavg, ncpu):
    """One goal: the ratio from the data, PASS/MISS, and the facts behind it."""
    a, b = find(points, dev, load, num_pol), find(points, dev, load, den_pol)
    out = ["### %s" % title, ""]
    if a is None or b is None:
        missing = [pol for pol, p in ((num_pol, a), (den_pol, b)) if p is None]
        out += ["Not measured: no successful `%s` point at %d completions/s."
                % ("`, `".join(missing), load), ""]
        return out, None
    va, vb = metric(a), metric(b)
    if vb <= 0:
        out += ["Not computable: `%s` measured %s = 0." % (den_pol, label), ""]
        return out, None
    ratio = va / vb
    verdict = "PASS" if ratio <= GOAL else "MISS"
    # Two decimals, but a ratio far below 1 keeps two significant digits.
    shown = "%.2f" % ratio if ratio >= 0.01 else "%.2g" % ratio
    out += ["At %d completions/s: `%s` %s %.1f / `%s` %s %.1f = **%s** "
            "(goal <= %.1f): **%s**." % (load, num_pol, label, va, den_pol,
                                          label, vb, shown, GOAL, verdict), ""]
    out += ["What each measured in that run:", "",
            "- " + describe(a), "- " + describe(b)]
    notes = caveats([a, b], loadavg, ncpu)
    if notes:
        out += ["", "Conditions that %s this %s:" %
                ("qualify" if verdict == "PASS" else "bear on",
                 "result" if verdict == "PASS" else "miss"), ""]
        out += ["- " + n for n in notes]
    out += [""]
    return out, ratio


def floor_ratio(p, key):
    v = p.get(key)
    return "-" if v is None else "%.1fx %s" % (
        v, "w" if p["floor"].startswith("wakeup") else "h")


def paced_floors(sweep, load):
    """The floors paced at load, or None."""
    for f in (sweep.get("floors") or {}).get("paced", []):
        if f["rate"] == load:
            return f
    return None


def floor_goals(sweep, points, dev, lo, hi):
    """Interrupt p50 over the wake-up floor at the lowest load, poll p99
    over the hand-off floor at the highest: how close to the machine."""
    out = []
    for title, pol, load, key, pct, goal in (
            ("Interrupt p50 / wake-up floor at the lowest load", "interrupt",
             lo, "p50_x_floor", "p50", 1.5),
            ("Poll p99 / hand-off floor at the highest load", "poll", hi,
             "p99_x_floor", "p99", 10.0)):
        out += ["### %s" % title, ""]
        p = find(points, dev, load, pol)
        if p is None or p.get(key) is None or sweep.get("floors") is None:
            out += ["Not measured: no `%s` point at %d completions/s with a "
                    "floor." % (pol, load), ""]
            continue
        lat = p["run"]["latency_ns"][pct]
        kind = "wakeup" if p["floor"].startswith("wakeup") else "handoff"
        name = {"wakeup": "wake-up", "handoff": "hand-off"}[kind]
        paced = p["floor"].endswith("_paced")
        if paced:
            fl = paced_floors(sweep, load)[kind + "_ns"][pct]
            what = "%s paced at %d/s" % (name, load)
        else:
            fl, what = sweep["floors"][kind + "_ns"][pct], name
        out += ["At %d completions/s: `%s` %s %.1f us / floor (%s) %s %.2f us "
                "= **%.2fx** (goal <= %.1fx): **%s**." % (
                    load, pol, pct, us(lat), what, pct, us(fl), p[key], goal,
                    "PASS" if p[key] <= goal else "MISS"), ""]
        if paced:
            b2b = sweep["floors"][kind + "_ns"][pct]
            out[-2] += (" Against the back-to-back %s (%s %.2f us, measured "
                        "before the sweep in a fraction of a second): "
                        "%.2fx." % (name, pct, us(b2b), lat / b2b))
    return out


LAB_TRACES = ["poisson", "onoff", "pareto", "diurnal", "periodic"]
LAB_TARGETS = [100, 60, 40, 20]


def lab_read(d, prefix):
    """trace -> the lines of lab-PREFIXTRACE.txt, as gen-results.sh left them."""
    runs = {}
    for t in LAB_TRACES:
        path = os.path.join(d, "lab-%s%s.txt" % (prefix, t))
        if os.path.exists(path):
            with open(path) as f:
                runs[t] = f.read().splitlines()
    return runs


def lab_rows(lines):
    """policy -> [cpu_%, p50, p99, p99.9, wakeups/s, cpu/opt, ratio]."""
    rows = {}
    for l in lines:
        f = l.split()
        if len(f) == 8:
            try:
                rows[f[0]] = [float(x) for x in f[1:]]
            except ValueError:
                pass
    return rows


def lab_ratio_table(runs):
    """Each policy's competitive ratio (cpu/opt, p99) on each trace."""
    table = {}
    for t, lines in runs.items():
        for p, r in lab_rows(lines).items():
            table.setdefault(p, {})[t] = (r[6], r[5], r[2])
    traces = [t for t in LAB_TRACES if t in runs]
    out = ["| policy | " + " | ".join("%s: ratio (cpu/opt, p99 us)" % t
                                       for t in traces) + " |",
           "|---|" + "---|" * len(traces)]
    for p in table:
        out.append("| `%s` | " % p + " | ".join(
            "%.2f (%.2f, %.1f)" % table[p][t] if t in table[p] else "-"
            for t in traces) + " |")
    return out + [""]


def lab_commands(runs):
    """Each command, its cost line, and the goals it judged."""
    out = []
    for t, lines in runs.items():
        out += ["```", lines[0]] + [l for l in lines if l.startswith(" goal") or
                                    l.startswith(" bound") or
                                    l.startswith(" cost")] + ["```", ""]
    return out


def lab_goals(runs):
    """The goals table, parsed from the lines each run printed."""
    import re
    out = ["| trace | adaptive: CPU / clairvoyant's, p99 vs clairvoyant's | "
           "cheapest fixed budget at the clairvoyant's p99 | adaptive at its "
           "own p99: CPU / the cheapest clairvoyant schedule's at that p99 | "
           "hybrid on periodic "
           "(<= 1.2x) | " + " | ".join("`target-p99:%d`" % x for x in LAB_TARGETS)
           + " |", "|---|---|---|---|---|" + "---|" * len(LAB_TARGETS)]
    facts = {"bound": {}, "adaptive": {}, "target": {}, "own": {}}
    for t, lines in runs.items():
        ad = bd = hy = own = ""
        tg = {}
        for l in lines:
            m = re.match(r" goal adaptive: CPU ([\d.]+)x .* at p99 ([\d.]+) us "
                         r"vs ([\d.]+) us .*: (\w+)$", l)
            if m:
                ad = "%sx, %s vs %s us: **%s**" % m.groups()
                facts["adaptive"][t] = (float(m.group(1)), m.group(4))
            m = re.match(r" bound: .* is (spin:\d+), CPU ([\d.]+)x .*\(p99 "
                         r"([\d.]+) us\)", l)
            if m:
                bd = "`%s`: %sx (p99 %s us)" % m.groups()
                facts["bound"][t] = (m.group(1), float(m.group(2)))
            if l.startswith(" bound: no fixed"):
                bd = "none up to 10 ms"
            m = re.match(r" goal adaptive at its own p99: CPU ([\d.]+)x .*gaps "
                         r"over (\d+) us, p99 ([\d.]+) us\) .*: (\w+)$", l)
            if m:
                own = "%sx (over %s us, p99 %s us): **%s**" % m.groups()
                facts["own"][t] = (float(m.group(1)), m.group(4))
            m = re.match(r" goal hybrid on periodic: CPU ([\d.]+)x .*: (\w+)$", l)
            if m:
                hy = "%sx: **%s**" % m.groups()
            m = re.match(r" goal target-p99:(\d+): p99 ([\d.]+) us \(target \d+ "
                         r"us: (\w+)\), CPU ([\d.]+)x that of (spin:\d+).*: (\w+)$", l)
            if m:
                tg[int(m.group(1))] = "p99 %s us (%s), %sx `%s`: **%s**" % (
                    m.group(2), m.group(3), m.group(4), m.group(5), m.group(6))
                facts["target"].setdefault(
                    "missed" if m.group(3) == "missed" else
                    "cpu" if m.group(6) == "MISS" else "pass", []).append(
                    (t, int(m.group(1)), float(m.group(2)), float(m.group(4))))
            m = re.match(r" goal target-p99:(\d+): no fixed spin budget", l)
            if m:
                tg[int(m.group(1))] = "no fixed budget meets it: not judged"
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            t, ad or "-", bd or "-", own or "-", hy or "-",
            " | ".join(tg.get(x, "-") for x in LAB_TARGETS)))
    return out + [""], facts


def lab_rates(d):
    """The competitive ratio across rates, from lab-rates-TRACE.txt."""
    table, rates, cmds = {}, [], []
    for t in LAB_TRACES:
        path = os.path.join(d, "lab-rates-%s.txt" % t)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            lines = f.read().splitlines()
        rate = None
        for l in lines:
            if l.startswith("$ "):
                rate = int(l.split("--rate=")[1].split()[0])
                if rate not in rates:
                    rates.append(rate)
                if not cmds:
                    cmds.append(l)
            for p, r in lab_rows([l]).items():
                table.setdefault(p, {})[(t, rate)] = r[6]
    if not table:
        return []
    traces = [t for t in LAB_TRACES if any(k[0] == t for v in table.values()
                                           for k in v)]
    out = ["### Across rates", "",
           "The competitive ratio of each policy on each trace at %s "
           "completions/s (1 s each, reference cost): gaps from far above "
           "break-even to far below it. `spin:39` is ski rental's rule, poll "
           "for the break-even time (38.8 us here) and then sleep, "
           "2-competitive on any gaps; `spin:0` is interrupt mode. The first "
           "command, the others differ in `--trace` and `--rate`:" %
           "/".join(str(r) for r in rates), "", "```"] + cmds + ["```", ""]
    out += ["| policy | " + " | ".join("%s" % t for t in traces) + " |",
            "|---|" + "---|" * len(traces)]
    for p in table:
        if p == "clairvoyant":
            continue
        out.append("| `%s` | " % p + " | ".join(
            " / ".join("%.2f" % table[p][(t, r)] if (t, r) in table[p] else "-"
                       for r in rates) for t in traces) + " |")
    if any(x < 1 for p, v in table.items() for x in v.values()):
        out += ["", "A ratio below 1: the clairvoyant decides gap by gap with the "
                "mean wake-up, and where wake-ups gather several arrivals that "
                "is not the least cost; the ratio is against it, not against "
                "the optimum."]
    worst = {p: max(v.values()) for p, v in table.items() if p != "clairvoyant"}
    out += ["", "Worst ratio over all of them: %s." % ", ".join(
        "`%s` %.2f" % (p, w) for p, w in worst.items()), ""]
    return out


def lab_section(d, sweep):
    """The policy lab's runs and its check against a live run (lab-live.txt)."""
    if not d:
        return []
    runs = lab_read(d, "")
    if not runs:
        return []
    first = runs[next(iter(runs))]
    cost = next((l.split()[1].rstrip(";") for l in first
                 if l.startswith(" cost")), "")
    n = next((int(l.split(",")[1].split()[0]) for l in first
              if l.startswith("testpmd-cq --sim: trace")), 0)
    out = ["## Policy lab: competitive ratios per trace", "",
           "`testpmd-cq --sim` replays each trace through the library's own "
           "policies on a virtual clock and compares each with the clairvoyant "
           "schedule, which knows every gap and sleeps exactly when one exceeds "
           "break-even (see [testpmd-cq.md](testpmd-cq.md#policy-lab---sim)). "
           "`ratio` is the competitive ratio: (CPU + latency) over the "
           "clairvoyant's; `cpu/opt` the CPU alone. The lab is deterministic: "
           "each command below prints exactly the numbers shown, on any "
           "machine. `devtools/gen-results.sh --lab-only` reruns it and "
           "rewrites this section alone; this section's runs are of revision "
           "%s." % git_revision(), "",
           "### Reference cost model, and the goals", "",
           "The goals of issue 12 are judged with one cost model, the same on "
           "every machine so that a change to a policy shows as a change here: "
           "`%s` (an iteration, arming, the wake-up latency's median and p99, "
           "a sleep's CPU)." % cost]
    fl = sweep.get("floors") if sweep else None
    if fl and fl.get("wakeup_ns"):
        out[-1] += (" This sweep measured the wake-up floor here at p50 %.1f us, "
                    "p99 %.1f us." % (fl["wakeup_ns"]["p50"] / 1e3,
                                      fl["wakeup_ns"]["p99"] / 1e3))
    out += [""] + lab_ratio_table(runs)
    goals, facts = lab_goals(runs)
    out += ["The goals: adaptive within 1.3x the clairvoyant's CPU at an equal "
            "or better p99 (equal: within 3%); hybrid within 1.2x on `periodic`; "
            "`target-p99:US` meeting its target with at most 1.1x the CPU of the "
            "cheapest fixed spin budget that meets it. The yardstick column is "
            "the cheapest of 59 fixed spin budgets (0, 1 us to 10 ms) whose p99 "
            "equals the clairvoyant's. The goal of adaptive reads two ways, "
            "and the table judges both: at the clairvoyant's p99 (adaptive "
            "must reach it), or at adaptive's own p99 (the clairvoyant is "
            "brought to it: of the schedules that know every gap and sleep "
            "through those over a threshold, 59 thresholds from 0 to 10 ms, "
            "the cheapest whose p99 is equal or better; at break-even it is "
            "the clairvoyant itself).", ""] + goals
    over = [(t, b) for t, b in facts["bound"].items() if b[1] > 1.3]
    if over:
        out += ["**Adaptive's goal is out of reach of online rules on %s.** "
                "The clairvoyant delays only the arrivals after gaps longer than "
                "break-even, and polls through the shorter ones at their own "
                "length. A rule that cannot see the coming gap can match that "
                "p99 only by polling into every gap for a while before it "
                "sleeps, and it pays that on every long gap: the cheapest "
                "fixed budget with the clairvoyant's p99 costs %s its CPU. On a "
                "renewal trace (independent gaps) a rule that knows only how "
                "long the CQ has been idle picks, gap by gap, a budget, so it "
                "does no better than fixed budgets and their mixes; on `poisson` "
                "no better than the best fixed budget at all, since with "
                "memoryless gaps a budget's CPU per gap is linear in the share of "
                "gaps it sleeps through (mean gap - (mean gap - sleep cost) x "
                "share). It is the trade of ski rental (where no deterministic "
                "online rule beats 2x the clairvoyant's cost on adversarial gaps) "
                "seen from the p99: with these random gaps the price of the "
                "clairvoyant's p99 is the factor above, in CPU. Adaptive instead "
                "minimises the cost "
                "itself (CPU + "
                "latency): its competitive ratio above is %s, at %s the "
                "clairvoyant's CPU, and its p99 is that of sleeping at once "
                "(interrupt mode's)." % (
                    ", ".join("`%s`" % t for t, _ in over),
                    ", ".join("%.2fx on `%s` (`%s`)" % (b[1], t, b[0])
                              for t, b in over),
                    ", ".join("%.2f" % lab_rows(runs[t])["adaptive"][6]
                              for t in runs if "adaptive" in lab_rows(runs[t])),
                    ", ".join("%.2fx" % facts["adaptive"][t][0]
                              for t in runs if t in facts["adaptive"])), ""]
    if facts["own"]:
        out += ["Read the other way, at adaptive's own p99, the goal asks how "
                "much more CPU adaptive spends than a schedule that knew every "
                "gap would need for that p99: %s (goal <= 1.3x). Adaptive sits "
                "on the clairvoyant's trade-off curve where it sleeps at once; "
                "what it gives up is the p99 the clairvoyant buys by polling "
                "through the gaps shorter than break-even, which no rule that "
                "cannot see the gap can buy at that price." % ", ".join(
                    "%.2fx on `%s` (%s)" % (v[0], t, v[1])
                    for t, v in facts["own"].items()), ""]
    if "periodic" in runs:
        r = lab_rows(runs["periodic"])
        if "hybrid" in r and r["hybrid"] == r.get("adaptive"):
            out += ["On `periodic` hybrid prints adaptive's numbers: it never "
                    "naps there, since the window it would poll through after "
                    "its naps (six deviations of the gaps, 10% jitter on 100 us) "
                    "is not shorter than a wake-up, and such gaps are the "
                    "adaptive policy's (see [poll-group.md](poll-group.md#hybrid))."
                    , ""]
    missed = facts["target"].get("missed", [])
    if missed and n:
        out += ["`target-p99` misses its target on %s. It starts from the least "
                "CPU and learns from the first miss, but its budget at most "
                "doubles at a time, and it aims at 3/4 of the misses a p99 "
                "allows on estimates (the tail of the gaps, the share of "
                "wake-ups over the target) that are noisy where the target "
                "puts the budget in the last 1 %% of the gaps. This run has "
                "%d arrivals: the p99 allows %d over the target." % (
                    ", ".join("`%s` (p99 %.1f us against %d us)" % (t, p, x)
                              for t, x, p, _ in missed), n, n // 100), ""]
    costly = facts["target"].get("cpu", [])
    if costly:
        out += ["It meets the target at more than 1.1x the CPU of the cheapest "
                "fixed budget on %s. It aims at 3/4 of the misses a p99 allows, "
                "a margin for noise, so it spins more than a fixed budget whose "
                "p99 lands just under the target (and that budget is picked "
                "after the fact, knowing the whole trace)%s%s." % (
                    ", ".join("`%s` at %d us (%.2fx)" % (t, x, c)
                              for t, x, _, c in costly),
                    "; on `onoff`, where every burst begins after 9 ms of "
                    "silence, the misses after the silences alone use up most "
                    "of that 3/4, and a budget that sleeps through a gap sleeps "
                    "through every longer one, the silences first, so the "
                    "policy polls through whole silences"
                    if any(t == "onoff" for t, *_ in costly) else "",
                    "; `diurnal` starts and ends in its slow hours (a tenth of "
                    "--rate), and a p99 over the whole run lets a fixed budget, "
                    "picked knowing the fast hours to come, gather its misses "
                    "in the slow ones, where polling through a gap costs the "
                    "most, while the policy keeps to its aim from the first "
                    "completion and polls for milliseconds there (its memory "
                    "of the gaps is not the cause: 32, 64 or 128 windows cost "
                    "the same)"
                    if any(t == "diurnal" for t, *_ in costly) else ""),
                ""]
    out += ["Commands, the cost model, and the goals each run judged:", ""]
    out += lab_commands(runs)
    out += lab_rates(d)
    runs = lab_read(d, "floors-")
    if runs:
        first = runs[next(iter(runs))]
        cost = next((l.split()[1].rstrip(";") for l in first
                     if l.startswith(" cost")), "")
        fl = (sweep or {}).get("floors") or {}
        if "cpu_per_wakeup" in fl.get("wakeup_ns", {}):
            how = ("as `--sim --floors` derives it when it measures them "
                   "(iteration = hand-off p50, arming = two iterations, a "
                   "sleep's CPU = the sleeper's CPU time per wake-up, wake-up "
                   "= the wake-up floor)")
        else:
            how = ("with the mapping of the `--sim` that took it, before the "
                   "floors measured the sleeper's CPU (iteration = hand-off p50, "
                   "arming = hand-off p99, a sleep's CPU = 10 x hand-off p99, "
                   "wake-up = the wake-up floor). A floor measured on a busy "
                   "machine carries the scheduler's delays into its p99, and so "
                   "into arming and the sleep's CPU here; `--sim --floors` now "
                   "takes medians and the sleeper's CPU time instead")
        out += ["### This machine's cost model, from the sweep's floors", "",
                "The same traces with `%s`, derived from the floors of the sweep "
                "above %s." % (cost, how), ""]
        out += lab_ratio_table(runs)
        c = dict(kv.split("=") for kv in cost.split("=", 1)[1].split(",")) \
            if cost.startswith("--sim-cost=") else {}
        bad = [(t, lab_rows(l)["adaptive"][6]) for t, l in runs.items()
               if "adaptive" in lab_rows(l) and lab_rows(l)["adaptive"][6] > 2]
        if bad and c:
            out += ["Adaptive's competitive ratio here is %s. Its break-even is "
                    "the wake-up's latency alone, which it learns from "
                    "`wake_cost()` (%.0f us median in this model); the CPU a "
                    "sleep costs (arming and the sleep, %.0f us here) is not "
                    "reported to a policy, so where a sleep costs more CPU than "
                    "a gap lasts the clairvoyant polls through gaps that "
                    "adaptive sleeps in." % (
                        ", ".join("%.2f on `%s`" % (r, t) for t, r in bad),
                        int(c["wake_ns"]) / 1e3,
                        (int(c["arm_ns"]) + int(c["wake_cpu_ns"])) / 1e3), ""]
        out += lab_commands(runs)
    live = os.path.join(d, "lab-live.txt")
    if os.path.exists(live):
        with open(live) as f:
            text = f.read().splitlines()
        out += ["### The lab against a live run", "",
                "`devtools/check-lab-live.py` records a live run (`mlx5-emu`, "
                "adaptive, poisson 5000/s, 3 s) and replays the recording in "
                "the lab with a cost model calibrated on that run:", ""]
        out += [l for l in text if l.startswith("|")] + [""]
        out += [l.replace("load average before the run:", "Load average before "
                          "the live run:") + "." for l in text
                if l.startswith("load average")]
        out += [l for l in text if l.startswith("PASS") or l.startswith("MISS")]
        out += ["", "The last row replays the same recording with a wake-up "
                "that has no tail (p99 = 3 x p50): the lab draws wake-ups from a "
                "log-normal through the wake-up floor's p50 and p99, measured "
                "just before the run, and a p99 of milliseconds (the sleeper "
                "descheduled on a busy machine) gives it a body of hundreds of "
                "microseconds, where the run's wake-ups may have been short. A "
                "difference that the last row does not share is the wake-up "
                "model's."]
        out += [""]
    return out


def busy_summary(path):
    """The busiest other processes, from ps output taken during the sweep."""
    if not path or not os.path.exists(path):
        return "not recorded"
    with open(path) as f:
        rows = [l.split(None, 1) for l in f.read().splitlines()[1:] if l.strip()]
    rows = [(float(r[0]), r[1].strip()) for r in rows
            if len(r) == 2 and r[0].replace(".", "", 1).isdigit()]
    others = [(c, n) for c, n in rows if "testpmd-cq" not in n and c >= 5.0]
    if not others:
        return "nothing else above 5% of a CPU (ps, during the sweep)"
    return "during the sweep (ps, % of a CPU): " + ", ".join(
        "%s %.0f%%" % (n, c) for c, n in others[:8])


def table(points, show_dev):
    head = (["dev"] if show_dev else []) + [
        "load/s", "policy", "achieved/s", "p50 us", "p99 us", "p99.9 us",
        "max us", "p50 / floor", "p99 / floor", "CPU %", "harness CPU %",
        "process CPU %", "wake-ups/s", "lost wake-ups"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in points:
        cells = ([p["dev"]] if show_dev else []) + [str(p["load"]), p["policy"]]
        if not p["ok"] or p["run"] is None:
            cells += ["FAILED: %s" % p["error"]] + [""] * (len(head) - len(cells) - 1)
        else:
            r, lat = p["run"], p["run"]["latency_ns"]
            cells += ["%.0f" % r["achieved_rate"], "%.1f" % us(lat["p50"]),
                      "%.1f" % us(lat["p99"]), "%.1f" % us(lat["p999"]),
                      "%.1f" % us(lat["max"]), floor_ratio(p, "p50_x_floor"),
                      floor_ratio(p, "p99_x_floor"), "%.1f" % r["cpu_pct"],
                      "%.1f" % r.get("harness_cpu_pct", 0.0),
                      "%.1f" % r["cpu_pct_process"],
                      "%.0f" % (p["run"]["wakeups_per_s"]), "%d" % p["lost_wakeups"]]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def describe_devs(devs):
    """The sweep's devices in words: emulated ones, and real queues."""
    real = {"uring": "`uring`, a real queue (io_uring: the kernel posts the "
                     "CQEs, see [uring-driver.md](uring-driver.md))"}
    words = [real.get(d, "an emulated device (`%s`)" % d) for d in devs]
    return " and ".join(words) if len(words) < 3 else ", ".join(words)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sweep")
    ap.add_argument("--plots")
    ap.add_argument("--page-dir")
    ap.add_argument("--load-before")
    ap.add_argument("--load-after")
    ap.add_argument("--sweep-status", type=int, default=0)
    ap.add_argument("--reproduce", default="./devtools/gen-results.sh")
    ap.add_argument("--busy")
    ap.add_argument("--lab-dir")
    ap.add_argument("--lab-only", action="store_true",
                    help="print the lab section alone")
    args = ap.parse_args()

    with open(args.sweep) as f:
        sweep = json.load(f)
    if args.lab_only:
        print("\n".join(lab_section(args.lab_dir, sweep)).rstrip())
        return 0
    if not args.plots or not args.page_dir:
        ap.error("--plots and --page-dir are required but with --lab-only")
    conf, points, summary = sweep["sweep"], sweep["points"], sweep["summary"]
    model, ncpu = cpu_model()
    u = platform.uname()
    loads = [float(x) for x in ((args.load_before or "").split() +
                                (args.load_after or "").split())]
    loadavg = max(loads) if loads else None
    plot_cmd = [os.path.join(os.path.dirname(conf["command"][0]), "tpcq-plot.py"),
                args.sweep, "-o", args.plots]

    out = [
        "# testpmd-cq results",
        "",
        "<!-- Generated by devtools/gen-results.sh from %s: do not edit. -->"
        % args.sweep,
        "",
        "One default sweep of testpmd-cq (see [testpmd-cq.md](testpmd-cq.md)) "
        "on %s, on the machine described below, with the "
        "issue's two goals for the adaptive policy computed from it. The "
        "numbers are those of one run on one machine: compare policies within "
        "the run, not with another machine's." % describe_devs(conf["devs"]),
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        "| CPU | %s |" % model,
        "| CPUs | %d |" % ncpu,
        "| memory | %.1f GiB |" % mem_total_gib(),
        "| kernel | %s %s %s |" % (u.system, u.release, u.machine),
        "| load average (1, 5, 15 min) | before the sweep %s; after %s |"
        % (args.load_before or "?", args.load_after or "?"),
        "| sweep's nice value | %d |" % os.nice(0),
        "| what else ran | %s |" % busy_summary(args.busy),
        "| cqpoll | %s, source %s |" % (conf["cqpoll_version"], git_revision()),
        "| DPDK | %s |" % conf["dpdk_version"],
        "| date | %s |" % datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%d %H:%M UTC"),
        "",
        "## Reproduce",
        "",
        "```sh",
        "%s    # builds, sweeps, plots, writes this page" % args.reproduce,
        "```",
        "",
        "which runs:",
        "",
        "```sh",
        " ".join(shlex.quote(c) for c in conf["command"]),
        " ".join(shlex.quote(c) for c in plot_cmd) + "    # what --plot runs",
        "```",
        "",
        "Devices %s; loads %s completions/s; policies %s; %g s a point; "
        "%d points in %.0f s." % (
            ", ".join("`%s`" % d for d in conf["devs"]),
            ", ".join(str(l) for l in conf["loads"]),
            ", ".join("`%s`" % p for p in conf["policies"]),
            conf["duration_s"], summary["points"], summary["wall_s"]),
        "",
        "## Results",
        "",
        "Sweep exit status %d: %d of %d points failed, %d lost wake-ups in all."
        % (args.sweep_status, summary["failed"], summary["points"],
           summary["lost_wakeups"]),
        "",
    ]
    out += table(points, len(conf["devs"]) > 1)
    out += ["", "Latency is from the completion's device timestamp to the "
            "poller reading it; CPU is the poller thread's CPU time over the "
            "run's wall time, harness CPU the generator's (it plays the "
            "device too: the emulated device has no thread of its own), "
            "process CPU the whole process's; wake-ups/s are the poller's "
            "sleeps that ended (by event, timeout or cross-thread wake). "
            "p50 / floor and p99 / floor: the percentile over the same "
            "percentile of the matching floor, `w` the wake-up (a poller that "
            "slept for most completions), `h` the hand-off, both paced at "
            "the point's load (see Floors)." +
            (" On `uring` a CQE has no timestamp: latency is from the "
             "generator's submit (host clock) to the poller reading the CQE, "
             "and the generator's CPU includes its io_uring_enter() calls, "
             "in which the kernel posts the CQEs." if "uring" in conf["devs"]
             else ""), ""]
    fl = sweep.get("floors")
    if fl:
        out += ["### Floors", "",
                "Measured by the sweep on the CPUs the points use (poller CPU %d, device CPU %d%s): what this "
                "machine costs, which no CQ library could beat there and "
                "then." % (fl["cpu_poller"], fl["cpu_device"],
                           "" if fl["pinned"] else ", NOT pinned"), "",
                "| floor | p50 us | p99 us | samples |", "|---|---|---|---|",
                "| cross-core cache-line hand-off (one way) | %.2f | %.2f | %d |"
                % (us(fl["handoff_ns"]["p50"]), us(fl["handoff_ns"]["p99"]),
                   fl["handoff_ns"]["samples"]),
                "| eventfd write -> epoll_wait return | %.1f | %.1f | %d |"
                % (us(fl["wakeup_ns"]["p50"]), us(fl["wakeup_ns"]["p99"]),
                   fl["wakeup_ns"]["samples"])]
        for f in fl.get("paced", []):
            out += ["| hand-off paced at %d/s for %g s | %.2f | %.2f | %d |" % (
                        f["rate"], f["secs"], us(f["handoff_ns"]["p50"]),
                        us(f["handoff_ns"]["p99"]), f["handoff_ns"]["samples"]),
                    "| wake-up paced at %d/s for %g s | %.1f | %.1f | %d |" % (
                        f["rate"], f["secs"], us(f["wakeup_ns"]["p50"]),
                        us(f["wakeup_ns"]["p99"]), f["wakeup_ns"]["samples"])]
        out += ["", "The first two rows are measured before the sweep, back "
                "to back, in a fraction of a second: the cost of a store "
                "seen and of a wake-up. The paced ones are measured just "
                "before the first point of their load and run as long as a "
                "point: one stamp at each arrival of the points' schedule, "
                "paced as the generator paces its posts, taken by a thread "
                "that spins (hand-off) or sleeps in epoll_wait() on an "
                "eventfd written after each stamp (wake-up). Their tails "
                "hold the times the CPUs ran something else (on this VM, "
                "the hypervisor's): they are what a poller at that load "
                "waits with no CQ library at all, and each point is held "
                "against those of its load.", ""]
    polls = [p["run"]["cpu_pct"] for p in points
             if p["policy"] == "poll" and p["ok"] and p["run"] is not None]
    if polls:
        out += ["How busy the machine was, read from the data: `poll` never "
                "sleeps, so it uses a whole core whenever it has one; here it "
                "used %.0f%% to %.0f%% of one. %s" % (
                    min(polls), max(polls),
                    "The rest of the time the poller was waiting for a CPU, "
                    "which shows in every policy's latency tail." if min(polls) < 90
                    else "The poller had a core of its own."), ""]

    for dev in conf["devs"]:
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in dev)
        rel = os.path.relpath(args.plots, args.page_dir)
        out += ["## Plots: %s" % dev, ""]
        for suffix, caption in (
                ("p99-vs-cpu", "p99 latency against poller CPU, one line per "
                 "policy through its loads (lower left is better)"),
                ("latency-vs-load", "p50 and p99 latency against load"),
                ("cpu-vs-load", "poller CPU against load")):
            png = "%s-%s.png" % (name, suffix)
            if os.path.exists(os.path.join(args.plots, png)):
                out += ["![%s](%s/%s)" % (caption, rel, png), "", "*%s*" % caption, ""]

    out += ["## The adaptive policy's goals", ""]
    lo, hi = min(conf["loads"]), max(conf["loads"])
    for dev in conf["devs"]:
        if len(conf["devs"]) > 1:
            out += ["Device `%s`:" % dev, ""]
        part, _ = comparison(
            "CPU at the lowest load: adaptive / interrupt", points, dev, lo,
            "adaptive", "interrupt", lambda p: p["run"]["cpu_pct"], "CPU %",
            loadavg, ncpu)
        out += part
        part, _ = comparison(
            "p99 at the highest load: adaptive / poll", points, dev, hi,
            "adaptive", "poll", lambda p: us(p["run"]["latency_ns"]["p99"]),
            "p99 us", loadavg, ncpu)
        out += part
    out += ["## Against the floors", ""]
    for dev in conf["devs"]:
        if len(conf["devs"]) > 1:
            out += ["Device `%s`:" % dev, ""]
        out += floor_goals(sweep, points, dev, lo, hi)
    out += lab_section(args.lab_dir, sweep)
    print("\n".join(out).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
