#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Units of devtools/hw_check: perftest's argv and output, the rxe plan on
made-up sysfs trees, and the report. Each negative case must be refused."""
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../../devtools/hw_check"))
import perftest  # noqa: E402
import report  # noqa: E402
import rxe  # noqa: E402

failed = 0


def expect(cond, what):
    global failed
    print("%-60s %s" % (what, "ok" if cond else "FAIL"))
    failed += not cond


sample = open(os.path.join(os.path.dirname(perftest.__file__),
                           "perftest-send-lat-6.06.sample")).read()
r = perftest.parse(sample)
expect(r["bytes"] == 64 and r["iterations"] == 1000, "sample: size and iterations")
expect(r["t_min_us"] <= r["t_typical_us"] <= r["p99_us"] <= r["t_max_us"],
       "sample: t_min <= t_typical <= p99 <= t_max")
for bad, what in ((sample.replace(" 64      1000", " 64"), "short row refused"),
                  (sample.replace("1.52", "x.yz"), "non-numeric row refused"),
                  ("Unable to find the Infiniband/RoCE device\n", "no table refused")):
    try:
        perftest.parse(bad)
        expect(False, what)
    except ValueError:
        expect(True, what)
a = perftest.build_args("ib_send_lat", "rxe0", 64, 100, True, 20000, 1, 3, "localhost")
expect(a[-1] == "localhost" and "-e" in a and a[a.index("-x") + 1] == "3",
       "client argv: events, GID index, server last")
a = perftest.build_args("ib_send_lat", "mlx5_0", 64, 100, False, 20000)
expect("-e" not in a and "-x" not in a, "server argv on InfiniBand: no -e, no -x")

with tempfile.TemporaryDirectory() as root:
    ok, why = rxe.kernel_has_rxe(root, "9.9")
    expect(not ok and "no InfiniBand" in why, "no rxe on a bare tree: " + why)
    os.makedirs(os.path.join(root, "lib/modules/9.9/kernel/drivers/infiniband/sw/rxe"))
    ok, _ = rxe.kernel_has_rxe(root, "9.9")
    expect(not ok, "an empty rxe directory is no module")
    open(os.path.join(root, "lib/modules/9.9/kernel/drivers/infiniband/sw/rxe/"
                      "rdma_rxe.ko.xz"), "w").close()
    expect(rxe.kernel_has_rxe(root, "9.9")[0], "an installed module is found")
    os.makedirs(os.path.join(root, "sys/class/net/lo"))
    os.makedirs(os.path.join(root, "sys/class/net/eth0"))
    os.makedirs(os.path.join(root, "sys/class/net/eth1"))
    open(os.path.join(root, "sys/class/net/eth0/operstate"), "w").write("up\n")
    open(os.path.join(root, "sys/class/net/eth1/operstate"), "w").write("down\n")
    expect(rxe.netdevs(root) == ["eth0"], "only netdevs that are up, lo aside")
expect(not rxe.may_ask(True, {"CI": "true"}), "never asks under CI")
expect(not rxe.may_ask(False, {}), "never asks without a terminal")
expect(rxe.may_ask(True, {}), "asks at a terminal")
has = (True, "loaded")
expect(rxe.plan([{"name": "mlx5_0"}], None, False, has, ["eth0"], True)[0] == "none",
       "devices present: no link")
expect(rxe.plan([], None, False, has, ["eth0"], False)[0] == "none",
       "no terminal: not asked, not created")
expect(rxe.plan([], None, False, has, ["eth0"], True) == ("ask", ["eth0"]),
       "terminal: asked")
expect(rxe.plan([], "eth0", False, has, ["eth0"], False) == ("create", "eth0"),
       "--rxe=eth0: created")
expect(rxe.plan([], "eth9", False, has, ["eth0"], False)[0] == "none",
       "--rxe on a netdev that is not up: refused")
expect(rxe.plan([], "eth0", True, has, ["eth0"], False)[0] == "none", "--no-rxe wins")
for bad in ("", "-x", "a/b"):
    try:
        rxe.link_add_argv(bad)
        expect(False, "bad netdev %r refused" % bad)
    except ValueError:
        expect(True, "bad netdev %r refused" % bad)

checks = [{"device": "d", "check": "c", "status": "fail", "reason": "a|b", "data": {}}]
rep = {"mode": "hardware", "result": "FAIL", "summary": report.summary(checks),
       "versions": {"kernel": "x"}, "devices": [], "devices_reason": "none here",
       "checks": checks, "latency": [], "log": []}
md = report.markdown(rep)
expect("| d | c | FAIL | a\\|b |" in md, "report: a failed check, its reason escaped")
rep["devices"] = [{"name": "mlx5_0", "driver": "mlx5", "fw_ver": "16.35.1012",
                   "usable": False, "reason": "port 1 is not active"}]
md = report.markdown(rep)
expect("| mlx5_0 | mlx5 | 16.35.1012 | False |" in md and "not active" in md,
       "report: a device row with firmware and why it is not usable")
expect(report.summary(checks) == {"pass": 0, "fail": 1, "skip": 0}, "report: summary")
for raw, text, warns in (("8192", "8192 KiB (8.0 MiB)", True),
                         ("65536", "65536 KiB (64.0 MiB)", False),
                         ("unlimited", "unlimited", False),
                         (None, None, True)):
    t, w = report.memlock(raw)
    expect(t == text and (w is not None) == warns,
           "memlock %r: %r, %s" % (raw, t, "warned" if warns else "no warning"))
rep["warnings"] = [report.memlock("8192")[1]]
md = report.markdown(rep)
expect("## Warnings" in md and "below the 64 MiB" in md, "report: the memlock warning")
expect("issue tracker" in md and "report.json" in md, "report: where to send it")
rep["mode"] = "emulated"
rep["latency"] = [{"device": "mlx5-emu", "tool": "testpmd-cq", "mode": "poll",
                   "bytes": 64, "p50_us": 1.0, "p99_us": 2.0, "max_us": 301000.0,
                   "status": "pass", "reason": ""}]
md = report.markdown(rep)
row = [l for l in md.splitlines() if l.startswith("| mlx5-emu |")]
expect(len(row) == 1 and "pass" not in row[0] and "timings emulated" in row[0]
       and report.EMULATED_TIMINGS in md,
       "report: an emulated latency row passes nothing, and says why")
sys.exit(1 if failed else 0)
