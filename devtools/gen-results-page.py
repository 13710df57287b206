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


LAB_TRACES = ["poisson", "onoff", "pareto", "diurnal", "periodic", "regime"]
LAB_RATES = [1000, 5000, 10000, 20000, 50000, 100000]
LAB_PENALTIES = [1, 10]


def lab_rows(lines):
    """policy -> {column: text} of one lab run's table, by its header."""
    res, head = {}, None
    for l in lines:
        f = l.split()
        if f and f[0] == "policy":
            # Each "spread" column is that of the ratio before it.
            head = [h if h != "spread" else "spread" + f[i - 1]
                    for i, h in enumerate(f)]
        elif head is not None and len(f) == len(head) and f[0] not in res:
            try:
                float(f[1])
            except ValueError:
                continue
            res[f[0]] = dict(zip(head[1:], f[1:]))
    return res


def lab_run(d, trace, rate, pen):
    path = os.path.join(d, "lab-goals-%s-%d-p%d.txt" % (trace, rate, pen))
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read().splitlines()


def lab_cost_section(d, title, intro):
    """One cost model's runs (lab-goals-*.txt) and its goals (lab-goals.txt)."""
    summary = os.path.join(d, "lab-goals.txt")
    if not os.path.exists(summary):
        return []
    with open(summary) as f:
        lines = f.read().splitlines()
    cmds = [l for l in lines if l.startswith("$ ")]
    # The summary (one line per goal and policy) and the runs that miss.
    at = [i for i, l in enumerate(lines) if l.startswith("summary,")]
    summ = lines[at[0] + 1:] if at else []
    verdicts = [l for l in summ if l.startswith(("PASS", "MISS", "total"))]
    misses = [l for l in lines[:at[0] if at else 0] if l.startswith("MISS ")]
    verdicts += ["", "The runs that miss:"] + misses if misses else []
    out = ["### " + title, "", intro, "",
           "The goals, each judged on the median over the seeds of every run "
           "that judges it (`devtools/check-lab-goals.py`, from the lab's own "
           "`goal` lines; its output, one line per goal, trace, rate and "
           "penalty with the median and min..max over the seeds, is "
           "`%s/lab-goals.txt`):" % os.path.normpath(d), "",
           "```"] + verdicts + ["```", ""]
    for pen in LAB_PENALTIES:
        pols = None
        rows = []
        for t in LAB_TRACES:
            for rate in LAB_RATES:
                run = lab_run(d, t, rate, pen)
                if run is None:
                    continue
                r = lab_rows(run)
                if pols is None:
                    pols = list(r)
                rows.append("| %s | %d | " % (t, rate) + " | ".join(
                    "%s (%s) / %s (%s)" % (r[p]["/opt"], r[p]["spread/opt"],
                                           r[p]["/fixed"], r[p]["spread/fixed"])
                    if p in r else "-" for p in pols) + " |")
        if not rows:
            continue
        out += ["Penalty %d: each policy's total cost over the offline optimum "
                "(the lower bound; median, min..max over the seeds) / over "
                "the best fixed budget (not a bound; median, min..max):" % pen,
                "",
                "| trace | rate/s | " + " | ".join("`%s`" % p for p in pols) + " |",
                "|---|---|" + "---|" * len(pols)] + rows + [""]
    if cmds:
        out += ["The first command; the others differ in `--trace`, `--rate` "
                "and `--sim-penalty` (every run's output is in `%s/`):"
                % os.path.normpath(d), "", "```", cmds[0], "```", ""]
    return out


def lab_section(d, sweep):
    """The policy lab's goals and ratios, and its check against a live run."""
    c = sweep.get("floors", {})
    out = ["## Policy lab: total cost against the yardsticks", "",
           "`testpmd-cq --sim` replays each trace through the library's own "
           "policies on a virtual clock and judges each on its total cost (CPU "
           "+ penalty x added latency) against yardsticks of the same trace: "
           "the offline optimum, the lower bound (the least cost of any "
           "schedule of polls, sleeps and timer naps of any length, knowing "
           "every arrival and the very wake-up draws the policies are charged "
           "with: no policy is below it on any seed); and, not bounds, the "
           "best fixed spin budget in hindsight, the best per-window budget "
           "(the best budget of each 10 ms window, in hindsight), the causal "
           "rate rule (the rate over the last 2 ms; 5 mean gaps of budget "
           "when rate x a sleep's cost > 1, else 0) and the best mix of "
           "two fixed budgets at the policy's p99 (see "
           "[testpmd-cq.md](testpmd-cq.md#policy-lab---sim)). Every number is "
           "the median over 10 seeds, with the spread. The lab is "
           "deterministic: each command prints exactly the numbers shown, on "
           "any machine. `devtools/gen-results.sh --lab-only` reruns it and "
           "rewrites this section alone; this section's runs are of revision "
           "%s." % git_revision(), ""]
    out += lab_cost_section(
        os.path.join(d, "lab-ref"), "Reference cost model",
        "`--sim-cost=poll_ns=100,arm_ns=1000,wake_ns=30000,wake_p99_ns=80000,"
        "wake_cpu_ns=5000`, the same on every machine.")
    cost = ""
    p = os.path.join(d, "lab-floors", "lab-goals.txt")
    if os.path.exists(p):
        with open(p) as f:
            for l in f:
                if l.startswith("$ ") and "--sim-cost=" in l:
                    cost = l.split("--sim-cost=")[1].split()[0]
                    break
    out += lab_cost_section(
        os.path.join(d, "lab-floors"), "This machine's cost model",
        "`--sim-cost=%s`, derived from the floors of the sweep above as "
        "`--sim --floors` derives it (iteration = hand-off p50, arming = two "
        "iterations, a sleep's CPU = the sleeper's CPU time per wake-up, "
        "wake-up = the wake-up floor)." % cost)
    # What the goals that miss ask, and why no online rule gives it: prose
    # with its own commands and numbers, kept beside the runs.
    notes = os.path.join(d, "lab-notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            out += f.read().rstrip("\n").splitlines() + [""]
    live = os.path.join(d, "lab-live.txt")
    if os.path.exists(live):
        with open(live) as f:
            text = f.read().splitlines()
        out += ["### The lab against live runs", "",
                "`devtools/check-lab-live.py` runs 3 policies x 3 rates "
                "(`mlx5-emu`, poisson), 5 live runs each, each with "
                "`--floors`, so that its cost model is measured in the same "
                "run on the same CPUs (its wake-ups, their CPU included, from "
                "the floor paced at the run's rate, as the run's own "
                "wake-ups come), and replays each run's recording in "
                "the lab with that cost model: CPU and wake-ups within 20%, "
                "p99 within 30%, judged on the medians over the runs (with "
                "their min..max). Where other work (other processes' CPU, "
                "read per process, and the hypervisor's steal) took over 10% "
                "of the CPUs during the check, no cell is judged.", ""]
        if not [l for l in text if l.startswith("other work")]:
            # A result of the one-run check this replaced: not comparable.
            out += ["Not run since the check was rewritten: `%s/lab-live.txt` "
                    "holds a result of the old check (one live run of one "
                    "policy at one rate), withdrawn. `devtools/gen-results.sh` "
                    "reruns it; on a loaded machine it says \"not judged\"."
                    % os.path.normpath(d), ""]
        else:
            out += ["```"] + [l for l in text if l.startswith(
                ("load average", "this check", "other work", "PASS",
                 "MISS", "not judged"))] + ["```", ""]
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
        "on %s, on the machine described below, with two goals for the "
        "adaptive policy computed from it: at the lowest load its CPU at most "
        "%.1fx interrupt mode's (it sleeps as well as interrupt mode does), "
        "and at the highest load its p99 latency at most %.1fx poll mode's (it "
        "polls as well as poll mode does). The "
        "numbers are those of one run on one machine: compare policies within "
        "the run, not with another machine's." % (describe_devs(conf["devs"]), GOAL, GOAL),
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
