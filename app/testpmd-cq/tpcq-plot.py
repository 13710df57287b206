#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Draw a testpmd-cq sweep (--sweep --json=FILE) as PNG files.

usage: tpcq-plot.py SWEEP.json [-o DIR]

For each device of the sweep, three figures in DIR (default: SWEEP-plots):
  DEV-p99-vs-cpu.png     p99 latency against poller CPU, one line per policy
                         through its loads: the trade-off, lower left is better
  DEV-latency-vs-load.png  p50 and p99 latency against the load, per policy
  DEV-cpu-vs-load.png    poller CPU against the load, per policy
Prints the path of each file written. Exit status: 0 done, 1 bad input,
77 no matplotlib (Debian: python3-matplotlib, see devtools/install-deps.sh).
"""
import argparse
import json
import os
import sys

EXIT_SKIP = 77
DEBIAN_PYTHON = "/usr/bin/python3"


def import_pyplot():
    """matplotlib.pyplot on the Agg backend, or None.

    Debian's python3-matplotlib is installed for the system interpreter; when
    this one is another (a pyenv or venv python3 first on PATH), run again
    under the system one, which sees Debian's packages.
    """
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        pass
    if (os.path.exists(DEBIAN_PYTHON) and
            os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON) and
            not os.environ.get("TPCQ_PLOT_REEXEC")):
        os.environ["TPCQ_PLOT_REEXEC"] = "1"
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
    return None


def load_points(path):
    """The sweep's good points by device, then policy, sorted by load."""
    with open(path) as f:
        sweep = json.load(f)
    if not isinstance(sweep, dict) or "points" not in sweep or "sweep" not in sweep:
        raise ValueError("not a testpmd-cq sweep (no 'sweep' and 'points')")
    by_dev = {}
    for pt in sweep["points"]:
        if not pt.get("ok") or pt.get("run") is None:
            continue
        run = pt["run"]
        row = {
            "load": pt["load"],
            "achieved": run["achieved_rate"],
            "cpu": run["cpu_pct"],
            "p50_us": run["latency_ns"]["p50"] / 1e3,
            "p99_us": run["latency_ns"]["p99"] / 1e3,
        }
        by_dev.setdefault(pt["dev"], {}).setdefault(pt["policy"], []).append(row)
    for pols in by_dev.values():
        for rows in pols.values():
            rows.sort(key=lambda r: r["load"])
    # Policies in the order the sweep ran them: the legend follows the command.
    order = sweep["sweep"]["policies"]
    return by_dev, order


def fmt_load(x):
    for div, unit in ((1e6, "M"), (1e3, "k")):
        if x >= div:
            return "%g%s" % (x / div, unit)
    return "%g" % x


def fmt_us(x):
    """Latency ticks: 0.5, 20, 1,000, 2,000,000 rather than 2e+06."""
    return "{:,.0f}".format(x) if x >= 1 else "{:g}".format(x)


def log_axis(axis, fmt):
    """Ticks of a log axis at 1, 2, 5, 10, ... as plain numbers: 10^3 is
    hard to read off a latency axis."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v)))
    axis.set_minor_formatter(NullFormatter())


def ordered(pols, order):
    return [p for p in order if p in pols] + sorted(p for p in pols if p not in order)


def plot_tradeoff(plt, dev, pols, order, out):
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for pol in ordered(pols, order):
        rows = pols[pol]
        xs = [r["cpu"] for r in rows]
        ys = [r["p99_us"] for r in rows]
        ax.plot(xs, ys, marker="o", label=pol)
        for r in rows:
            ax.annotate(fmt_load(r["load"]) + "/s", (r["cpu"], r["p99_us"]),
                        textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_yscale("log")
    log_axis(ax.yaxis, fmt_us)
    ax.set_xlabel("poller CPU (% of one core)")
    ax.set_ylabel("p99 latency (µs, log scale)")
    ax.set_title("%s: p99 latency vs CPU, one line per policy across loads\n"
                 "(points labelled with the load; lower left is better)" % dev)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(title="policy")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_latency(plt, dev, pols, order, out):
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for pol in ordered(pols, order):
        rows = pols[pol]
        xs = [r["load"] for r in rows]
        line, = ax.plot(xs, [r["p99_us"] for r in rows], marker="o",
                        label=pol + " p99")
        ax.plot(xs, [r["p50_us"] for r in rows], marker=".", linestyle="--",
                color=line.get_color(), label=pol + " p50")
    ax.set_xscale("log")
    ax.set_yscale("log")
    log_axis(ax.xaxis, fmt_load)
    log_axis(ax.yaxis, fmt_us)
    ax.set_xlabel("load (completions/s, log scale)")
    ax.set_ylabel("latency (µs, log scale)")
    ax.set_title("%s: latency vs load per policy (p99 solid, p50 dashed)" % dev)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_cpu(plt, dev, pols, order, out):
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for pol in ordered(pols, order):
        rows = pols[pol]
        ax.plot([r["load"] for r in rows], [r["cpu"] for r in rows],
                marker="o", label=pol)
    ax.set_xscale("log")
    log_axis(ax.xaxis, fmt_load)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("load (completions/s, log scale)")
    ax.set_ylabel("poller CPU (% of one core)")
    ax.set_title("%s: poller CPU vs load per policy" % dev)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(title="policy")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep", help="JSON file written by testpmd-cq --sweep --json=FILE")
    ap.add_argument("-o", "--out", help="output directory (default: SWEEP-plots)")
    args = ap.parse_args()
    out = args.out or (args.sweep[:-5] if args.sweep.endswith(".json")
                       else args.sweep) + "-plots"

    try:
        by_dev, order = load_points(args.sweep)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("tpcq-plot: %s: %s" % (args.sweep, e), file=sys.stderr)
        return 1
    if not by_dev:
        print("tpcq-plot: %s: no successful point to plot" % args.sweep,
              file=sys.stderr)
        return 1
    plt = import_pyplot()
    if plt is None:
        print("tpcq-plot: matplotlib is not installed (Debian: apt-get install "
              "python3-matplotlib, or devtools/install-deps.sh)", file=sys.stderr)
        return EXIT_SKIP
    os.makedirs(out, exist_ok=True)
    for dev, pols in sorted(by_dev.items()):
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in dev)
        for suffix, draw in (("p99-vs-cpu", plot_tradeoff),
                             ("latency-vs-load", plot_latency),
                             ("cpu-vs-load", plot_cpu)):
            path = os.path.join(out, "%s-%s.png" % (name, suffix))
            draw(plt, dev, pols, order, path)
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
