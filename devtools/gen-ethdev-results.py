#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The ethdev section of doc/guides/testpmd-cq-results.md, from real runs.

usage: devtools/gen-ethdev-results.py [--splice-only] [--duration=S] [BUILDDIR]

Runs testpmd-cq on DPDK's virtual PMDs (ethdev:virtio_user; ethdev:tap when
root and /dev/net/tun allow) at three loads, each with cqpoll's interrupt
mode, cqpoll's adaptive mode and DPDK's l3fwd-power transition, keeps every
run's JSON in results/ethdev.json, and writes the
table from it into the page between the ethdev markers (before the policy
lab). Every number comes from those JSON files and /proc/loadavg.

--splice-only writes the section again from the committed ethdev.json
without running anything (devtools/gen-results.sh calls it after it
rewrote the page, so the section survives a full regeneration).
"""
import json
import os
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(TOP, "doc/guides/testpmd-cq-results.md")
STORE = os.path.join(TOP, "results/ethdev.json")
BEGIN = "<!-- ethdev: begin (devtools/gen-ethdev-results.py) -->"
END = "<!-- ethdev: end -->"
LOADS = [1000, 10000, 20000]
CONFIGS = [
    ("cqpoll interrupt", ["--mode=interrupt"]),
    ("cqpoll adaptive", ["--mode=adaptive"]),
    ("l3fwd-power", ["--mode=interrupt", "--transition=l3fwd-power"]),
]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def tap_ok():
    return os.geteuid() == 0 and os.access("/dev/net/tun", os.W_OK)


def run_all(app, duration):
    pmds = ["virtio_user"] + (["tap"] if tap_ok() else [])
    runs = []
    for pmd in pmds:
        for load in LOADS:
            for name, opts in CONFIGS:
                with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
                    cmd = [app, "--dev=ethdev:" + pmd, "--engine=rate",
                           "--rate=%d" % load, "--duration=%g" % duration,
                           "--json=" + tmp.name] + opts
                    p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True,
                                       timeout=duration * 10 + 60)
                    if p.returncode != 0:
                        sys.stderr.write("gen-ethdev-results: %s: exit %d\n%s"
                                         % (" ".join(cmd), p.returncode,
                                            p.stderr[-2000:]))
                        res = None
                    else:
                        with open(tmp.name) as f:
                            res = json.load(f)
                runs.append({"pmd": pmd, "load": load, "config": name,
                             "command": " ".join(["testpmd-cq"] + [c for c in cmd[1:]
                                                          if not c.startswith("--json=")]),
                             "exit": p.returncode, "result": res})
                print("gen-ethdev-results: %s %d/s %s: %s" % (
                    pmd, load, name, "ok" if res else "failed"), flush=True)
    return {"pmds": pmds, "no_tap_reason": None if tap_ok() else
            "tap needs root and /dev/net/tun", "runs": runs}


def us(ns):
    return "%.1f" % (ns / 1000.0) if ns is not None else "-"


def section(data):
    out = [BEGIN, "## ethdev Rx queues (DPDK's virtual PMDs)", ""]
    out.append(
        "cqpoll's ethdev driver ([ethdev-driver.md](ethdev-driver.md)) against "
        "DPDK's examples/l3fwd-power transition (300 empty polls with 1 us "
        "pauses, enable, 10 ms wait, no poll after the enable), "
        "`testpmd-cq --dev=ethdev:PMD --engine=rate` for %g s a point. "
        "virtio_user is fed by a vhost port in the same process, tap by a "
        "kernel AF_PACKET socket (poller on a worker lcore). Latency is from "
        "the generator's post to the poller's read, in us; CPU is the "
        "poller thread's; wake-ups are the poller's sleeps that ended, per "
        "second; lost wake-ups are sleeps begun with a packet sent and unread "
        "and no edge waiting in the queue's epoll set (testpmd-cq's ethdev "
        "sleep check); recoveries are sleeps that ended by the timeout and "
        "found packets." % data["duration"])
    out.append("")
    out.append(
        "**This machine was shared with other engineers' builds and tests "
        "while these ran** (load average %s before, %s after, on 2 vCPUs): "
        "absolute times are noisy; compare rows of one load with each other. "
        "Nothing ran on a hardware NIC." % (data["load_before"], data["load_after"]))
    out.append("")
    if data.get("no_tap_reason"):
        out.append("tap was not run: %s." % data["no_tap_reason"])
        out.append("")
    out.append("| PMD | load /s | transition | p50 | p99 | max | CPU % | wake-ups/s | lost wake-ups | recoveries |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in data["runs"]:
        res = r["result"]
        if res is None:
            out.append("| %s | %d | %s | failed (exit %d) | | | | | | |" % (
                r["pmd"], r["load"], r["config"], r["exit"]))
            continue
        lat = res.get("latency_ns") or {}
        out.append("| %s | %d | %s | %s | %s | %s | %.1f | %.0f | %d | %d |" % (
            r["pmd"], r["load"], r["config"], us(lat.get("p50")),
            us(lat.get("p99")), us(lat.get("max")), res["cpu_pct"],
            res["wakeups_per_s"], res["lost_wakeups"], res["timeout_recoveries"]))
    out.append("")
    out.append(
        "l3fwd-power sleeps only after ~300 us of empty polls, so at 10000 "
        "and 20000/s it sleeps only when the generator stalls, and its "
        "window (between its last empty poll and the enable) is a few hundred "
        "ns: it strands a packet rarely at these loads. `--naive-delay-ns=20000` "
        "widens that window as a thread preempted there would "
        "(app test `testpmd-cq-ethdev-l3fwd-power-caught`). On tap, "
        "l3fwd-power leaves the queue's signal to the process, as the PMD "
        "sets it up (`F_SETOWN getpid()`): its poller, on a worker lcore, "
        "wakes on the fd before the PMD's handler ran on the idle main "
        "lcore, finds the queue \"empty\", and sleeps with the packet in it; "
        "cqpoll's arm makes the polling thread the owner. Recoveries with "
        "0 lost wake-ups are sleeps whose safety net (`--timeout-ms`, the "
        "build's default unless given) fired as the "
        "generator came back from a stall of the loaded machine (with "
        "`--timeout-ms=1000` they are 0). l3fwd-power is an adaptive rule "
        "(it polls before it sleeps), so the paired verdict (section "
        "\"Against peers\", `devtools/run-peers.py`) holds it against "
        "cqpoll's adaptive mode only, and holds `interrupt` to DPDK's "
        "blocking wait (`tpcq-peer --peer=ethdev-wait`: enable at every "
        "empty poll, poll again, `rte_epoll_wait()`).")
    out.append("")
    out.append("Regenerate: `./devtools/gen-ethdev-results.py` (needs a build in `build/`).")
    out.append(END)
    return "\n".join(out) + "\n"


def splice(data):
    with open(PAGE) as f:
        page = f.read()
    sec = section(data)
    if BEGIN in page and END in page:
        a = page.index(BEGIN)
        b = page.index(END) + len(END) + 1
        page = page[:a] + sec + page[b:]
    elif "\n## Policy lab" in page:
        a = page.index("\n## Policy lab") + 1
        page = page[:a] + sec + "\n" + page[a:]
    else:
        page = page + "\n" + sec
    with open(PAGE + ".tmp", "w") as f:
        f.write(page)
    os.replace(PAGE + ".tmp", PAGE)


def main():
    args = sys.argv[1:]
    splice_only = "--splice-only" in args
    duration = 3.0
    builddir = "build"
    for a in args:
        if a.startswith("--duration="):
            duration = float(a.split("=", 1)[1])
        elif not a.startswith("--"):
            builddir = a
    if splice_only:
        if not os.path.exists(STORE):
            return 0
        with open(STORE) as f:
            splice(json.load(f))
        return 0
    app = os.path.join(TOP, builddir, "app/testpmd-cq/testpmd-cq")
    before = loadavg()
    data = run_all(app, duration)
    data["duration"] = duration
    data["load_before"] = before
    data["load_after"] = loadavg()
    with open(STORE, "w") as f:
        json.dump(data, f, indent=1)
    splice(data)
    print("gen-ethdev-results: wrote %s and %s" % (PAGE, STORE))
    return 1 if any(r["result"] is None for r in data["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
