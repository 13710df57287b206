#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Driven by devtools/hw-check.sh (see its --help and doc/guides/hw-check.md):
devices, an rxe link, cqpoll-hw-check's checks, testpmd-cq beside perftest,
one report. Exit 0: nothing failed; 1: something failed; 77: nothing ran.
"""
import argparse
import concurrent.futures
import json
import os
import platform
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perftest  # noqa: E402
import report  # noqa: E402
import rxe  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "perftest-send-lat-6.06.sample")
MODES = ("poll", "interrupt", "adaptive")


def cmd_out(argv, timeout=20):
    try:
        r = subprocess.run(argv, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def versions(build):
    v = {}
    try:
        v["cqpoll"] = open(os.path.join(TOP, "VERSION")).read().strip()
    except OSError:
        v["cqpoll"] = None
    v["cqpoll git"] = cmd_out(["git", "-C", TOP, "describe", "--always", "--dirty"])
    v["kernel"] = platform.release()
    v["rdma-core (libibverbs)"] = cmd_out(["pkg-config", "--modversion", "libibverbs"])
    v["rdma-core package"] = cmd_out(["dpkg-query", "-W", "-f=${Version}", "rdma-core"])
    v["perftest (ib_send_lat)"] = perftest.version()
    v["DPDK"] = cmd_out(["pkg-config", "--modversion", "libdpdk"])
    v["machine"] = platform.machine()
    try:
        raw = subprocess.run(
            ["sh", "-c", "ulimit -l"], capture_output=True, text=True,
            timeout=5).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        raw = None
    v["memlock limit"], _ = report.memlock(raw)
    return v


def list_devices(hwc):
    r = subprocess.run([hwc, "--list-devices"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    devs = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    why = r.stderr.strip() or "no device"
    return devs, why


def run_checks(hwc, extra, out_dir, tag):
    path = os.path.join(out_dir, "checks-%s.jsonl" % tag)
    try:
        rc = subprocess.run([hwc, "--json=" + path] + extra,
                            stdin=subprocess.DEVNULL, timeout=900).returncode
    except subprocess.TimeoutExpired:
        rc = "a timeout (900 s)"
    checks, log = [], []
    try:
        with open(path) as f:
            for line in f:
                o = json.loads(line)
                if "log" in o:
                    log.append(o["log"])
                else:
                    checks.append(o)
    except (OSError, ValueError) as e:
        checks.append(check(tag, "cqpoll-hw-check", "fail", "its output: %s" % e))
    # A crash must not leave a report that passes on what ran before it.
    if rc not in (0, 1, 77) or (rc == 1 and not any(c["status"] == "fail"
                                                    for c in checks)):
        checks.append(check(tag, "cqpoll-hw-check", "fail",
                            "exited with %s" % (rc if isinstance(rc, str) or rc >= 0
                                                else "signal %d" % -rc)))
    return checks, log


def check(device, name, status, reason, data=None):
    return {"device": device, "check": name, "status": status,
            "reason": reason, "data": data or {}}


def testpmd_row(tpcq, dev_arg, device, mode, duration, out_dir, emulated=False):
    row = {"device": device, "tool": "testpmd-cq (%s)" % dev_arg.split(":")[0],
           "mode": mode, "bytes": 64}
    if tpcq is None:
        row.update(status="skip", reason="testpmd-cq not built (-Dapp)")
        return row
    js = os.path.join(out_dir, "testpmd-%s-%s.json" % (dev_arg.replace(":", "_"), mode))
    # A 100 ms safety net: a completion without a host timestamp that a
    # timeout finds counts as a recovery even when its event was only late,
    # and a shorter net would end sleeps on a loaded machine's delays.
    argv = [tpcq, "--dev=" + dev_arg, "--engine=pingpong", "--mode=" + mode,
            "--duration=%g" % duration, "--timeout-ms=100", "--json=" + js]
    r = subprocess.run(argv, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=120)
    if r.returncode != 0:
        tail = " | ".join((r.stderr or r.stdout).strip().splitlines()[-2:])
        row.update(status="fail", reason="exit %d: %s" % (r.returncode, tail))
        return row
    d = json.load(open(js))
    lat = d["latency_ns"]
    row.update(p50_us=round(lat["p50"] / 1000, 2), p99_us=round(lat["p99"] / 1000, 2),
               max_us=round(lat["max"] / 1000, 2), samples=lat["samples"],
               round_trips_per_s=d.get("round_trips_per_s"),
               lost_wakeups=d.get("lost_wakeups"),
               timeout_recoveries=d.get("timeout_recoveries"), cpu_pct=d.get("cpu_pct"),
               # libcqpoll's counters of the run, as its telemetry reports them
               counters={k: d.get(k) for k in ("polls", "empty_polls", "arms", "events",
                                               "spurious_events", "event_acks", "waits",
                                               "wait_timeouts", "wakeups_per_s")})
    # On an emulated device the oracle judges a loss (lost_wakeups); a
    # timeout that found a completion may be its device thread preempted. On
    # hardware that timeout is the only detector there is.
    bad = d.get("missing", 0) or d.get("order_errors", 0) or d.get("bad_completions", 0) \
        or d.get("lost_wakeups", 0) or (not emulated and d.get("timeout_recoveries", 0))
    row.update(status="fail" if bad else "pass",
               reason="lost, missing or bad completions" if bad else "")
    return row


def perftest_row(dev, events, iters, tcp_port):
    row = {"device": dev["name"], "tool": "ib_send_lat%s" % (" -e" if events else ""),
           "mode": "events" if events else "poll", "bytes": 64}
    res, why = perftest.run_pair(dev["name"], 64, iters, events, tcp_port,
                                 dev.get("port", 1), dev.get("gid_index", -1))
    if res is None:
        row.update(status="fail", reason=why)
        return row
    row.update(status="pass", reason="", p50_us=res["t_typical_us"],
               p99_us=res["p99_us"], max_us=res["t_max_us"],
               samples=res["iterations"], t_avg_us=res["t_avg_us"],
               p99_9_us=res["p99_9_us"])
    return row


def selfcheck_perftest():
    """The comparison's code paths without a device: argv and the recorded sample."""
    want_srv = ["ib_send_lat", "-d", "rxe_eth0", "-i", "1", "-s", "64", "-n", "1000",
                "-p", "18515", "-F", "-x", "1", "-e"]
    got = perftest.build_args("ib_send_lat", "rxe_eth0", 64, 1000, True, 18515, 1, 1)
    if got != want_srv:
        return "fail", "server argv %r, expected %r" % (got, want_srv)
    got = perftest.build_args("ib_send_lat", "mlx5_0", 64, 1000, False, 18516,
                              server_name="localhost")
    if got[-1] != "localhost" or "-e" in got or "-x" in got:
        return "fail", "client argv %r" % got
    try:
        res = perftest.parse(open(SAMPLE).read())
    except (OSError, ValueError) as e:
        return "fail", "recorded sample: %s" % e
    if res["bytes"] != 64 or res["iterations"] != 1000 or \
            not res["t_min_us"] <= res["t_typical_us"] <= res["t_max_us"]:
        return "fail", "recorded sample parsed as %r" % res
    try:
        perftest.parse("Unable to find the Infiniband/RoCE device\n")
        return "fail", "an output without a table was accepted"
    except ValueError:
        pass
    return "pass", "ib_send_lat argv (server, client, -e, -x) and the table of a " \
        "recorded perftest 6.06 output parsed; no measurement (no device)"


def selfcheck_rxe(has):
    argv = rxe.link_add_argv("eth0")
    if argv != ["rdma", "link", "add", "rxe_eth0", "type", "rxe", "netdev", "eth0"]:
        return "fail", "rxe command %r" % argv
    if rxe.may_ask(True, {"CI": "true"}) or rxe.may_ask(False, {}):
        return "fail", "would ask a question under CI or without a terminal"
    p = rxe.plan([], None, False, (True, "x"), ["eth0"], False)
    if p[0] != "none" or "--rxe=eth0" not in p[1]:
        return "fail", "plan without a terminal: %r" % (p,)
    if rxe.plan([], "eth0", False, (True, "x"), ["eth0"], False) != ("create", "eth0"):
        return "fail", "--rxe=eth0 not planned"
    return "pass", "rxe link command and plan checked (not run: emulated); this " \
        "kernel: %s" % has[1]


def rxe_step(args, devices):
    has = rxe.kernel_has_rxe()
    cands = rxe.netdevs()
    ok = rxe.may_ask(sys.stdin.isatty(), os.environ) and not args.yes
    what, arg = rxe.plan(devices, args.rxe, args.no_rxe, has, cands, ok)
    if what == "ask":
        print("hw-check: no RDMA device; the kernel has rdma_rxe. Create an rxe "
              "link over one of: %s" % ", ".join(arg))
        try:
            ans = input("netdev (empty: none): ").strip()
        except EOFError:
            ans = ""
        if not ans:
            return check("host", "rxe-link", "skip", "declined at the prompt"), False
        what, arg = rxe.plan(devices, ans, False, has, cands, False)
    if what == "none":
        return check("host", "rxe-link", "skip", arg), False
    argv = rxe.link_add_argv(arg)
    r = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       timeout=60)
    if r.returncode != 0:
        return check("host", "rxe-link", "fail", "%s: %s" % (
            " ".join(argv), (r.stderr or r.stdout).strip())), False
    return check("host", "rxe-link", "pass", "created: %s" % " ".join(argv)), True


def main():
    ap = argparse.ArgumentParser(prog="hw-check.sh")
    ap.add_argument("--emulated", action="store_true")
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument("--rxe", default=None, metavar="NETDEV")
    ap.add_argument("--no-rxe", action="store_true")
    ap.add_argument("--yes", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--duration", type=float, default=None)
    ap.add_argument("--iters", type=int, default=10000)
    args = ap.parse_args()
    start = time.time()
    build = os.path.abspath(args.build_dir)
    out_dir = os.path.abspath(args.out or os.path.join(build, "hw-check"))
    os.makedirs(out_dir, exist_ok=True)
    # The raw outputs of an earlier run would pass for this one's.
    for n in os.listdir(out_dir):
        if (n.startswith("checks-") and n.endswith(".jsonl")) or \
                (n.startswith("testpmd-") and n.endswith(".json")) or \
                n in ("report.json", "report.md"):
            os.unlink(os.path.join(out_dir, n))
    hwc = os.path.join(build, "test/hw/cqpoll-hw-check")
    tpcq = os.path.join(build, "app/testpmd-cq/testpmd-cq")
    tpcq = tpcq if os.access(tpcq, os.X_OK) else None
    if not os.access(hwc, os.X_OK):
        print("hw-check: %s is not built (needs rdma-core with mlx5dv)" % hwc,
              file=sys.stderr)
        return 1
    rep = {"mode": "emulated" if args.emulated else "hardware",
           "versions": versions(build), "devices": [], "devices_reason": "",
           "checks": [], "latency": [], "log": [], "warnings": []}
    try:
        raw = subprocess.run(["sh", "-c", "ulimit -l"], capture_output=True,
                             text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        raw = None
    _, warn = report.memlock(raw)
    # The emulated devices register nothing: the limit matters on hardware.
    if warn is not None and not args.emulated:
        rep["warnings"].append(warn)
        print("hw-check: warning: " + warn, file=sys.stderr)
    if args.emulated:
        rep["devices_reason"] = "emulated run: mlx5-emu and verbs-emu only"
        st, why = selfcheck_rxe(rxe.kernel_has_rxe())
        rep["checks"].append(check("host", "rxe-link", st, why))
        checks, log = run_checks(hwc, ["--emulated"], out_dir, "emulated")
        rep["checks"] += checks
        rep["log"] += log
        st, why = selfcheck_perftest()
        rep["checks"].append(check("emulated", "perftest-compare", st, why))
        dur = args.duration or 0.3
        # Two runs at a time: on the emulated devices a row's timings mean
        # nothing, and the oracle judges a loss whatever the load.
        rows = [(dev, mode) for dev in ("mlx5-emu", "verbs-emu") for mode in MODES]
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            rep["latency"] += pool.map(
                lambda a: testpmd_row(tpcq, a[0], "emulated", a[1], dur, out_dir,
                                      emulated=True), rows)
        for events in (False, True):
            rep["latency"].append({
                "device": "emulated", "tool": "ib_send_lat" + (" -e" if events else ""),
                "mode": "events" if events else "poll", "bytes": 64, "status": "skip",
                "reason": "perftest needs a real device (its argv and output "
                "parsing are checked in perftest-compare)"})
    else:
        devices, why = list_devices(hwc)
        st = rxe_step(args, devices)
        rep["checks"].append(st[0])
        if st[1]:
            devices, why = list_devices(hwc)
        if args.device:
            devices = [d for d in devices if d["name"] == args.device]
            why = "no RDMA device named %s" % args.device if not devices else why
        rep["devices"] = devices
        rep["devices_reason"] = why
        extra = ["--device=" + args.device] if args.device else []
        checks, log = run_checks(hwc, extra, out_dir, "hardware")
        rep["checks"] += checks
        rep["log"] += log
        dur = args.duration or 2.0
        usable = [d for d in devices if d.get("usable")]
        if not usable:
            reason = why if not devices else "no usable device: " + "; ".join(
                "%s: %s" % (d["name"], d.get("reason")) for d in devices)
            rep["checks"].append(check("none", "perftest-compare", "skip", reason))
            for tool in ("testpmd-cq", "ib_send_lat", "ib_send_lat -e"):
                modes = MODES if tool == "testpmd-cq" else (
                    ("events",) if tool.endswith("-e") else ("poll",))
                for m in modes:
                    rep["latency"].append({"device": "none", "tool": tool, "mode": m,
                                           "bytes": 64, "status": "skip",
                                           "reason": reason})
        port = 18515
        for d in usable:
            drivers = ["mlx5", "verbs"] if d["driver"] == "mlx5" else ["verbs"]
            for drv in drivers:
                for mode in MODES:
                    rep["latency"].append(testpmd_row(tpcq, "%s:%s" % (drv, d["name"]),
                                                      d["name"], mode, dur, out_dir))
            rows = []
            for events in (False, True):
                rows.append(perftest_row(d, events, args.iters, port))
                port += 1
            rep["latency"] += rows
            ok = all(r["status"] == "pass" for r in rows)
            rep["checks"].append(check(d["name"], "perftest-compare",
                                       "pass" if ok else "fail",
                                       "ib_send_lat and ib_send_lat -e ran beside "
                                       "testpmd-cq" if ok else
                                       "; ".join(r["reason"] for r in rows
                                                 if r["status"] != "pass")))
    for l in rep["latency"]:
        if l["status"] == "fail":
            rep["checks"].append(check(l["device"], "latency", "fail", "%s %s: %s" % (
                l["tool"], l["mode"], l["reason"])))
    rep["summary"] = report.summary(rep["checks"])
    s = rep["summary"]
    if s["fail"]:
        rep["result"], rc = "FAIL", 1
    elif s["pass"] == 0 or (not args.emulated and not any(
            c["status"] == "pass" for c in rep["checks"] if c["device"] != "host")):
        rep["result"], rc = "SKIPPED (nothing ran on a device)", 77
    else:
        rep["result"], rc = "PASS", 0
    rep["elapsed_s"] = round(time.time() - start, 1)
    js, md = os.path.join(out_dir, "report.json"), os.path.join(out_dir, "report.md")
    report.write(rep, js, md)
    print("hw-check: %s: %d pass, %d fail, %d skip in %.1f s" % (
        rep["result"], s["pass"], s["fail"], s["skip"], rep["elapsed_s"]))
    for c in rep["checks"]:
        if c["status"] != "pass":
            print("  %-10s %-20s %s: %s" % (c["device"], c["check"], c["status"],
                                            c["reason"]))
    for w in rep["warnings"]:
        print("hw-check: warning: " + w)
    print("hw-check: report: %s and %s" % (md, js))
    if args.emulated:
        print("hw-check: emulated run: its timings mean nothing; nothing to send back")
    else:
        print("hw-check: " + report.SEND_BACK)
    return rc


if __name__ == "__main__":
    sys.exit(main())
