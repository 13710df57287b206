#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the testpmd-cq results page (Markdown, on stdout) from a sweep.

usage: gen-results-page.py SWEEP.json --plots=DIR --page-dir=DIR
           [--load-before=L] [--load-after=L] [--sweep-status=N]
           [--reproduce=COMMAND]

Called by devtools/gen-results.sh. Every figure on the page is read from the
sweep's JSON or from this machine (/proc/cpuinfo, /proc/meminfo, uname, git):
nothing is typed in by hand. The issue's two goals are computed here:
  - at the lowest load, adaptive CPU / interrupt CPU <= 1.2
  - at the highest load, adaptive p99 / poll p99 <= 1.2
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


def table(points, show_dev):
    head = (["dev"] if show_dev else []) + [
        "load/s", "policy", "achieved/s", "p50 us", "p99 us", "p99.9 us",
        "max us", "CPU %", "wake-ups/s", "lost wake-ups"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in points:
        cells = ([p["dev"]] if show_dev else []) + [str(p["load"]), p["policy"]]
        if not p["ok"] or p["run"] is None:
            cells += ["FAILED: %s" % p["error"]] + [""] * (len(head) - len(cells) - 1)
        else:
            r, lat = p["run"], p["run"]["latency_ns"]
            cells += ["%.0f" % r["achieved_rate"], "%.1f" % us(lat["p50"]),
                      "%.1f" % us(lat["p99"]), "%.1f" % us(lat["p999"]),
                      "%.1f" % us(lat["max"]), "%.1f" % r["cpu_pct"],
                      "%.0f" % (p["run"]["wakeups_per_s"]), "%d" % p["lost_wakeups"]]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sweep")
    ap.add_argument("--plots", required=True)
    ap.add_argument("--page-dir", required=True)
    ap.add_argument("--load-before")
    ap.add_argument("--load-after")
    ap.add_argument("--sweep-status", type=int, default=0)
    ap.add_argument("--reproduce", default="./devtools/gen-results.sh")
    args = ap.parse_args()

    with open(args.sweep) as f:
        sweep = json.load(f)
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
        "on an emulated device, on the machine described below, with the "
        "issue's two goals for the adaptive policy computed from it. The "
        "numbers are those of one run on one machine: compare policies within "
        "the run, not with another machine's.",
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
            "run's wall time; wake-ups/s are the poller's sleeps that ended "
            "(by event, timeout or cross-thread wake).", ""]
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
    print("\n".join(out).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
